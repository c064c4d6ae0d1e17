// The work queue: items of envs to step or reset (the actions themselves wait in the envs' slots), filled by the
// API thread, drained by the worker threads and -- for cheap items -- by the caller itself while it waits (so a
// pool of tiny envs needs no thread hand-off at all). An item covers a run of up to kMaxRun envs of one send, so
// cheap envs cost one queue operation per run, not per env.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "core/engine/item_clock.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PP_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define PP_CPU_RELAX() asm volatile("yield")
#else
#define PP_CPU_RELAX() std::this_thread::yield()
#endif

namespace pp {

struct Batch;

struct WorkItem {
  static constexpr int kMaxRun = 32;
  Batch* batch;  // ordered (sync) batch, the envs' rows at positions pos, pos + 1, ...; or nullptr: rows assigned
                 // in completion order (async)
  int pos;
  int count;
  int env_ids[kMaxRun];  // the first `count` are the run's envs; their actions wait in the action rows
  bool reset = false;    // reset these envs (else step them)
  // >= 0: the run is envs first, first + 1, ..., first + count - 1 and count may exceed kMaxRun (env_ids unused):
  // a sync send of consecutive ids to cheap envs, one item per thread (Engine::ShareAmongThreads)
  int first = -1;
  // >= 0: the thread whose envs these are (an async run of cheap envs, Engine::Send), which takes it before older
  // items of other lanes (WorkQueue::TryPop); -1: any thread's
  int lane = -1;
  int passed_over = 0;  // (WorkQueue::TryPop) how often another lane's item was taken before it, the oldest
};

// A lock for a few loads and stores: spins (with a CPU pause) instead of sleeping in the kernel. The queue's
// critical sections are tens of nanoseconds, but a contended std::mutex puts the loser to sleep in a futex and the
// winner makes a wake-up syscall: a worker that saw an item appear while the sender still held the lock lost
// microseconds per send (CartPole@256 sync: the worker idle about half its time). A holder preempted by the OS
// would keep spinners waiting, so after a while a spinner yields its core.
class SpinLock {
 public:
  void lock() {
    for (int i = 0; flag_.exchange(true, std::memory_order_acquire);) {
      while (flag_.load(std::memory_order_relaxed)) {
        if (++i < 1024) {
          PP_CPU_RELAX();
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  void unlock() { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> flag_{false};
};

class WorkQueue {
 public:
  // TryPop looks this many items deep for one of the taker's lane, passing the oldest over at most kMaxPassedOver
  // times
  static constexpr size_t kLaneScan = 8;
  static constexpr int kMaxPassedOver = 3;

  explicit WorkQueue(size_t capacity) : ring_(capacity) {}

  // How many of `sleeping` workers to wake so that `want` of all `workers` are awake: an awake worker (spinning,
  // or running an item) takes queued items until the queue is empty before it sleeps, so only the shortfall is
  // woken -- waking more would add runnable threads for work the awake ones already cover.
  static int WakeShortfall(int want, int workers, int sleeping) {
    return std::max(0, std::min(want - (workers - sleeping), sleeping));
  }

  // Enqueue items and wake sleeping workers until `want` of the pool's `workers` are awake.
  void Push(const WorkItem* items, size_t n, int want, int workers) {
    {
      std::lock_guard<SpinLock> lk(lock_);
      for (size_t i = 0; i < n; ++i) {
        ring_[(head_ + size_) % ring_.size()] = items[i];
        ++size_;
      }
      size_atomic_.store(size_, std::memory_order_seq_cst);
    }
    // seq_cst: the size is published before sleeping_ is read, and a worker counts itself sleeping before it reads
    // the size (Pop), so either it sees these items or it is counted here
    Wake(WakeShortfall(want, workers, sleeping_.load(std::memory_order_seq_cst)));
  }

  // If items are queued, wakes sleeping workers until `want` of the pool's `workers` are awake (for items the
  // caller decided not to run itself).
  void WakeIfPending(int want, int workers) {
    if (size_atomic_.load(std::memory_order_seq_cst) == 0) return;
    Wake(WakeShortfall(want, workers, sleeping_.load(std::memory_order_seq_cst)));
  }

  bool Empty() const { return size_atomic_.load(std::memory_order_acquire) == 0; }

  // The oldest item -- or, for a thread with a lane (>= 0), the oldest of its lane among the first kLaneScan items
  // when the oldest is another lane's: so that each env of an async loop of cheap envs tends to be stepped by one
  // thread, its state and rows in that core's cache. A thread whose lane has no item there takes the oldest. The
  // oldest is passed over at most kMaxPassedOver times, and not at all while a spinning worker (whose lane it may
  // be) sleeps: a lane's items would otherwise wait behind the others' for as long as those keep coming -- a caller
  // whose sends woke no worker, or whose worker the OS had descheduled, stepped only its own lane's envs.
  bool TryPop(WorkItem* out, int lane = -1) {
    if (size_atomic_.load(std::memory_order_acquire) == 0) return false;
    std::lock_guard<SpinLock> lk(lock_);
    if (size_ == 0) return false;
    const size_t cap = ring_.size();
    WorkItem& oldest = ring_[head_];
    if (lane >= 0 && oldest.lane >= 0 && oldest.lane != lane && oldest.passed_over < kMaxPassedOver &&
        sleeping_spinners_.load(std::memory_order_relaxed) == 0) {
      const size_t scan = std::min(size_, kLaneScan);
      for (size_t i = 1; i < scan; ++i) {
        if (ring_[(head_ + i) % cap].lane != lane) continue;
        ++oldest.passed_over;
        // take item i; the ones before it move up one place, keeping their order
        *out = ring_[(head_ + i) % cap];
        for (size_t j = i; j > 0; --j) ring_[(head_ + j) % cap] = ring_[(head_ + j - 1) % cap];
        head_ = (head_ + 1) % cap;
        --size_;
        size_atomic_.store(size_, std::memory_order_release);
        return true;
      }
    }
    *out = ring_[head_];
    head_ = (head_ + 1) % cap;
    --size_;
    size_atomic_.store(size_, std::memory_order_release);
    return true;
  }

  // The newest item: the waiting caller's side (Engine::WaitFor). Workers take the oldest, so of a send's runs a
  // worker steps the first ones and the caller the last ones, and from one send to the next an env tends to be
  // stepped on the same core, whose cache holds its state (taken from one end, its runs alternated between cores).
  bool TryPopBack(WorkItem* out) {
    if (size_atomic_.load(std::memory_order_acquire) == 0) return false;
    std::lock_guard<SpinLock> lk(lock_);
    if (size_ == 0) return false;
    *out = ring_[(head_ + size_ - 1) % ring_.size()];
    --size_;
    size_atomic_.store(size_, std::memory_order_release);
    return true;
  }

  // Worker side: spin for about spin_ns (a time, not a count of pauses: a pause takes 10 to 150 cycles by CPU), then
  // sleep until an item arrives. Returns false when stopping.
  bool Pop(WorkItem* out, int64_t spin_ns, int lane = -1) {
    if (TryPop(out, lane)) return true;  // a busy worker takes its next item without reading the clock
    const int64_t until = spin_ns > 0 ? WallNs() + spin_ns : 0;
    for (int i = 1; spin_ns > 0; ++i) {
      if (stop_.load(std::memory_order_relaxed)) return false;
      if (TryPop(out, lane)) return true;
      PP_CPU_RELAX();
      if ((i & 63) == 0 && WallNs() > until) break;
    }
    const bool spinner = spin_ns > 0;
    std::condition_variable& cv = spinner ? spinner_cv_ : cv_;
    while (true) {
      {
        std::unique_lock<std::mutex> lk(mu_);
        while (!stop_.load(std::memory_order_relaxed)) {
          if (spinner) ++sleeping_spinners_;
          sleeping_.fetch_add(1, std::memory_order_seq_cst);
          if (size_atomic_.load(std::memory_order_seq_cst) != 0) {
            sleeping_.fetch_sub(1, std::memory_order_seq_cst);
            if (spinner) --sleeping_spinners_;
            break;
          }
          cv.wait(lk);
          sleeping_.fetch_sub(1, std::memory_order_seq_cst);
          if (spinner) --sleeping_spinners_;
        }
      }
      if (stop_.load(std::memory_order_relaxed)) return false;
      if (TryPop(out, lane)) return true;  // else another thread took it first: wait again
    }
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_.store(true);
    }
    cv_.notify_all();
    spinner_cv_.notify_all();
  }

 private:
  // Wakes `wake` sleeping workers, those that spin first: a spinner woken stays awake through the calls that
  // follow, the others sleep again as soon as the queue is empty (with notify_one on one condition variable the
  // choice was the kernel's, and a loop of cheap sends could wake a non-spinner, to sleep again, every call).
  void Wake(int wake) {
    if (wake <= 0) return;
    int spinners;
    {
      std::lock_guard<std::mutex> lk(mu_);  // a worker counted as sleeping is inside a wait once we hold mu_
      spinners = sleeping_spinners_;
    }
    const int first = std::min(wake, spinners);
    if (first == spinners) {
      spinner_cv_.notify_all();
    } else {
      for (int i = 0; i < first; ++i) spinner_cv_.notify_one();
    }
    for (int i = first; i < wake; ++i) cv_.notify_one();
  }

  SpinLock lock_;  // ring_, head_, size_
  std::vector<WorkItem> ring_;
  size_t head_ = 0, size_ = 0;
  std::atomic<size_t> size_atomic_{0};
  std::atomic<int> sleeping_{0};
  std::atomic<bool> stop_{false};
  std::mutex mu_;  // sleeping and waking only
  // the sleeping workers that spin before they sleep (changed under mu_; TryPop reads it without)
  std::atomic<int> sleeping_spinners_{0};
  std::condition_variable cv_;  // the other workers sleep here
  std::condition_variable spinner_cv_;
};

}  // namespace pp
