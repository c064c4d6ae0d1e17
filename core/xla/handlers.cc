// CPU XLA FFI handlers for env.xla(): send, recv and step (send + recv in one call).
// Each takes the engine id as the attribute "engine" and the handle array as input 0, which comes back as output 0
// (aliased), so a chain of calls is ordered by data dependency as well as by being side-effecting.
#include "core/xla/common.h"
#include "core/xla/xla.h"

namespace pp::xla {
namespace {

ffi::Error CpuSend(int64_t id, ffi::AnyBuffer handle, ffi::RemainingArgs args, ffi::Result<ffi::AnyBuffer> out) {
  HostIO io;
  return SendImpl(io, id, handle, args, out);
}

ffi::Error CpuRecv(int64_t id, ffi::AnyBuffer handle, ffi::Result<ffi::AnyBuffer> out, ffi::RemainingRets rets) {
  HostIO io;
  return RecvImpl(io, id, handle, out, rets);
}

ffi::Error CpuStep(int64_t id, ffi::AnyBuffer handle, ffi::RemainingArgs args, ffi::Result<ffi::AnyBuffer> out,
                   ffi::RemainingRets rets) {
  HostIO io;
  return StepImpl(io, id, handle, args, out, rets);
}

XLA_FFI_DEFINE_HANDLER(
    kCpuSend, CpuSend,
    ffi::Ffi::Bind().Attr<int64_t>("engine").Arg<ffi::AnyBuffer>().RemainingArgs().Ret<ffi::AnyBuffer>());
XLA_FFI_DEFINE_HANDLER(
    kCpuRecv, CpuRecv,
    ffi::Ffi::Bind().Attr<int64_t>("engine").Arg<ffi::AnyBuffer>().Ret<ffi::AnyBuffer>().RemainingRets());
XLA_FFI_DEFINE_HANDLER(kCpuStep, CpuStep,
                       ffi::Ffi::Bind()
                           .Attr<int64_t>("engine")
                           .Arg<ffi::AnyBuffer>()
                           .RemainingArgs()
                           .Ret<ffi::AnyBuffer>()
                           .RemainingRets());

void* Ptr(XLA_FFI_Handler* f) { return reinterpret_cast<void*>(f); }

}  // namespace

std::vector<std::pair<std::string, HandlerList>> Handlers() {
  std::vector<std::pair<std::string, HandlerList>> out;
  out.push_back({"cpu",
                 {{"parallel_pool_send", Ptr(kCpuSend)},
                  {"parallel_pool_recv", Ptr(kCpuRecv)},
                  {"parallel_pool_step", Ptr(kCpuStep)}}});
#ifdef PP_WITH_XLA_CUDA
  out.push_back({"CUDA", CudaHandlers()});
#endif
  return out;
}

}  // namespace pp::xla
