// CUDA XLA FFI handlers for env.xla() (compiled only when CMake finds the CUDA toolkit).
// The engine runs on the host: actions and env ids are copied device -> host on XLA's stream before the send,
// results host -> device on XLA's stream after the recv; the stream is synchronised before the host memory
// (staging vectors, the result block) is reused. UNVERIFIED: written without a GPU to test on.
#include <cuda_runtime_api.h>

#include "core/xla/common.h"
#include "core/xla/xla.h"

namespace pp::xla {
namespace {

struct CudaIO {
  static constexpr bool kHostBuffers = false;
  cudaStream_t stream;
  cudaError_t err = cudaSuccess;

  void Note(cudaError_t e) {
    if (err == cudaSuccess && e != cudaSuccess) err = e;
  }
  const void* ToHost(const ffi::AnyBuffer& b, std::vector<uint8_t>& staging) {
    staging.resize(b.size_bytes());
    if (!staging.empty()) {
      Note(cudaMemcpyAsync(staging.data(), b.untyped_data(), staging.size(), cudaMemcpyDeviceToHost, stream));
    }
    return staging.data();
  }
  void FromHost(void* dst, const void* src, size_t n) {
    if (n) Note(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, stream));
  }
  void DeviceCopy(void* dst, const void* src, size_t n) {
    if (n) Note(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream));
  }
  ffi::Error Flush() {
    Note(cudaStreamSynchronize(stream));
    if (err != cudaSuccess)
      return ffi::Error::Internal(std::string("parallel_pool xla (CUDA): ") + cudaGetErrorString(err));
    return ffi::Error::Success();
  }
};

ffi::Error GpuSend(cudaStream_t stream, int64_t id, ffi::AnyBuffer handle, ffi::RemainingArgs args,
                   ffi::Result<ffi::AnyBuffer> out) {
  CudaIO io{stream};
  return SendImpl(io, id, handle, args, out);
}

ffi::Error GpuRecv(cudaStream_t stream, int64_t id, ffi::AnyBuffer handle, ffi::Result<ffi::AnyBuffer> out,
                   ffi::RemainingRets rets) {
  CudaIO io{stream};
  return RecvImpl(io, id, handle, out, rets);
}

ffi::Error GpuStep(cudaStream_t stream, int64_t id, ffi::AnyBuffer handle, ffi::RemainingArgs args,
                   ffi::Result<ffi::AnyBuffer> out, ffi::RemainingRets rets) {
  CudaIO io{stream};
  return StepImpl(io, id, handle, args, out, rets);
}

XLA_FFI_DEFINE_HANDLER(kGpuSend, GpuSend,
                       ffi::Ffi::Bind()
                           .Ctx<ffi::PlatformStream<cudaStream_t>>()
                           .Attr<int64_t>("engine")
                           .Arg<ffi::AnyBuffer>()
                           .RemainingArgs()
                           .Ret<ffi::AnyBuffer>());
XLA_FFI_DEFINE_HANDLER(kGpuRecv, GpuRecv,
                       ffi::Ffi::Bind()
                           .Ctx<ffi::PlatformStream<cudaStream_t>>()
                           .Attr<int64_t>("engine")
                           .Arg<ffi::AnyBuffer>()
                           .Ret<ffi::AnyBuffer>()
                           .RemainingRets());
XLA_FFI_DEFINE_HANDLER(kGpuStep, GpuStep,
                       ffi::Ffi::Bind()
                           .Ctx<ffi::PlatformStream<cudaStream_t>>()
                           .Attr<int64_t>("engine")
                           .Arg<ffi::AnyBuffer>()
                           .RemainingArgs()
                           .Ret<ffi::AnyBuffer>()
                           .RemainingRets());

void* Ptr(XLA_FFI_Handler* f) { return reinterpret_cast<void*>(f); }

}  // namespace

HandlerList CudaHandlers() {
  return {{"parallel_pool_send", Ptr(kGpuSend)},
          {"parallel_pool_recv", Ptr(kGpuRecv)},
          {"parallel_pool_step", Ptr(kGpuStep)}};
}

}  // namespace pp::xla
