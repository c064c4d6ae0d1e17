#include "core/engine/item_clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace pp {
namespace {

TEST(ItemClock, PreemptedItemCostsItsCpuTime) {
  const ItemClock t0{0, 0, 3};
  // 10 ms of wall time of which this thread ran 0.3 ms, preempted once: the cost is the CPU time
  EXPECT_EQ((ItemClock{10000000, 300000, 4}.CostSince(t0)), 300000);
  // not preempted (e.g. blocked on a game process): the wall time, whatever the CPU time
  EXPECT_EQ((ItemClock{10000000, 300000, 3}.CostSince(t0)), 10000000);
}

TEST(ItemClock, NowTracksWallAndCpuTime) {
  const ItemClock t0 = ItemClock::Now();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const ItemClock slept = ItemClock::Now();
  EXPECT_GE(slept.wall - t0.wall, 20000000);
#ifdef RUSAGE_THREAD
  EXPECT_LT(slept.cpu - t0.cpu, 10000000);  // sleeping costs (almost) no CPU time
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  while (std::chrono::steady_clock::now() < until) {
  }
  EXPECT_GE(ItemClock::Now().cpu - slept.cpu, 5000000);  // spinning does (a loaded machine may preempt some)
#endif
}

}  // namespace
}  // namespace pp
