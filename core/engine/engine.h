// The engine (what a pool drives; docs/architecture.md, glossary): envs, worker threads, the action queue and the
// result batches. Sync (ordered) and async (completion-order) batches, the three autoreset modes, episode limits,
// per-env seeding and error propagation. Knows nothing about specific envs and nothing about Python.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/layout.h"
#include "core/engine/registry.h"
#include "core/engine/spec.h"
#include "core/engine/thread_pool.h"
#include "core/engine/work_queue.h"

namespace pp {

// Raised on the Python side from recv/step when an env threw on a worker thread.
class EnvError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  std::vector<int> env_ids;           // the envs that threw, in completion order
  std::vector<std::string> messages;  // what each threw
  bool batch_kept = false;            // async: the batch (failed envs reset) is returned by the next recv()
};
// Raised when the blocking wait was interrupted (e.g. Ctrl-C); the pending batch stays pending.
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Batch {
  uint8_t* block = nullptr;
  bool own_block = true;  // from block_pool(); else the caller's (Send's `block`), never released here
  int expected = 0;
  std::atomic<int> done{0};
  std::vector<int> player_offset;  // ordered batches: first player row of each position
  int player_rows = 0;             // ordered batches: total player rows
  int first_id = -1;               // ordered batches of consecutive ids: the first (else -1)
  std::mutex err_mu;
  std::vector<std::pair<int, std::string>> errors;  // (env id, what it threw), from any thread: through AddError

  void AddError(int env_id, std::string what) {
    std::lock_guard<std::mutex> lk(err_mu);
    errors.emplace_back(env_id, std::move(what));
  }
};

// What recv hands back: a filled block (ownership passes to the caller, who returns it to block_pool()).
struct RecvResult {
  uint8_t* block = nullptr;
  Batch* batch = nullptr;  // the batch it came from (internal)
  int env_rows = 0;
  int player_rows = 0;
};

// One action array as given by the caller: contiguous rows in `dtype`, which may differ from the spec's dtype
// (e.g. int64 for an int32 action). Engine::Send range-checks the values in this dtype, then converts.
struct ActionInput {
  const uint8_t* data = nullptr;
  DType dtype = DType::kInt32;
};

struct EngineOptions {
  int num_envs, batch_size, num_threads, max_episode_steps, thread_affinity_offset;
  int64_t seed;
  AutoReset autoreset;
};

class Engine {
 public:
  // `env_configs`: empty (every env is built with `config`) or one config per env (per-env values of the env's own
  // keys; the common keys and the spec must be `config`'s). `shared`: run on these shared worker threads
  // instead of starting the engine's own (num_threads must then be 0 or the ThreadPool's size, and no pinning).
  Engine(const EnvClass& type, const Config& config, std::vector<Config> env_configs = {},
         std::shared_ptr<ThreadPool> shared = nullptr);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Validate and enqueue. env_ids: k distinct ids. actions: one entry per action array of the spec, each
  // contiguous rows (one row per player of each env, envs in env_ids order) in any engine dtype of the same
  // kind (integers for integer actions); ignored for resets. seeds: per-env reseed values (>= 0) or nullptr.
  // Throws std::invalid_argument and enqueues nothing when any input is bad. caller_recvs: the caller calls Recv
  // next (step = send + recv); a sync send that is one item no worker is wanted for is then not queued at all:
  // that Recv runs it (no queue lock, no worker racing the caller for it). block: a sync send's rows go there (a
  // block of layout().block_bytes that the caller owns and nobody reads until the Recv that returns it) instead of
  // a block from block_pool(); the engine never releases it.
  void Send(const int* env_ids, int k, const std::vector<ActionInput>& actions, bool reset, const int64_t* seeds,
            bool caller_recvs = false, uint8_t* block = nullptr);
  // Envs sent and not yet received.
  int num_pending() const { return num_pending_; }
  // Block until the next batch is complete. `interrupted` is polled while blocked (return true to abort).
  RecvResult Recv(const std::function<bool()>& interrupted);
  // The next Recv will not wait: its (sync) batch is complete, or all that is left of it is the caller's own item
  // (Send's caller_recvs) and the items cost less than kQuickNs. The bindings keep the GIL for such a Recv.
  bool RecvIsQuick() const;
  static constexpr int64_t kQuickNs = 20000;
  // Stops the workers and frees the envs. Waits at most `timeout` for the workers to finish the step they are in;
  // then asks every env to Abort() (an env that owns processes kills them, which unblocks its step) and waits
  // a little more. Workers still inside a step after that are abandoned: detached, and the envs, batches and
  // the Engine's own state are left allocated for them (abandoned() is true; the owner must then leak the Engine,
  // never destroy it). Returns "" or a message saying what was abandoned. Idempotent.
  std::string Close(std::chrono::milliseconds timeout = DefaultCloseTimeout());
  // Lock-free, from any thread (a signal handler, another thread while a call waits): wakes a waiting Recv,
  // which then throws "closed", and stops the queue. Close() finishes the job.
  void RequestStop();
  bool stop_requested() const { return stop_requested_.load(std::memory_order_acquire); }
  bool abandoned() const { return abandoned_; }
  // PARALLEL_POOL_CLOSE_TIMEOUT (seconds, default 10): how long Close waits for a step in progress.
  static std::chrono::milliseconds DefaultCloseTimeout();

