// The _core module: what Python sees of the C++ engine, registered here (functions, ThreadPool, Engine, EnvError,
// the XLA targets) with the docstrings of the public names. The classes behind them: py_engine.h (Engine),
// py_thread_pool.h (ThreadPool); conversions: convert.h; the per-call fast methods: fast_calls.cc.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <random>
#include <string>

#include "core/bench/bare_loop.h"
#include "core/bindings/convert.h"
#include "core/bindings/fast_calls.h"
#include "core/bindings/gil.h"
#include "core/bindings/py_engine.h"
#include "core/bindings/py_thread_pool.h"
#include "core/engine/engine.h"
#include "core/engine/registry.h"
#include "core/xla/xla.h"

namespace pp::bindings {
namespace {

// ---- docstrings of the public names (parallel_pool.ThreadPool, parallel_pool.EnvError) ---------------------------

constexpr const char* kThreadPoolDoc = R"(Worker threads that several pools share.

Pools made with ``parallel_pool.make(..., thread_pool=tp)`` step their envs on these threads instead of starting
threads of their own (a training and an evaluation pool, or several tasks, on one set of threads, which does not
oversubscribe a small machine). Each pool keeps its own queue and batch order; the threads serve the pools that have
work in turn. A pool made with it takes its number of threads (``num_threads`` of ``make()`` must be 0 or this
number) and cannot pin threads (``thread_affinity_offset``).

Each pool on it holds the threads: dropping this object keeps its pools running, and the threads stop once it is
closed (or dropped) and the last pool on it is closed.

``ThreadPool(num_threads=0)`` starts ``num_threads`` worker threads, in [0, 4096]; 0 (the default) means one per
CPU this process may run on (its affinity mask, capped by its cgroup's CPU quota). (Said here rather than in an Args
section: the reference reads compiled classes without their constructor's signature.)

Attributes:
    num_threads: the number of worker threads.
    closed: whether ``close()`` has stopped the threads.
    num_pools: how many open pools use it.

Raises:
    ValueError: ``num_threads`` is outside [0, 4096].
    RuntimeError: the system refused to start a thread (its thread limit is reached).

Example:
    >>> tp = parallel_pool.ThreadPool(4)
    >>> train = parallel_pool.make("CartPole-v1", num_envs=16, thread_pool=tp)
    >>> evaluate = parallel_pool.make("CartPole-v1", num_envs=4, thread_pool=tp)
)";

constexpr const char* kThreadPoolCloseDoc = R"(Stops the worker threads; nothing happens if they are stopped already.

The threads finish the step they are in. A pool can no longer be made with this ThreadPool (``make()`` raises
ValueError).

Raises:
    RuntimeError: pools still use it (close them first; it changes nothing then).
)";

constexpr const char* kEnvErrorDoc = R"(An env failed during a call: raised by step(), recv(), send() and reset().

It is raised when an env raised an exception on a worker thread (a C++ env) or in its worker process (an env
written in Python), and when the worker process of Python envs died (its envs are lost: reset them to start a new
worker). In a sync pool the other results of that batch are dropped and the failed envs restart on their next step;
in an async pool the failed envs are reset in place and the next recv() returns the whole batch (``batch_kept``).
A subclass of RuntimeError.

Attributes:
    env_ids (list[int]): the envs that failed, in the order their failures were seen.
    messages (list[str]): what each failure reported: the exception's text (a Python env's traceback) per env that
        raised; for a worker that died, the cause of its death.
    batch_kept (bool): True when the failed envs were reset in place and the next recv() returns this whole batch
        (their rows holding the first observation of a new episode); False when the batch was dropped.
)";

}  // namespace
}  // namespace pp::bindings

