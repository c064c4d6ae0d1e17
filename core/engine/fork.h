// Fork detection. A child forked from a process with live pools has copies of their mutexes (possibly locked by a
// thread that does not exist in the child) and none of their worker threads. Every pool records the fork
// generation it was created in; entry points compare it (an atomic load, cheaper than getpid()) and refuse the
// parent's pools in a child, and destructors leak them instead of joining threads that are not there.
#pragma once

#include <atomic>
#include <cstdint>

#ifdef __unix__
#include <pthread.h>
#endif

namespace pp {

class ForkGeneration {
 public:
  // 0 in the original process, incremented in the child of every fork().
  static uint64_t Current() {
    static const bool installed = Install();
    (void)installed;
    return Counter().load(std::memory_order_relaxed);
  }

 private:
  static std::atomic<uint64_t>& Counter() {
    static std::atomic<uint64_t> n{0};
    return n;
  }
  static bool Install() {
#ifdef __unix__
    pthread_atfork(nullptr, nullptr, [] { Counter().fetch_add(1, std::memory_order_relaxed); });
#endif
    return true;
  }
};

// Remembers the generation of its creation; Forked() is true in a child process.
class ForkStamp {
 public:
  bool Forked() const { return ForkGeneration::Current() != gen_; }

 private:
  uint64_t gen_ = ForkGeneration::Current();
};

}  // namespace pp