  bool closed() const { return closed_.load(std::memory_order_acquire); }
  bool sync() const { return opts_.batch_size == opts_.num_envs; }
  const EngineOptions& options() const { return opts_; }
  const Layout& layout() const { return layout_; }
  const Spec& spec() const { return spec_; }
  const std::shared_ptr<BlockPool>& block_pool() const { return blocks_; }
  // Players of one env; std::out_of_range for an env_id outside the engine.
  int num_players(int64_t env_id) const;
  // Alignment-test hooks, on the calling thread; the env must have no result pending. The env's SetState
  // validates the state (std::invalid_argument) and changes nothing when it is bad.
  std::vector<double> GetState(int64_t env_id);
  void SetState(int64_t env_id, const std::vector<double>& state);
  // A snapshot of one env: everything it needs to continue bit-identically (Snapshot / Restore).
  struct EnvSnapshot {
    std::vector<double> env;          // Env::SaveState
    std::vector<uint32_t> generator;  // Env::GeneratorState
    int64_t elapsed = 0;              // steps into the episode (int64: Restore range-checks it before narrowing)
    bool done = true;                 // the episode has ended: the next step resets
  };
  // On the calling thread; every env must have no result pending (std::invalid_argument). Restore is all or nothing:
  // when one env refuses its snapshot (each env's LoadState checks its own), the envs already restored get their
  // previous state back and the error is rethrown.
  std::vector<EnvSnapshot> Snapshot(const int* env_ids, int k);
  void Restore(const int* env_ids, int k, const std::vector<EnvSnapshot>& snapshots);
  // The config env `env_id` runs with, or the one it will run with from its next reset on (SetConfig).
  Config GetConfig(int64_t env_id) const;
  // Builds envs with these configs now, on the calling thread (a bad value throws here and changes nothing); each
  // replaces its env at that env's next reset, taking over its random generator. The common keys must keep the
  // engine's values and the player count must not change (std::invalid_argument). Safe while the envs have work in
  // flight: a worker only swaps in a ready env under config_mu_. All-or-nothing over the k envs.
  void SetConfig(const int* env_ids, int k, const std::vector<Config>& configs);
  // RGB frames of k envs, on the calling thread, into out (k x render_shape x 3 uint8); every env must have no
  // result pending. Throws before drawing anything: std::out_of_range (bad id), std::invalid_argument (pending,
  // no C++ renderer).
  void Render(const int* env_ids, int k, uint8_t* out);
  // Env steps taken through the env type's StepBatch so far (tests check that the batched path ran).
  int64_t batched_steps() const;
  // Sends shared among the threads as one item each (ShareAmongThreads) so far (tests check that the path ran).
  int64_t shared_sends() const { return shared_sends_; }
  // Action rows needed for these envs (sum of their player counts).
  int ActionRows(const int* env_ids, int k) const;

