// PyEngine, _core.Engine's C++ side: one generic class serves every registered env class (nothing here is
// env-specific). This header holds the class and its per-call methods (send, recv, step and the result they return),
// defined in the class so that the fast calls (fast_calls.cc) inline them; the rest is in py_engine.cc (making and
// closing) and snapshots.cc (state, snapshots, configs, frames). Result reuse is in results.h, conversions in
// convert.h.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>  // in every file of the module: std::vector casts must mean one thing

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/bindings/convert.h"
#include "core/bindings/gil.h"
#include "core/bindings/py_thread_pool.h"
#include "core/bindings/results.h"
#include "core/engine/engine.h"
#include "core/engine/handle.h"

namespace pp::bindings {

namespace py = pybind11;

constexpr size_t kMaxArrayDims = 16;  // dims of a result array, the row dimension included (checked per engine)

struct BlockOwner {
  std::shared_ptr<BlockPool> pool;
  uint8_t* ptr;
};

class PyEngine {
 public:
  PyEngine(const std::string& type_name, const py::dict& config, const PyThreadPool* thread_pool);

  void Send(py::object actions, py::object env_id, bool reset, py::object seeds) {
    Lock lk(this);
    SendLocked(actions, env_id, reset, seeds);
  }

  py::tuple Recv() {
    Lock lk(this);
    return RecvLocked();
  }

  py::tuple Step(py::object actions, py::object env_id) {
    Lock lk(this);
    SendLocked(actions, env_id, false, py::none(), true);
    py::tuple arrays = RecvLocked();
    KeepObs(arrays);
    return arrays;
  }

  // step(actions) of every env of a sync pool for a gym-style front-end: (the batch; the front-end result kept with
  // it (KeepResult) when the batch is a refilled cached one and nothing else holds any part of that result, else
  // None).
  py::tuple StepKept(py::object actions) {
    if (!engine_->sync()) throw std::invalid_argument("_step_kept steps every env of a sync pool");
    Lock lk(this);
    SendLocked(actions, py::none(), false, py::none(), true);
    py::object kept = py::none();
    py::tuple arrays = RecvLocked(&kept);
    KeepObs(arrays, true);
    return py::reinterpret_steal<py::tuple>(PyTuple_Pack(2, arrays.ptr(), kept.ptr()));
  }

  // recv() for a gym-style front-end of an async pool: (the batch; the front-end result kept with it when the batch
  // came back in the arrays of a cached result that nothing else holds any more, else None), as StepKept.
  py::tuple RecvKept() {
    Lock lk(this);
    py::object kept = py::none();
    py::tuple arrays = RecvLocked(&kept);
    return py::reinterpret_steal<py::tuple>(PyTuple_Pack(2, arrays.ptr(), kept.ptr()));
  }

  // reset_mask's rows of the unmasked envs (parallel_pool.pool.KeptRows): the observation rows of the last batch
  // that step() returned holding every env in id order, in a sync pool with one observation array and one player
  // per env, kept here as they were returned; obs_seq() counts those batches. Kept here rather than by the
  // front-end, which would pay a Python call and ndarray.tobytes() per step. Only once a front-end asked for it
  // (keep_obs(): the gym-style front-ends of sync pools, which offer reset_mask).
  // every_env: the batch of a send to every env (env_id None), in id order by construction.
  void KeepObs(const py::tuple& arrays, bool every_env = false) {
    const Layout& L = engine_->layout();
    if (!keep_obs_ || !engine_->sync() || L.num_obs != 1 || engine_->spec().num_players_max > 1) return;
    const auto* ids = py::detail::array_proxy(PyTuple_GET_ITEM(arrays.ptr(), L.env_id));
    const auto n = ids->dimensions[0];
    if (n != num_envs()) return;
    if (!every_env) {
      const auto* id = reinterpret_cast<const int32_t*>(ids->data);
      bool in_order = true;
      for (py::ssize_t i = 0; i < n; ++i) in_order &= id[i] == i;
      if (!in_order) return;
    }
    const auto* a = py::detail::array_proxy(PyTuple_GET_ITEM(arrays.ptr(), 0));
    const size_t bytes = L.entries[0].row_bytes * static_cast<size_t>(n);
    last_obs_.resize(bytes);
    std::memcpy(last_obs_.data(), a->data, bytes);
    ++obs_seq_;
  }
  void keep_obs() { keep_obs_ = true; }
  int64_t obs_seq() const { return obs_seq_; }
  py::bytes last_obs() const {
    return py::bytes(reinterpret_cast<const char*>(last_obs_.data()), static_cast<py::ssize_t>(last_obs_.size()));
  }

