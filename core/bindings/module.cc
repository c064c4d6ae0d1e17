// pybind11 glue. One generic class serves every registered env class: nothing here is env-specific.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cxxabi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/bench/bare_loop.h"
#include "core/engine/engine.h"
#include "core/engine/handle.h"
#include "core/engine/registry.h"
#include "core/xla/xla.h"

namespace py = pybind11;

namespace pp {
namespace {

py::dtype ToNumpy(DType d) { return py::dtype(DTypeName(d)); }

py::object ConfigValueToPy(const ConfigValue& v) {
  switch (v.index()) {
    case 0: return py::bool_(std::get<bool>(v));
    case 1: return py::int_(std::get<int64_t>(v));
    case 2: return py::float_(std::get<double>(v));
    default: return py::str(std::get<std::string>(v));
  }
}

std::string TypeNameOf(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")).cast<std::string>(); }

// A Python int as int64, or ValueError naming `what` when it does not fit (never a wrapped value).
int64_t ToInt64(const std::string& what, py::handle h) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow != 0) {
    throw py::value_error(what + " is " + py::str(h).cast<std::string>() + ", which does not fit in a 64-bit integer");
  }
  return v;
}

// A config value of the type the key's default has (an int is accepted for a float key).
ConfigValue PyToConfigValue(const std::string& key, const ConfigValue& default_value, py::handle h) {
  const std::string what = "config key '" + key + "'";
  auto wrong = [&](const char* want) {
    return py::type_error(what + " must be " + want + ", got " + TypeNameOf(h) + " " + py::repr(h).cast<std::string>());
  };
  // numpy scalars count as their Python counterparts
  const bool is_bool = py::isinstance<py::bool_>(h) || py::isinstance(h, py::module_::import("numpy").attr("bool_"));
  const bool is_int = !is_bool && py::hasattr(h, "__index__");
  switch (default_value.index()) {
    case 0:
      if (!is_bool) throw wrong("a bool");
      return py::bool_(py::reinterpret_borrow<py::object>(h)).cast<bool>();
    case 1: {
      if (!is_int) throw wrong("an int");
      py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
      if (!index) throw py::error_already_set();  // a broken __index__
      return ToInt64(what, index);
    }
    case 2:
      if (is_bool || !(is_int || py::isinstance<py::float_>(h) || py::hasattr(h, "__float__"))) throw wrong("a number");
      return py::float_(py::reinterpret_borrow<py::object>(h)).cast<double>();
    default:
      if (!py::isinstance<py::str>(h)) throw wrong("a str");
      return h.cast<std::string>();
  }
}

const EnvClass& FindType(const std::string& name) {
  auto& types = Registry::Get().types();
  auto it = types.find(name);
  if (it == types.end()) throw py::value_error("unknown env class '" + name + "'");
  return it->second;
}

Config MakeConfig(const EnvClass& type, const py::dict& d) {
  std::map<std::string, ConfigValue> values;
  for (const auto& k : type.keys) values[k.name] = k.default_value;
  for (auto item : d) {
    std::string key = item.first.cast<std::string>();
    auto it = values.find(key);
    if (it == values.end()) throw py::value_error("unknown config key '" + key + "'");
    it->second = PyToConfigValue(key, it->second, item.second);
  }
  return Config(std::move(values));
}

py::dict ConfigToDict(const Config& c) {
  py::dict d;
  for (const auto& [k, v] : c.values()) d[py::str(k)] = ConfigValueToPy(v);
  return d;
}

// A config dict whose values may be lists or tuples of one value per env (per-env values; parallel_pool.registry
// has checked which keys may vary): the pool's config (env 0's values) and, when a key varies, one config per env.
std::pair<Config, std::vector<Config>> MakeEnvConfigs(const EnvClass& type, const py::dict& d) {
  py::dict scalars;
  std::vector<std::pair<std::string, py::list>> varying;
  for (auto item : d) {
    if (py::isinstance<py::list>(item.second) || py::isinstance<py::tuple>(item.second)) {
      py::list values(py::reinterpret_borrow<py::object>(item.second));
      const std::string key = item.first.cast<std::string>();
      if (values.empty()) throw py::value_error("config key '" + key + "': an empty list of per-env values");
      scalars[item.first] = values[0];
      varying.emplace_back(key, values);
    } else {
      scalars[item.first] = item.second;
    }
  }
  Config base = MakeConfig(type, scalars);
  std::vector<Config> per_env;
  if (varying.empty()) return {std::move(base), std::move(per_env)};
  const int64_t n = base.Get<int64_t>("num_envs");
  for (const auto& [key, values] : varying) {
    if (static_cast<int64_t>(values.size()) != n) {
      throw py::value_error("config key '" + key + "' has " + std::to_string(values.size()) + " per-env values for " +
                            std::to_string(n) + " envs");
    }
  }
  per_env.assign(static_cast<size_t>(n), base);
  for (const auto& [key, values] : varying) {
    const ConfigValue& def = base.values().at(key);
    for (int64_t i = 0; i < n; ++i) per_env[i].mutable_values()[key] = PyToConfigValue(key, def, values[i]);
  }
  return {std::move(base), std::move(per_env)};
}

py::dict ArrayToDict(const ArraySpec& a) {
  py::dict d;
  d["name"] = a.name;
  d["dtype"] = DTypeName(a.dtype);
  d["shape"] = py::tuple(py::cast(a.shape));
  d["low"] = a.low;
  d["high"] = a.high;
  d["per_player"] = a.per_player;
  return d;
}

py::dict SpecToDict(const Spec& s) {
  py::dict d;
  py::list obs, info, act;
  for (const auto& a : s.obs) obs.append(ArrayToDict(a));
  for (const auto& a : s.info) info.append(ArrayToDict(a));
  for (const auto& a : s.action) act.append(ArrayToDict(a));
  d["obs"] = obs;
  d["info"] = info;
  d["action"] = act;
  d["reward_dtype"] = DTypeName(s.reward_dtype);
  d["max_players"] = s.num_players_max;
  d["render_shape"] = py::tuple(py::cast(s.render_shape));
  return d;
}

// Runs f with the GIL released and re-acquires it in ordinary code, never in a destructor: at interpreter
// exit Python ends a daemon thread that re-acquires the GIL with pthread_exit, whose forced unwind must not cross
// a noexcept frame (std::terminate; py::gil_scoped_release's destructor is one). f's exceptions are carried past
// that point; the forced unwind itself is let through. `st` is given to f so it can take the GIL briefly itself.
template <class F>
auto WithoutGil(F&& f) {
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

constexpr size_t kMaxArrayDims = 16;  // dims of a result array, the row dimension included (checked per pool)

struct BlockOwner {
  std::shared_ptr<BlockPool> pool;
  uint8_t* ptr;
};

// parallel_pool.ThreadPool: worker threads that several pools share (make(..., thread_pool=tp)). Each engine on it
// holds the C++ ThreadPool, so the threads stop when the ThreadPool is closed or dropped and the last pool on it is
// closed.
class PyThreadPool {
 public:
  explicit PyThreadPool(int64_t num_threads) {
    const int n = ThreadPoolSize(num_threads);
    WithoutGil([&](PyThreadState*&) { threads_ = std::make_shared<ThreadPool>(n, std::clamp(NumCores() - 1, 1, n)); });
  }
  ~PyThreadPool() = default;  // the pools on it keep it; its destructor joins idle threads only
  void Close() {
    WithoutGil([&](PyThreadState*&) { threads_->Close(); });
  }
  // the thread pool for a new engine; std::invalid_argument once closed (make() raises ValueError)
  std::shared_ptr<ThreadPool> ForEngine() const { return threads_; }
  int num_threads() const { return threads_->num_threads(); }
  bool closed() const { return threads_->closed(); }
  int num_pools() const { return threads_->clients(); }

 private:
  std::shared_ptr<ThreadPool> threads_;
};

class PyEngine {
 public:
  PyEngine(const std::string& type_name, const py::dict& config, const PyThreadPool* thread_pool) {
    const EnvClass& type = FindType(type_name);
    auto [c, per_env] = MakeEnvConfigs(type, config);
    std::shared_ptr<ThreadPool> shared = thread_pool ? thread_pool->ForEngine() : nullptr;
    WithoutGil([&](PyThreadState*&) {
      handle_ = EngineHandle::Create(std::make_unique<Engine>(type, c, std::move(per_env), std::move(shared)));
    });
    engine_ = handle_->engine.get();
    const Layout& L = engine_->layout();
    for (const auto& e : L.entries) {
      if (e.shape.size() + 1 > kMaxArrayDims) throw std::invalid_argument("output '" + e.name + "' has too many dims");
      dtypes_.push_back(ToNumpy(e.dtype));
      names_.append(e.name);
      per_player_.append(e.per_player);
    }
    all_ids_.resize(engine_->options().num_envs);
    for (int i = 0; i < static_cast<int>(all_ids_.size()); ++i) all_ids_[i] = i;
  }

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

  py::tuple Reset(py::object env_id, py::object seeds) {
    Lock lk(this);
    SendLocked(py::none(), env_id, true, seeds);
    return RecvLocked();
  }

  // Safe from any thread, any number of times; in a forked child it leaves the parent's pool alone. A call in
  // progress on another thread finishes first -- for at most PARALLEL_POOL_CLOSE_TIMEOUT seconds; then it is woken
  // (it raises "closed"). Workers stuck in a step that never returns are abandoned with a RuntimeWarning.
  void Close() {
    if (handle_->stamp.Forked()) return;
    // a signal handler run by PyErr_CheckSignals inside this thread's own recv, which holds the lock: that recv
    // sees the request and closes the pool as it returns
    if (handle_->owner.load() == std::this_thread::get_id()) {
      close_on_return_ = true;
      engine_->RequestStop();
      return;
    }
    std::string warning = WithoutGil([&](PyThreadState*&) { return CloseBounded(); });
    if (!warning.empty() && PyErr_WarnEx(PyExc_RuntimeWarning, warning.c_str(), 1) != 0) {
      throw py::error_already_set();
    }
  }

  // Closes the pool, waiting a bounded time for a call in progress; "" or what was left undone. Never touches
  // Python (the destructor runs it with the GIL held: worker threads never take the GIL).
  std::string CloseBounded() {
    std::unique_lock<std::timed_mutex> lk(handle_->mu, std::defer_lock);
    // try_lock in a loop rather than try_lock_for: libstdc++ implements that with pthread_mutex_clocklock, which
    // ThreadSanitizer (GCC 12) does not see, so it reported this lock's unlock and everything it guards as races
    auto lock_within = [&lk](std::chrono::milliseconds limit) {
      const auto until = std::chrono::steady_clock::now() + limit;
      while (!lk.try_lock()) {
        if (std::chrono::steady_clock::now() >= until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      return true;
    };
    const auto timeout = Engine::DefaultCloseTimeout();
    if (!lock_within(timeout)) {
      engine_->RequestStop();  // wakes that call (a recv waiting for a step that does not end)
      if (!lock_within(std::chrono::seconds(2))) {
        handle_->leak = true;  // that call still uses the pool
        return "close(): another thread's call on this pool did not return within the close timeout (the caller "
               "itself runs an env step that never returns); the pool was stopped but not freed";
      }
    }
    return CloseHeld();
  }

  // Engine::Close under the API lock the caller holds; an engine that abandoned workers is never freed (they use it).
  std::string CloseHeld() {
    std::string warning = engine_->Close(Engine::DefaultCloseTimeout());
    if (engine_->abandoned()) handle_->leak = true;
    return warning;
  }

  // Waits (bounded) for a call in progress on another thread (only possible at interpreter exit, from a daemon
  // thread) before the pool goes away, instead of destroying it under that call. Runs with the GIL held: worker
  // threads never take it, and a destructor must not re-acquire it (see WithoutGil).
  ~PyEngine() {
    if (!handle_ || handle_->stamp.Forked()) return;  // ~EngineHandle leaks it
    try {
      CloseBounded();
    } catch (...) {
    }
  }

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
  uint32_t num_envs_u() const { return static_cast<uint32_t>(engine_->options().num_envs); }
  int64_t shared_sends() const { return engine_->shared_sends(); }
  int64_t results_reused() const { return results_reused_; }
  std::vector<double> GetState(int64_t env_id) {
    Lock lk(this);
    return engine_->GetState(env_id);
  }
  void SetState(int64_t env_id, const std::vector<double>& state) {
    Lock lk(this);
    engine_->SetState(env_id, state);
  }
  // Snapshots of k envs as (env states: a list of float64 arrays, generator words (k, 625) uint32, elapsed (k,)
  // int32, done (k,) bool); parallel_pool.pool packs them with their version tag.
  py::tuple Snapshot(const py::object& env_ids) {
    py::array_t<int32_t> ids = ConvertEnvIds(env_ids);
    const int k = static_cast<int>(ids.size());
    std::vector<Engine::EnvSnapshot> snaps;
    {
      Lock lk(this);
      snaps = engine_->Snapshot(ids.data(), k);
    }
    py::list env;
    const py::ssize_t words = static_cast<py::ssize_t>(std::mt19937::state_size + 1);
    py::array_t<uint32_t> gen({static_cast<py::ssize_t>(k), words});
    py::array_t<int32_t> elapsed(k);
    py::array_t<bool> done(k);
    for (int i = 0; i < k; ++i) {
      env.append(py::array_t<double>(static_cast<py::ssize_t>(snaps[i].env.size()), snaps[i].env.data()));
      if (static_cast<py::ssize_t>(snaps[i].generator.size()) != words) throw std::runtime_error("generator state");
      std::copy(snaps[i].generator.begin(), snaps[i].generator.end(), gen.mutable_data(i, 0));
      elapsed.mutable_at(i) = static_cast<int32_t>(snaps[i].elapsed);
      done.mutable_at(i) = snaps[i].done;
    }
    return py::make_tuple(env, gen, elapsed, done);
  }
  // The inverse of Snapshot: env states (a list of 1-d float64 arrays), generator (k, 625) uint32, elapsed,
  // done; all or nothing.
  template <typename T>
  using Dense = py::array_t<T, py::array::c_style | py::array::forcecast>;
  void Restore(const py::object& env_ids, const py::list& env, const Dense<uint32_t>& gen,
               const Dense<int64_t>& elapsed, const Dense<bool>& done) {
    py::array_t<int32_t> ids = ConvertEnvIds(env_ids);
    const int k = static_cast<int>(ids.size());
    const py::ssize_t words = static_cast<py::ssize_t>(std::mt19937::state_size + 1);
    if (static_cast<int>(env.size()) != k || gen.ndim() != 2 || gen.shape(0) != k || gen.shape(1) != words ||
        elapsed.size() != k || done.size() != k) {
      throw py::value_error("restore: the snapshot arrays do not hold " + std::to_string(k) + " envs");
    }
    std::vector<Engine::EnvSnapshot> snaps(k);
    for (int i = 0; i < k; ++i) {
      snaps[i].env = env[i].cast<std::vector<double>>();
      snaps[i].generator.assign(gen.data(i, 0), gen.data(i, 0) + words);
      snaps[i].elapsed = elapsed.at(i);
      snaps[i].done = done.at(i);
    }
    Lock lk(this);
    engine_->Restore(ids.data(), k, snaps);
  }
  py::dict GetConfig(int64_t env_id) {
    Lock lk(this);
    return ConfigToDict(engine_->GetConfig(env_id));
  }
  // values: key -> one value for every env named, or a list/tuple of one value per env named.
  void SetConfig(const py::object& env_ids, const py::dict& values) {
    py::array_t<int32_t> ids = ConvertEnvIds(env_ids);
    const int k = static_cast<int>(ids.size());
    Lock lk(this);
    std::vector<Config> configs;
    for (int i = 0; i < k; ++i) {
      Config c = engine_->GetConfig(ids.data()[i]);
      for (auto item : values) {
        const std::string key = item.first.cast<std::string>();
        auto it = c.mutable_values().find(key);
        if (it == c.mutable_values().end()) throw py::value_error("unknown config key '" + key + "'");
        py::handle v = item.second;
        if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
          py::list per(py::reinterpret_borrow<py::object>(v));
          if (static_cast<int>(per.size()) != k) {
            throw py::value_error("config key '" + key + "' has " + std::to_string(per.size()) + " values for " +
                                  std::to_string(k) + " env ids");
          }
          v = per[i];
        }
        it->second = PyToConfigValue(key, it->second, v);
      }
      configs.push_back(std::move(c));
    }
    WithoutGil([&](PyThreadState*&) { engine_->SetConfig(ids.data(), k, configs); });
  }
  // (k, H, W, 3) uint8 frames of the envs named by env_ids (a 1-d int sequence), drawn in C++.
  py::array Render(const py::object& env_ids) {
    py::array_t<int32_t> ids = ConvertEnvIds(env_ids);
    const auto& shape = engine_->spec().render_shape;
    if (shape.size() != 2) throw py::value_error("render: this env class has no C++ renderer");
    py::array_t<uint8_t> out(
        {ids.size(), static_cast<py::ssize_t>(shape[0]), static_cast<py::ssize_t>(shape[1]), py::ssize_t{3}});
    Lock lk(this);
    engine_->Render(ids.data(), static_cast<int>(ids.size()), out.mutable_data());
    return out;
  }

 private:
  // Serialises API calls; taken with the GIL released when contended so a waiting recv never deadlocks.
  // Refuses the parent's pool in a forked child before touching its mutex (a copy that may be locked forever).
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
      id_arr = ConvertEnvIds(env_id);
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

  // Env ids given from Python (any integer dtype, 0-d or 1-d) as int32, range-checked in 64 bit before narrowing.
  py::array_t<int32_t> ConvertEnvIds(py::handle env_id) const {
    auto& api = py::detail::npy_api::get();
    if (api.PyArray_Check_(env_id.ptr())) {
      // the common argument, a batch's own env_id array (an async loop's send): int32, 1-d, contiguous. Read in
      // place; the range check without a branch per id (Engine::Send checks each id again, with its message)
      const auto* a = py::detail::array_proxy(env_id.ptr());
      const auto* d = py::detail::array_descriptor_proxy(a->descr);
      const int need = py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_ | py::detail::npy_api::NPY_ARRAY_ALIGNED_;
      if (a->nd == 1 && d->type_num == py::detail::npy_api::NPY_INT32_ && d->byteorder != '>' &&
          (a->flags & need) == need) {
        const auto* p = reinterpret_cast<const int32_t*>(a->data);
        uint32_t outside = 0;  // an id < 0 wraps to >= 2**31 as unsigned
        for (py::ssize_t i = 0; i < a->dimensions[0]; ++i) outside |= static_cast<uint32_t>(p[i]) >= num_envs_u();
        if (!outside) return py::reinterpret_borrow<py::array_t<int32_t>>(env_id);
      }
    }
    py::array raw = py::array::ensure(env_id);
    if (!raw) throw py::type_error("env_id must be an array of integers");
    char kind = raw.dtype().kind();
    if (kind != 'i' && kind != 'u') {
      throw py::type_error("env_id must be integers, got dtype " + py::str(raw.dtype()).cast<std::string>());
    }
    if (raw.ndim() > 1) throw py::value_error("env_id must be a 1-d array of env ids");
    // (an int32 array in place was taken above; here other dtypes, layouts, and ids to name in an error)
    auto as64 = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(raw);
    const int64_t* p = as64.data();
    for (py::ssize_t i = 0; i < as64.size(); ++i) {
      if (p[i] < 0 || p[i] >= num_envs()) {
        throw py::value_error("env_id " + std::to_string(p[i]) + " is out of range: this pool has env ids 0.." +
                              std::to_string(num_envs() - 1));
      }
    }
    return py::array_t<int32_t, py::array::c_style | py::array::forcecast>::ensure(raw);
  }

  // One seed per env being reset, each an int in [0, 2**63 - 1] (Engine::Send rejects negatives by name; here
  // only what cannot even be held in int64).
  static std::vector<int64_t> ConvertSeeds(py::handle seeds, int k) {
    py::array raw = py::array::ensure(seeds);
    if (!raw || raw.ndim() != 1 || raw.size() != k || (raw.dtype().kind() != 'i' && raw.dtype().kind() != 'u')) {
      throw py::value_error("seeds must be a 1-d array of " + std::to_string(k) +
                            " integers (one per env being reset)");
    }
    std::vector<int64_t> out(static_cast<size_t>(k));
    py::list values = raw.attr("tolist")();  // Python ints: exact for every integer dtype, uint64 included
    for (int i = 0; i < k; ++i) out[static_cast<size_t>(i)] = ToInt64("seed", values[static_cast<size_t>(i)]);
    return out;
  }

  // The engine dtype of a numpy dtype, if it is one of them.
  static std::optional<DType> EngineDType(const py::dtype& d) {
    // native-byte-order builtin dtypes are singletons, so identity is the exact test; looked up once (a
    // py::dtype::of per call and dtype showed in the per-step cost), and never freed (as a module-level object)
    static const auto* table = new std::vector<std::pair<py::dtype, DType>>{
        {py::dtype::of<int32_t>(), DType::kInt32}, {py::dtype::of<int64_t>(), DType::kInt64},
        {py::dtype::of<float>(), DType::kFloat32}, {py::dtype::of<double>(), DType::kFloat64},
        {py::dtype::of<uint8_t>(), DType::kUInt8}, {py::dtype::of<bool>(), DType::kBool}};
    for (const auto& [dtype, engine] : *table) {
      if (d.is(dtype)) return engine;
    }
    return std::nullopt;
  }

  // The common action: a C-contiguous ndarray of the action's own integer or float kind, in an engine dtype, with
  // the expected shape. It is handed to the engine as is; anything else goes through ConvertAction's checks.
  static bool IsUsableAsIs(const ArraySpec& a, py::handle obj, int rows) {
    if (!py::isinstance<py::array>(obj)) return false;
    auto arr = py::reinterpret_borrow<py::array>(obj);
    if (!(arr.flags() & py::array::c_style)) return false;
    const std::optional<DType> d = EngineDType(arr.dtype());
    if (!d) return false;
    const bool ints = *d == DType::kInt32 || *d == DType::kInt64;
    const bool floats = *d == DType::kFloat32 || *d == DType::kFloat64;
    if (!(IsIntegral(a.dtype) ? ints : floats)) return false;
    const py::ssize_t nd = arr.ndim(), want = static_cast<py::ssize_t>(a.shape.size());
    const py::ssize_t* shape = arr.shape();
    int lead = 0;  // (rows, *shape), or a single row's shape alone
    if (nd == want + 1 && shape[0] == rows) {
      lead = 1;
    } else if (!(nd == want && rows == 1)) {
      return false;
    }
    for (py::ssize_t i = 0; i < want; ++i) {
      if (shape[i + lead] != a.shape[static_cast<size_t>(i)]) return false;
    }
    return true;
  }

  // The action as a C-contiguous array in an engine dtype of the same kind, values untouched: the range check
  // happens in Engine::Send, in this dtype, before anything is narrowed. Only dtypes the engine does not have are
  // widened here (int8/int16/uint16/uint32 -> int64, float16 -> float32), which loses nothing; uint64 values
  // above 2**63 - 1 are out of every action's range and are reported here.
  py::array ConvertAction(const ArraySpec& a, py::handle obj, int rows, int k) {
    if (IsUsableAsIs(a, obj, rows)) return py::reinterpret_borrow<py::array>(obj);
    py::array raw = py::array::ensure(obj);
    if (!raw) throw py::type_error("action '" + a.name + "' must be array-like");
    char kind = raw.dtype().kind();
    bool want_int = IsIntegral(a.dtype);
    if (want_int && kind != 'i' && kind != 'u' && kind != 'b') {
      throw py::type_error("action '" + a.name + "' must be integers (dtype " + DTypeName(a.dtype) + "), got dtype " +
                           py::str(raw.dtype()).cast<std::string>());
    }
    if (!want_int && kind != 'f' && kind != 'i' && kind != 'u') {
      throw py::type_error("action '" + a.name + "' must be numeric (dtype " + DTypeName(a.dtype) + "), got dtype " +
                           py::str(raw.dtype()).cast<std::string>());
    }
    CheckActionShape(a, raw, rows, k);
    if (EngineDType(raw.dtype()).has_value()) return py::array::ensure(raw, py::array::c_style);
    if (kind == 'u' && raw.dtype().itemsize() == 8) CheckUInt64Action(a, raw);
    py::dtype wide(kind == 'f' ? "float32" : "int64");
    if (kind == 'f' && raw.dtype().itemsize() > 4) wide = py::dtype("float64");  // longdouble: nearest we have
    return py::array::ensure(raw.attr("astype")(wide, py::arg("order") = "C"));
  }

  static void CheckUInt64Action(const ArraySpec& a, const py::array& raw) {
    auto c = py::array_t<uint64_t, py::array::c_style | py::array::forcecast>::ensure(raw);
    const size_t per = a.NumElements();
    for (py::ssize_t i = 0; i < c.size(); ++i) {
      if (c.data()[i] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        double lo = a.low.empty() ? 0 : a.low[0], hi = a.high.empty() ? 0 : a.high[0];
        if (a.low.size() > 1) lo = a.low[static_cast<size_t>(i) % per], hi = a.high[static_cast<size_t>(i) % per];
        throw py::value_error(ActionRangeError(a.name, static_cast<size_t>(i) / per, std::to_string(c.data()[i]),
                                               static_cast<int64_t>(lo), static_cast<int64_t>(hi)));
      }
    }
  }

  // expected shape: (rows, *shape); a single row may also be given without its leading dimension
  static void CheckActionShape(const ArraySpec& a, const py::array& raw, int rows, int k) {
    std::vector<py::ssize_t> want{rows};
    for (int s : a.shape) want.push_back(s);
    bool ok = static_cast<size_t>(raw.ndim()) == want.size();
    for (size_t i = 0; ok && i < want.size(); ++i) ok = raw.shape(static_cast<py::ssize_t>(i)) == want[i];
    if (!ok && rows == 1 && static_cast<size_t>(raw.ndim()) == a.shape.size()) {
      ok = true;
      for (size_t i = 0; ok && i < a.shape.size(); ++i) ok = raw.shape(static_cast<py::ssize_t>(i)) == a.shape[i];
    }
    if (!ok) {
      std::string got = py::str(py::tuple(py::cast(std::vector<py::ssize_t>(raw.shape(), raw.shape() + raw.ndim()))));
      std::string exp = py::str(py::tuple(py::cast(want)));
      std::string why = rows == k ? std::to_string(rows) + " envs in this call"
                                  : std::to_string(rows) + " player rows of " + std::to_string(k) + " envs";
      throw py::value_error("action '" + a.name + "' has shape " + got + ", expected " + exp + " (" + why + ")");
    }
  }

  // The block of a cached result nobody holds (Unheld) with this many env and player rows, for a step (send + recv in
  // one call) of a sync pool to write its rows into: the Recv then returns that result's arrays as they are -- no
  // block from the pool, no copy, no new arrays, whatever the batch's size. Only while nothing else is pending, so
  // the Recv that follows returns this very batch; nullptr otherwise.
  uint8_t* DirectBlock(int k, int rows) {
    if (!engine_->sync() || engine_->num_pending() != 0) return nullptr;
    for (auto& c : reuse_) {
      if (c.env_rows == k && c.player_rows == rows && Unheld(c)) return c.block;
    }
    return nullptr;
  }

  // engine_->Recv; when close() was asked for while it waited (from a signal handler on this thread, or another
  // thread), the pool is closed here, under the lock this call holds, before the "closed" error propagates.
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

  // Reuse of result arrays (docs/decisions.md, "Engine: result arrays that no caller holds"): a small batch's
  // arrays cost more to make than to fill, so the last two results are kept and one that nobody else references
  // any more is refilled (its block overwritten with the new batch) and returned again. Held arrays never change:
  // every way to reach a block from Python goes through the tuple, one of its arrays or the capsule (numpy points
  // a view of our arrays, and memoryviews their exporter, at those objects), so reference counts of 1 (the
  // tuple: our cache; each array: the tuple) and of n + 1 (the capsule: the n arrays and our cache) mean no
  // one else can read the block. An array whose attributes were changed in place (shape, strides, dtype, flags)
  // is not reused. Two results, so that the loop `obs = step(policy(obs))` (holding step k's arrays during step
  // k + 1) reuses k - 1's. A step of a sync pool writes its rows into the block of such a result directly
  // (DirectBlock), so there the results of batches of any size are kept; other batches are copied into a kept
  // block only up to kReuseMaxBytes (larger ones get new arrays: their cost is small per row, a copy's is not).
  static constexpr size_t kReuseMaxBytes = 8192;
  struct View {
    void* data;
    PyObject* descr;
    int nd, flags;
    std::vector<Py_intptr_t> dims, strides;
  };
  struct Container {
    PyObject* obj;    // a tuple or dict of the kept result (alive while the result is unchanged)
    Py_ssize_t refs;  // the references it has from within the result (+ ours, for the result itself)
    Py_ssize_t size;  // a dict's number of items when kept; -1 for a tuple (immutable)
  };
  struct Reusable {
    py::tuple arrays;
    py::object base;
    uint8_t* block = nullptr;
    int env_rows = -1, player_rows = -1;
    std::vector<View> views;
    // A front-end result made of these arrays (KeepResult), reused with them. extra[i]: its references to array i;
    // containers: its tuples and dicts, each after the one holding it; items: each dict's keys and values as
    // kept, in that order.
    py::object result;
    std::vector<Py_ssize_t> extra;
    std::vector<Container> containers;
    std::vector<PyObject*> items;
    void ForgetResult() {
      result = py::object();
      extra.assign(views.size(), 0);
      containers.clear();
      items.clear();
    }
  };
  static constexpr int kMaxResultDepth = 4;
  static constexpr size_t kMaxResultContainers = 16;
  // Records what of `obj` (a part of a front-end result) Unheld must check: its tuples and dicts (exact types) and
  // its references to the batch's arrays. False when the result cannot be kept: deeper or larger than the limits,
  // or with a part that could change without a trace in what we check (a list, any other object) -- other numpy
  // arrays (gymnasium's `_key` masks) only when read-only, and immutable scalars and strings.
  bool Walk(Reusable& c, PyObject* obj, int depth) {
    for (size_t i = 0; i < c.extra.size(); ++i) {
      if (obj == PyTuple_GET_ITEM(c.arrays.ptr(), static_cast<py::ssize_t>(i))) {
        ++c.extra[i];
        return true;
      }
    }
    const bool tuple = PyTuple_CheckExact(obj), dict = PyDict_CheckExact(obj);
    if (!tuple && !dict) {
      if (py::isinstance<py::array>(obj)) {
        return !(py::detail::array_proxy(obj)->flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_);
      }
      return obj == Py_None || PyBool_Check(obj) || PyLong_CheckExact(obj) || PyFloat_CheckExact(obj) ||
             PyUnicode_CheckExact(obj) || PyBytes_CheckExact(obj);
    }
    for (auto& seen : c.containers) {
      if (seen.obj == obj) {
        ++seen.refs;
        return true;
      }
    }
    if (depth > kMaxResultDepth || c.containers.size() >= kMaxResultContainers) return false;
    c.containers.push_back({obj, depth == 0 ? 0 : 1, tuple ? -1 : PyDict_GET_SIZE(obj)});
    if (tuple) {
      for (py::ssize_t i = 0; i < PyTuple_GET_SIZE(obj); ++i) {
        if (!Walk(c, PyTuple_GET_ITEM(obj, i), depth + 1)) return false;
      }
      return true;
    }
    // the dict's items right after it is recorded (ResultUnheld reads them in that order), then its values' parts
    const size_t first = c.items.size();
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(obj, &pos, &key, &value)) {
      if (!PyUnicode_CheckExact(key)) return false;
      c.items.push_back(key);
      c.items.push_back(value);
    }
    const size_t end = c.items.size();
    for (size_t i = first + 1; i < end; i += 2) {
      if (!Walk(c, c.items[i], depth + 1)) return false;
    }
    return true;
  }
  // The kept result is held by nobody else and unchanged: each container has exactly its references from within
  // the result, and each dict its kept items. Parents are checked before their parts, so every object compared is
  // alive (held by a part already found unchanged); pointers are only compared, never followed, until then.
  static bool ResultUnheld(const Reusable& c) {
    size_t k = 0;
    for (const Container& ct : c.containers) {
      if (Py_REFCNT(ct.obj) != ct.refs) return false;
      if (ct.size < 0) continue;
      if (!PyDict_CheckExact(ct.obj) || PyDict_GET_SIZE(ct.obj) != ct.size) return false;
      Py_ssize_t pos = 0;
      PyObject *key, *value;
      while (PyDict_Next(ct.obj, &pos, &key, &value)) {
        if (key != c.items[k] || value != c.items[k + 1]) return false;
        k += 2;
      }
    }
    return true;
  }
  static View ViewOf(PyObject* a) {
    const auto* p = py::detail::array_proxy(a);
    return View{
        p->data, p->descr, p->nd, p->flags, {p->dimensions, p->dimensions + p->nd}, {p->strides, p->strides + p->nd}};
  }
  static bool Unheld(const Reusable& c) {
    if (!c.arrays || Py_REFCNT(c.arrays.ptr()) != 1) return false;
    const py::ssize_t n = static_cast<py::ssize_t>(c.views.size());
    if (Py_REFCNT(c.base.ptr()) != n + 1) return false;
    for (py::ssize_t i = 0; i < n; ++i) {
      PyObject* a = PyTuple_GET_ITEM(c.arrays.ptr(), i);
      if (Py_REFCNT(a) != 1 + c.extra[static_cast<size_t>(i)]) return false;
      const auto* p = py::detail::array_proxy(a);
      const View& v = c.views[static_cast<size_t>(i)];
      if (p->data != v.data || p->descr != v.descr || p->nd != v.nd || p->flags != v.flags) return false;
      for (int d = 0; d < v.nd; ++d) {  // a loop, not std::equal: that is a memcmp call per array
        if (p->dimensions[d] != v.dims[static_cast<size_t>(d)] || p->strides[d] != v.strides[static_cast<size_t>(d)]) {
          return false;
        }
      }
    }
    return !c.result || ResultUnheld(c);
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

// ---- docstrings of the public names (parallel_pool.ThreadPool, parallel_pool.EnvError) ---------------------------

constexpr const char* kThreadPoolDoc = R"(Worker threads that several pools share.

Pools made with ``parallel_pool.make(..., thread_pool=tp)`` step their envs on these threads instead of starting
threads of their own (a training and an evaluation pool, or several tasks, on one set of threads, which does not
oversubscribe a small machine). Each pool keeps its own queue and batch order; the threads serve the pools that have
work in turn. A pool made with it takes its number of threads (``num_threads`` of ``make()`` must be 0 or this
number) and cannot pin threads (``thread_affinity_offset``).

Each pool on it holds the threads: dropping this object keeps its pools running, and the threads stop once it is
closed (or dropped) and the last pool on it is closed.

Args:
    num_threads: how many worker threads, in [0, 4096]; 0 (the default) means one per CPU this process may run on
        (its affinity mask, capped by its cgroup's CPU quota).

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
}  // namespace pp

PYBIND11_MODULE(_core, m) {
  using namespace pp;
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

  // The physical-limit benchmark: one env stepped in a tight C++ loop on this thread (core/bench/bare_loop.h).
  m.def(
      "bare_step_loop",
      [](const std::string& type, const py::dict& config, double seconds, int64_t min_steps) {
        const EnvClass& t = FindType(type);
        const Config c = MakeConfig(t, config);
        BareResult r;
        WithoutGil([&](PyThreadState*&) { r = BareStepLoop(t, c, seconds, min_steps); });
        py::dict out;
        out["steps"] = r.steps;
        out["resets"] = r.resets;
        out["seconds"] = r.seconds;
        out["cpu_seconds"] = r.cpu_seconds;
        return out;
      },
      py::arg("env_class"), py::arg("config"), py::arg("seconds"), py::arg("min_steps") = 1);

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
      .def("_get_state", &PyEngine::GetState)
      .def("_set_state", &PyEngine::SetState)
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
  // the per-call methods, without pybind11's dispatcher (see EngineStep); the definitions must outlive the module
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
  for (auto& def : fast) AddFastMethod(engine, &def);

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
  m.attr("snapshot_generator_words") = py::int_(std::mt19937::state_size + 1);
}