 private:
  struct Slot {
    std::unique_ptr<Env> env;
    // a pending reset (WorkItem::reset) reseeds the env's generator with `seed` first (written by reset sends only)
    bool reseed = false;
    uint64_t seed = 0;
    int players = 1;
    int elapsed = 0;
    bool done = true;  // the env must be reset before it can step (written by the executing thread)
    // steps taken through StepBatch, counted where the stepping thread writes anyway: one counter that every thread
    // added to was a cache line passed between the cores on every item (5% of a 256-FrozenLake sync step)
    std::atomic<int64_t> batched_steps{0};
    // this env's rows of each action array in action_rows_
    std::vector<const uint8_t*> action_ptrs;
    Output out;
    // async mode: the env writes here, and the row is copied into a batch only once the step is done, so
    // batches fill in completion order
    std::vector<uint8_t> staging;
    std::vector<size_t> staging_off;    // per layout entry
    std::vector<uint8_t> saved_reward;  // same-step autoreset: the finishing step's reward across the reset
    // the config the env was built with (shared by every env built with the engine's config)
    std::shared_ptr<const Config> config;
    // SetConfig: an env built with next_config, swapped in at the next reset (under config_mu_)
    std::shared_ptr<const Config> next_config;
    std::unique_ptr<Env> next_env;
    std::atomic<bool> has_next{false};
  };

  // Where one work item's rows go: an ordered batch's block (env_row/player_row of it) or the env's staging.
  struct Rows {
    uint8_t* base;
    bool staged;
    int env_row, player_row;
    // (inline: it runs for every entry of every env row an item prepares)
    uint8_t* At(const Layout& layout, const Slot& s, int entry) const {
      const auto& e = layout.entries[entry];
      const size_t r = static_cast<size_t>(e.per_player ? player_row : env_row);
      return staged ? base + s.staging_off[entry] + e.row_bytes * r : base + e.offset + e.row_bytes * r;
    }
  };

  // Execute runs an item's envs; RunInRows = the steps below, in this order (see execute.cc).
  void Execute(const WorkItem& item);
  void ExecuteRun(const WorkItem& item);                    // at most kMaxRun envs by id; Execute marks the rows done
  void RunTask(int env_id, bool reset, Batch* b, int pos);  // one env in its row `pos` of b (ordered or ring)
  void RunStaged(const WorkItem& item);   // async, no StepBatch: the run's envs via staging, claimed together
  void RunClaimed(const WorkItem& item);  // async, no StepBatch, a run of cheap envs: rows claimed first, in place
  std::string RunInRows(int env_id, bool reset, const Rows& rows);  // "" or the env's error
  Rows RowsFor(Batch* ordered, int pos, Slot& s) const;
  size_t EntryBytes(int entry, const Slot& s) const;
  void PrepareRows(int env_id, Slot& s, const Rows& rows);
  void PointOutputs(Slot& s, const Rows& rows);  // s.out at these rows
  // batched stepping (the type's StepBatch): an item's rows (async: claimed at once, in pieces that each lie in one
  // batch) filled by RunBatched: a step's envs through StepRun, sent resets one at a time through RunTask
  void ExecuteBatched(const WorkItem& item);
  void RunBatched(const int* env_ids, int n, bool reset, Batch* b, int row);
  void StepRun(const int* env_ids, int n, Batch* b, int row);               // a run to step (ended episodes reset)
  void ResetInRow(int env_id, Slot& s, Batch* b, int row, bool same_step);  // StepRun's resets
  void PresetResults(Slot& s);
  std::string RunEnv(Slot& s, bool reset, const Rows& rows);  // "" or the env's error; never throws
  void ResetEnv(Slot& s);
  void SwapInNextEnv(Slot& s);
  void StepEnv(Slot& s, const Rows& rows);
  void SameStepReset(Slot& s, const Rows& rows);
  std::string RecoverInPlace(Slot& s, const Rows& rows);
  Batch* RingBatch(int64_t seq) const;  // the async ring's batch of completion number seq
  // Claims `count` rows of the async ring at once (one atomic), in pieces that each lie in one batch: fill(b, row,
  // done, piece) writes rows row.. of b for the item's envs done..done + piece - 1; then the piece is marked done.
  template <class Fill>
  void ClaimRows(int count, Fill&& fill);
  void CopyStaged(const Slot& s, Batch* b, int er);  // the env's staged rows into env row er of b
  void UpdateCost(int64_t ns);
  void MarkDone(Batch* b, int envs);

