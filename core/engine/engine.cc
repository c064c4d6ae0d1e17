// Engine: construction (building the envs from their configs) and the worker threads, and the lifecycle: stop
// requests and close. Send and its validation are in send.cc, waiting and recv in recv.cc, the calls on single envs
// (state, snapshots, configs, frames) in state.cc, executing work items in execute.cc, options in options.cc.
#include "core/engine/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <system_error>

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

#include "core/engine/engine_internal.h"

namespace pp {

Engine::Engine(const EnvClass& type, const Config& config, std::vector<Config> env_configs,
               std::shared_ptr<ThreadPool> shared)
    : opts_(ParseOptions(config, type.step_waits_on_another_process)),
      type_(&type),
      config_(config),
      spec_(type.make_spec(config)),
      layout_(spec_, opts_.batch_size, std::max(spec_.num_players_max, 1), opts_.autoreset),
      max_players_(std::max(spec_.num_players_max, 1)),
      blocks_(std::make_shared<BlockPool>(layout_.block_bytes)),
      slots_(opts_.num_envs),
      queue_(static_cast<size_t>(opts_.num_envs)),
      shared_(std::move(shared)) {
  if (shared_) {
    const int asked = config.Get<int>("num_threads");
    if (asked != 0 && asked != shared_->num_threads()) {
      throw std::invalid_argument("num_threads is the thread_pool's own (" + std::to_string(shared_->num_threads()) +
                                  "): give 0 or leave it out, got " + std::to_string(asked));
    }
    if (opts_.thread_affinity_offset != -1) {
      throw std::invalid_argument("thread_affinity_offset does not apply to a pool on a shared thread_pool");
    }
    if (shared_->closed()) {
      throw std::invalid_argument("this ThreadPool has been closed; create a new one with parallel_pool.ThreadPool(n)");
    }
    opts_.num_threads = shared_->num_threads();
  }
  for (const auto& a : spec_.action) action_row_bytes_.push_back(a.RowBytes());
  BuildEnvs(type, config, std::move(env_configs));
  for (int i = 0; i < opts_.num_envs; ++i) {
    Slot& s = slots_[i];
    s.players = s.env->NumPlayers();
    if (s.players < 1 || s.players > spec_.num_players_max) {
      throw std::invalid_argument("env " + std::to_string(i) + " has " + std::to_string(s.players) +
                                  " players but the spec allows at most " + std::to_string(spec_.num_players_max));
    }
    player_base_.push_back(i == 0 ? 0 : player_base_.back() + slots_[i - 1].players);
    for (int k = 0; k < layout_.num_obs; ++k) s.out.obs.push_back({nullptr, layout_.entries[k].row_bytes});
    for (int k = 0; k < layout_.num_info; ++k) {
      s.out.info.push_back({nullptr, layout_.entries[layout_.num_obs + k].row_bytes});
    }
    s.out.reward_dtype = spec_.reward_dtype;
    s.saved_reward.assign(EntryBytes(layout_.reward, s), 0);
    s.out.num_players = s.players;
    if (!sync()) {
      size_t soff = 0;
      for (const auto& e : layout_.entries) {
        soff = (soff + 15) & ~size_t{15};
        s.staging_off.push_back(soff);
        soff += e.row_bytes * static_cast<size_t>(e.per_player ? s.players : 1);
      }
      s.staging.assign(soff + 16, 0);
    }
  }
  const int player_rows = player_base_.back() + slots_.back().players;
  for (size_t a = 0; a < spec_.action.size(); ++a) {
    action_rows_.emplace_back(action_row_bytes_[a] * static_cast<size_t>(player_rows), 0);
  }
  for (int i = 0; i < opts_.num_envs; ++i) {
    for (size_t a = 0; a < spec_.action.size(); ++a) {
      slots_[i].action_ptrs.push_back(action_rows_[a].data() + action_row_bytes_[a] * player_base_[i]);
    }
  }
  pending_.assign(opts_.num_envs, 0);
  // StepBatch writes one obs array and no info and reads one action array; PARALLEL_POOL_STEP_BATCH=0 turns it
  // off (the tests compare both)
  const char* batch_env = std::getenv("PARALLEL_POOL_STEP_BATCH");
  const bool batch_off = batch_env != nullptr && std::string(batch_env) == "0";
  if (!batch_off && max_players_ == 1 && layout_.num_obs == 1 && layout_.num_info == 0 && spec_.action.size() == 1) {
    step_batch_ = type.step_batch;
  }
  if (!sync()) {
    int k = (opts_.num_envs + opts_.batch_size - 1) / opts_.batch_size + 1;
    for (int i = 0; i < k; ++i) {
      auto b = std::make_unique<Batch>();
      b->block = blocks_->Acquire();
      b->expected = opts_.batch_size;
      ring_.push_back(std::move(b));
    }
  }
  StartWorkers();
}

namespace {

// Starts n threads running body(t); if the system refuses one (std::system_error), the started ones are stopped
// with `stop`, joined, and a runtime_error naming the limit is thrown (never std::terminate from a joinable
// std::thread being destroyed).
void StartThreads(std::vector<std::thread>* threads, int n, const std::function<void(int)>& body,
                  const std::function<void()>& stop, const char* what) {
  for (int t = 0; t < n; ++t) {
    try {
      threads->emplace_back(body, t);
    } catch (const std::system_error& e) {
      stop();
      for (auto& th : *threads) th.join();
      threads->clear();
      throw std::runtime_error(std::string("could not start ") + what + " thread " + std::to_string(t + 1) + " of " +
                               std::to_string(n) + " (" + e.what() +
                               "): the system's thread limit is reached; lower num_threads");
    }
  }
}

}  // namespace

void CheckCommonKeys(const Config& pool, const Config& c, const std::string& what) {
  for (const auto& k : CommonConfigKeys()) {
    if (c.Has(k.name) && pool.Has(k.name) && c.values().at(k.name) != pool.values().at(k.name)) {
      throw std::invalid_argument(what + ": config key '" + k.name + "' is the pool's own and cannot differ per env");
    }
  }
}

void Engine::BuildEnvs(const EnvClass& type, const Config& config, std::vector<Config> env_configs) {
  auto shared = std::make_shared<const Config>(config);
  if (!env_configs.empty() && env_configs.size() != static_cast<size_t>(opts_.num_envs)) {
    throw std::invalid_argument("per-env configs: " + std::to_string(env_configs.size()) + " given for " +
                                std::to_string(opts_.num_envs) + " envs");
  }
  for (int i = 0; i < opts_.num_envs; ++i) {
    if (env_configs.empty()) {
      slots_[i].config = shared;
    } else {
      CheckCommonKeys(config, env_configs[i], "env " + std::to_string(i));
      slots_[i].config = std::make_shared<const Config>(std::move(env_configs[i]));
    }
  }
  // in parallel: ROM loading or model compilation can be slow
  const int n = std::min(opts_.num_envs, std::max(opts_.num_threads, 1));
  std::vector<std::thread> builders;
  std::vector<std::exception_ptr> errors(n);
  StartThreads(
      &builders, n,
      [&](int t) {
        try {
          for (int i = t; i < opts_.num_envs; i += n) {
            slots_[i].env = type.create(*slots_[i].config, i, EnvSeed(opts_.seed, i));
          }
        } catch (...) {
          errors[t] = std::current_exception();
        }
      },
      [] {}, "env-building");
  for (auto& b : builders) b.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

void Engine::StartWorkers() {
  // The calling thread is one more runnable thread: it runs the Python between calls, and while it waits it runs
  // queued items itself. Workers spinning on every other core leave it a core; a worker spinning on that core
  // too only takes CPU from it (a 256-CartPole call took 1.2x longer with 2 workers than with 1 on 2 cores). The
  // workers beyond cores - 1 therefore sleep as soon as the queue is empty; a send with enough work for them
  // still wakes them (WorkersWanted), so costly envs use every worker as before.
  cores_ = NumCores();
  spinners_ = std::clamp(cores_ - 1, 1, std::max(opts_.num_threads, 1));
  if (shared_) {  // no threads of its own: the shared ThreadPool's workers take items from queue_
    client_ = shared_->Attach(&queue_, [this](const WorkItem& item) { Execute(item); });
    return;
  }
  // async lanes (ByLane): one per spinning worker and the caller's, env e in the e-th share of the envs
  if (spinners_ + 1 <= kMaxLanes) {
    num_lanes_ = spinners_ + 1;
    const int64_t n = opts_.num_envs;
    lane_of_.resize(static_cast<size_t>(n));
    for (int64_t e = 0; e < n; ++e) lane_of_[static_cast<size_t>(e)] = static_cast<uint8_t>(e * num_lanes_ / n);
  }
  auto stop = [this] { queue_.Stop(); };
  worker_exited_ = std::make_unique<std::atomic<bool>[]>(static_cast<size_t>(std::max(opts_.num_threads, 1)));
  StartThreads(&workers_, opts_.num_threads, [this](int t) { WorkerLoop(t); }, stop, "worker");
#ifdef __linux__
  // Worker i is pinned to the (offset + i)-th CPU this process may use (its affinity mask, in order): in a
  // container or under taskset, CPU numbers need not start at 0 nor be contiguous.
  const std::vector<int> cpus = UsableCpus();
  for (int i = 0; i < opts_.num_threads; ++i) {
    // named and pinned from here, so both hold as soon as the engine exists
    pthread_setname_np(workers_[i].native_handle(), "pp-worker");
    if (opts_.thread_affinity_offset < 0) continue;
    const int cpu = cpus[(static_cast<size_t>(opts_.thread_affinity_offset) + i) % cpus.size()];
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (const int err = pthread_setaffinity_np(workers_[i].native_handle(), sizeof(set), &set); err != 0) {
      stop();  // the constructor fails: its threads must be joined first
      for (auto& th : workers_) th.join();
      workers_.clear();
      throw std::runtime_error("thread_affinity_offset: could not pin worker " + std::to_string(i) + " to CPU " +
                               std::to_string(cpu) + ": " + std::strerror(err));
    }
  }
#endif
}

Engine::~Engine() { Close(); }

std::chrono::milliseconds Engine::DefaultCloseTimeout() {
  double seconds = 10.0;
  if (const char* v = std::getenv("PARALLEL_POOL_CLOSE_TIMEOUT")) {
    char* end = nullptr;
    const double x = std::strtod(v, &end);
    if (end != v && std::isfinite(x) && x >= 0) seconds = x;
  }
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

void Engine::RequestStop() {
  stop_requested_.store(true, std::memory_order_release);
  queue_.Stop();
  std::lock_guard<std::mutex> lk(done_mu_);  // a Recv between its check and its wait sees the flag or the notify
  done_cv_.notify_all();
}

bool Engine::WaitWorkersExit(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lk(exit_mu_);
  return exit_cv_.wait_for(lk, timeout, [&] {
    for (size_t i = 0; i < workers_.size(); ++i) {
      if (!worker_exited_[i].load(std::memory_order_acquire)) return false;
    }
    return true;
  });
}

std::string Engine::Close(std::chrono::milliseconds timeout) {
  if (closed_.exchange(true, std::memory_order_acq_rel)) return "";
  RequestStop();
  if (client_) {
    // the shared workers stop taking this engine's items; one inside its env step gets `timeout` to finish, then
    // the envs are asked to abort. The ThreadPool and the other engines on it go on.
    bool idle = shared_->Detach(client_, timeout);
    if (!idle) {
      for (auto& s : slots_) {
        if (s.env) s.env->Abort();
      }
      idle = shared_->WaitIdle(client_, std::chrono::milliseconds(2000));
    }
    if (!idle) {
      abandoned_ = true;
      return "a shared ThreadPool worker was still inside an env step of this pool " +
             std::to_string(timeout.count() / 1000.0).substr(0, 6) +
             " s after close() (and after the envs were asked to abort): the pool's memory is kept for it "
             "(PARALLEL_POOL_CLOSE_TIMEOUT sets the wait)";
    }
  }
  // A worker inside an env step that does not return (a stuck ViZDoom engine, an endless C++ loop) must not hang
  // close() -- and with it interpreter exit -- forever.
  if (!WaitWorkersExit(timeout)) {
    for (auto& s : slots_) {
      if (s.env) s.env->Abort();
    }
    WaitWorkersExit(std::chrono::milliseconds(2000));
  }
  int stuck = 0;
  for (size_t i = 0; i < workers_.size(); ++i) {
    if (worker_exited_[i].load(std::memory_order_acquire)) {
      workers_[i].join();
    } else {
      workers_[i].detach();  // it still uses the envs and this Engine: nothing below is freed
      ++stuck;
    }
  }
  workers_.clear();
  if (stuck > 0) {
    abandoned_ = true;
    return std::to_string(stuck) + " worker thread(s) of this pool were still inside an env step " +
           std::to_string(timeout.count() / 1000.0).substr(0, 6) +
           " s after close() (and after the envs were asked to abort): they were abandoned, and the pool's memory "
           "is kept for them (PARALLEL_POOL_CLOSE_TIMEOUT sets the wait)";
  }
  for (auto& s : slots_) s.env.reset();
  for (auto& b : ring_) {
    if (b->block) blocks_->Release(b->block);
    b->block = nullptr;
  }
  for (Batch* b : ordered_) {
    if (b->block && b->own_block) blocks_->Release(b->block);
    b->block = nullptr;
  }
  ordered_.clear();
  has_own_item_ = false;
  if (kept_.block) blocks_->Release(kept_.block);
  kept_ = RecvResult{};
  return "";
}

void Engine::WorkerLoop(int t) {
  const int64_t spin = t < spinners_ ? kWorkerSpinNs : 0;
  WorkItem item;
  while (queue_.Pop(&item, spin, t < spinners_ ? t : -1)) Execute(item);  // (lanes: the spinners', Send)
  std::lock_guard<std::mutex> lk(exit_mu_);
  worker_exited_[t].store(true, std::memory_order_release);
  exit_cv_.notify_all();
}

}  // namespace pp
