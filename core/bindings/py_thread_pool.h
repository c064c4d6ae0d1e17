// PyThreadPool, parallel_pool.ThreadPool's C++ side: the engine's ThreadPool as a Python object (its docstring is
// in module.cc, with the other registrations). A header because PyEngine's constructor takes one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "core/bindings/gil.h"
#include "core/engine/engine.h"
#include "core/engine/thread_pool.h"

namespace pp::bindings {

// parallel_pool.ThreadPool: worker threads that several pools share (make(..., thread_pool=tp)). Each engine on it
// holds the C++ ThreadPool, so the threads stop when the ThreadPool is closed or dropped and the last pool on it is
// closed.
class PyThreadPool {
 public:
  explicit PyThreadPool(int64_t num_threads) {
    const int n = ThreadPoolSize(num_threads);
    WithoutGil([&](PyThreadState*&) { threads_ = std::make_shared<ThreadPool>(n, std::clamp(NumCores() - 1, 1, n)); });
  }
  ~PyThreadPool() = default;  // the engines on it keep it; its destructor joins idle threads only
  void Close() {
    WithoutGil([&](PyThreadState*&) { threads_->Close(); });
  }
  // the thread pool for a new engine; std::invalid_argument once closed (make() raises ValueError)
  std::shared_ptr<ThreadPool> ForEngine() const { return threads_; }
  int num_threads() const { return threads_->num_threads(); }
  bool closed() const { return threads_->closed(); }
  int num_pools() const { return threads_->clients(); }

 private:
  std::shared_ptr<ThreadPool> threads_;
};

}  // namespace pp::bindings
