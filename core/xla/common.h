// The platform-independent part of the XLA FFI handlers: decode XLA's buffers, call the engine's Engine::Send /
// Engine::Recv (all input validation is Engine::Send's own), copy a result block into XLA's output buffers.
// `IO` is the platform policy that moves bytes between XLA's buffers and host memory (HostIO below for the CPU,
// CudaIO in handlers_cuda.cc). Nothing here touches Python or takes the GIL.
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine/engine.h"
#include "core/engine/handle.h"
#include "xla/ffi/api/ffi.h"

namespace pp::xla {

namespace ffi = ::xla::ffi;

// The XLA element type of an engine dtype.
inline ffi::DataType ExactType(DType d) {
  switch (d) {
    case DType::kBool: return ffi::DataType::PRED;
    case DType::kUInt8: return ffi::DataType::U8;
    case DType::kInt32: return ffi::DataType::S32;
    case DType::kInt64: return ffi::DataType::S64;
    case DType::kFloat32: return ffi::DataType::F32;
    case DType::kFloat64: return ffi::DataType::F64;
  }
  return ffi::DataType::INVALID;
}

// The element type jax uses for an engine dtype when jax_enable_x64 is off (64-bit types narrowed).
inline ffi::DataType NarrowType(DType d) {
  if (d == DType::kInt64) return ffi::DataType::S32;
  if (d == DType::kFloat64) return ffi::DataType::F32;
  return ExactType(d);
}

inline const char* TypeName(ffi::DataType t) {
  switch (t) {
    case ffi::DataType::PRED: return "bool";
    case ffi::DataType::U8: return "uint8";
    case ffi::DataType::S32: return "int32";
    case ffi::DataType::S64: return "int64";
    case ffi::DataType::F32: return "float32";
    case ffi::DataType::F64: return "float64";
    default: return "another dtype";
  }
}

template <typename D, typename S>
void CastN(void* dst, const void* src, size_t n) {
  D* d = static_cast<D*>(dst);
  const S* s = static_cast<const S*>(src);
  for (size_t i = 0; i < n; ++i) d[i] = static_cast<D>(s[i]);
}

// n elements of type st at src -> type dt at dst. Only the pairs ExactType/NarrowType can produce.
inline void Convert(void* dst, ffi::DataType dt, const void* src, ffi::DataType st, size_t n) {
  using T = ffi::DataType;
  if (dt == st) {
    std::memcpy(dst, src, n * ffi::ByteWidth(dt));
  } else if (dt == T::F64 && st == T::F32) {
    CastN<double, float>(dst, src, n);
  } else if (dt == T::F32 && st == T::F64) {
    CastN<float, double>(dst, src, n);
  } else if (dt == T::S64 && st == T::S32) {
    CastN<int64_t, int32_t>(dst, src, n);
  } else if (dt == T::S32 && st == T::S64) {
    CastN<int32_t, int64_t>(dst, src, n);
  } else {
    throw std::logic_error("unsupported dtype conversion");
  }
}

inline std::string ShapeStr(const ffi::AnyBuffer& b) {
  std::string s = "(";
  auto dims = b.dimensions();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s.append(", ");
    s.append(std::to_string(dims[i]));
  }
  s.append(dims.size() == 1 ? ",)" : ")");
  return s;
}

inline ffi::Error Invalid(const std::string& msg) { return ffi::Error::InvalidArgument("parallel_pool xla: " + msg); }

// The live engine behind a handle id.
inline ffi::Error Lookup(int64_t id, std::shared_ptr<EngineHandle>* out) {
  *out = EngineHandle::Find(id);
  if (!*out) {
    return ffi::Error(ffi::ErrorCode::kFailedPrecondition,
                      "parallel_pool xla: the pool behind this handle no longer exists (it was garbage-collected); "
                      "keep the env alive while its xla functions are in use");
  }
  if ((*out)->stamp.Forked()) {
    return ffi::Error(ffi::ErrorCode::kFailedPrecondition,
                      std::string("parallel_pool xla: ") + EngineHandle::kForkedMessage);
  }
  if ((*out)->engine->spec().num_players_max != 1) return Invalid("multi-player envs are not supported by env.xla()");
  return ffi::Error::Success();
}

