// PyEngine's making and closing: the constructor (the config dict to an Engine), reset, and close, which must be
// safe from any thread, from a signal handler inside the engine's own call, in a forked child and at interpreter
// exit. None of it runs per step.
#include "core/bindings/py_engine.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace pp::bindings {

PyEngine::PyEngine(const std::string& type_name, const py::dict& config, const PyThreadPool* thread_pool) {
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

py::tuple PyEngine::Reset(py::object env_id, py::object seeds) {
  Lock lk(this);
  SendLocked(py::none(), env_id, true, seeds);
  return RecvLocked();
}

void PyEngine::Close() {
  if (handle_->stamp.Forked()) return;
  // a signal handler run by PyErr_CheckSignals inside this thread's own recv, which holds the lock: that recv
  // sees the request and closes the engine as it returns
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

std::string PyEngine::CloseBounded() {
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
      handle_->leak = true;  // that call still uses the engine
      return "close(): another thread's call on this pool did not return within the close timeout (the caller "
             "itself runs an env step that never returns); the pool was stopped but not freed";
    }
  }
  return CloseHeld();
}

std::string PyEngine::CloseHeld() {
  std::string warning = engine_->Close(Engine::DefaultCloseTimeout());
  if (engine_->abandoned()) handle_->leak = true;
  return warning;
}

PyEngine::~PyEngine() {
  if (!handle_ || handle_->stamp.Forked()) return;  // ~EngineHandle leaks it
  try {
    CloseBounded();
  } catch (...) {
  }
}

}  // namespace pp::bindings