  void WaitFor(Batch* b, const std::function<bool()>& interrupted);
  void BuildEnvs(const EnvClass& type, const Config& config, std::vector<Config> env_configs);
  void StartWorkers();
  void WorkerLoop(int t);
  Batch* AcquireOrderedBatch();
  void CheckOpen() const;
  void CheckEnvId(int64_t env_id) const;
  Slot& IdleSlot(int64_t env_id);  // open engine, valid env_id, no result pending
  int RunLength(int envs) const;
  void ShareAmongThreads(int first, int k, Batch* ordered);
  void ByLane(const int* env_ids, int k, int run, bool reset);  // an async send's runs of cheap envs, by lane
  int WorkersWanted(int items, int envs, bool back_to_back, bool caller_back);  // (sets seat_kept_)
  // Validates a send's env ids; true when it marked them pending (false: consecutive ids it need not check,
  // which Send marks once the items are queued).
  bool CheckIds(const int* env_ids, int k, bool reset, bool consecutive);
  void Unmark(const int* env_ids, int k);                // takes back CheckIds' pending marks
  std::string IdError(const int* env_ids, int i) const;  // why CheckIds refused env_ids[i]
  int CompactPlayerRows(uint8_t* block, int env_rows);
  RecvResult RecvOrdered(const std::function<bool()>& interrupted);
  RecvResult RecvAsync(const std::function<bool()>& interrupted);
  RecvResult DeliverKept();
  void MarkReceived(const RecvResult& r);
  static std::string ErrorMessage(const std::vector<std::pair<int, std::string>>& errs, bool kept);

  EngineOptions opts_;
  const EnvClass* type_;
  // the type's StepBatch where this engine's layout allows it (single player, one obs array, no info), else nullptr
  void (*step_batch_)(Env* const* envs, int n, const BatchRows& rows) = nullptr;
  alignas(64) Config config_;     // the engine's config (env 0's values of per-env keys)
  mutable std::mutex config_mu_;  // Slot::config, next_config, next_env
  Spec spec_;
  Layout layout_;
  int max_players_;
  std::shared_ptr<BlockPool> blocks_;
  std::vector<Slot> slots_;
  std::vector<size_t> action_row_bytes_;
  // each action array's rows of every env, envs in id order (env e's players from player_base_[e]): a send of
  // consecutive env ids copies each action array with one copy
  std::vector<std::vector<uint8_t>> action_rows_;
  std::vector<int> player_base_;
  // sent, not yet received (Python-facing thread only; apart from the slots, which the executing threads read)
  std::vector<uint8_t> pending_;
  int64_t last_send_ns_ = 0;  // when the previous send was made (the wake-up rule, WorkersWanted)
  int64_t last_recv_ns_ = 0;  // when the previous Recv returned (WorkersWanted: the caller's seat)
  bool seat_kept_ = false;    // the last send left a worker asleep for the caller (WaitFor wakes none then)
  int sent_want_ = 0;         // the workers the last send wanted awake (WorkersWanted)
  int cores_ = 1;             // NumCores() when the workers started
  WorkQueue queue_;
  std::vector<std::thread> workers_;
  int spinners_ = 1;                 // workers 0..spinners_-1 spin for work before sleeping; the others sleep at once
  std::atomic<bool> closed_{false};  // read without the API mutex (the `closed` property)
  std::atomic<bool> stop_requested_{false};
  bool abandoned_ = false;
  // workers that have left WorkerLoop (Close waits on exit_cv_ for all of them, with a deadline)
  std::unique_ptr<std::atomic<bool>[]> worker_exited_;
  std::mutex exit_mu_;
  std::condition_variable exit_cv_;
  bool WaitWorkersExit(std::chrono::milliseconds timeout);

