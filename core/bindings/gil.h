// WithoutGil: the one way the bindings release the GIL around C++ work (engine calls, thread start and stop). In a
// header of its own because every file of the bindings that waits on the engine uses it.
#pragma once

#include <pybind11/pybind11.h>

#include <cxxabi.h>

#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace pp::bindings {

// Runs f with the GIL released and re-acquires it in ordinary code, never in a destructor: at interpreter
// exit Python ends a daemon thread that re-acquires the GIL with pthread_exit, whose forced unwind must not cross
// a noexcept frame (std::terminate; py::gil_scoped_release's destructor is one). f's exceptions are carried past
// that point; the forced unwind itself is let through. `st` is given to f so it can take the GIL briefly itself.
template <class F>
inline auto WithoutGil(F&& f) {
  using R = decltype(f(std::declval<PyThreadState*&>()));
  PyThreadState* st = PyEval_SaveThread();
  std::exception_ptr err;
  std::conditional_t<std::is_void_v<R>, bool, std::optional<R>> result{};
  try {
    if constexpr (std::is_void_v<R>) {
      f(st);
    } else {
      result.emplace(f(st));
    }
  } catch (abi::__forced_unwind&) {
    throw;
  } catch (...) {
    err = std::current_exception();
  }
  PyEval_RestoreThread(st);
  if (err) std::rethrow_exception(err);
  if constexpr (!std::is_void_v<R>) return std::move(*result);
}

}  // namespace pp::bindings