  // Keeps `result`, a front-end's result made of the arrays of `arrays` (a batch this engine returned), with that
  // batch while it is cached: StepKept returns it again when it refills the batch. Nothing happens when the batch
  // is not cached (a large one) or `result` cannot be checked cheaply (see Walk).
  void KeepResult(py::handle arrays, py::handle result) {
    for (auto& c : reuse_) {
      if (!c.arrays || c.arrays.ptr() != arrays.ptr()) continue;
      c.ForgetResult();
      const bool container = PyTuple_CheckExact(result.ptr()) || PyDict_CheckExact(result.ptr());
      if (container && Walk(c, result.ptr(), 0)) {
        c.result = py::reinterpret_borrow<py::object>(result);
        c.containers.front().refs += 1;  // ours
      } else {
        c.ForgetResult();
      }
      return;
    }
  }

  py::tuple Reset(py::object env_id, py::object seeds);

  // Safe from any thread, any number of times; in a forked child it leaves the parent's engine alone. A call in
  // progress on another thread finishes first -- for at most PARALLEL_POOL_CLOSE_TIMEOUT seconds; then it is woken
  // (it raises "closed"). Workers stuck in a step that never returns are abandoned with a RuntimeWarning.
  void Close();
  // Closes the engine, waiting a bounded time for a call in progress; "" or what was left undone. Never touches
  // Python (the destructor runs it with the GIL held: worker threads never take the GIL).
  std::string CloseBounded();
  // Engine::Close under the API lock the caller holds; an engine that abandoned workers is never freed (they use it).
  std::string CloseHeld();
  // Waits (bounded) for a call in progress on another thread (only possible at interpreter exit, from a daemon
  // thread) before the engine goes away, instead of destroying it under that call. Runs with the GIL held: worker
  // threads never take it, and a destructor must not re-acquire it (see WithoutGil).
  ~PyEngine();

  bool closed() const { return engine_->closed(); }
  py::list output_names() const { return names_; }
  py::list output_per_player() const { return per_player_; }
  int num_envs() const { return engine_->options().num_envs; }
  int batch_size() const { return engine_->options().batch_size; }
  int num_threads() const { return engine_->options().num_threads; }
  py::dict spec() const { return SpecToDict(engine_->spec()); }
  int num_players(int64_t env_id) const { return engine_->num_players(env_id); }
  // (name, dtype, row shape, per_player) of each output array, in output order.
  py::list output_specs() const {
    py::list out;
    for (const auto& e : engine_->layout().entries) {
      out.append(py::make_tuple(e.name, DTypeName(e.dtype), py::tuple(py::cast(e.shape)), e.per_player));
    }
    return out;
  }
  // Id under which other front-ends (the XLA handlers) find this engine and its API mutex.
  int64_t handle_id() const { return handle_->id; }
  int64_t batched_steps() const { return engine_->batched_steps(); }
  int64_t shared_sends() const { return engine_->shared_sends(); }
  int64_t results_reused() const { return results_reused_; }

  // Engine state, snapshots, configs and frames of single envs (snapshots.cc).
  std::vector<double> GetState(int64_t env_id);
  void SetState(int64_t env_id, const std::vector<double>& state);
  // Snapshots of k envs as (env states: a list of float64 arrays, generator words (k, 625) uint32, elapsed (k,)
  // int32, done (k,) bool); parallel_pool.pool packs them with their version tag.
  py::tuple Snapshot(const py::object& env_ids);
  // The inverse of Snapshot: env states (a list of 1-d float64 arrays), generator (k, 625) uint32, elapsed,
  // done; all or nothing.
  template <typename T>
  using Dense = py::array_t<T, py::array::c_style | py::array::forcecast>;
  void Restore(const py::object& env_ids, const py::list& env, const Dense<uint32_t>& gen,
               const Dense<int64_t>& elapsed, const Dense<bool>& done);
  py::dict GetConfig(int64_t env_id);
  // values: key -> one value for every env named, or a list/tuple of one value per env named.
  void SetConfig(const py::object& env_ids, const py::dict& values);
  // (k, H, W, 3) uint8 frames of the envs named by env_ids (a 1-d int sequence), drawn in C++.
  py::array Render(const py::object& env_ids);

