// Lockstep: one thread per player of a several-agent ViZDoom env, so that the env's engines (one networked game)
// make each call together. An engine of a network game blocks in every tic until its peers have made that tic, so
// the calls must run concurrently, and a call that never returns (a peer died, or the netcode stalled) must not
// hang the pool: Run() gives up after a time limit and has the caller's `unstick` make the calls return.
//
// unstick (SIGKILL of the engines) does not always make a call return: an engine killed while it holds the lock of
// one of its message queues with the controller (process-shared, not robust) leaves that lock held forever, and
// the player's call, blocked on it, never returns. So the wait after unstick is bounded too: past it the Lockstep
// is abandoned -- Run throws, every later Run throws at once, and the threads still inside a call are detached by
// the destructor. They share the Lockstep's state (and a copy of the call) and never touch the Lockstep object
// itself, so a call that returns later, even after the destruction, is harmless; whatever the call itself uses
// (the env's DoomGame objects) the caller must then leak.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace pp::vizdoom {

class Lockstep {
 public:
  // What Run throws once the players' calls did not return after unstick (and at every later Run).
  class Abandoned : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
  };

  explicit Lockstep(int players) : state_(std::make_shared<State>()) {
    state_->busy.assign(static_cast<size_t>(players), false);
    threads_.reserve(static_cast<size_t>(players));
    try {
      for (int p = 0; p < players; ++p) threads_.emplace_back(Serve, state_, p);
    } catch (...) {  // a thread could not be created: the ones that were are stopped (a joinable thread terminates)
      Stop();
      throw;
    }
  }
  ~Lockstep() { Stop(); }
  Lockstep(const Lockstep&) = delete;
  Lockstep& operator=(const Lockstep&) = delete;

  // How long Run waits (see Run).
  struct Limits {
    std::chrono::milliseconds call;    // for every call to return
    std::chrono::milliseconds settle;  // after one call threw: for the others to return by themselves
    std::chrono::milliseconds killed;  // after unstick: for the calls still running
  };

  // Runs fn(p) for every player p, each on its own thread, and returns when all have returned. When one throws, the
  // others get limits.settle to return by themselves; when calls are still running then (or not all returned
  // within limits.call), calls unstick() once (it must stop every player's engine, which makes the calls still
  // running return), waits for them at most limits.killed, then throws the first error (a timeout:
  // std::runtime_error). Calls still running after limits.killed: throws Abandoned, now and at every later Run.
  void Run(const std::function<void(int)>& fn, const Limits& limits, const std::function<void()>& unstick) {
    State& s = *state_;
    std::unique_lock<std::mutex> lock(s.mu);
    if (!s.abandoned.empty()) throw Abandoned(s.abandoned);
    // each thread holds its own reference to the call: an abandoned one may still be inside it after Run returned
    s.fn = std::make_shared<const std::function<void(int)>>(fn);
    s.running = static_cast<int>(threads_.size());
    s.busy.assign(threads_.size(), true);
    s.first_error = nullptr;
    ++s.round;
    s.work_cv.notify_all();
    const bool in_time = s.done_cv.wait_for(lock, limits.call, [&] { return s.running == 0 || s.first_error; });
    if (s.first_error && s.running > 0) {
      // A failure (a dead engine) surfaces at once, while the other engines are still inside their part of this
      // call: receiving it, or sending its answer. An engine killed there leaves its queue locked and its player's
      // call blocked for good, so they get a moment to answer first (an engine whose peer is gone still answers
      // within about a tic) and unstick then finds them idle.
      s.done_cv.wait_for(lock, limits.settle, [&] { return s.running == 0; });
    }
    if (s.running > 0 || s.first_error) {  // a game with a failed player is over for all of them
      lock.unlock();
      unstick();
      lock.lock();
      if (!s.done_cv.wait_for(lock, limits.killed, [&] { return s.running == 0; })) {
        std::string stuck;
        for (size_t p = 0; p < s.busy.size(); ++p) {
          if (s.busy[p]) stuck += (stuck.empty() ? "" : ", ") + std::to_string(p);
        }
        s.abandoned = "ViZDoom: the call of player(s) " + stuck + " did not return within " +
                      std::to_string(limits.killed.count()) +
                      " ms after the env's engines were killed (an engine killed inside its message queue leaves "
                      "it locked); this env's engine threads are abandoned and the env cannot be used again: close "
                      "the pool and make a new one";
        s.fn.reset();
        throw Abandoned(s.abandoned);
      }
    }
    s.fn.reset();
    if (!in_time) {
      throw std::runtime_error("ViZDoom: the players' engines did not all finish a call within " +
                               std::to_string(limits.call.count() / 1000) + " s (the networked game stalled)");
    }
    if (s.first_error) std::rethrow_exception(std::exchange(s.first_error, nullptr));
  }

  // Whether Run gave up on calls that did not return (then every Run throws Abandoned).
  bool abandoned() const {
    std::lock_guard<std::mutex> lock(state_->mu);
    return !state_->abandoned.empty();
  }

 private:
  // Everything the player threads touch: shared with them, so that a detached thread outlives the Lockstep safely.
  struct State {
    std::mutex mu;
    std::condition_variable work_cv, done_cv;
    std::shared_ptr<const std::function<void(int)>> fn;
    std::exception_ptr first_error;
    std::vector<bool> busy;  // player p's call of the current round has not returned
    std::string abandoned;   // why Run gave up ("" while it has not)
    uint64_t round = 0;
    int running = 0;
    bool stop = false;
  };

  void Stop() noexcept {
    std::vector<bool> busy;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      state_->stop = true;
      busy = state_->busy;
    }
    state_->work_cv.notify_all();
    for (size_t p = 0; p < threads_.size(); ++p) {
      if (busy[p]) {
        threads_[p].detach();  // still inside a call Run gave up on: it owns what it uses (the shared state)
      } else {
        threads_[p].join();  // idle: it sees `stop` and returns
      }
    }
  }

  static void Serve(std::shared_ptr<State> state, int p) {
    State& s = *state;
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(s.mu);
    while (true) {
      s.work_cv.wait(lock, [&] { return s.stop || s.round != seen; });
      if (s.stop) return;
      seen = s.round;
      const std::shared_ptr<const std::function<void(int)>> fn = s.fn;  // null: Run gave up before we started
      lock.unlock();
      std::exception_ptr error;
      try {
        if (fn) (*fn)(p);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      s.busy[static_cast<size_t>(p)] = false;
      if (error && !s.first_error) s.first_error = error;  // the cause; later ones follow from unstick()
      if (--s.running == 0 || error) s.done_cv.notify_one();
    }
  }

  std::shared_ptr<State> state_;
  std::vector<std::thread> threads_;
};

}  // namespace pp::vizdoom
