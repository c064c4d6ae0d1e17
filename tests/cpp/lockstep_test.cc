// The ViZDoom family's Lockstep (header-only, no ViZDoom needed): calls run concurrently, a failure or a stall
// calls unstick() and is rethrown, and the threads serve many rounds.
#include "core/envs/vizdoom/lockstep.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>

namespace pp::vizdoom {
namespace {

using std::chrono::milliseconds;

// A gate the calls wait at until it opens (as an engine waits for its peers' tic); a wait gives up after 5 s so a
// broken Lockstep fails the test instead of hanging it.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  bool open = false;
  bool WaitForAll(int n) {  // returns false when it gave up
    std::unique_lock<std::mutex> lock(mu);
    if (++arrived == n) open = true;
    cv.notify_all();
    return cv.wait_for(lock, std::chrono::seconds(5), [&] { return open; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
};

TEST(Lockstep, CallsRunConcurrentlyRoundAfterRound) {
  Lockstep lockstep(3);
  std::atomic<int> calls{0};
  for (int round = 0; round < 50; ++round) {
    Gate gate;  // every player must be inside its call at once, as in a network game's tic
    lockstep.Run(
        [&](int) {
          if (!gate.WaitForAll(3)) throw std::runtime_error("the calls did not run together");
          ++calls;
        },
        milliseconds(10000), [] { FAIL() << "unstick without a failure"; });
  }
  EXPECT_EQ(calls.load(), 150);
}

TEST(Lockstep, FailureUnsticksTheOthersAndIsRethrown) {
  Lockstep lockstep(3);
  Gate gate;
  int unstuck = 0;
  auto run = [&] {
    lockstep.Run(
        [&](int p) {
          if (p == 1) throw std::invalid_argument("engine 1 died");
          gate.WaitForAll(99);  // blocked until unstick opens the gate
        },
        milliseconds(10000),
        [&] {
          ++unstuck;
          gate.Open();
        });
  };
  EXPECT_THROW(run(), std::invalid_argument);
  EXPECT_EQ(unstuck, 1);
  // the threads serve the next call
  std::atomic<int> calls{0};
  lockstep.Run([&](int) { ++calls; }, milliseconds(10000), [] {});
  EXPECT_EQ(calls.load(), 3);
}

TEST(Lockstep, StallTimesOutAfterUnstick) {
  Lockstep lockstep(2);
  Gate gate;
  int unstuck = 0;
  const auto start = std::chrono::steady_clock::now();
  try {
    lockstep.Run([&](int) { gate.WaitForAll(99); }, milliseconds(200),
                 [&] {
                   ++unstuck;
                   gate.Open();
                 });
    FAIL() << "no timeout";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("stalled"), std::string::npos) << e.what();
  }
  EXPECT_EQ(unstuck, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));
}

}  // namespace
}  // namespace pp::vizdoom