PYBIND11_MODULE(_core, m) {
  using namespace pp;
  using namespace pp::bindings;
  m.doc() = "ParallelPool C++ engine";
  static py::exception<EnvError> env_error(m, "EnvError", PyExc_RuntimeError);
  env_error.attr("__doc__") = kEnvErrorDoc;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const EnvError& e) {
      // the exception object carries which envs failed, so callers can act on them without parsing the message
      py::object exc = py::handle(env_error.ptr())(e.what());
      exc.attr("env_ids") = py::cast(e.env_ids);
      exc.attr("messages") = py::cast(e.messages);
      exc.attr("batch_kept") = py::bool_(e.batch_kept);
      PyErr_SetObject(env_error.ptr(), exc.ptr());
    } catch (const char* what) {  // libraries that throw strings (ALE): their text, not "unknown exception"
      PyErr_SetString(PyExc_RuntimeError, what);
    } catch (const std::string& what) {
      PyErr_SetString(PyExc_RuntimeError, what.c_str());
    }
  });

  m.def("env_classes", [] {
    py::dict out;
    for (const auto& [name, t] : Registry::Get().types()) {
      py::list keys;
      for (const auto& k : t.keys) {
        keys.append(py::make_tuple(k.name, ConfigValueToPy(k.default_value), k.doc, k.choices));
      }
      out[py::str(name)] = keys;
    }
    return out;
  });
  m.def("num_cores", &NumCores,
        "the CPUs this process may run on (affinity mask, capped by the cgroup's CPU quota): what num_threads=0 "
        "counts");
  m.def("common_config_keys", [] {
    py::list out;
    for (const auto& k : CommonConfigKeys()) out.append(k.name);
    return out;
  });
  m.def("tasks", [] {
    py::dict out;
    for (const auto& [id, v] : Registry::Get().tasks()) {
      py::dict ov;
      for (const auto& [k, val] : v.second) ov[py::str(k)] = ConfigValueToPy(val);
      out[py::str(id)] = py::make_tuple(v.first, ov);
    }
    return out;
  });
  m.def("spec", [](const std::string& type, const py::dict& config) {
    const EnvClass& t = FindType(type);
    return SpecToDict(t.make_spec(MakeConfig(t, config)));
  });

  // The physical-limit benchmark: one env (or num_envs, round robin) stepped in a tight C++ loop on this thread
  // (core/bench/bare_loop.h).
  m.def(
      "bare_step_loop",
      [](const std::string& type, const py::dict& config, double seconds, int64_t min_steps, int num_envs) {
        const EnvClass& t = FindType(type);
        const Config c = MakeConfig(t, config);
        BareResult r;
        WithoutGil([&](PyThreadState*&) { r = BareStepLoop(t, c, seconds, min_steps, num_envs); });
        py::dict out;
        out["steps"] = r.steps;
        out["resets"] = r.resets;
        out["seconds"] = r.seconds;
        out["cpu_seconds"] = r.cpu_seconds;
        return out;
      },
      py::arg("env_class"), py::arg("config"), py::arg("seconds"), py::arg("min_steps") = 1, py::arg("num_envs") = 1);

  py::class_<PyThreadPool>(m, "ThreadPool", kThreadPoolDoc)
      .def(py::init<int64_t>(), py::arg("num_threads") = 0)
      .def("close", &PyThreadPool::Close, kThreadPoolCloseDoc)
      .def_property_readonly("num_threads", &PyThreadPool::num_threads)
      .def_property_readonly("closed", &PyThreadPool::closed)
      .def_property_readonly("num_pools", &PyThreadPool::num_pools);
  py::class_<PyEngine> engine(m, "Engine");
  engine
      .def(py::init<const std::string&, const py::dict&, const PyThreadPool*>(), py::arg("env_class"),
           py::arg("config"), py::arg("thread_pool") = nullptr)
      .def("reset", &PyEngine::Reset, py::arg("env_id") = py::none(), py::arg("seeds") = py::none())
      .def("close", &PyEngine::Close)
      .def("num_players", &PyEngine::num_players)
      .def("get_state", &PyEngine::GetState)
      .def("set_state", &PyEngine::SetState)
      .def("get_config", &PyEngine::GetConfig, py::arg("env_id"))
      .def("snapshot", &PyEngine::Snapshot, py::arg("env_ids"))
      .def("restore", &PyEngine::Restore, py::arg("env_ids"), py::arg("env"), py::arg("generator"), py::arg("elapsed"),
           py::arg("done"))
      .def("set_config", &PyEngine::SetConfig, py::arg("env_ids"), py::arg("values"))
      .def("render", &PyEngine::Render, py::arg("env_ids"))
      .def_property_readonly("closed", &PyEngine::closed)
      .def_property_readonly("output_names", &PyEngine::output_names)
      .def_property_readonly("output_per_player", &PyEngine::output_per_player)
      .def_property_readonly("num_envs", &PyEngine::num_envs)
      .def_property_readonly("batch_size", &PyEngine::batch_size)
      .def_property_readonly("num_threads", &PyEngine::num_threads)
      .def_property_readonly("spec", &PyEngine::spec)
      .def_property_readonly("output_specs", &PyEngine::output_specs)
      .def_property_readonly("_handle_id", &PyEngine::handle_id)
      .def_property_readonly("_batched_steps", &PyEngine::batched_steps)
      .def_property_readonly("_shared_sends", &PyEngine::shared_sends)
      .def_property_readonly("_results_reused", &PyEngine::results_reused)
      .def_property_readonly("_obs_seq", &PyEngine::obs_seq)
      .def("_last_obs", &PyEngine::last_obs)
      .def("_keep_obs", &PyEngine::keep_obs);
  // the per-call methods, without pybind11's dispatcher (fast_calls.cc)
  AddFastCalls(engine);

  // XLA FFI handlers (compiled in when the build found jaxlib's headers), as PyCapsules for
  // jax.ffi.register_ffi_target: {"cpu": {name: capsule}, "CUDA": {...}}.
  py::dict xla_targets;
  for (const auto& [platform, handlers] : xla::Handlers()) {
    py::dict d;
    for (const auto& [name, fn] : handlers) d[py::str(name)] = py::capsule(fn);
    xla_targets[py::str(platform)] = d;
  }
  m.attr("xla_targets") = xla_targets;
  m.attr("has_xla") = py::bool_(xla::kEnabled);
  // the words of an env's generator state in a snapshot (Env::GeneratorState: std::mt19937's words, its position)
  m.attr("snapshot_generator_words") = py::int_(Generator::state_size + 1);
}
