// An Engine together with the mutex that serialises calls into its API, shared by every front-end that drives it
// (the pybind11 module on Python threads, the XLA FFI handlers on XLA's threads), and a process-wide table that
// finds a live engine by a small integer id. A front-end that outlives the Python object (a compiled XLA program
// holds only the id) looks the engine up per call and gets a clear error instead of a dangling pointer.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <unordered_map>

#include "core/engine/engine.h"
#include "core/engine/fork.h"

namespace pp {

struct EngineHandle {
  std::unique_ptr<Engine> engine;
  // held for the whole of each send / recv / close / state call; timed, so that close() waits a bounded time for
  // a call stuck in an env that never returns
  std::timed_mutex mu;
  std::atomic<std::thread::id> owner{};  // the thread holding `mu` (a signal handler's close() inside its own recv)
  bool leak = false;  // the engine abandoned worker threads that still use it (Engine::Close): never destroy it
  int64_t id = 0;
  ForkStamp stamp;  // in a forked child the engine is unusable: checked before taking `mu`

  EngineHandle() = default;
  EngineHandle(const EngineHandle&) = delete;
  EngineHandle& operator=(const EngineHandle&) = delete;
  ~EngineHandle() {
    // a forked child has no worker threads to join and maybe a copy of a locked mutex; an abandoned engine is still
    // in use by its stuck workers: leak the engine
    if (stamp.Forked() || leak) (void)engine.release();
  }

  static constexpr const char* kForkedMessage =
      "this pool belongs to the parent process: a forked child cannot use it (its worker threads exist only in "
      "the parent); create a new pool in the child";

  // Creates the handle and lists it in the table; the table holds only a weak reference.
  static std::shared_ptr<EngineHandle> Create(std::unique_ptr<Engine> engine) {
    auto h = std::make_shared<EngineHandle>();
    h->engine = std::move(engine);
    Table& t = GetTable();
    std::lock_guard<std::mutex> lk(t.mu);
    h->id = ++t.next_id;
    t.map[h->id] = h;
    // drop entries of engines that are gone, so the table stays as small as the set of live engines
    if (t.map.size() > 2 * t.live_hint + 16) {
      for (auto it = t.map.begin(); it != t.map.end();) it = it->second.expired() ? t.map.erase(it) : std::next(it);
      t.live_hint = t.map.size();
    }
    return h;
  }

  // The live engine with this id, or nullptr when it was destroyed (or never existed).
  static std::shared_ptr<EngineHandle> Find(int64_t id) {
    Table& t = GetTable();
    std::lock_guard<std::mutex> lk(t.mu);
    auto it = t.map.find(id);
    if (it == t.map.end()) return nullptr;
    auto h = it->second.lock();
    if (!h) t.map.erase(it);
    return h;
  }

 private:
  struct Table {
    std::mutex mu;
    std::unordered_map<int64_t, std::weak_ptr<EngineHandle>> map;
    int64_t next_id = 0;
    size_t live_hint = 0;
  };
  static Table& GetTable() {
    static Table* t = [] {
      auto* table = new Table();  // never destroyed: handlers may run during interpreter shutdown
#ifdef __unix__
      // a forked child gets a fresh table lock (the parent's may have been held by another thread)
      pthread_atfork(nullptr, nullptr, [] { new (&GetTable().mu) std::mutex(); });
#endif
      return table;
    }();
    return *t;
  }
};

}  // namespace pp