 private:
  // Serialises API calls; taken with the GIL released when contended so a waiting recv never deadlocks.
  // Refuses the parent's engine in a forked child before touching its mutex (a copy that may be locked forever).
  struct Lock {
    explicit Lock(PyEngine* p) : lk(CheckNotForked(p)->mu, std::try_to_lock), h(p->handle_.get()) {
      if (!lk.owns_lock()) WithoutGil([&](PyThreadState*&) { lk.lock(); });
      h->owner.store(std::this_thread::get_id());
    }
    ~Lock() { h->owner.store(std::thread::id{}); }
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;
    static EngineHandle* CheckNotForked(PyEngine* p) {
      if (p->handle_->stamp.Forked()) throw std::runtime_error(EngineHandle::kForkedMessage);
      return p->handle_.get();
    }
    std::unique_lock<std::timed_mutex> lk;
    EngineHandle* h;
  };

  // caller_recvs: RecvLocked follows at once (Engine::Send's caller_recvs)
  void SendLocked(py::object actions, py::object env_id, bool reset, py::object seeds, bool caller_recvs = false) {
    if (engine_->closed())
      throw std::runtime_error("this pool has been closed; create a new one with parallel_pool.make(...)");
    // env ids
    const int* ids;
    int k;
    std::optional<py::array_t<int32_t>> id_arr;  // not default-constructed: that makes an empty numpy array
    if (env_id.is_none()) {
      ids = all_ids_.data();
      k = static_cast<int>(all_ids_.size());
    } else {
      id_arr = ConvertEnvIds(env_id, num_envs());
      ids = id_arr->data();
      k = static_cast<int>(id_arr->size());
    }
    std::vector<int64_t> seed_vec;
    if (!seeds.is_none()) seed_vec = ConvertSeeds(seeds, k);
    // actions
    if (reset) {
      inputs_.clear();
      engine_->Send(ids, k, inputs_, true, seed_vec.empty() ? nullptr : seed_vec.data());
      return;
    }
    if (actions.is_none()) throw py::value_error("step() needs an action");
    const auto& specs = engine_->spec().action;
    const int rows = engine_->ActionRows(ids, k);
    inputs_.clear();
    uint8_t* block = caller_recvs ? DirectBlock(k, rows) : nullptr;
    if (specs.size() == 1) {  // one action array: no Python list, no allocation (the per-step cost of a 1-env pool)
      py::array a = ConvertAction(specs[0], actions, rows, k);
      inputs_.push_back({static_cast<const uint8_t*>(a.data()), *EngineDType(a.dtype())});
      engine_->Send(ids, k, inputs_, false, nullptr, caller_recvs, block);
      return;
    }
    py::list arrays;
    if (py::isinstance<py::list>(actions)) {
      arrays = actions;
    } else if (py::isinstance<py::tuple>(actions)) {
      arrays = py::list(actions);
    } else {
      arrays.append(actions);
    }
    if (arrays.size() != specs.size()) {
      throw py::value_error("expected " + std::to_string(specs.size()) + " action arrays, got " +
                            std::to_string(arrays.size()));
    }
    std::vector<py::array> keep;  // owns converted copies until Send has copied them into the env slots
    for (size_t a = 0; a < specs.size(); ++a) {
      keep.push_back(ConvertAction(specs[a], arrays[a], rows, k));
      inputs_.push_back({static_cast<const uint8_t*>(keep.back().data()), *EngineDType(keep.back().dtype())});
    }
    engine_->Send(ids, k, inputs_, false, nullptr, caller_recvs, block);
  }

  // The block of a cached result nobody holds (Unheld) with this many env and player rows, for a step (send + recv in
  // one call) of a sync pool to write its rows into: the Recv then returns that result's arrays as they are -- no
  // block from the block pool, no copy, no new arrays, whatever the batch's size. Only while nothing else is pending,
  // so the Recv that follows returns this very batch; nullptr otherwise.
  uint8_t* DirectBlock(int k, int rows) {
    if (!engine_->sync() || engine_->num_pending() != 0) return nullptr;
    for (auto& c : reuse_) {
      if (c.env_rows == k && c.player_rows == rows && Unheld(c)) return c.block;
    }
    return nullptr;
  }

  // engine_->Recv; when close() was asked for while it waited (from a signal handler on this thread, or another
  // thread), the engine is closed here, under the lock this call holds, before the "closed" error propagates.
  RecvResult RecvOrClose(const std::function<bool()>& interrupted) {
    try {
      return engine_->Recv(interrupted);
    } catch (...) {
      if (close_on_return_ && !engine_->closed()) CloseHeld();  // else the thread that asked closes it, once we return
      throw;
    }
  }

