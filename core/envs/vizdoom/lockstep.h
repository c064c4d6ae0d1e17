// Lockstep: one thread per player of a several-agent ViZDoom env, so that the env's engines (one networked game)
// make each call together. An engine of a network game blocks in every tic until its peers have made that tic, so
// the calls must run concurrently, and a call that never returns (a peer died, or the netcode stalled) must not
// hang the pool: Run() gives up after a time limit and has the caller's `unstick` make the calls return.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace pp::vizdoom {

class Lockstep {
 public:
  explicit Lockstep(int players) {
    threads_.reserve(static_cast<size_t>(players));
    for (int p = 0; p < players; ++p) threads_.emplace_back([this, p] { Serve(p); });
  }
  ~Lockstep() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  Lockstep(const Lockstep&) = delete;
  Lockstep& operator=(const Lockstep&) = delete;

  // Runs fn(p) for every player p, each on its own thread, and returns when all have returned. When one throws, or
  // not all have returned within `limit`, calls unstick() once (it must stop every player's engine, which makes the
  // calls still running return), waits for them, then throws the first error (a timeout: std::runtime_error).
  void Run(const std::function<void(int)>& fn, std::chrono::milliseconds limit, const std::function<void()>& unstick) {
    std::unique_lock<std::mutex> lock(mu_);
    fn_ = &fn;
    running_ = static_cast<int>(threads_.size());
    first_error_ = nullptr;
    ++round_;
    work_cv_.notify_all();
    const bool settled = done_cv_.wait_for(lock, limit, [&] { return running_ == 0 || first_error_; });
    if (running_ > 0 || first_error_) {  // a game with a failed player is over for all of them
      lock.unlock();
      unstick();
      lock.lock();
      done_cv_.wait(lock, [&] { return running_ == 0; });
    }
    fn_ = nullptr;
    if (!settled) {
      throw std::runtime_error("ViZDoom: the players' engines did not all finish a call within " +
                               std::to_string(limit.count() / 1000) + " s (the networked game stalled)");
    }
    if (first_error_) std::rethrow_exception(std::exchange(first_error_, nullptr));
  }

 private:
  void Serve(int p) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      work_cv_.wait(lock, [&] { return stop_ || round_ != seen; });
      if (stop_) return;
      seen = round_;
      const std::function<void(int)>* fn = fn_;
      lock.unlock();
      std::exception_ptr error;
      try {
        (*fn)(p);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      if (error && !first_error_) first_error_ = error;  // the cause; later ones follow from unstick()
      if (--running_ == 0 || error) done_cv_.notify_one();
    }
  }

  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::vector<std::thread> threads_;
  std::exception_ptr first_error_;
  const std::function<void(int)>* fn_ = nullptr;
  uint64_t round_ = 0;
  int running_ = 0;
  bool stop_ = false;
};

}  // namespace pp::vizdoom