  // async (completion-order) batches: a ring of K batches
  std::vector<std::unique_ptr<Batch>> ring_;
  alignas(64) std::atomic<int64_t> complete_seq_{0};
  alignas(64) int64_t recv_seq_ = 0;
  int num_pending_ = 0;  // envs sent and not yet received
  RecvResult kept_;      // async: a batch whose recv raised EnvError, returned by the next recv
  // sync (ordered) batches: sent, not yet received, oldest first; and spare batch objects
  std::deque<Batch*> ordered_;
  std::vector<std::unique_ptr<Batch>> ordered_store_;
  std::vector<Batch*> ordered_free_;

  // completion signalling
  std::mutex done_mu_;
  std::condition_variable done_cv_;
  std::atomic<int> waiters_{0};

  // cost estimate (ns per env) used to decide how many workers a send is worth waking, how many envs of an
  // ordered batch one item covers, and whether the waiting caller runs queued items itself: only when they cost
  // less than kHelpMaxNs, so Ctrl-C is seen quickly
  static constexpr int64_t kHelpMaxNs = 10000000;
  alignas(64) std::atomic<int64_t> item_cost_ns_{1000000};
  // a shared ThreadPool (make(..., thread_pool=tp)) serving queue_ instead of workers_; nullptr: own workers
  alignas(64) std::shared_ptr<ThreadPool> shared_;
  std::shared_ptr<ThreadPool::Client> client_;
  void Notify(int want);  // wake workers (own or shared) for queued items
  // a send's items: the first num_items_ of scratch_items_, which is only ever grown -- an item is written over,
  // not made anew (a new WorkItem zeroes its env_ids, a cost that showed in an async loop's send)
  std::vector<WorkItem> scratch_items_;
  size_t num_items_ = 0;
  WorkItem& NextItem() {
    if (num_items_ == scratch_items_.size()) scratch_items_.emplace_back();
    WorkItem& item = scratch_items_[num_items_++];
    item.lane = -1;  // (ByLane sets one)
    item.passed_over = 0;
    return item;
  }
  // async lanes (ByLane): env e's lane (empty: no lanes -- a shared ThreadPool, or more than kMaxLanes), and a
  // send's ids sorted by lane (scratch)
  static constexpr int kMaxLanes = 64;
  int num_lanes_ = 0;  // spinners_ + 1: lane l < spinners_ is spinning worker l's, lane spinners_ the caller's
  std::vector<uint8_t> lane_of_;
  std::vector<int> lane_ids_;
  // the item of a caller_recvs send that was kept off the queue: the next Recv runs it first
  WorkItem own_item_{};
  bool has_own_item_ = false;
  // ShareAmongThreads: how many envs fewer than an even share the caller's item has (adjusted by WaitFor), and
  // whether the last send was shared that way (API thread only)
  int caller_cut_ = 0;
  bool caller_share_pending_ = false;
  int64_t shared_sends_ = 0;
};

// Inline: send.cc, recv.cc and state.cc run them on every call.
inline void Engine::CheckOpen() const {
  if (closed_ || stop_requested())
    throw std::runtime_error("this pool has been closed; create a new one with parallel_pool.make(...)");
}

inline void Engine::Notify(int want) {
  if (!shared_) {
    queue_.WakeIfPending(want, opts_.num_threads);
  } else if (!queue_.Empty()) {
    shared_->Notify(want);
  }
}

// `step_waits_elsewhere`: the env class's step_waits_on_another_process (the automatic num_threads reads it).
EngineOptions ParseOptions(const Config& config, bool step_waits_elsewhere = false);
// The threads of a shared ThreadPool asked for as `asked`: 0 means NumCores(); std::invalid_argument outside
// [0, kMaxThreads].
int ThreadPoolSize(int64_t asked);
// The CPUs this process may run on (its affinity mask), in increasing order.
std::vector<int> UsableCpus();
// How many CPUs this process can use: its affinity mask, capped by its cgroup's CPU quota (containers).
int NumCores();
// The seed of env `env_id` in a pool made with `seed` (>= 0): seed + env_id as a full 64-bit value.
uint64_t EnvSeed(int64_t seed, int env_id);
// The one message for an integer action outside its range.
std::string ActionRangeError(const std::string& name, size_t row, const std::string& value, int64_t lo, int64_t hi);

}  // namespace pp
