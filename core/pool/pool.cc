#include "core/pool/pool.h"

#include <algorithm>
#include <chrono>
#include <cmath>
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

constexpr int64_t kWakeWorthNs = 50000;  // wake a sleeping worker only for at least this much work (a wake-up costs ~10-50 us)
constexpr int kWorkerSpin = 2000;        // pause iterations a worker spins before sleeping
constexpr int kWaitSpin = 4000;          // pause iterations the caller spins before blocking
constexpr int64_t kAlwaysTimeNs = 100000;  // items costlier than this are timed every time
constexpr int64_t kHelpMaxNs = 10000000;   // the waiting caller runs queued items only if they cost less (Ctrl-C)
constexpr int kMaxEnvs = 1 << 20;        // sanity bounds: larger values are typos, and would exhaust memory
constexpr int kMaxThreads = 4096;        // or the system's thread limit long before doing anything useful

int Cores() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

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
  for (size_t r = 0; r < rows; ++r) {
    for (size_t j = 0; j < per; ++j) {
      const S x = v[r * per + j];
      if constexpr (std::is_floating_point_v<S>) {
        if (!std::isfinite(x)) {
          throw std::invalid_argument(Msg({"action '", a.name, "' row ", std::to_string(r), " contains ",
                                           std::isnan(x) ? "NaN" : "inf"}));
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

uint64_t EnvSeed(int64_t seed, int env_id) {
  // in uint64: seed + env_id cannot overflow for seed <= 2**63 - 1 (no signed-overflow UB, no 32-bit truncation)
  return static_cast<uint64_t>(seed) + static_cast<uint64_t>(env_id);
}

PoolOptions ParseOptions(const Config& c) {
  PoolOptions o{};
  o.num_envs = c.Get<int>("num_envs");
  o.batch_size = c.Get<int>("batch_size");
  o.num_threads = c.Get<int>("num_threads");
  o.max_episode_steps = c.Get<int>("max_episode_steps");
  o.thread_affinity_offset = c.Get<int>("thread_affinity_offset");
  o.seed = c.Get<int64_t>("seed");
  if (o.seed < 0) {
    throw std::invalid_argument("seed must be an integer in [0, 2**63 - 1], got " + std::to_string(o.seed));
  }
  if (o.num_envs < 1 || o.num_envs > kMaxEnvs) {
    throw std::invalid_argument("num_envs must be in [1, " + std::to_string(kMaxEnvs) + "], got " +
                                std::to_string(o.num_envs));
  }
  if (o.batch_size < 0) throw std::invalid_argument("batch_size must be >= 0, got " + std::to_string(o.batch_size));
  if (o.batch_size == 0) o.batch_size = o.num_envs;
  if (o.batch_size > o.num_envs) {
    throw std::invalid_argument("batch_size (" + std::to_string(o.batch_size) + ") must be <= num_envs (" +
                                std::to_string(o.num_envs) + ")");
  }
  if (o.num_threads < 0 || o.num_threads > kMaxThreads) {
    throw std::invalid_argument("num_threads must be in [0, " + std::to_string(kMaxThreads) + "] (0 = automatic), got " +
                                std::to_string(o.num_threads));
  }
  if (o.num_threads == 0) o.num_threads = std::min(o.batch_size, Cores());
  if (o.max_episode_steps < 1) {
    throw std::invalid_argument("max_episode_steps must be >= 1, got " + std::to_string(o.max_episode_steps));
  }
  // players per env are the env's business (its spec's num_players_max); the pool only checks the key is sane
  if (const int players = c.Get<int>("max_num_players"); players < 1) {
    throw std::invalid_argument("max_num_players must be >= 1, got " + std::to_string(players));
  }
  if (o.thread_affinity_offset < -1) {
    throw std::invalid_argument("thread_affinity_offset must be >= -1, got " + std::to_string(o.thread_affinity_offset));
  }
  std::string mode = c.Get<std::string>("autoreset_mode");
  if (mode == "next_step") {
    o.autoreset = AutoReset::kNextStep;
  } else if (mode == "same_step") {
    o.autoreset = AutoReset::kSameStep;
  } else if (mode == "disabled") {
    o.autoreset = AutoReset::kDisabled;
  } else {
    throw std::invalid_argument("autoreset_mode must be one of 'next_step', 'same_step', 'disabled', got '" + mode +
                                "'");
  }
  return o;
}

Pool::Pool(const EnvType& type, const Config& config)
    : opts_(ParseOptions(config)),
      spec_(type.make_spec(config)),
      layout_(spec_, opts_.batch_size, std::max(spec_.num_players_max, 1), opts_.autoreset),
      max_players_(std::max(spec_.num_players_max, 1)),
      blocks_(std::make_shared<BlockPool>(layout_.block_bytes)),
      slots_(opts_.num_envs),
      queue_(static_cast<size_t>(opts_.num_envs)) {
  for (const auto& a : spec_.action) {
    action_row_bytes_.push_back(a.RowBytes());
    action_bytes_per_player_ += a.RowBytes();
  }
  BuildEnvs(type, config);
  for (int i = 0; i < opts_.num_envs; ++i) {
    Slot& s = slots_[i];
    s.players = s.env->NumPlayers();
    if (s.players < 1 || s.players > spec_.num_players_max) {
      throw std::invalid_argument("env " + std::to_string(i) + " has " + std::to_string(s.players) +
                                  " players but the spec allows at most " + std::to_string(spec_.num_players_max));
    }
    s.action.assign(action_bytes_per_player_ * s.players, 0);
    size_t off = 0;
    for (size_t a = 0; a < spec_.action.size(); ++a) {
      s.action_ptrs.push_back(s.action.data() + off);
      off += action_row_bytes_[a] * s.players;
    }
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
  if (!sync()) {
    int k = (opts_.num_envs + opts_.batch_size - 1) / opts_.batch_size + 1;
    for (int i = 0; i < k; ++i) {
      auto b = std::make_unique<Batch>();
      b->block = blocks_->Acquire();
      b->expected = opts_.batch_size;
      ring_.push_back(std::move(b));
    }
  }
  scratch_seen_.assign(opts_.num_envs, 0);
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

void Pool::BuildEnvs(const EnvType& type, const Config& config) {
  // in parallel: ROM loading or model compilation can be slow
  const int n = std::min(opts_.num_envs, std::max(opts_.num_threads, 1));
  std::vector<std::thread> builders;
  std::vector<std::exception_ptr> errors(n);
  StartThreads(&builders, n, [&](int t) {
    try {
      for (int i = t; i < opts_.num_envs; i += n) slots_[i].env = type.create(config, i, EnvSeed(opts_.seed, i));
    } catch (...) {
      errors[t] = std::current_exception();
    }
  }, [] {}, "env-building");
  for (auto& b : builders) b.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

void Pool::StartWorkers() {
  StartThreads(&workers_, opts_.num_threads, [this](int) { WorkerLoop(); }, [this] { queue_.Stop(); }, "worker");
#ifdef __linux__
  for (int i = 0; i < opts_.num_threads; ++i) {
    // named and pinned from here, so both hold as soon as the pool exists
    pthread_setname_np(workers_[i].native_handle(), "pp-worker");
    if (opts_.thread_affinity_offset >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET((opts_.thread_affinity_offset + i) % Cores(), &set);
      pthread_setaffinity_np(workers_[i].native_handle(), sizeof(set), &set);
    }
  }
#endif
}

Pool::~Pool() { Close(); }

void Pool::Close() {
  if (closed_.exchange(true, std::memory_order_acq_rel)) return;
  queue_.Stop();
  for (auto& t : workers_) t.join();
  workers_.clear();
  for (auto& s : slots_) s.env.reset();
  for (auto& b : ring_) {
    if (b->block) blocks_->Release(b->block);
    b->block = nullptr;
  }
  for (Batch* b : ordered_) {
    if (b->block) blocks_->Release(b->block);
    b->block = nullptr;
  }
  ordered_.clear();
  if (kept_.block) blocks_->Release(kept_.block);
  kept_ = RecvResult{};
}

void Pool::CheckOpen() const {
  if (closed_) throw std::runtime_error("this pool has been closed; create a new one with parallel_pool.make(...)");
}

void Pool::WorkerLoop() {
  WorkItem item;
  while (queue_.Pop(&item, kWorkerSpin)) Execute(item);
}

void Pool::CheckEnvId(int64_t env_id) const {
  if (env_id < 0 || env_id >= opts_.num_envs) {
    throw std::out_of_range("env_id " + std::to_string(env_id) + " is out of range: this pool has env ids 0.." +
                            std::to_string(opts_.num_envs - 1));
  }
}

int Pool::num_players(int64_t env_id) const {
  CheckEnvId(env_id);
  return slots_[env_id].players;
}

Pool::Slot& Pool::IdleSlot(int64_t env_id) {
  CheckOpen();
  CheckEnvId(env_id);
  if (slots_[env_id].pending) {
    throw std::invalid_argument("env " + std::to_string(env_id) + " has a result pending; recv() it first");
  }
  return slots_[env_id];
}

std::vector<double> Pool::GetState(int64_t env_id) { return IdleSlot(env_id).env->GetState(); }

void Pool::SetState(int64_t env_id, const std::vector<double>& state) {
  Slot& s = IdleSlot(env_id);
  s.env->SetState(state);  // each env validates its state (lengths may vary: Blackjack's hands)
  s.done = false;  // the env is mid-episode in the given state: its next step steps it
}

int Pool::ActionRows(const int* env_ids, int k) const {
  int rows = 0;
  for (int i = 0; i < k; ++i) rows += slots_[env_ids[i]].players;
  return rows;
}

int Pool::WakeCount(int items) const {
  const int64_t cost = item_cost_ns_.load(std::memory_order_relaxed);
  const bool caller_helps = sync() && cost < kHelpMaxNs;  // then the caller runs one item itself (see WaitFor)
  int for_workers = caller_helps ? items - 1 : items;
  int64_t worth = static_cast<int64_t>(items) * cost / kWakeWorthNs;
  return static_cast<int>(std::min<int64_t>({static_cast<int64_t>(for_workers), worth, opts_.num_threads}));
}

Batch* Pool::AcquireOrderedBatch() {
  if (ordered_free_.empty()) {
    ordered_store_.push_back(std::make_unique<Batch>());
    ordered_free_.push_back(ordered_store_.back().get());
  }
  Batch* b = ordered_free_.back();
  ordered_free_.pop_back();
  return b;
}

void Pool::Send(const int* env_ids, int k, const std::vector<ActionInput>& actions, bool reset,
                const int64_t* seeds) {
  CheckOpen();
  if (k <= 0) throw std::invalid_argument("env_id is empty: give at least one env to step or reset");
  // 1. validate everything before touching any state
  int bad = -1;
  std::string err;
  for (int i = 0; i < k && bad < 0; ++i) {
    int e = env_ids[i];
    if (e < 0 || e >= opts_.num_envs) {
      err = "env_id " + std::to_string(e) + " is out of range: this pool has env ids 0.." +
            std::to_string(opts_.num_envs - 1);
      bad = i;
    } else if (scratch_seen_[e]) {
      err = "env_id " + std::to_string(e) + " appears more than once";
      bad = i;
    } else if (slots_[e].pending) {
      err = "env " + std::to_string(e) + " already has an action pending; recv() its result before sending again";
      bad = i;
    } else if (!reset && opts_.autoreset == AutoReset::kDisabled && slots_[e].done) {
      err = "env " + std::to_string(e) +
            " has finished its episode (or was never reset) and autoreset_mode is 'disabled': reset it first "
            "(reset(options={'reset_mask': mask}) or reset(env_id=...))";
      bad = i;
    } else {
      scratch_seen_[e] = 1;
    }
  }
  for (int i = 0; i < k; ++i) {
    int e = env_ids[i];
    if (e >= 0 && e < opts_.num_envs) scratch_seen_[e] = 0;
  }
  if (bad >= 0) throw std::invalid_argument(err);
  if (sync() && opts_.batch_size < k) throw std::invalid_argument("too many env ids");
  if (!reset) {
    if (actions.size() != spec_.action.size()) {
      throw std::invalid_argument("expected " + std::to_string(spec_.action.size()) + " action arrays, got " +
                                  std::to_string(actions.size()));
    }
    size_t rows = static_cast<size_t>(ActionRows(env_ids, k));
    for (size_t a = 0; a < spec_.action.size(); ++a) CheckAction(spec_.action[a], actions[a], rows);
  }
  for (int i = 0; seeds && i < k; ++i) {
    if (seeds[i] < 0) {
      throw std::invalid_argument("seed " + std::to_string(seeds[i]) + " for env " + std::to_string(env_ids[i]) +
                                  " is negative: seeds must be integers in [0, 2**63 - 1]");
    }
  }
  // 2. commit: copy actions into each env's slot, mark pending, enqueue
  Batch* ordered = nullptr;
  if (sync()) {
    ordered = AcquireOrderedBatch();
    ordered->block = blocks_->Acquire();
    ordered->expected = k;
    ordered->done.store(0, std::memory_order_relaxed);
    ordered->player_offset.resize(k);
  }
  scratch_items_.resize(k);
  size_t row = 0;
  int player_rows = 0;
  for (int i = 0; i < k; ++i) {
    int e = env_ids[i];
    Slot& s = slots_[e];
    if (!reset) {
      for (size_t a = 0; a < spec_.action.size(); ++a) {
        const ArraySpec& spec = spec_.action[a];
        const size_t n = spec.NumElements();
        CopyAction(const_cast<uint8_t*>(s.action_ptrs[a]), spec.dtype,
                   actions[a].data + row * n * DTypeSize(actions[a].dtype), actions[a].dtype, n * s.players);
      }
    }
    row += s.players;
    s.pending = true;
    if (ordered) ordered->player_offset[i] = player_rows;
    player_rows += s.players;
    scratch_items_[i] = WorkItem{e, reset, seeds != nullptr, seeds ? static_cast<uint64_t>(seeds[i]) : 0, ordered, i};
  }
  if (ordered) {
    ordered->player_rows = player_rows;
    ordered_.push_back(ordered);
  }
  num_pending_ += k;
  queue_.Push(scratch_items_.data(), k, WakeCount(k));
}

// ---- executing one work item (worker threads, and the caller while it waits) ----------------------------

uint8_t* Pool::Rows::At(const Layout& L, const Slot& s, int idx) const {
  const auto& e = L.entries[idx];
  const size_t r = static_cast<size_t>(e.per_player ? player_row : env_row);
  return staged ? base + s.staging_off[idx] + e.row_bytes * r : base + e.offset + e.row_bytes * r;
}

Pool::Rows Pool::RowsFor(const WorkItem& it, Slot& s) const {
  // ordered (sync) batches are written in place; async rows go to the env's staging area first
  if (it.batch == nullptr) return Rows{s.staging.data(), true, 0, 0};
  return Rows{it.batch->block, false, it.pos, it.batch->player_offset[it.pos]};
}

size_t Pool::EntryBytes(int idx, const Slot& s) const {
  const auto& e = layout_.entries[idx];
  return e.row_bytes * static_cast<size_t>(e.per_player ? s.players : 1);
}

void Pool::PrepareRows(const WorkItem& it, Slot& s, const Rows& rows) {
  Output& o = s.out;
  for (int i = 0; i < layout_.num_obs; ++i) o.obs[i].ptr = rows.At(layout_, s, i);
  for (int i = 0; i < layout_.num_info; ++i) o.info[i].ptr = rows.At(layout_, s, layout_.num_obs + i);
  o.reward = rows.At(layout_, s, layout_.reward);
  o.terminated = reinterpret_cast<bool*>(rows.At(layout_, s, layout_.terminated));
  o.truncated = reinterpret_cast<bool*>(rows.At(layout_, s, layout_.truncated));
  *reinterpret_cast<int32_t*>(rows.At(layout_, s, layout_.env_id)) = it.env_id;
  auto* player_ids = reinterpret_cast<int32_t*>(rows.At(layout_, s, layout_.player_env_id));
  for (int p = 0; p < s.players; ++p) player_ids[p] = it.env_id;
  // same-step mode: final_* rows are zero unless this step ends an episode (gymnasium's convention; blocks and
  // staging rows are recycled, so anything else would show a previous episode's data)
  if (layout_.final_begin >= 0) {
    for (int i = layout_.final_begin; i < static_cast<int>(layout_.entries.size()); ++i) {
      std::memset(rows.At(layout_, s, i), 0, EntryBytes(i, s));
    }
  }
  PresetResults(s);
}

void Pool::PresetResults(Slot& s) {
  std::memset(s.out.reward, 0, EntryBytes(layout_.reward, s));
  *s.out.terminated = false;
  *s.out.truncated = false;
}

void Pool::ResetEnv(Slot& s) {
  s.env->Reset(s.out);
  PresetResults(s);  // a reset has no reward and ends nothing, whatever the env wrote
  s.elapsed = 0;
  s.done = false;
}

void Pool::StepEnv(Slot& s, const Rows& rows) {
  ActionView av(&s.action_ptrs, &action_row_bytes_);
  s.env->Step(av, s.out);
  ++s.elapsed;
  if (!*s.out.terminated && s.elapsed >= opts_.max_episode_steps) *s.out.truncated = true;
  s.done = *s.out.terminated || *s.out.truncated;
  if (s.done && opts_.autoreset == AutoReset::kSameStep) SameStepReset(s, rows);
}

void Pool::SameStepReset(Slot& s, const Rows& rows) {
  // keep the finished episode's obs and info as final_*, then reset in place; reward/terminated/truncated of
  // the finishing step are what the caller sees
  const int fb = layout_.final_begin;
  for (int i = 0; i < layout_.num_obs + layout_.num_info; ++i) {
    std::memcpy(rows.At(layout_, s, fb + i), rows.At(layout_, s, i), EntryBytes(i, s));
  }
  *reinterpret_cast<int32_t*>(rows.At(layout_, s, fb + layout_.num_obs + layout_.num_info)) = s.elapsed;
  const bool term = *s.out.terminated, trunc = *s.out.truncated;
  std::memcpy(s.saved_reward.data(), s.out.reward, s.saved_reward.size());
  ResetEnv(s);
  std::memcpy(s.out.reward, s.saved_reward.data(), s.saved_reward.size());
  *s.out.terminated = term;
  *s.out.truncated = trunc;
}

std::string Pool::RunEnv(const WorkItem& it, Slot& s, const Rows& rows) {
  try {
    if (it.reset || s.done) {
      if (it.reseed) s.env->Seed(it.seed);
      ResetEnv(s);
    } else {
      StepEnv(s, rows);
    }
    return {};
  } catch (const std::exception& ex) {
    s.done = true;  // the env's state is unknown: it must be reset before it steps again
    return ex.what()[0] != '\0' ? ex.what() : "C++ exception";
  } catch (...) {
    s.done = true;
    return "unknown C++ exception";
  }
}

std::string Pool::RecoverInPlace(Slot& s, const Rows& rows) {
  // Async mode: the env's row is replaced by a fresh episode's first observation, so the batch stays whole and
  // the env stays in the send/recv loop (its elapsed_step of 0 and EnvError.env_ids tell the caller).
  try {
    PresetResults(s);
    ResetEnv(s);
    return {};
  } catch (...) {
    s.done = true;
  }
  // the reset failed too: deliver a zero row; the env is reset again when it is next sent to
  for (int i = 0; i < layout_.num_obs + layout_.num_info; ++i) std::memset(rows.At(layout_, s, i), 0, EntryBytes(i, s));
  PresetResults(s);
  return " (resetting it failed too; it is reset again on its next send)";
}

Batch* Pool::PublishStaged(const Slot& s) {
  // claim the next row of the async batch ring now that the step is done, and copy the staged rows there
  const int64_t seq = complete_seq_.fetch_add(1, std::memory_order_acq_rel);
  Batch* b = ring_[static_cast<size_t>((seq / opts_.batch_size) % static_cast<int64_t>(ring_.size()))].get();
  const int er = static_cast<int>(seq % opts_.batch_size);
  const int pr = er * max_players_;  // fixed stride: the player rows follow from the env row (compacted in Recv)
  const auto& E = layout_.entries;
  for (size_t i = 0; i < E.size(); ++i) {
    const bool pp = E[i].per_player;
    std::memcpy(b->block + E[i].offset + E[i].row_bytes * static_cast<size_t>(pp ? pr : er),
                s.staging.data() + s.staging_off[i], EntryBytes(static_cast<int>(i), s));
  }
  return b;
}

void Pool::UpdateCost(int64_t ns) {
  // rises at once (so the caller stops helping with slow items after one sample), decays slowly
  const int64_t old = item_cost_ns_.load(std::memory_order_relaxed);
  item_cost_ns_.store(ns > old ? ns : (old * 7 + ns) / 8, std::memory_order_relaxed);
}

void Pool::MarkDone(Batch* b) {
  // read `expected` before publishing this row: once done reaches it, the API thread may reuse the batch
  const int expected = b->expected;
  const int d = b->done.fetch_add(1, std::memory_order_acq_rel) + 1;
  if (d == expected && waiters_.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard<std::mutex> lk(done_mu_); }
    done_cv_.notify_all();
  }
}

void Pool::Execute(const WorkItem& it) {
  // time every item of expensive envs (the clock is noise there), one in 16 of cheap ones
  static thread_local uint32_t sample = 0;
  const bool timed = item_cost_ns_.load(std::memory_order_relaxed) > kAlwaysTimeNs || ((++sample) & 15) == 0;
  const auto t0 = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};

  Slot& s = slots_[it.env_id];
  const Rows rows = RowsFor(it, s);
  PrepareRows(it, s, rows);
  std::string error = RunEnv(it, s, rows);
  if (!error.empty() && !sync()) error += RecoverInPlace(s, rows);
  *reinterpret_cast<int32_t*>(rows.At(layout_, s, layout_.elapsed)) = s.elapsed;
  Batch* b = rows.staged ? PublishStaged(s) : it.batch;
  if (!error.empty()) {
    std::lock_guard<std::mutex> lk(b->err_mu);
    b->errors.emplace_back(it.env_id, std::move(error));
  }
  if (timed) {
    UpdateCost(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
  }
  MarkDone(b);
}

void Pool::WaitFor(Batch* b, const std::function<bool()>& interrupted) {
  auto complete = [&] { return b->done.load(std::memory_order_acquire) >= b->expected; };
  // Help: run queued items on this thread while they last (only this thread enqueues, so once the queue is
  // empty it stays empty until we return) -- but only cheap ones, and checking for Ctrl-C between them: a
  // caller inside a slow env step could not react to an interruption until the step ends.
  WorkItem item;
  for (int n = 0; !complete() && item_cost_ns_.load(std::memory_order_relaxed) < kHelpMaxNs; ++n) {
    if (!queue_.TryPop(&item)) break;
    Execute(item);
    if ((n & 63) == 63 && interrupted && interrupted()) throw Interrupted("interrupted while waiting for results");
  }
  for (int i = 0; i < kWaitSpin && !complete(); ++i) PP_CPU_RELAX();
  if (complete()) return;
  std::unique_lock<std::mutex> lk(done_mu_);
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  while (!complete()) {
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

int Pool::CompactPlayerRows(uint8_t* block, int env_rows) {
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

RecvResult Pool::Recv(const std::function<bool()>& interrupted) {
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
    blocks_->Release(r.block);
  } else {
    // the failed envs were reset in place: the whole batch is delivered by the next recv(), and its envs stay
    // pending until then (so they cannot be sent to twice)
    kept_ = r;
  }
  throw error;
}

std::string Pool::ErrorMessage(const std::vector<std::pair<int, std::string>>& errs, bool kept) {
  std::string msg = "exception in env";
  for (const auto& [env, what] : errs) msg += " " + std::to_string(env) + ": " + what + ";";
  msg += kept ? " (those envs were reset; the next recv() returns this whole batch, their rows holding the first "
                "observation of a new episode)"
              : " (the env(s) will be reset on their next step; the other results of this batch were dropped)";
  return msg;
}

RecvResult Pool::DeliverKept() {
  RecvResult r = kept_;
  kept_ = RecvResult{};
  MarkReceived(r);
  return r;
}

void Pool::MarkReceived(const RecvResult& r) {
  const auto& eid = layout_.entries[layout_.env_id];
  const int32_t* ids = reinterpret_cast<const int32_t*>(r.block + eid.offset);
  for (int i = 0; i < r.env_rows; ++i) slots_[ids[i]].pending = false;
  num_pending_ -= r.env_rows;
}

RecvResult Pool::RecvOrdered(const std::function<bool()>& interrupted) {
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

RecvResult Pool::RecvAsync(const std::function<bool()>& interrupted) {
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

}  // namespace pp