// Bytes between XLA buffers and host memory on the CPU: XLA's buffers are host memory already.
struct HostIO {
  static constexpr bool kHostBuffers = true;
  const void* ToHost(const ffi::AnyBuffer& b, std::vector<uint8_t>& /*staging*/) { return b.untyped_data(); }
  void FromHost(void* dst, const void* src, size_t n) { std::memcpy(dst, src, n); }
  void DeviceCopy(void* dst, const void* src, size_t n) { std::memcpy(dst, src, n); }
  ffi::Error Flush() { return ffi::Error::Success(); }
};

// ---- send -------------------------------------------------------------------------------------------------

// Per-thread staging memory (XLA may run handlers of different programs on several threads at once).
struct Scratch {
  std::vector<std::vector<uint8_t>> raw;
  std::vector<uint8_t> ids;
  std::vector<std::vector<uint8_t>> out;
};
inline Scratch& ThreadScratch() {
  thread_local Scratch s;
  return s;
}

struct SendArgs {
  std::vector<ActionInput> actions;  // host memory, in the buffers' own dtypes (Engine::Send checks, then converts)
  const int32_t* ids = nullptr;
  int k = 0;
};

// The engine dtype of an XLA element type, if the engine has it.
inline bool EngineType(ffi::DataType t, DType* out) {
  for (DType d : {DType::kBool, DType::kUInt8, DType::kInt32, DType::kInt64, DType::kFloat32, DType::kFloat64}) {
    if (ExactType(d) == t) {
      *out = d;
      return true;
    }
  }
  return false;
}

// args: one buffer per action array of the spec, then env_id (int32[k]). An integer action may come as int32 or
// int64 (with jax_enable_x64), a float one as float32 or float64: Engine::Send range-checks the values in the
// buffer's own dtype before narrowing them, exactly as for actions from Python.
template <class IO>
ffi::Error PrepareSend(const Engine& engine, const ffi::RemainingArgs& args, IO& io, SendArgs* out) {
  const auto& acts = engine.spec().action;
  const size_t na = acts.size();
  if (args.size() != na + 1) {
    return Invalid("send expects " + std::to_string(na) + " action array(s) and env_id, got " +
                   std::to_string(args.size()) + " arrays");
  }
  Scratch& s = ThreadScratch();
  s.raw.resize(na);
  auto ids = args.get<ffi::AnyBuffer>(na);
  if (!ids.has_value()) return ids.error();
  if (ids->element_type() != ffi::DataType::S32 || ids->dimensions().size() != 1) {
    return Invalid("env_id must be a 1-d int32 array, got " + std::string(TypeName(ids->element_type())) + " " +
                   ShapeStr(*ids));
  }
  out->k = static_cast<int>(ids->element_count());
  out->ids = static_cast<const int32_t*>(io.ToHost(*ids, s.ids));
  out->actions.assign(na, ActionInput{});
  for (size_t a = 0; a < na; ++a) {
    auto b = args.get<ffi::AnyBuffer>(a);
    if (!b.has_value()) return b.error();
    DType given;
    const bool same_kind = EngineType(b->element_type(), &given) && IsIntegral(given) == IsIntegral(acts[a].dtype);
    if (!same_kind) {
      return Invalid("action '" + acts[a].name + "' must be " + DTypeName(acts[a].dtype) + " (or " +
                     (IsIntegral(acts[a].dtype) ? "int32/int64" : "float32/float64") + "), got " +
                     TypeName(b->element_type()));
    }
    size_t want = static_cast<size_t>(out->k) * acts[a].NumElements();
    if (b->element_count() != want) {
      return Invalid("action '" + acts[a].name + "' has shape " + ShapeStr(*b) + ": expected " + std::to_string(want) +
                     " elements for " + std::to_string(out->k) + " env ids");
    }
    out->actions[a] = {static_cast<const uint8_t*>(io.ToHost(*b, s.raw[a])), given};
  }
  return io.Flush();
}

