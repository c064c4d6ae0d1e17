// Timing one work item for the pool's cost estimate (Engine::UpdateCost), robust to other processes on the machine.
#pragma once

#include <chrono>
#include <cstdint>

#ifdef __linux__
#include <sys/resource.h>
#endif

namespace pp {

inline int64_t WallNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A costly item's clock readings: wall time, and (Linux) this thread's CPU time and involuntary context switches.
// Reading them is one ~1 us syscall: for items that cost 100 us or more.
struct ItemClock {
  int64_t wall = 0, cpu = 0, preempted = 0;

  static ItemClock Now() {
    ItemClock c;
    c.wall = WallNs();
    c.cpu = c.wall;
#ifdef RUSAGE_THREAD
    rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) == 0) {
      c.cpu = (int64_t{ru.ru_utime.tv_sec} + ru.ru_stime.tv_sec) * 1000000000 +
              (int64_t{ru.ru_utime.tv_usec} + ru.ru_stime.tv_usec) * 1000;
      c.preempted = ru.ru_nivcsw;
    }
#endif
    return c;
  }

  // The item's cost: its wall time (which includes time an env spends blocked, e.g. waiting on a game process),
  // or its CPU time when another process preempted this thread meanwhile -- then the wall time mostly measures
  // that other process.
  int64_t CostSince(const ItemClock& t0) const { return preempted != t0.preempted ? cpu - t0.cpu : wall - t0.wall; }
};

}  // namespace pp
