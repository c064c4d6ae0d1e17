// Engine.step / send / recv and the kept-result calls as METH_FASTCALL methods: pybind11's generic dispatch (a call
// record, a type caster per argument, the overload loop, keyword matching) cost more than a 1-env CartPole step.
// They take the same arguments, by position or by name, and raise what the pybind11 methods raised (pybind11's own
// translators). PyEngine's per-call methods are inline in py_engine.h, so they compile into these functions.
#include "core/bindings/fast_calls.h"

#include <cxxabi.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "core/bindings/py_engine.h"

namespace pp::bindings {
namespace {

// ---- the hot calls without pybind11's dispatcher ---------------------------------------------------------------
// Engine.step / send / recv are METH_FASTCALL methods: pybind11's generic dispatch (a call record, a type caster
// per argument, the overload loop, keyword matching) cost more than a 1-env CartPole step. They take the same
// arguments, by position or by name, and raise what the pybind11 methods raised (pybind11's own translators).

// The arguments of a METH_FASTCALL | METH_KEYWORDS call matched to `names`, by position or keyword; those not given
// are nullptr (the method's default). TypeError, as Python's own, for too many, unknown, repeated or missing ones.
template <size_t N>
std::array<PyObject*, N> Arguments(const char* fn, const std::array<const char*, N>& names, size_t required,
                                   PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  std::array<PyObject*, N> out{};
  if (static_cast<size_t>(nargs) > N) {
    throw py::type_error(std::string(fn) + "() takes at most " + std::to_string(N) + " arguments (" +
                         std::to_string(nargs) + " given)");
  }
  std::copy(args, args + nargs, out.begin());
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t j = 0; j < nkw; ++j) {
    const char* key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, j));
    if (key == nullptr) throw py::error_already_set();
    size_t i = 0;
    while (i < N && std::strcmp(names[i], key) != 0) ++i;
    if (i == N) throw py::type_error(std::string(fn) + "() got an unexpected keyword argument '" + key + "'");
    if (out[i] != nullptr) throw py::type_error(std::string(fn) + "() got multiple values for argument '" + key + "'");
    out[i] = args[nargs + j];
  }
  for (size_t i = 0; i < required; ++i) {
    if (out[i] == nullptr) throw py::type_error(std::string(fn) + "() missing required argument '" + names[i] + "'");
  }
  return out;
}

py::object ArgOr(PyObject* arg, py::object dflt) {
  return arg == nullptr ? std::move(dflt) : py::reinterpret_borrow<py::object>(arg);
}

// The PyEngine of `self` (the method descriptor has checked that self is an Engine).
PyEngine& EngineOf(PyObject* self) {
  auto* engine = reinterpret_cast<py::detail::instance*>(self)->get_value_and_holder().value_ptr<PyEngine>();
  if (engine == nullptr) throw py::type_error("Engine.__init__() was not called");
  return *engine;
}

// f() as a Python method's result: a new reference, or nullptr with the Python error set (C++ exceptions through
// the translators pybind11 would apply; detail::try_translate_exceptions is in pybind11 >= 2.13.6, pyproject.toml).
template <class F>
PyObject* AsMethodResult(F&& f) {
  try {
    return f().release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
    return nullptr;
  } catch (abi::__forced_unwind&) {
    throw;
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

PyObject* EngineStep(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return AsMethodResult([&] {
    const auto a = Arguments<2>("step", {"actions", "env_id"}, 1, args, nargs, kwnames);
    return py::object(EngineOf(self).Step(ArgOr(a[0], py::none()), ArgOr(a[1], py::none())));
  });
}

PyObject* EngineSend(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return AsMethodResult([&] {
    const auto a = Arguments<4>("send", {"actions", "env_id", "reset", "seeds"}, 2, args, nargs, kwnames);
    bool reset = false;
    if (a[2] != nullptr) {
      const int truth = PyObject_IsTrue(a[2]);
      if (truth < 0) throw py::error_already_set();
      reset = truth == 1;
    }
    EngineOf(self).Send(ArgOr(a[0], py::none()), ArgOr(a[1], py::none()), reset, ArgOr(a[3], py::none()));
    return py::object(py::none());
  });
}

PyObject* EngineRecv(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return AsMethodResult([&] {
    Arguments<0>("recv", {}, 0, args, nargs, kwnames);
    return py::object(EngineOf(self).Recv());
  });
}

PyObject* EngineStepKept(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return AsMethodResult([&] {
    const auto a = Arguments<1>("_step_kept", {"actions"}, 1, args, nargs, kwnames);
    return py::object(EngineOf(self).StepKept(ArgOr(a[0], py::none())));
  });
}

PyObject* EngineRecvKept(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return AsMethodResult([&] {
    Arguments<0>("_recv_kept", {}, 0, args, nargs, kwnames);
    return py::object(EngineOf(self).RecvKept());
  });
}

PyObject* EngineKeepResult(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return AsMethodResult([&] {
    const auto a = Arguments<2>("_keep_result", {"arrays", "result"}, 2, args, nargs, kwnames);
    EngineOf(self).KeepResult(a[0], a[1]);
    return py::object(py::none());
  });
}

// Installs def as a method of cls (a method descriptor: it checks that self is an Engine).
void AddFastMethod(py::handle cls, PyMethodDef* def) {
  py::object descr =
      py::reinterpret_steal<py::object>(PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), def));
  if (!descr) throw py::error_already_set();
  cls.attr(def->ml_name) = descr;
}

}  // namespace

void AddFastCalls(py::handle engine_class) {
  // the definitions must outlive the module
  static PyMethodDef fast[] = {
      {"step", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&EngineStep)), METH_FASTCALL | METH_KEYWORDS,
       "step(actions, env_id=None): send the actions to the envs env_id (default: all) and return recv()'s batch"},
      {"send", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&EngineSend)), METH_FASTCALL | METH_KEYWORDS,
       "send(actions, env_id, reset=False, seeds=None): queue a step (or a reset) of the envs env_id"},
      {"recv", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&EngineRecv)), METH_FASTCALL | METH_KEYWORDS,
       "recv(): wait for the next batch and return it as a tuple of arrays"},
      {"_step_kept", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&EngineStepKept)),
       METH_FASTCALL | METH_KEYWORDS,
       "_step_kept(actions): step every env; (the batch, the result _keep_result kept with it or None)"},
      {"_recv_kept", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&EngineRecvKept)),
       METH_FASTCALL | METH_KEYWORDS,
       "_recv_kept(): recv(); (the batch, the result _keep_result kept with its arrays or None)"},
      {"_keep_result", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&EngineKeepResult)),
       METH_FASTCALL | METH_KEYWORDS,
       "_keep_result(arrays, result): keep a front-end result made of a batch's arrays, reused with the batch"},
  };
  for (auto& def : fast) AddFastMethod(engine_class, &def);
}

}  // namespace pp::bindings