  // The next batch. kept (if given): set to the front-end result kept with the batch when it is a refilled
  // cached one whose result nothing else holds (KeepResult); left alone otherwise.
  py::tuple RecvLocked(py::object* kept = nullptr) {
    if (engine_->closed())
      throw std::runtime_error("this pool has been closed; create a new one with parallel_pool.make(...)");
    bool interrupted = false;
    RecvResult r;
    if (engine_->RecvIsQuick()) {
      // nothing to wait for (the batch is complete, or what is left is this thread's own cheap item): the GIL
      // is kept, as for any short C call -- releasing and re-taking it would be pure overhead
      r = RecvOrClose({});
    } else {
      r = WithoutGil([&](PyThreadState*& st) {
        try {
          return RecvOrClose([&] {
            // Ctrl-C: signal handlers run only on the main thread, with the GIL
            PyEval_RestoreThread(st);
            interrupted = PyErr_CheckSignals() != 0;
            st = PyEval_SaveThread();
            return interrupted;
          });
        } catch (const Interrupted&) {
          return RecvResult{};
        }
      });
    }
    if (interrupted) throw py::error_already_set();
    const Layout& L = engine_->layout();
    const bool cache = L.block_bytes <= kReuseMaxBytes || engine_->sync();
    for (auto& c : reuse_) {
      if (cache && c.block == r.block) {  // a step written into this cached result's block (DirectBlock)
        if (kept != nullptr && c.result) {
          *kept = c.result;
          ++results_reused_;
        }
        return c.arrays;
      }
    }
    if (L.block_bytes <= kReuseMaxBytes) {
      for (auto& c : reuse_) {
        if (c.env_rows == r.env_rows && c.player_rows == r.player_rows && Unheld(c)) {
          std::memcpy(c.block, r.block, L.block_bytes);
          engine_->block_pool()->Release(r.block);
          if (kept != nullptr && c.result) {
            *kept = c.result;
            ++results_reused_;
          }
          return c.arrays;
        }
      }
    }
    auto* owner = new BlockOwner{engine_->block_pool(), r.block};
    py::capsule base(owner, [](void* p) {
      auto* o = static_cast<BlockOwner*>(p);
      o->pool->Release(o->ptr);
      delete o;
    });
    // Views over the block, made with numpy's C API directly: py::array's constructor costs a heap-allocated shape
    // and strides per array, which shows in a 1-env step (seven arrays per call).
    auto& api = py::detail::npy_api::get();
    py::tuple out(L.entries.size());
    for (size_t i = 0; i < L.entries.size(); ++i) {
      const auto& e = L.entries[i];
      Py_intptr_t shape[kMaxArrayDims];
      shape[0] = e.per_player ? r.player_rows : r.env_rows;
      for (size_t d = 0; d < e.shape.size(); ++d) shape[d + 1] = e.shape[d];
      PyObject* descr = dtypes_[i].inc_ref().ptr();  // stolen by PyArray_NewFromDescr
      PyObject* a =
          api.PyArray_NewFromDescr_(api.PyArray_Type_, descr, static_cast<int>(e.shape.size() + 1), shape, nullptr,
                                    r.block + e.offset, py::detail::npy_api::NPY_ARRAY_WRITEABLE_, nullptr);
      if (a == nullptr) throw py::error_already_set();
      auto array = py::reinterpret_steal<py::object>(a);
      if (api.PyArray_SetBaseObject_(a, base.inc_ref().ptr()) != 0) throw py::error_already_set();  // steals
      PyTuple_SET_ITEM(out.ptr(), static_cast<py::ssize_t>(i), array.release().ptr());
    }
    if (cache) {  // remember it; the older of the two cached results is dropped
      Reusable& c = reuse_[reuse_next_];
      reuse_next_ ^= 1;
      c.arrays = out;
      c.base = base;
      c.block = r.block;
      c.env_rows = r.env_rows;
      c.player_rows = r.player_rows;
      c.views.clear();
      for (size_t i = 0; i < L.entries.size(); ++i) c.views.push_back(ViewOf(PyTuple_GET_ITEM(out.ptr(), i)));
      c.ForgetResult();
    }
    return out;
  }

  Reusable reuse_[2];
  int reuse_next_ = 0;
  int64_t results_reused_ = 0;     // kept front-end results returned again (tests check that it happens)
  std::vector<uint8_t> last_obs_;  // KeepObs
  int64_t obs_seq_ = 0;
  bool keep_obs_ = false;

  std::shared_ptr<EngineHandle> handle_;  // shared with the XLA handlers, which find it by id
  bool close_on_return_ = false;          // close() was called by a signal handler inside this thread's own call
  Engine* engine_ = nullptr;              // handle_->engine
  std::vector<py::dtype> dtypes_;
  std::vector<ActionInput> inputs_;  // the action arrays of the call in progress (reused: calls hold the API lock)
  py::list names_, per_player_;
  std::vector<int> all_ids_;
};

}  // namespace pp::bindings