// Call with the engine's API mutex held. Engine::Send validates everything and enqueues nothing when it throws.
inline ffi::Error SendLocked(Engine& engine, const SendArgs& a) {
  try {
    engine.Send(a.ids, a.k, a.actions, false, nullptr);
  } catch (const std::invalid_argument& e) {
    return Invalid(e.what());
  } catch (const std::exception& e) {
    return ffi::Error(ffi::ErrorCode::kFailedPrecondition, std::string("parallel_pool xla: ") + e.what());
  }
  return ffi::Error::Success();
}

// ---- recv -------------------------------------------------------------------------------------------------

struct RecvOut {
  std::vector<ffi::AnyBuffer> bufs;
  int rows = 0;
};

// rets: one buffer per output array of the engine's layout, each (rows, *row_shape).
inline ffi::Error PrepareRecv(const Engine& engine, const ffi::RemainingRets& rets, RecvOut* out) {
  const auto& E = engine.layout().entries;
  if (rets.size() != E.size()) {
    return Invalid("recv expects " + std::to_string(E.size()) + " outputs, got " + std::to_string(rets.size()));
  }
  out->bufs.clear();
  for (size_t i = 0; i < E.size(); ++i) {
    auto r = rets.get<ffi::AnyBuffer>(i);
    if (!r.has_value()) return r.error();
    ffi::AnyBuffer b = **r;
    if (b.element_type() != ExactType(E[i].dtype) && b.element_type() != NarrowType(E[i].dtype)) {
      return Invalid("output '" + E[i].name + "' must be " + DTypeName(E[i].dtype) + ", got " +
                     TypeName(b.element_type()));
    }
    auto dims = b.dimensions();
    bool ok = dims.size() == E[i].shape.size() + 1;
    for (size_t d = 0; ok && d < E[i].shape.size(); ++d) ok = dims[d + 1] == E[i].shape[d];
    if (!ok || (i > 0 && dims[0] != out->rows)) {
      return Invalid("output '" + E[i].name + "' has an unexpected shape " + ShapeStr(b));
    }
    out->rows = static_cast<int>(dims[0]);
    out->bufs.push_back(b);
  }
  return ffi::Error::Success();
}

// Call with the engine's API mutex held. On success *r owns a block that must go back to the block pool.
inline ffi::Error RecvLocked(Engine& engine, RecvResult* r) {
  try {
    *r = engine.Recv({});  // XLA's thread cannot see Ctrl-C; the wait ends when the results are in
  } catch (const EnvError& e) {
    return ffi::Error::Internal(std::string("parallel_pool xla: ") + e.what());
  } catch (const std::exception& e) {
    return ffi::Error(ffi::ErrorCode::kFailedPrecondition, std::string("parallel_pool xla: ") + e.what());
  }
  return ffi::Error::Success();
}

// Copies a received block into XLA's output buffers and returns the block to the engine's block pool.
template <class IO>
ffi::Error CopyOut(Engine& engine, const RecvResult& r, const RecvOut& out, IO& io) {
  struct Release {
    Engine& engine;
    uint8_t* block;
    ~Release() { engine.block_pool()->Release(block); }
  } release{engine, r.block};
  const Layout& L = engine.layout();
  if (r.env_rows != out.rows || r.player_rows != out.rows) {
    return Invalid("recv got " + std::to_string(r.env_rows) + " rows but its outputs have " + std::to_string(out.rows) +
                   " (in sync mode recv returns the env ids of the matching send; use step, or send all envs)");
  }
  const auto& E = L.entries;
  // (same-step mode: the engine writes zero final_* rows where no episode ended, so they are copied as they are)
  Scratch& s = ThreadScratch();
  s.out.resize(E.size());
  for (size_t i = 0; i < E.size(); ++i) {
    const ffi::AnyBuffer& b = out.bufs[i];
    const uint8_t* src = r.block + E[i].offset;
    size_t n = E[i].row_bytes / DTypeSize(E[i].dtype) * static_cast<size_t>(out.rows);
    ffi::DataType have = ExactType(E[i].dtype);
    if (b.element_type() == have) {
      io.FromHost(b.untyped_data(), src, n * DTypeSize(E[i].dtype));
    } else if constexpr (IO::kHostBuffers) {
      Convert(b.untyped_data(), b.element_type(), src, have, n);
    } else {
      s.out[i].resize(n * ffi::ByteWidth(b.element_type()));
      Convert(s.out[i].data(), b.element_type(), src, have, n);
      io.FromHost(b.untyped_data(), s.out[i].data(), s.out[i].size());
    }
  }
  return io.Flush();  // the block is released only once every copy out of it is done
}

