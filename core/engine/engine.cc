// Engine: construction and worker threads, send (validating every input before anything is enqueued), recv
// (waiting, ordered and async batches, env errors). Executing work items is in execute.cc, options in options.cc.
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

namespace pp {

namespace {

constexpr int64_t kWakeWorthNs =
    50000;  // wake a sleeping worker only for at least this much work (a wake-up costs ~10-50 us)
// a send's cheap envs go to the queue in runs of about this much work
constexpr int64_t kRunNs = 5000;
// how long a worker spins for work before sleeping (the caller's Python between two calls of a loop is far less)
constexpr int64_t kWorkerSpinNs = 100000;
// ShareAmongThreads: for sends of at least this many envs per thread (a smaller one's few runs cost as little)
constexpr int kShareMinEnvs = 16;
constexpr int kWaitSpin = 4000;  // pause iterations the caller spins before blocking

std::string Msg(std::initializer_list<std::string> parts) {
  std::string s;
  for (const auto& p : parts) s += p;
  return s;
}

// Calls f(T{}) with T the C++ type of d.
template <typename F>
void WithType(DType d, F&& f) {
  switch (d) {
    case DType::kBool: return f(bool{});
    case DType::kUInt8: return f(uint8_t{});
    case DType::kInt32: return f(int32_t{});
    case DType::kInt64: return f(int64_t{});
    case DType::kFloat32: return f(float{});
    case DType::kFloat64: return f(double{});
  }
}

// The integer range an integer action accepts: its spec bounds, else what its dtype can hold.
std::pair<int64_t, int64_t> IntegerRange(const ArraySpec& a, size_t elem) {
  int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  WithType(a.dtype, [&](auto t) {
    using T = decltype(t);
    lo = static_cast<int64_t>(std::numeric_limits<T>::min());
    hi = static_cast<int64_t>(std::numeric_limits<T>::max());
  });
  if (!a.low.empty()) {
    double l = a.low.size() == 1 ? a.low[0] : a.low[elem];
    double h = a.high.size() == 1 ? a.high[0] : a.high[elem];
    // spec bounds are small integers held in doubles; clamp them into the dtype's range before converting
    if (l > static_cast<double>(lo)) lo = static_cast<int64_t>(std::ceil(l));
    if (h < static_cast<double>(hi)) hi = static_cast<int64_t>(std::floor(h));
  }
  return {lo, hi};
}

}  // namespace

std::string ActionRangeError(const std::string& name, size_t row, const std::string& value, int64_t lo, int64_t hi) {
  return "action '" + name + "' row " + std::to_string(row) + " is " + value + ", outside the valid range [" +
         std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

namespace {

// Values of an action array given in source type S, checked against the spec before any conversion.
template <typename S>
void CheckActionValues(const ArraySpec& a, const S* v, size_t rows) {
  const size_t per = a.NumElements();
  if constexpr (std::is_floating_point_v<S>) {
    if (IsIntegral(a.dtype)) {
      throw std::invalid_argument("action '" + a.name + "' must be integers (dtype " + DTypeName(a.dtype) +
                                  "), got floating-point values");
    }
  }
  // bounds shared by every element (the common case) are looked up once, not per element
  const bool uniform = a.low.size() <= 1;
  const std::pair<int64_t, int64_t> range = IsIntegral(a.dtype) ? IntegerRange(a, 0) : std::pair<int64_t, int64_t>{};
  if constexpr (!std::is_floating_point_v<S>) {
    // integers under shared bounds: their least and greatest (a loop the compiler vectorizes) decide; the loop
    // below only runs to name the first bad row
    const size_t n = rows * per;
    if (IsIntegral(a.dtype) && uniform && n > 0) {
      S lo = v[0], hi = v[0];
      for (size_t i = 1; i < n; ++i) {
        lo = std::min(lo, v[i]);
        hi = std::max(hi, v[i]);
      }
      if (static_cast<int64_t>(lo) >= range.first && static_cast<int64_t>(hi) <= range.second) return;
    }
  }
  for (size_t r = 0; r < rows; ++r) {
    for (size_t j = 0; j < per; ++j) {
      const S x = v[r * per + j];
      if constexpr (std::is_floating_point_v<S>) {
        if (!std::isfinite(x)) {
          throw std::invalid_argument(
              Msg({"action '", a.name, "' row ", std::to_string(r), " contains ", std::isnan(x) ? "NaN" : "inf"}));
        }
        if (a.dtype == DType::kFloat32 && std::fabs(static_cast<double>(x)) > std::numeric_limits<float>::max()) {
          throw std::invalid_argument(Msg({"action '", a.name, "' row ", std::to_string(r), " is ",
                                           std::to_string(static_cast<double>(x)), ", too large for float32"}));
        }
      } else if (IsIntegral(a.dtype)) {
        auto [lo, hi] = uniform ? range : IntegerRange(a, j);
        const int64_t xi = static_cast<int64_t>(x);  // every integer source dtype fits int64
        if (xi < lo || xi > hi) throw std::invalid_argument(ActionRangeError(a.name, r, std::to_string(xi), lo, hi));
      }
    }
  }
}

void CheckAction(const ArraySpec& a, const ActionInput& in, size_t rows) {
  WithType(in.dtype, [&](auto t) { CheckActionValues(a, reinterpret_cast<const decltype(t)*>(in.data), rows); });
}

// Copies n elements of an (already checked) action from the caller's dtype into the env's slot.
void CopyAction(uint8_t* dst, DType dst_type, const uint8_t* src, DType src_type, size_t n) {
  if (dst_type == src_type) {
    std::memcpy(dst, src, n * DTypeSize(dst_type));
    return;
  }
  WithType(dst_type, [&](auto d) {
    using D = decltype(d);
    WithType(src_type, [&](auto s) {
      using S = decltype(s);
      const S* sp = reinterpret_cast<const S*>(src);
      D* dp = reinterpret_cast<D*>(dst);
      for (size_t i = 0; i < n; ++i) dp[i] = static_cast<D>(sp[i]);
    });
  });
}

}  // namespace

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

namespace {

// Throws std::invalid_argument when `c` gives a common key (num_envs, seed, ...) another value than the pool's.
void CheckCommonKeys(const Config& pool, const Config& c, const std::string& what) {
  for (const auto& k : CommonConfigKeys()) {
    if (c.Has(k.name) && pool.Has(k.name) && c.values().at(k.name) != pool.values().at(k.name)) {
      throw std::invalid_argument(what + ": config key '" + k.name + "' is the pool's own and cannot differ per env");
    }
  }
}

}  // namespace

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
  spinners_ = std::clamp(NumCores() - 1, 1, std::max(opts_.num_threads, 1));
  if (shared_) {  // no threads of its own: the shared pool's workers take items from queue_
    client_ = shared_->Attach(&queue_, [this](const WorkItem& item) { Execute(item); });
    return;
  }
  auto stop = [this] { queue_.Stop(); };
  worker_exited_ = std::make_unique<std::atomic<bool>[]>(static_cast<size_t>(std::max(opts_.num_threads, 1)));
  StartThreads(&workers_, opts_.num_threads, [this](int t) { WorkerLoop(t); }, stop, "worker");
#ifdef __linux__
  // Worker i is pinned to the (offset + i)-th CPU this process may use (its affinity mask, in order): in a
  // container or under taskset, CPU numbers need not start at 0 nor be contiguous.
  const std::vector<int> cpus = UsableCpus();
  for (int i = 0; i < opts_.num_threads; ++i) {
    // named and pinned from here, so both hold as soon as the pool exists
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

void Engine::Notify(int want) {
  if (!shared_) {
    queue_.WakeIfPending();
  } else if (!queue_.Empty()) {
    shared_->Notify(want);
  }
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

void Engine::CheckOpen() const {
  if (closed_ || stop_requested())
    throw std::runtime_error("this pool has been closed; create a new one with parallel_pool.make(...)");
}

void Engine::WorkerLoop(int t) {
  const int64_t spin = t < spinners_ ? kWorkerSpinNs : 0;
  WorkItem item;
  while (queue_.Pop(&item, spin)) Execute(item);
  std::lock_guard<std::mutex> lk(exit_mu_);
  worker_exited_[t].store(true, std::memory_order_release);
  exit_cv_.notify_all();
}

void Engine::CheckEnvId(int64_t env_id) const {
  if (env_id < 0 || env_id >= opts_.num_envs) {
    throw std::out_of_range("env_id " + std::to_string(env_id) + " is out of range: this pool has env ids 0.." +
                            std::to_string(opts_.num_envs - 1));
  }
}

int Engine::num_players(int64_t env_id) const {
  CheckEnvId(env_id);
  return slots_[env_id].players;
}

Engine::Slot& Engine::IdleSlot(int64_t env_id) {
  CheckOpen();
  CheckEnvId(env_id);
  if (pending_[env_id]) {
    throw std::invalid_argument("env " + std::to_string(env_id) + " has a result pending; recv() it first");
  }
  return slots_[env_id];
}

std::vector<double> Engine::GetState(int64_t env_id) { return IdleSlot(env_id).env->GetState(); }

void Engine::SetState(int64_t env_id, const std::vector<double>& state) {
  Slot& s = IdleSlot(env_id);
  for (size_t i = 0; i < state.size(); ++i) {  // no env has a NaN or infinite state variable
    if (!std::isfinite(state[i])) {
      throw std::invalid_argument("set_state: value " + std::to_string(i) + " of the state is not finite (" +
                                  std::to_string(state[i]) + ")");
    }
  }
  s.env->SetState(state);  // each env validates its state (lengths may vary: Blackjack's hands)
  s.done = false;          // the env is mid-episode in the given state: its next step steps it
}

std::vector<Engine::EnvSnapshot> Engine::Snapshot(const int* env_ids, int k) {
  for (int i = 0; i < k; ++i) IdleSlot(env_ids[i]);
  std::vector<EnvSnapshot> out(k);
  for (int i = 0; i < k; ++i) {
    const Slot& s = slots_[env_ids[i]];
    out[i] = {s.env->SaveState(), s.env->GeneratorState(), s.elapsed, s.done};
  }
  return out;
}

void Engine::Restore(const int* env_ids, int k, const std::vector<EnvSnapshot>& snapshots) {
  if (snapshots.size() != static_cast<size_t>(k)) throw std::invalid_argument("restore: one snapshot per env id");
  std::vector<EnvSnapshot> before = Snapshot(env_ids, k);  // also checks every id is idle
  // What the engine itself keeps is checked for every env before any env changes; each env checks its own state
  // (LoadState, SetGeneratorState) as it is applied, and a refusal there puts the envs already restored back.
  const int64_t limit = opts_.max_episode_steps;
  for (int i = 0; i < k; ++i) {
    const EnvSnapshot& snap = snapshots[i];
    for (size_t j = 0; j < snap.env.size(); ++j) {
      if (!std::isfinite(snap.env[j])) {  // no env has a NaN or infinite state variable
        throw std::invalid_argument("restore: value " + std::to_string(j) + " of a state is not finite");
      }
    }
    // an episode in progress has stepped fewer than max_episode_steps times (its step that reaches the limit ends
    // it): so the count cannot pass the limit, nor overflow the int it is kept in, however the envs step on
    const int64_t most = snap.done ? limit : limit - 1;
    if (snap.elapsed < 0 || snap.elapsed > most) {
      throw std::invalid_argument("restore: elapsed must be in [0, " + std::to_string(most) + "] for an episode " +
                                  (snap.done ? "that has ended" : "in progress") + " (max_episode_steps " +
                                  std::to_string(limit) + "), got " + std::to_string(snap.elapsed));
    }
  }
  int done = 0;
  auto apply = [&](Slot& s, const EnvSnapshot& snap) {
    s.env->LoadState(snap.env);
    s.env->SetGeneratorState(snap.generator);
    s.elapsed = static_cast<int>(snap.elapsed);
    s.done = snap.done;
  };
  try {
    for (; done < k; ++done) apply(slots_[env_ids[done]], snapshots[done]);
  } catch (...) {
    for (int i = 0; i <= done && i < k; ++i) apply(slots_[env_ids[i]], before[i]);
    throw;
  }
}

Config Engine::GetConfig(int64_t env_id) const {
  CheckOpen();
  CheckEnvId(env_id);
  std::lock_guard<std::mutex> lk(config_mu_);
  const Slot& s = slots_[env_id];
  return s.next_config ? *s.next_config : *s.config;
}

void Engine::SetConfig(const int* env_ids, int k, const std::vector<Config>& configs) {
  CheckOpen();
  if (configs.size() != static_cast<size_t>(k)) throw std::invalid_argument("set_config: one config per env id");
  std::vector<std::unique_ptr<Env>> built(k);
  for (int i = 0; i < k; ++i) {
    CheckEnvId(env_ids[i]);
    CheckCommonKeys(config_, configs[i], "set_config");
    // the env takes over the generator of the env it replaces; the env's own seed still reaches randomness that
    // lives outside gen_ (an engine process seeded at construction), as when the pool built it
    built[i] = type_->create(configs[i], env_ids[i], EnvSeed(opts_.seed, env_ids[i]));
    if (built[i]->NumPlayers() != slots_[env_ids[i]].players) {
      throw std::invalid_argument("set_config: env " + std::to_string(env_ids[i]) + " would change its player count");
    }
  }
  std::lock_guard<std::mutex> lk(config_mu_);
  for (int i = 0; i < k; ++i) {
    Slot& s = slots_[env_ids[i]];
    s.next_config = std::make_shared<const Config>(configs[i]);
    s.next_env = std::move(built[i]);  // a later set_config before the reset replaces an earlier one
    s.has_next.store(true, std::memory_order_release);
  }
}

int Engine::ActionRows(const int* env_ids, int k) const {
  if (max_players_ == 1) return k;
  int rows = 0;
  for (int i = 0; i < k; ++i) rows += slots_[env_ids[i]].players;
  return rows;
}

int Engine::RunLength(int envs) const {
  // enough envs per item that its queue operation and bookkeeping are small against the item's work, and at
  // least one item per thread that can run them (the workers, and in sync mode the waiting caller)
  const int64_t cost = std::max<int64_t>(item_cost_ns_.load(std::memory_order_relaxed), 1);
  // a type with StepBatch declares its step cheap: its runs are as long as balance allows from the first send (the
  // estimate starts high and settles only after many timed items -- and never under valgrind)
  const int64_t by_cost = step_batch_ != nullptr ? WorkItem::kMaxRun : std::max<int64_t>(kRunNs / cost, 1);
  const int threads = opts_.num_threads + (sync() ? 1 : 0);
  const int by_balance = (envs + threads - 1) / threads;
  return static_cast<int>(std::clamp<int64_t>(std::min<int64_t>(by_cost, by_balance), 1, WorkItem::kMaxRun));
}

// How many workers this send has work for: one per item (the caller takes one itself when it helps), at most one
// per kWakeWorthNs of estimated work. The queue wakes sleepers only for those not already awake.
// back_to_back: the previous send was less than a worker's spin ago. Then the spinning workers are wanted for any
// work they can share: awake, they would still be spinning now, so one asleep went to sleep in an earlier pause of
// the caller, and woken once it stays awake through the calls that follow. Without this, a pool of cheap envs whose
// worker fell asleep once (a GC pause, a preemption) never woke it again: no single call was worth a wake-up, and
// the caller stepped every env alone (CartPole@256 sync: the worker stepped under a quarter of the envs).
int Engine::WorkersWanted(int items, int envs, bool back_to_back) const {
  const int64_t cost = item_cost_ns_.load(std::memory_order_relaxed);
  const bool caller_helps = sync() && cost < kHelpMaxNs;  // then the caller runs one item itself (see WaitFor)
  int for_workers = caller_helps ? items - 1 : items;
  int64_t worth = static_cast<int64_t>(envs) * cost / kWakeWorthNs;
  if (back_to_back) worth = std::max<int64_t>(worth, spinners_);
  return static_cast<int>(std::min<int64_t>({static_cast<int64_t>(for_workers), worth, opts_.num_threads}));
}

// A sync step of every env (consecutive ids) of a type with StepBatch: one item per thread, each a range of
// envs, so that a call costs each thread one queue operation and one completion, not one per run of envs (with
// the threads on cores far apart -- here the two vCPUs' round trip ranged from 70 to 420 ns from one hour to the
// next -- each is a cache line moved between cores). The waiting caller takes the last item (WaitFor: newest
// first); the workers' items are longer by `caller_cut_` envs in all, since the caller also does the call's own
// serial work (Python, this send, the result) while the workers have nothing. WaitFor adjusts the cut each call.
// (Short items between them for whichever thread is done first, to absorb an env's reset or a generator refill,
// measured slower: each is one more cache line moved between the cores.)
void Engine::ShareAmongThreads(int first, int k, Batch* ordered) {
  const int workers = opts_.num_threads;
  const int even = k / (workers + 1);
  caller_cut_ = std::clamp(caller_cut_, -even, even);
  const int caller_envs = even - caller_cut_;
  const int worker_envs = k - caller_envs;
  for (int w = 0, pos = 0; w <= workers; ++w) {
    // workers' shares as equal as integers allow, the caller's last
    const int n = w == workers ? caller_envs : worker_envs / workers + (w < worker_envs % workers ? 1 : 0);
    if (n == 0) continue;
    WorkItem& item = NextItem();
    item.batch = ordered;
    item.pos = pos;
    item.count = n;
    item.reset = false;
    item.first = first + pos;
    pos += n;
  }
  caller_share_pending_ = caller_envs > 0;
  ++shared_sends_;
}

Batch* Engine::AcquireOrderedBatch() {
  if (ordered_free_.empty()) {
    ordered_store_.push_back(std::make_unique<Batch>());
    ordered_free_.push_back(ordered_store_.back().get());
  }
  Batch* b = ordered_free_.back();
  ordered_free_.pop_back();
  return b;
}

bool Engine::CheckIds(const int* env_ids, int k, bool reset, bool consecutive) {
  // consecutive ids in range are distinct and valid by construction; while no env has a result pending and
  // stepping needs no finished-episode check, they need no check per env (the common send: every env, in order)
  const bool per_env = !reset && opts_.autoreset == AutoReset::kDisabled;
  if (consecutive && num_pending_ == 0 && !per_env) return false;
  // Otherwise each id is marked pending as it is checked: an id found already marked is pending from an earlier
  // send or repeated in this one -- one load and one store per env (an async loop's scattered send). On an error
  // the marks made here are taken back.
  for (int i = 0; i < k; ++i) {
    const int e = env_ids[i];
    std::string err;
    if (e < 0 || e >= opts_.num_envs) {
      err = "env_id " + std::to_string(e) + " is out of range: this pool has env ids 0.." +
            std::to_string(opts_.num_envs - 1);
    } else if (pending_[e]) {
      err = std::find(env_ids, env_ids + i, e) != env_ids + i
                ? "env_id " + std::to_string(e) + " appears more than once"
                : "env " + std::to_string(e) + " already has an action pending; recv() its result before sending again";
    } else if (per_env && slots_[e].done) {
      err = "env " + std::to_string(e) +
            " has finished its episode (or was never reset) and autoreset_mode is 'disabled': reset it first "
            "(reset(options={'reset_mask': mask}) or reset(env_id=...))";
    } else {
      pending_[e] = 1;
      continue;
    }
    Unmark(env_ids, i);
    throw std::invalid_argument(err);
  }
  return true;
}

void Engine::Unmark(const int* env_ids, int k) {
  for (int i = 0; i < k; ++i) pending_[env_ids[i]] = 0;
}

void Engine::Send(const int* env_ids, int k, const std::vector<ActionInput>& actions, bool reset, const int64_t* seeds,
                  bool caller_recvs, uint8_t* block) {
  CheckOpen();
  if (k <= 0) throw std::invalid_argument("env_id is empty: give at least one env to step or reset");
  // 1. validate everything before touching any state
  // (no early exit: the loop vectorizes, and the common send is every env in order; unsigned: ids not yet checked
  // may be anything, and a signed env_ids[0] + i could overflow)
  uint32_t off_by = 0;
  const auto first_id = static_cast<uint32_t>(env_ids[0]);
  for (int i = 1; i < k; ++i) off_by |= static_cast<uint32_t>(env_ids[i]) ^ (first_id + static_cast<uint32_t>(i));
  const bool consecutive = env_ids[0] >= 0 && env_ids[0] <= opts_.num_envs - k && off_by == 0;
  const bool marked = CheckIds(env_ids, k, reset, consecutive);  // (then these envs are marked pending)
  int rows = 0;
  try {
    if (sync() && opts_.batch_size < k) throw std::invalid_argument("too many env ids");
    rows = ActionRows(env_ids, k);
    if (!reset) {
      if (actions.size() != spec_.action.size()) {
        throw std::invalid_argument("expected " + std::to_string(spec_.action.size()) + " action arrays, got " +
                                    std::to_string(actions.size()));
      }
      for (size_t a = 0; a < spec_.action.size(); ++a) CheckAction(spec_.action[a], actions[a], rows);
    }
    for (int i = 0; seeds && i < k; ++i) {
      if (seeds[i] < 0) {
        throw std::invalid_argument("seed " + std::to_string(seeds[i]) + " for env " + std::to_string(env_ids[i]) +
                                    " is negative: seeds must be integers in [0, 2**63 - 1]");
      }
    }
  } catch (...) {
    if (marked) Unmark(env_ids, k);
    throw;
  }
  // 2. commit: copy the actions into the envs' action rows, mark pending, enqueue
  if (!reset) {
    for (size_t a = 0; a < spec_.action.size(); ++a) {
      const size_t n = spec_.action[a].NumElements(), in_row = n * DTypeSize(actions[a].dtype);
      if (consecutive) {  // the envs' rows are consecutive in action_rows_ too: one copy
        CopyAction(const_cast<uint8_t*>(slots_[env_ids[0]].action_ptrs[a]), spec_.action[a].dtype, actions[a].data,
                   actions[a].dtype, n * rows);
        continue;
      }
      if (max_players_ == 1 && actions[a].dtype == spec_.action[a].dtype) {
        // the common scattered send (an async recv's env ids): env e's row is row e of action_rows_; found without
        // reading its slot, whose first cache line the executing thread has just written (elapsed, done)
        uint8_t* rows_a = action_rows_[a].data();
        if (in_row == 4) {
          for (int i = 0; i < k; ++i)
            std::memcpy(rows_a + static_cast<size_t>(env_ids[i]) * 4, actions[a].data + i * 4, 4);
        } else {
          for (int i = 0; i < k; ++i)
            std::memcpy(rows_a + static_cast<size_t>(env_ids[i]) * in_row, actions[a].data + i * in_row, in_row);
        }
        continue;
      }
      size_t row = 0;
      for (int i = 0; i < k; ++i) {
        const Slot& s = slots_[env_ids[i]];
        CopyAction(const_cast<uint8_t*>(s.action_ptrs[a]), spec_.action[a].dtype, actions[a].data + row * in_row,
                   actions[a].dtype, n * s.players);
        row += s.players;
      }
    }
  }
  for (int i = 0; reset && i < k; ++i) {
    Slot& s = slots_[env_ids[i]];
    s.reseed = seeds != nullptr;
    s.seed = seeds ? static_cast<uint64_t>(seeds[i]) : 0;
  }
  Batch* ordered = nullptr;
  if (sync()) {
    ordered = AcquireOrderedBatch();
    ordered->own_block = block == nullptr;
    ordered->block = block != nullptr ? block : blocks_->Acquire();
    ordered->expected = k;
    ordered->done.store(0, std::memory_order_relaxed);
    ordered->player_rows = rows;
    if (max_players_ > 1) {  // (one player per env: position i's first player row is i, RowsFor)
      ordered->player_offset.resize(k);
      for (int i = 0, r = 0; i < k; r += slots_[env_ids[i]].players, ++i) ordered->player_offset[i] = r;
    }
    ordered_.push_back(ordered);
  }
  num_items_ = 0;
  caller_share_pending_ = false;
  if (sync() && consecutive && !reset && step_batch_ != nullptr && shared_ == nullptr &&
      k >= kShareMinEnvs * (opts_.num_threads + 1)) {  // (smaller sends: RunLength's runs)
    ShareAmongThreads(env_ids[0], k, ordered);
  } else {
    const int run = RunLength(k);
    for (int i = 0; i < k; i += run) {
      WorkItem& item = NextItem();
      item.batch = ordered;
      item.pos = i;
      item.count = std::min(run, k - i);
      item.reset = reset;
      item.first = -1;
      std::copy(env_ids + i, env_ids + i + item.count, item.env_ids);
    }
  }
  const int64_t now = WallNs();
  const bool back_to_back = now - last_send_ns_ < kWorkerSpinNs;
  last_send_ns_ = now;
  const int want = WorkersWanted(static_cast<int>(num_items_), k, back_to_back);
  if (caller_recvs && ordered && num_items_ == 1 && want == 0 && !has_own_item_) {
    own_item_ = scratch_items_[0];  // no worker is wanted: the caller runs it, so it need not be queued
    has_own_item_ = true;
  } else {
    queue_.Push(scratch_items_.data(), num_items_, want, opts_.num_threads);
    if (shared_) shared_->Notify(want);
  }
  // what only this thread reads, after the workers have their items (a sync call's serial part is theirs to wait)
  if (!marked) std::memset(pending_.data() + env_ids[0], 1, static_cast<size_t>(k));  // (consecutive ids)
  num_pending_ += k;
}

bool Engine::RecvIsQuick() const {
  if (!sync() || ordered_.empty() || kept_.block != nullptr) return false;
  const Batch* b = ordered_.front();
  const int left = b->expected - b->done.load(std::memory_order_acquire);
  if (left == 0) return true;
  return has_own_item_ && own_item_.batch == b && own_item_.count == left &&
         item_cost_ns_.load(std::memory_order_relaxed) * left < kQuickNs;
}

void Engine::WaitFor(Batch* b, const std::function<bool()>& interrupted) {
  auto complete = [&] { return b->done.load(std::memory_order_acquire) >= b->expected; };
  if (has_own_item_ && own_item_.batch == b) {  // Send's caller_recvs item (a later batch's waits for its Recv)
    has_own_item_ = false;
    Execute(own_item_);
  }
  // Help: run queued items on this thread while they last (only this thread enqueues, so once the queue is
  // empty it stays empty until we return) -- but only cheap ones, and checking for Ctrl-C between them: a
  // caller inside a slow env step could not react to an interruption until the step ends.
  // With one sync batch in flight the caller takes the newest items (WorkQueue::TryPopBack: each env tends to stay
  // on one core); otherwise the oldest, so that no item waits behind later ones (an async caller taking the newest
  // would step the envs it just sent again and again while older ones wait).
  const bool newest = sync() && ordered_.size() == 1;
  const bool shared_out = caller_share_pending_ && newest;  // a ShareAmongThreads send (the caller's item last)
  caller_share_pending_ = false;
  WorkItem item;
  for (int n = 0; !complete() && item_cost_ns_.load(std::memory_order_relaxed) < kHelpMaxNs; ++n) {
    if (!(newest ? queue_.TryPopBack(&item) : queue_.TryPop(&item))) break;
    Execute(item);
    if (shared_out && n == 0) {
      // the caller's own share is done: were the workers' shares done first (give them more next call) or are
      // they still running (give them less)? One env per call either way: the cut settles where both finish
      // together, and follows the machine when its load changes. Not when the caller ran a worker's item too
      // (the workers were not there: nothing to learn).
      if (complete()) {
        ++caller_cut_;
      } else if (queue_.Empty()) {
        --caller_cut_;
      }
    }
    if (stop_requested()) break;
    if ((n & 63) == 63 && interrupted && interrupted()) {
      Notify(opts_.num_threads);
      throw Interrupted("interrupted while waiting for results");
    }
  }
  // items left behind (the caller stopped helping because they turned out slow) go to the workers, which the
  // send may not have woken: it counted on the caller
  Notify(opts_.num_threads);
  for (int i = 0; i < kWaitSpin && !complete(); ++i) PP_CPU_RELAX();
  if (complete()) return;
  std::unique_lock<std::mutex> lk(done_mu_);
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  while (!complete()) {
    if (stop_requested()) {
      waiters_.fetch_sub(1, std::memory_order_seq_cst);
      throw std::runtime_error("this pool was closed while waiting for results");
    }
    if (done_cv_.wait_for(lk, std::chrono::milliseconds(20)) == std::cv_status::timeout && !complete()) {
      lk.unlock();
      bool stop = interrupted && interrupted();
      lk.lock();
      if (stop) {
        waiters_.fetch_sub(1, std::memory_order_seq_cst);
        throw Interrupted("interrupted while waiting for results");
      }
    }
  }
  waiters_.fetch_sub(1, std::memory_order_seq_cst);
}

int Engine::CompactPlayerRows(uint8_t* block, int env_rows) {
  if (max_players_ == 1) return env_rows;  // one player row per env row: nothing to close
  const auto& E = layout_.entries;
  const int32_t* ids = reinterpret_cast<const int32_t*>(block + E[layout_.env_id].offset);
  int total = 0;
  bool full = true;
  for (int i = 0; i < env_rows; ++i) {
    total += slots_[ids[i]].players;
    full = full && slots_[ids[i]].players == max_players_;
  }
  if (full) return total;
  // some envs have fewer players than the stride: close the gaps, front to back (offsets only shrink)
  for (const auto& e : E) {
    if (!e.per_player) continue;
    uint8_t* base = block + e.offset;
    size_t dst = 0;
    for (int i = 0; i < env_rows; ++i) {
      size_t n = e.row_bytes * static_cast<size_t>(slots_[ids[i]].players);
      std::memmove(base + dst, base + e.row_bytes * static_cast<size_t>(i) * max_players_, n);
      dst += n;
    }
  }
  return total;
}

RecvResult Engine::Recv(const std::function<bool()>& interrupted) {
  CheckOpen();
  if (kept_.block != nullptr) return DeliverKept();
  RecvResult r = sync() ? RecvOrdered(interrupted) : RecvAsync(interrupted);
  Batch* b = r.batch;
  std::vector<std::pair<int, std::string>> errs;
  {
    std::lock_guard<std::mutex> lk(b->err_mu);
    errs.swap(b->errors);
  }
  if (errs.empty()) {
    MarkReceived(r);
    return r;
  }
  EnvError error(ErrorMessage(errs, !sync()));
  for (const auto& [env, what] : errs) {
    error.env_ids.push_back(env);
    error.messages.push_back(what);
  }
  error.batch_kept = !sync();
  if (sync()) {
    // the failed envs reset on their next step; the batch is dropped (the caller steps all of them again)
    MarkReceived(r);
    if (b->own_block) blocks_->Release(r.block);
  } else {
    // the failed envs were reset in place: the whole batch is delivered by the next recv(), and its envs stay
    // pending until then (so they cannot be sent to twice)
    kept_ = r;
  }
  throw error;
}

std::string Engine::ErrorMessage(const std::vector<std::pair<int, std::string>>& errs, bool kept) {
  std::string msg = "exception in env";
  for (const auto& [env, what] : errs) msg += " " + std::to_string(env) + ": " + what + ";";
  msg += kept ? " (those envs were reset; the next recv() returns this whole batch, their rows holding the first "
                "observation of a new episode)"
              : " (the env(s) will be reset on their next step; the other results of this batch were dropped)";
  return msg;
}

RecvResult Engine::DeliverKept() {
  RecvResult r = kept_;
  kept_ = RecvResult{};
  MarkReceived(r);
  return r;
}

void Engine::MarkReceived(const RecvResult& r) {
  const auto& eid = layout_.entries[layout_.env_id];
  const int32_t* ids = reinterpret_cast<const int32_t*>(r.block + eid.offset);
  for (int i = 0; i < r.env_rows; ++i) pending_[ids[i]] = 0;
  num_pending_ -= r.env_rows;
}

RecvResult Engine::RecvOrdered(const std::function<bool()>& interrupted) {
  if (ordered_.empty()) throw std::runtime_error("recv() called but no actions were sent: call send() first");
  Batch* b = ordered_.front();
  WaitFor(b, interrupted);
  ordered_.pop_front();
  RecvResult r;
  r.batch = b;
  r.block = b->block;
  b->block = nullptr;
  r.env_rows = b->expected;
  r.player_rows = b->player_rows;
  ordered_free_.push_back(b);
  return r;
}

RecvResult Engine::RecvAsync(const std::function<bool()>& interrupted) {
  if (num_pending_ < opts_.batch_size) {
    throw std::runtime_error("recv() would wait forever: only " + std::to_string(num_pending_) +
                             " envs have results pending but batch_size is " + std::to_string(opts_.batch_size) +
                             "; send() more envs first");
  }
  Batch* b = ring_[static_cast<size_t>(recv_seq_ % static_cast<int64_t>(ring_.size()))].get();
  WaitFor(b, interrupted);
  RecvResult r;
  r.batch = b;
  r.block = b->block;
  r.env_rows = b->expected;
  b->block = blocks_->Acquire();
  b->done.store(0, std::memory_order_release);
  ++recv_seq_;
  r.player_rows = CompactPlayerRows(r.block, r.env_rows);
  return r;
}

void Engine::Render(const int* env_ids, int k, uint8_t* out) {
  CheckOpen();
  if (spec_.render_shape.size() != 2) {
    throw std::invalid_argument("this env type has no C++ renderer");
  }
  for (int i = 0; i < k; ++i) IdleSlot(env_ids[i]);  // every env is checked before anything is drawn
  const size_t frame = static_cast<size_t>(spec_.render_shape[0]) * spec_.render_shape[1] * 3;
  for (int i = 0; i < k; ++i) slots_[env_ids[i]].env->Render(out + frame * i);
}

}  // namespace pp
