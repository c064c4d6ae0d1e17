// The ViZDoom family's Lockstep (header-only, no ViZDoom needed): calls run concurrently, a failure or a stall
// calls unstick() and is rethrown, and the threads serve many rounds.
#include "core/envs/vizdoom/lockstep.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace pp::vizdoom {
namespace {

using std::chrono::milliseconds;

// generous limits for the calls, for tests that are not meant to reach them; a short settle time
const Lockstep::Limits kLimits{milliseconds(10000), milliseconds(100), milliseconds(10000)};

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
        kLimits, [] { FAIL() << "unstick without a failure"; });
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
        kLimits,
        [&] {
          ++unstuck;
          gate.Open();
        });
  };
  EXPECT_THROW(run(), std::invalid_argument);
  EXPECT_EQ(unstuck, 1);
  // the threads serve the next call
  std::atomic<int> calls{0};
  lockstep.Run([&](int) { ++calls; }, kLimits, [] {});
  EXPECT_EQ(calls.load(), 3);
}

TEST(Lockstep, AfterAFailureTheOthersMayAnswerBeforeUnstick) {
  // player 1 fails at once; player 0 answers 50 ms later by itself (as an engine whose peer died still answers
  // its tic): unstick comes only after that answer, when no call is inside its engine any more
  Lockstep lockstep(2);
  std::atomic<bool> answered{false};
  bool answered_before_unstick = false;
  int unstuck = 0;
  EXPECT_THROW(lockstep.Run(
                   [&](int p) {
                     if (p == 1) throw std::invalid_argument("engine 1 died");
                     std::this_thread::sleep_for(milliseconds(50));
                     answered = true;
                   },
                   {milliseconds(10000), milliseconds(5000), milliseconds(10000)},
                   [&] {
                     ++unstuck;
                     answered_before_unstick = answered.load();
                   }),
               std::invalid_argument);
  EXPECT_EQ(unstuck, 1);  // the game is over for every player all the same
  EXPECT_TRUE(answered_before_unstick);
}

TEST(Lockstep, StallTimesOutAfterUnstick) {
  Lockstep lockstep(2);
  Gate gate;
  int unstuck = 0;
  const auto start = std::chrono::steady_clock::now();
  try {
    lockstep.Run([&](int) { gate.WaitForAll(99); }, {milliseconds(200), milliseconds(100), milliseconds(10000)},
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

// A player whose call ignores unstick (an engine killed while it held its message queue's lock: the call never
// returns). Run gives up after the unstick limit, the Lockstep refuses every later call, and destroying it does not
// wait for the stuck thread, which may still return later without harm. On a Lockstep whose wait after unstick is
// unbounded this test hangs (ctest's timeout ends it).
TEST(Lockstep, CallThatIgnoresUnstickIsAbandoned) {
  auto stuck_gate = std::make_shared<Gate>();  // opened only at the end: unstick does not reach it
  auto returned = std::make_shared<std::atomic<bool>>(false);
  int unstuck = 0;
  std::atomic<int> calls{0};
  auto lockstep = std::make_unique<Lockstep>(2);
  const auto start = std::chrono::steady_clock::now();
  try {
    lockstep->Run(
        [stuck_gate, returned, &calls](int p) {
          ++calls;
          if (p == 0) throw std::invalid_argument("engine 0 died");
          while (!stuck_gate->WaitForAll(99)) {
          }
          returned->store(true);
        },
        {milliseconds(10000), milliseconds(100), milliseconds(300)}, [&] { ++unstuck; });
    FAIL() << "Run returned although player 1 never did";
  } catch (const Lockstep::Abandoned& e) {
    EXPECT_NE(std::string(e.what()).find("player(s) 1 did not return"), std::string::npos) << e.what();
  }
  const auto gave_up = std::chrono::steady_clock::now() - start;
  EXPECT_GE(gave_up, milliseconds(400));  // settle, then the limit after unstick
  EXPECT_LT(gave_up, std::chrono::seconds(4));
  EXPECT_EQ(unstuck, 1);
  EXPECT_TRUE(lockstep->abandoned());
  // every later call is refused at once, without running anything
  EXPECT_THROW(lockstep->Run([&](int) { ++calls; }, kLimits, [&] { ++unstuck; }), Lockstep::Abandoned);
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ(unstuck, 1);
  // destruction does not join the stuck thread
  const auto before_destroy = std::chrono::steady_clock::now();
  lockstep.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - before_destroy, std::chrono::seconds(1));
  // the detached thread's call returns after all: it finds the state it shares intact, and exits
  EXPECT_FALSE(returned->load());
  stuck_gate->Open();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!returned->load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_TRUE(returned->load());
  std::this_thread::sleep_for(milliseconds(50));  // let it finish its bookkeeping and leave (ASan/TSan builds see it)
}

}  // namespace
}  // namespace pp::vizdoom