// The handle is threaded through as input 0 -> output 0 (aliased, so usually nothing to copy).
template <class IO>
void PassHandle(const ffi::AnyBuffer& in, ffi::Result<ffi::AnyBuffer>& out, IO& io) {
  if (in.untyped_data() != out->untyped_data()) io.DeviceCopy(out->untyped_data(), in.untyped_data(), in.size_bytes());
}

// ---- the three calls, platform-generic --------------------------------------------------------------------

template <class IO>
ffi::Error SendImpl(IO& io, int64_t id, ffi::AnyBuffer handle, ffi::RemainingArgs args,
                    ffi::Result<ffi::AnyBuffer> handle_out) {
  try {
    std::shared_ptr<EngineHandle> h;
    if (ffi::Error e = Lookup(id, &h); e.failure()) return e;
    SendArgs a;
    if (ffi::Error e = PrepareSend(*h->engine, args, io, &a); e.failure()) return e;
    {
      std::lock_guard lk(h->mu);  // std::timed_mutex (EngineHandle)
      if (ffi::Error e = SendLocked(*h->engine, a); e.failure()) return e;
    }
    PassHandle(handle, handle_out, io);
    return io.Flush();
  } catch (const std::exception& e) {
    return ffi::Error::Internal(std::string("parallel_pool xla send: ") + e.what());
  }
}

template <class IO>
ffi::Error RecvImpl(IO& io, int64_t id, ffi::AnyBuffer handle, ffi::Result<ffi::AnyBuffer> handle_out,
                    ffi::RemainingRets rets) {
  try {
    std::shared_ptr<EngineHandle> h;
    if (ffi::Error e = Lookup(id, &h); e.failure()) return e;
    RecvOut out;
    if (ffi::Error e = PrepareRecv(*h->engine, rets, &out); e.failure()) return e;
    RecvResult r;
    {
      std::lock_guard lk(h->mu);  // std::timed_mutex (EngineHandle)
      if (ffi::Error e = RecvLocked(*h->engine, &r); e.failure()) return e;
    }
    PassHandle(handle, handle_out, io);
    return CopyOut(*h->engine, r, out, io);
  } catch (const std::exception& e) {
    return ffi::Error::Internal(std::string("parallel_pool xla recv: ") + e.what());
  }
}

// send + recv under one lock and one FFI call.
template <class IO>
ffi::Error StepImpl(IO& io, int64_t id, ffi::AnyBuffer handle, ffi::RemainingArgs args,
                    ffi::Result<ffi::AnyBuffer> handle_out, ffi::RemainingRets rets) {
  try {
    std::shared_ptr<EngineHandle> h;
    if (ffi::Error e = Lookup(id, &h); e.failure()) return e;
    SendArgs a;
    if (ffi::Error e = PrepareSend(*h->engine, args, io, &a); e.failure()) return e;
    RecvOut out;
    if (ffi::Error e = PrepareRecv(*h->engine, rets, &out); e.failure()) return e;
    RecvResult r;
    {
      std::lock_guard lk(h->mu);  // std::timed_mutex (EngineHandle)
      if (ffi::Error e = SendLocked(*h->engine, a); e.failure()) return e;
      if (ffi::Error e = RecvLocked(*h->engine, &r); e.failure()) return e;
    }
    PassHandle(handle, handle_out, io);
    return CopyOut(*h->engine, r, out, io);
  } catch (const std::exception& e) {
    return ffi::Error::Internal(std::string("parallel_pool xla step: ") + e.what());
  }
}

}  // namespace pp::xla
