// A set of worker threads that several engines share (parallel_pool.ThreadPool, make(..., thread_pool=tp)):
// a training pool and an evaluation pool, or several tasks, on one set of threads instead of one set each, which
// oversubscribes a small machine. Each engine keeps its own WorkQueue (its caller still runs cheap items itself
// while it waits, and its batches still complete in its own order); the shared workers take items from the
// queues of the engines that have work, round robin, one item at a time, so two busy engines get equal turns.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "core/engine/fork.h"
#include "core/engine/work_queue.h"

namespace pp {

class ThreadPool {
 public:
  // One engine served by the pool: its queue and how to run one of its items.
  struct Client {
    WorkQueue* queue;
    std::function<void(const WorkItem&)> run;
    int running = 0;  // items of this client being run by the pool's workers (under the pool's mutex)
  };

  // `spinners`: how many workers spin for work before sleeping (the others sleep at once; see
  // Engine::StartWorkers for why not all of them on a small machine).
  ThreadPool(int num_threads, int spinners) : num_threads_(num_threads), spinners_(spinners) {
    if (num_threads < 1) throw std::invalid_argument("a ThreadPool needs at least 1 thread");
    for (int t = 0; t < num_threads; ++t) {
      try {
        threads_.emplace_back([this, t] { Loop(t); });
      } catch (const std::system_error& e) {
        Stop();
        for (auto& th : threads_) th.join();
        threads_.clear();
        throw std::runtime_error("could not start ThreadPool thread " + std::to_string(t + 1) + " of " +
                                 std::to_string(num_threads) + " (" + e.what() +
                                 "): the system's thread limit is reached; use fewer threads");
      }
#ifdef __linux__
      pthread_setname_np(threads_.back().native_handle(), "pp-shared");
#endif
    }
  }
  // Only when no engine uses the pool any more (each holds a shared_ptr to it): the workers are idle.
  ~ThreadPool() {
    if (stamp_.Forked()) {  // a forked child has none of the threads (nor a usable mutex): leave them
      for (auto& th : threads_) th.detach();
      return;
    }
    Stop();
    for (auto& th : threads_) {
      if (th.joinable()) th.join();
    }
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  bool closed() const { return stop_.load(std::memory_order_acquire); }
  int clients() const {
    std::lock_guard<std::mutex> lk(mu_);
    return static_cast<int>(clients_.size());
  }

  // A new engine's queue; std::runtime_error once the pool is closed.
  std::shared_ptr<Client> Attach(WorkQueue* queue, std::function<void(const WorkItem&)> run) {
    if (stamp_.Forked()) throw std::runtime_error("this ThreadPool was made before fork(): make a new one here");
    auto c = std::make_shared<Client>(Client{queue, std::move(run), 0});
    std::lock_guard<std::mutex> lk(mu_);
    if (stop_.load(std::memory_order_relaxed)) {
      throw std::runtime_error("this ThreadPool has been closed; create a new one with parallel_pool.ThreadPool(n)");
    }
    clients_.push_back(c);
    return c;
  }

  // The engine's queue is no longer served (items still queued stay there); waits until none of its items is
  // running, for at most `timeout`. False: one still runs (an env step that does not return) -- the caller then
  // must keep the engine and the client alive for it.
  bool Detach(const std::shared_ptr<Client>& c, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lk(mu_);
    clients_.erase(std::remove(clients_.begin(), clients_.end(), c), clients_.end());
    return idle_cv_.wait_for(lk, timeout, [&] { return c->running == 0; });
  }
  bool WaitIdle(const std::shared_ptr<Client>& c, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lk(mu_);
    return idle_cv_.wait_for(lk, timeout, [&] { return c->running == 0; });
  }

  // Items were queued: awake workers (spinning, or running an item) see them at once; sleeping ones are woken
  // only for the shortfall, so that `want` are awake (WorkQueue::WakeShortfall: more would only add runnable
  // threads for work the awake ones cover).
  void Notify(int want) {
    epoch_.fetch_add(1);  // seq_cst with sleeping_: each side stores, then loads the other's
    const int sleeping = sleeping_.load();
    const int wake = WorkQueue::WakeShortfall(want, num_threads_, sleeping);
    if (wake <= 0) return;
    {
      std::lock_guard<std::mutex> lk(mu_);  // a worker between its last look and its wait sees the epoch or this
    }
    if (wake >= sleeping) {
      cv_.notify_all();
    } else {
      for (int i = 0; i < wake; ++i) cv_.notify_one();
    }
  }

  // Stops the workers (they finish the item they are in). std::runtime_error while engines still use the pool:
  // closing them first is the caller's decision, not the pool's.
  void Close() {
    if (stamp_.Forked()) return;
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (stop_.load(std::memory_order_relaxed)) return;
      if (!clients_.empty()) {
        throw std::runtime_error("this ThreadPool still serves " + std::to_string(clients_.size()) +
                                 " pool(s); close them first (or let them go: the threads stop when the last one "
                                 "is closed)");
      }
    }
    Stop();
    for (auto& th : threads_) th.join();
    threads_.clear();
  }

 private:
  static constexpr int kSpin = 2000;  // pause iterations a spinning worker looks for work before sleeping

  void Stop() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_.store(true, std::memory_order_release);
    }
    cv_.notify_all();
  }

  // Under mu_: the next client with a queued item, round robin from the one after the last served.
  Client* NextLocked(WorkItem* item) {
    const size_t n = clients_.size();
    for (size_t i = 0; i < n; ++i) {
      const size_t at = (next_ + i) % n;
      if (clients_[at]->queue->TryPop(item)) {
        next_ = (at + 1) % n;
        return clients_[at].get();
      }
    }
    return nullptr;
  }

  void Loop(int t) {
    const int spin = t < spinners_ ? kSpin : 0;
    WorkItem item;
    std::unique_lock<std::mutex> lk(mu_);
    while (!stop_.load(std::memory_order_relaxed)) {
      const uint64_t seen = epoch_.load(std::memory_order_acquire);
      if (Client* c = NextLocked(&item)) {
        ++c->running;
        lk.unlock();
        c->run(item);
        lk.lock();
        if (--c->running == 0) idle_cv_.notify_all();
        continue;
      }
      lk.unlock();
      for (int i = 0; i < spin && epoch_.load(std::memory_order_acquire) == seen; ++i) PP_CPU_RELAX();
      lk.lock();
      if (epoch_.load(std::memory_order_acquire) != seen) continue;
      sleeping_.fetch_add(1);
      cv_.wait(lk, [&] { return stop_.load(std::memory_order_relaxed) || epoch_.load() != seen; });
      sleeping_.fetch_sub(1);
    }
  }

  const int num_threads_, spinners_;
  mutable std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::vector<std::shared_ptr<Client>> clients_;
  size_t next_ = 0;
  std::atomic<uint64_t> epoch_{0};
  std::atomic<int> sleeping_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  ForkStamp stamp_;
};

}  // namespace pp
