// Engine::Send: every input validated before anything is enqueued (env ids, action values in their source type,
// seeds), then the work cut into items (runs of cheap envs, one range per thread for a batched step) and the
// workers woken that the work is worth.
#include "core/engine/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <system_error>

#include "core/engine/engine_internal.h"

namespace pp {

namespace {

constexpr int64_t kWakeWorthNs =
    50000;  // wake a sleeping worker only for at least this much work (a wake-up costs ~10-50 us)
// a send's cheap envs go to the queue in runs of about this much work
constexpr int64_t kRunNs = 5000;
// ShareAmongThreads: for sends of at least this many envs per thread (a smaller one's few runs cost as little), of
// a type with StepBatch or envs estimated at most kShareMaxNs each (a share then lasts at most a few hundred us)
constexpr int kShareMinEnvs = 16;
constexpr int64_t kShareMaxNs = 2000;

// How many sleeping workers `envs` envs of estimated `cost_ns` each are worth waking (one per kWakeWorthNs).
int64_t WorkersWorthWaking(int64_t envs, int64_t cost_ns) { return envs * cost_ns / kWakeWorthNs; }

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
    if constexpr (std::is_same_v<S, int32_t>) {
      // the common action dtype: in range iff x - lo, as unsigned, is at most hi - lo (one compare per value, and no
      // min/max, which SSE2 lacks for int32); the range clamped to int32 first
      const int64_t lo = std::max<int64_t>(range.first, std::numeric_limits<int32_t>::min());
      const int64_t hi = std::min<int64_t>(range.second, std::numeric_limits<int32_t>::max());
      if (IsIntegral(a.dtype) && uniform && lo <= hi) {
        const auto ulo = static_cast<uint32_t>(lo), span = static_cast<uint32_t>(hi - lo);
        uint32_t bad = 0;
        for (size_t i = 0; i < n; ++i) bad |= static_cast<uint32_t>(static_cast<uint32_t>(v[i]) - ulo > span);
        if (bad == 0) return;
      }
    } else if (IsIntegral(a.dtype) && uniform && n > 0) {
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
// caller_back: the caller came back from its previous Recv less than a worker's spin ago (a loop that does little
// between calls). Such a caller runs costly items itself while it waits (WaitFor), and with as many workers as cores
// one of them would only take turns with it for a core, each turn moving an env's state between caches (Pong-v5 on
// 2 cores, 2 workers: 3-7% fewer steps/s than 1). That worker is left asleep: the caller takes its seat.
int Engine::WorkersWanted(int items, int envs, bool back_to_back, bool caller_back) {
  const int64_t cost = item_cost_ns_.load(std::memory_order_relaxed);
  const bool caller_helps = sync() && cost < kHelpMaxNs;  // then the caller runs one item itself (see WaitFor)
  int for_workers = caller_helps ? items - 1 : items;
  int64_t worth = WorkersWorthWaking(envs, cost);
  if (back_to_back) worth = std::max<int64_t>(worth, spinners_);
  const int64_t want = std::min<int64_t>({static_cast<int64_t>(for_workers), worth, opts_.num_threads});
  const int seats = std::max(cores_ - 1, 1);
  seat_kept_ = caller_back && cost >= kWakeWorthNs && cost < kHelpMaxNs && want > seats;
  return static_cast<int>(seat_kept_ ? seats : want);
}

// A sync step of every env (consecutive ids) of a type with StepBatch: one item per thread, each a range of
// envs, so that a call costs each thread one queue operation and one completion, not one per run of envs (with
// the threads on cores far apart -- here the two vCPUs' round trip ranged from 70 to 420 ns from one hour to the
// next -- each is a cache line moved between cores). The waiting caller takes the last item (WaitFor: newest
// first); the workers' items are longer by `caller_cut_` envs in all, since the caller also does the call's own
// serial work (Python, this send, the result) while the workers have nothing. WaitFor adjusts the cut each call.
// (Short items between them for whichever thread is done first, to absorb an env's reset or a generator refill,
// measured slower: each is one more cache line moved between the cores.)
// The shares are for the workers that will be awake: the spinning ones, more only for kWakeWorthNs of work each
// (WorkersWanted). A share for a worker left asleep would wait for whichever thread finished first, and the other
// would idle through it (CartPole@256 with 2 workers on 2 cores: three shares for two running threads).
void Engine::ShareAmongThreads(int first, int k, Batch* ordered) {
  const int64_t worth = WorkersWorthWaking(k, item_cost_ns_.load(std::memory_order_relaxed));
  const int workers = static_cast<int>(std::min<int64_t>(std::max<int64_t>(worth, spinners_), opts_.num_threads));
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

// An async send of cheap envs: runs of up to `run` envs, each of one lane's envs. Lane l is the l-th of the spinning
// workers, the last lane the caller (which runs items while it waits); env e's lane is the e-th share of the
// num_envs (lane_of_), so each thread tends to step the same envs send after send: their state and rows stay in its
// core's cache instead of moving between cores with every run that another thread took first (WorkQueue::TryPop).
// The ids a recv returns come in stretches of one lane (a run claims its rows together), so runs follow the send's
// order, cut where the lane changes; ids whose lane changes more often than that (a caller's own order) are sorted
// by lane first, so that runs stay long. (Sorting every send cost ~0.3 us per 128 ids: each count is a store that
// the next id of the same lane waits for.)
void Engine::ByLane(const int* env_ids, int k, int run, bool reset) {
  int changes = 0;
  for (int i = 1; i < k; ++i)
    changes += lane_of_[static_cast<size_t>(env_ids[i])] != lane_of_[static_cast<size_t>(env_ids[i - 1])];
  const int* ids = env_ids;
  if (changes > k / run + num_lanes_) {  // sorted by lane (counting sort), each lane's ids in the send's order
    int begin[kMaxLanes + 1] = {};
    for (int i = 0; i < k; ++i) ++begin[lane_of_[static_cast<size_t>(env_ids[i])] + 1];
    for (int l = 0; l < num_lanes_; ++l) begin[l + 1] += begin[l];
    lane_ids_.resize(static_cast<size_t>(k));
    for (int i = 0; i < k; ++i) {
      lane_ids_[static_cast<size_t>(begin[lane_of_[static_cast<size_t>(env_ids[i])]]++)] = env_ids[i];
    }
    ids = lane_ids_.data();
  }
  for (int i = 0; i < k;) {
    const int lane = lane_of_[static_cast<size_t>(ids[i])];
    const int most = std::min(k, i + run);
    int end = i + 1;
    while (end < most && lane_of_[static_cast<size_t>(ids[end])] == lane) ++end;
    WorkItem& item = NextItem();
    item.batch = nullptr;
    item.pos = 0;
    item.count = end - i;
    item.reset = reset;
    item.first = -1;
    item.lane = lane;
    std::copy(ids + i, ids + end, item.env_ids);
    i = end;
  }
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
  // the marks made here are taken back and IdError says what was wrong.
  const auto n = static_cast<uint32_t>(opts_.num_envs);
  for (int i = 0; i < k; ++i) {
    const int e = env_ids[i];
    if (static_cast<uint32_t>(e) < n && !pending_[e] && !(per_env && slots_[e].done)) {
      pending_[e] = 1;
      continue;
    }
    std::string err = IdError(env_ids, i);  // (before Unmark: a repeated id is told by its mark)
    Unmark(env_ids, i);
    throw std::invalid_argument(err);
  }
  return true;
}

std::string Engine::IdError(const int* env_ids, int i) const {
  const int e = env_ids[i];
  if (e < 0 || e >= opts_.num_envs) {
    return "env_id " + std::to_string(e) + " is out of range: this pool has env ids 0.." +
           std::to_string(opts_.num_envs - 1);
  }
  if (pending_[e]) {
    return std::find(env_ids, env_ids + i, e) != env_ids + i
               ? "env_id " + std::to_string(e) + " appears more than once"
               : "env " + std::to_string(e) + " already has an action pending; recv() its result before sending again";
  }
  return "env " + std::to_string(e) +
         " has finished its episode (or was never reset) and autoreset_mode is 'disabled': reset it first "
         "(reset(options={'reset_mask': mask}) or reset(env_id=...))";
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
    ordered->first_id = consecutive ? env_ids[0] : -1;
    if (max_players_ > 1) {  // (one player per env: position i's first player row is i, RowsFor)
      ordered->player_offset.resize(k);
      for (int i = 0, r = 0; i < k; r += slots_[env_ids[i]].players, ++i) ordered->player_offset[i] = r;
    }
    ordered_.push_back(ordered);
  }
  num_items_ = 0;
  caller_share_pending_ = false;
  const bool cheap = step_batch_ != nullptr || item_cost_ns_.load(std::memory_order_relaxed) <= kShareMaxNs;
  if (sync() && consecutive && !reset && cheap && shared_ == nullptr &&
      k >= kShareMinEnvs * (opts_.num_threads + 1)) {  // (smaller sends: RunLength's runs)
    ShareAmongThreads(env_ids[0], k, ordered);
  } else if (const int run = RunLength(k); ordered == nullptr && run > 1 && !lane_of_.empty()) {
    ByLane(env_ids, k, run, reset);
  } else {
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
  const bool caller_back = now - last_recv_ns_ < kWorkerSpinNs;
  const int want = WorkersWanted(static_cast<int>(num_items_), k, back_to_back, caller_back);
  sent_want_ = want;
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

}  // namespace pp
