// The per-call methods of _core.Engine (step, send, recv and the kept-result calls) as METH_FASTCALL methods,
// without pybind11's dispatcher (fast_calls.cc).
#pragma once

#include <pybind11/pybind11.h>

namespace pp::bindings {

// Installs them on the Engine class (module.cc, after its pybind11 methods).
void AddFastCalls(pybind11::handle engine_class);

}  // namespace pp::bindings
