// XLA FFI entry points of the engine (env.xla()): what the pybind11 module exposes to Python as PyCapsules.
// This header needs no jax headers; the handlers themselves are compiled only when the build found jaxlib's
// FFI headers (PP_WITH_XLA), and their CUDA variants only when it also found the CUDA toolkit (PP_WITH_XLA_CUDA).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace pp::xla {

// (target name, handler function pointer) per platform name as jax.ffi.register_ffi_target spells it.
using HandlerList = std::vector<std::pair<std::string, void*>>;

#ifdef PP_WITH_XLA
inline constexpr bool kEnabled = true;
std::vector<std::pair<std::string, HandlerList>> Handlers();
#else
inline constexpr bool kEnabled = false;
inline std::vector<std::pair<std::string, HandlerList>> Handlers() { return {}; }
#endif

#ifdef PP_WITH_XLA_CUDA
HandlerList CudaHandlers();
#endif

}  // namespace pp::xla
