#include "core/engine/work_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace pp {
namespace {

WorkItem Item(int env) { return WorkItem{nullptr, 0, 1, {env}}; }

TEST(WorkQueue, PopsInPushOrder) {
  WorkQueue q(8);
  std::vector<WorkItem> items{Item(3), Item(1), Item(2)};
  q.Push(items.data(), items.size(), 0, 1);
  WorkItem out;
  for (int want : {3, 1, 2}) {
    ASSERT_TRUE(q.TryPop(&out));
    EXPECT_EQ(out.env_ids[0], want);
  }
  EXPECT_FALSE(q.TryPop(&out));
}

TEST(WorkQueue, WrapsAroundItsRing) {
  WorkQueue q(3);
  WorkItem out;
  for (int round = 0; round < 5; ++round) {
    std::vector<WorkItem> items{Item(round), Item(round + 10)};
    q.Push(items.data(), items.size(), 0, 1);
    ASSERT_TRUE(q.TryPop(&out));
    EXPECT_EQ(out.env_ids[0], round);
    ASSERT_TRUE(q.TryPop(&out));
    EXPECT_EQ(out.env_ids[0], round + 10);
  }
}

WorkItem LaneItem(int env, int lane) {
  WorkItem it = Item(env);
  it.lane = lane;
  return it;
}

// A taker with a lane gets its lane's oldest item near the front, the others keeping their order; one without, or
// whose lane has none there, gets the oldest.
TEST(WorkQueue, ATakerWithALaneTakesItsOwnItemsFirst) {
  WorkQueue q(32);
  std::vector<WorkItem> items{LaneItem(0, 0), LaneItem(1, 1), LaneItem(2, 0), LaneItem(3, 1), LaneItem(4, -1)};
  q.Push(items.data(), items.size(), 0, 1);
  WorkItem out;
  ASSERT_TRUE(q.TryPop(&out, 1));  // the oldest is lane 0's: lane 1 takes its own oldest instead
  EXPECT_EQ(out.env_ids[0], 1);
  ASSERT_TRUE(q.TryPop(&out, 1));
  EXPECT_EQ(out.env_ids[0], 3);
  ASSERT_TRUE(q.TryPop(&out, 0));
  EXPECT_EQ(out.env_ids[0], 0);
  ASSERT_TRUE(q.TryPop(&out, 1));  // none of lane 1's left: it takes the oldest, whatever its lane
  EXPECT_EQ(out.env_ids[0], 2);
  ASSERT_TRUE(q.TryPop(&out, 0));  // an item of no lane is anyone's
  EXPECT_EQ(out.env_ids[0], 4);
  EXPECT_FALSE(q.TryPop(&out, 0));
}

TEST(WorkQueue, ALaneIsLookedForOnlyNearTheFront) {
  WorkQueue q(32);
  std::vector<WorkItem> items;
  for (size_t i = 0; i < WorkQueue::kLaneScan; ++i) items.push_back(LaneItem(static_cast<int>(i), 0));
  items.push_back(LaneItem(99, 1));  // past the scan
  q.Push(items.data(), items.size(), 0, 1);
  WorkItem out;
  ASSERT_TRUE(q.TryPop(&out, 1));  // lane 1's item is too deep: the oldest
  EXPECT_EQ(out.env_ids[0], 0);
  ASSERT_TRUE(q.TryPop(&out, 1));  // now within the scan
  EXPECT_EQ(out.env_ids[0], 99);
  for (size_t i = 1; i < WorkQueue::kLaneScan; ++i) {  // the others, in their order
    ASSERT_TRUE(q.TryPop(&out, 0));
    EXPECT_EQ(out.env_ids[0], static_cast<int>(i));
  }
  EXPECT_FALSE(q.TryPop(&out, 0));
}

TEST(WorkQueue, TheOldestIsPassedOverOnlyAFewTimes) {
  WorkQueue q(32);
  std::vector<WorkItem> items{LaneItem(0, 0)};
  for (int i = 1; i <= WorkQueue::kMaxPassedOver + 1; ++i) items.push_back(LaneItem(i, 1));
  q.Push(items.data(), items.size(), 0, 1);
  WorkItem out;
  for (int i = 1; i <= WorkQueue::kMaxPassedOver; ++i) {
    ASSERT_TRUE(q.TryPop(&out, 1));
    EXPECT_EQ(out.env_ids[0], i);
  }
  ASSERT_TRUE(q.TryPop(&out, 1));  // lane 0's item has waited long enough: taken, lane 1's still queued
  EXPECT_EQ(out.env_ids[0], 0);
}

TEST(WorkQueue, NoneIsPassedOverWhileASpinningWorkerSleeps) {
  WorkQueue q(32);
  std::thread worker([&] {
    WorkItem out;
    while (q.Pop(&out, 1, 0)) {  // spins 1 ns, then sleeps as a spinner: nothing wakes it before Stop
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::vector<WorkItem> items{LaneItem(0, 0), LaneItem(1, 1)};
  q.Push(items.data(), items.size(), 0, 1);  // want 0: the sleeping worker is not woken
  WorkItem out;
  ASSERT_TRUE(q.TryPop(&out, 1));  // the oldest, though lane 1's item is right behind it
  EXPECT_EQ(out.env_ids[0], 0);
  q.Stop();
  worker.join();
}

TEST(WorkQueue, SleepingWorkerIsWokenByPush) {
  WorkQueue q(4);
  std::atomic<int> got{-1};
  std::thread worker([&] {
    WorkItem out;
    if (q.Pop(&out, 0)) got = out.env_ids[0];  // no spinning: goes straight to sleep
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  WorkItem it = Item(7);
  q.Push(&it, 1, 1, 1);
  worker.join();
  EXPECT_EQ(got.load(), 7);
}

TEST(WorkQueue, WakesOnlyTheShortfallOfAwakeWorkers) {
  EXPECT_EQ(WorkQueue::WakeShortfall(1, 2, 1), 0);  // the awake one covers it
  EXPECT_EQ(WorkQueue::WakeShortfall(2, 2, 1), 1);
  EXPECT_EQ(WorkQueue::WakeShortfall(2, 2, 2), 2);
  EXPECT_EQ(WorkQueue::WakeShortfall(8, 4, 3), 3);  // never more than are asleep
  EXPECT_EQ(WorkQueue::WakeShortfall(0, 4, 4), 0);
  EXPECT_EQ(WorkQueue::WakeShortfall(1, 4, 0), 0);
}

TEST(WorkQueue, SleeperIsWokenWhenTheAwakeWorkersFallShort) {
  WorkQueue q(4);
  std::atomic<int> got{-1};
  std::thread worker([&] {
    WorkItem out;
    if (q.Pop(&out, 0)) got = out.env_ids[0];
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  WorkItem it = Item(5);
  q.Push(&it, 1, 2, 2);  // want both of 2 workers awake, one is (this test's thread stands for it): wake the other
  worker.join();
  EXPECT_EQ(got.load(), 5);
}

TEST(WorkQueue, StopWakesEverySleeperWithFalse) {
  WorkQueue q(4);
  std::atomic<int> stopped{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < 3; ++i) {
    workers.emplace_back([&] {
      WorkItem out;
      if (!q.Pop(&out, 10)) ++stopped;
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  q.Stop();
  for (auto& w : workers) w.join();
  EXPECT_EQ(stopped.load(), 3);
  WorkItem out;
  EXPECT_FALSE(q.Pop(&out, 10));  // stays stopped
}

// The queue's data is under a spin lock and sleeping under a mutex: every item pushed is taken exactly once, by
// a spinning worker, workers that sleep between items, and a caller taking the newest (which also takes what the
// workers leave, as Engine::WaitFor does); Stop then ends every worker, asleep or not.
TEST(WorkQueue, EveryItemTakenOnceUnderContention) {
  constexpr int kRounds = 20000, kPerRound = 3;
  WorkQueue q(64);
  std::vector<std::atomic<int>> taken(kRounds * kPerRound);
  std::atomic<int> count{0};
  auto take = [&](const WorkItem& it) {
    taken[it.env_ids[0]].fetch_add(1);
    count.fetch_add(1);
  };
  std::vector<std::thread> workers;
  for (int w = 0; w < 3; ++w) {
    workers.emplace_back([&, w] {
      WorkItem out;
      while (q.Pop(&out, w == 0 ? 20000 : 0)) take(out);  // one spins 20 us before sleeping, two sleep at once
    });
  }
  WorkItem out;
  for (int r = 0; r < kRounds; ++r) {
    WorkItem items[kPerRound];
    for (int i = 0; i < kPerRound; ++i) items[i] = Item(r * kPerRound + i);
    q.Push(items, kPerRound, r % 4, 3);  // sometimes wakes nobody: the awake ones (or this thread) must take them
    if (r % 2 == 0 && q.TryPopBack(&out)) take(out);
    while (count.load() < (r + 1) * kPerRound - 2 * kPerRound) {  // keep at most two rounds queued
      if (q.TryPopBack(&out)) take(out);
    }
  }
  while (count.load() < kRounds * kPerRound) {
    if (q.TryPopBack(&out)) take(out);
  }
  q.Stop();
  for (auto& w : workers) w.join();
  for (int i = 0; i < kRounds * kPerRound; ++i) ASSERT_EQ(taken[i].load(), 1) << "item " << i;
}

}  // namespace
}  // namespace pp
