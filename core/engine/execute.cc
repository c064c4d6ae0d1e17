// Engine: executing one work item -- on a worker thread, or on the caller while it waits. Execute() runs the item's
// run of envs, each through RunInRows' steps in order: find the env's rows, prepare them, run the env (reset or
// step, same-step autoreset), recover an async env that threw; an async run of a type without StepBatch then
// publishes its staged rows into the batch ring (RunStaged), and the rows are marked done.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "core/engine/engine.h"
#include "core/engine/item_clock.h"

namespace pp {

namespace {
constexpr int64_t kAlwaysTimeNs = 100000;  // items costlier than this are timed every time
}  // namespace

Engine::Rows Engine::RowsFor(Batch* ordered, int pos, Slot& s) const {
  // ordered (sync) batches are written in place; async rows go to the env's staging area first
  if (ordered == nullptr) return Rows{s.staging.data(), true, 0, 0};
  return Rows{ordered->block, false, pos, max_players_ == 1 ? pos : ordered->player_offset[pos]};
}

size_t Engine::EntryBytes(int idx, const Slot& s) const {
  const auto& e = layout_.entries[idx];
  return e.row_bytes * static_cast<size_t>(e.per_player ? s.players : 1);
}

void Engine::PointOutputs(Slot& s, const Rows& rows) {
  Output& o = s.out;
  for (int i = 0; i < layout_.num_obs; ++i) o.obs[i].ptr = rows.At(layout_, s, i);
  for (int i = 0; i < layout_.num_info; ++i) o.info[i].ptr = rows.At(layout_, s, layout_.num_obs + i);
  o.reward = rows.At(layout_, s, layout_.reward);
  o.terminated = reinterpret_cast<bool*>(rows.At(layout_, s, layout_.terminated));
  o.truncated = reinterpret_cast<bool*>(rows.At(layout_, s, layout_.truncated));
}

void Engine::PrepareRows(int env_id, Slot& s, const Rows& rows) {
  PointOutputs(s, rows);
  *reinterpret_cast<int32_t*>(rows.At(layout_, s, layout_.env_id)) = env_id;
  auto* player_ids = reinterpret_cast<int32_t*>(rows.At(layout_, s, layout_.player_env_id));
  for (int p = 0; p < s.players; ++p) player_ids[p] = env_id;
  // same-step mode: final_* rows are zero unless this step ends an episode (gymnasium's convention; blocks and
  // staging rows are recycled, so anything else would show a previous episode's data)
  if (layout_.final_begin >= 0) {
    for (int i = layout_.final_begin; i < static_cast<int>(layout_.entries.size()); ++i) {
      std::memset(rows.At(layout_, s, i), 0, EntryBytes(i, s));
    }
  }
  PresetResults(s);
}

void Engine::PresetResults(Slot& s) {
  std::memset(s.out.reward, 0, EntryBytes(layout_.reward, s));
  *s.out.terminated = false;
  *s.out.truncated = false;
}

void Engine::SwapInNextEnv(Slot& s) {
  if (!s.has_next.load(std::memory_order_acquire)) return;
  std::unique_ptr<Env> old;
  {
    std::lock_guard<std::mutex> lk(config_mu_);
    s.next_env->AdoptGenerator(*s.env);
    old = std::move(s.env);
    s.env = std::move(s.next_env);
    s.config = std::move(s.next_config);
    s.next_config.reset();
    s.has_next.store(false, std::memory_order_relaxed);
  }
  // `old` is freed here, outside the lock
}

void Engine::ResetEnv(Slot& s) {
  SwapInNextEnv(s);  // a config set by SetConfig applies from this reset on
  s.env->Reset(s.out);
  PresetResults(s);  // a reset has no reward and ends nothing, whatever the env wrote
  s.elapsed = 0;
  s.done = false;
}

void Engine::StepEnv(Slot& s, const Rows& rows) {
  ActionView av(&s.action_ptrs, &action_row_bytes_);
  s.env->Step(av, s.out);
  ++s.elapsed;
  if (!*s.out.terminated && s.elapsed >= opts_.max_episode_steps) *s.out.truncated = true;
  s.done = *s.out.terminated || *s.out.truncated;
  if (s.done && opts_.autoreset == AutoReset::kSameStep) SameStepReset(s, rows);
}

void Engine::SameStepReset(Slot& s, const Rows& rows) {
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

std::string Engine::RunEnv(Slot& s, bool reset, const Rows& rows) {
  try {
    if (reset || s.done) {
      SwapInNextEnv(s);  // before a reseed, so the new env is the one reseeded
      if (reset && s.reseed) s.env->Seed(s.seed);
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

std::string Engine::RecoverInPlace(Slot& s, const Rows& rows) {
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

Batch* Engine::RingBatch(int64_t seq) const {
  return ring_[static_cast<size_t>((seq / opts_.batch_size) % static_cast<int64_t>(ring_.size()))].get();
}

void Engine::CopyStaged(const Slot& s, Batch* b, int er) {
  const int pr = er * max_players_;  // fixed stride: the player rows follow from the env row (compacted in Recv)
  const auto& E = layout_.entries;
  for (size_t i = 0; i < E.size(); ++i) {
    const bool pp = E[i].per_player;
    std::memcpy(b->block + E[i].offset + E[i].row_bytes * static_cast<size_t>(pp ? pr : er),
                s.staging.data() + s.staging_off[i], EntryBytes(static_cast<int>(i), s));
  }
}

void Engine::UpdateCost(int64_t ns) {
  // rises at once (so the caller stops helping with slow items after one sample), decays slowly
  const int64_t old = item_cost_ns_.load(std::memory_order_relaxed);
  item_cost_ns_.store(ns > old ? ns : (old * 7 + ns) / 8, std::memory_order_relaxed);
}

void Engine::MarkDone(Batch* b, int envs) {
  // read `expected` before publishing these rows: once done reaches it, the API thread may reuse the batch
  const int expected = b->expected;
  const int d = b->done.fetch_add(envs, std::memory_order_acq_rel) + envs;
  if (d == expected && waiters_.load(std::memory_order_seq_cst) > 0) {
    {
      std::lock_guard<std::mutex> lk(done_mu_);
    }
    done_cv_.notify_all();
  }
}

std::string Engine::RunInRows(int env_id, bool reset, const Rows& rows) {
  Slot& s = slots_[env_id];
  PrepareRows(env_id, s, rows);
  std::string error = RunEnv(s, reset, rows);
  if (!error.empty() && !sync()) error += RecoverInPlace(s, rows);
  *reinterpret_cast<int32_t*>(rows.At(layout_, s, layout_.elapsed)) = s.elapsed;
  return error;
}

void Engine::RunTask(int env_id, bool reset, Batch* b, int pos) {
  std::string error = RunInRows(env_id, reset, RowsFor(b, pos, slots_[env_id]));
  if (!error.empty()) b->AddError(env_id, std::move(error));
}

template <class Fill>
void Engine::ClaimRows(int count, Fill&& fill) {
  const int64_t first = complete_seq_.fetch_add(count, std::memory_order_acq_rel);
  for (int done = 0; done < count;) {
    const int64_t seq = first + done;
    Batch* b = RingBatch(seq);
    const int row = static_cast<int>(seq % opts_.batch_size);
    const int piece = std::min(count - done, opts_.batch_size - row);
    fill(b, row, done, piece);
    MarkDone(b, piece);
    done += piece;
  }
}

void Engine::RunClaimed(const WorkItem& it) {
  // Async, a run of several envs of a type without StepBatch (runs are longer than one env only for envs estimated
  // under kRunNs / 2 each, so the run completes within microseconds): its rows of the batch ring are claimed when it
  // starts, in pieces that each lie in one batch, and each env writes its rows there in place, as in an ordered
  // batch -- no staging rows and no copy (MiniGrid's 11 output arrays per row made the copy a seventh of its step).
  // One claim and one completion per piece.
  ClaimRows(it.count, [&](Batch* b, int row, int done, int piece) {
    for (int i = 0; i < piece; ++i) {
      // player rows at the fixed stride, as CopyStaged writes them (compacted in Recv)
      const Rows rows{b->block, false, row + i, (row + i) * max_players_};
      std::string error = RunInRows(it.env_ids[done + i], it.reset, rows);
      if (!error.empty()) b->AddError(it.env_ids[done + i], std::move(error));
    }
  });
}

void Engine::RunStaged(const WorkItem& it) {
  // Async, one env (or a run while the cost estimate settles) of a type without StepBatch: each env of the run writes
  // its staging rows; once all of them are done, the run claims its rows of the batch ring at once (so rows go in
  // completion order: a costly env's row is claimed only when its step is done) and copies the staged rows there, in
  // pieces that each lie in one batch: one claim and one completion per piece.
  std::vector<std::pair<int, std::string>> errors;  // (position in the run, what the env threw): allocates only then
  for (int i = 0; i < it.count; ++i) {
    Slot& s = slots_[it.env_ids[i]];
    std::string error = RunInRows(it.env_ids[i], it.reset, RowsFor(nullptr, 0, s));
    if (!error.empty()) errors.emplace_back(i, std::move(error));
  }
  size_t e = 0;
  ClaimRows(it.count, [&](Batch* b, int row, int done, int piece) {
    for (int i = 0; i < piece; ++i) CopyStaged(slots_[it.env_ids[done + i]], b, row + i);
    if (e < errors.size() && errors[e].first < done + piece) {
      std::lock_guard<std::mutex> lk(b->err_mu);
      for (; e < errors.size() && errors[e].first < done + piece; ++e) {
        b->errors.emplace_back(it.env_ids[errors[e].first], std::move(errors[e].second));
      }
    }
  });
}

void Engine::StepRun(const int* env_ids, int n, Batch* b, int row) {
  // What RunTask does per env, for a run of envs to step whose rows are row, row + 1, ... of b's block (single
  // player: player rows are env rows): the run's row set-up as whole-array writes, each stretch of envs that step in
  // one StepBatch call and its envs' episode ends, the envs whose episode had ended (1 in 7 of FrozenLake's steps)
  // reset in their rows between the stretches, set up with the run's.
  Env* envs[WorkItem::kMaxRun];
  const uint8_t* actions[WorkItem::kMaxRun];
  bool resets[WorkItem::kMaxRun];
  // single player, one action array: env e's action is row e of action_rows_ (not through the slot's action_ptrs,
  // a cache line more per env)
  const uint8_t* action_rows = action_rows_[0].data();
  const size_t action_bytes = action_row_bytes_[0];
  for (int i = 0; i < n; ++i) {  // (the finished-episode check reads the slot line the env pointer is on)
    const Slot& s = slots_[env_ids[i]];
    resets[i] = s.done;
    envs[i] = s.env.get();
    actions[i] = action_rows + action_bytes * static_cast<size_t>(env_ids[i]);
  }
  const auto& E = layout_.entries;
  auto at = [&](int idx, int i) { return b->block + E[idx].offset + E[idx].row_bytes * static_cast<size_t>(row + i); };
  const size_t un = static_cast<size_t>(n);
  auto* ids = reinterpret_cast<int32_t*>(at(layout_.env_id, 0));
  auto* player_ids = reinterpret_cast<int32_t*>(at(layout_.player_env_id, 0));
  for (int i = 0; i < n; ++i) ids[i] = player_ids[i] = env_ids[i];
  if (layout_.final_begin >= 0) {  // zero unless this step ends an episode, as in PrepareRows
    for (int i = layout_.final_begin; i < static_cast<int>(E.size()); ++i)
      std::memset(at(i, 0), 0, E[i].row_bytes * un);
  }
  auto* terminated = reinterpret_cast<bool*>(at(layout_.terminated, 0));
  auto* truncated = reinterpret_cast<bool*>(at(layout_.truncated, 0));
  std::memset(at(layout_.reward, 0), 0, E[layout_.reward].row_bytes * un);
  std::memset(terminated, 0, un);
  std::memset(truncated, 0, un);
  auto* elapsed = reinterpret_cast<int32_t*>(at(layout_.elapsed, 0));
  const int max_steps = opts_.max_episode_steps;
  for (int i = 0; i < n;) {
    if (resets[i]) {
      Slot& s = slots_[env_ids[i]];
      ResetInRow(env_ids[i], s, b, row + i, false);
      elapsed[i] = s.elapsed;
      ++i;
      continue;
    }
    int end = i + 1;
    while (end < n && !resets[end]) ++end;
    step_batch_(
        envs + i, end - i,
        BatchRows{actions + i, at(0, i), E[0].row_bytes, at(layout_.reward, i), spec_.reward_dtype, terminated + i});
    for (int j = i; j < end; ++j) {  // the episode ends, without branches (1 in 7 of FrozenLake's steps ends one)
      Slot& s = slots_[env_ids[j]];
      const int steps = s.elapsed + 1;
      const bool truncate = !terminated[j] & (steps >= max_steps);
      truncated[j] = truncate;
      s.elapsed = elapsed[j] = steps;
      s.done = terminated[j] | truncate;
      // (one thread steps an env at a time: a load and a store, no locked add)
      s.batched_steps.store(s.batched_steps.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    i = end;
  }
  if (opts_.autoreset == AutoReset::kSameStep) {
    for (int i = 0; i < n; ++i) {
      Slot& s = slots_[env_ids[i]];
      if (resets[i] || !s.done) continue;
      ResetInRow(env_ids[i], s, b, row + i, true);
      elapsed[i] = s.elapsed;
    }
  }
}

void Engine::ResetInRow(int env_id, Slot& s, Batch* b, int row, bool same_step) {
  // StepRun's resets, in row `row` of b (single player), whose set-up StepRun made: an ended episode's (the env's
  // Reset), or same-step autoreset's after the step that ended it (SameStepReset). A StepBatch type's Reset should
  // not throw; if it does, as RunTask.
  const Rows rows{b->block, false, row, row};
  PointOutputs(s, rows);
  std::string error;
  if (!same_step) {
    error = RunEnv(s, false, rows);  // (s.done: a pending SetConfig applies here)
  } else {
    try {
      SameStepReset(s, rows);
    } catch (const std::exception& ex) {
      s.done = true;
      error = ex.what()[0] != '\0' ? ex.what() : "C++ exception";
    } catch (...) {
      s.done = true;
      error = "unknown C++ exception";
    }
  }
  if (!error.empty()) {
    if (!sync()) error += RecoverInPlace(s, rows);
    b->AddError(env_id, std::move(error));
  }
}

int64_t Engine::batched_steps() const {
  int64_t steps = 0;
  for (const Slot& s : slots_) steps += s.batched_steps.load(std::memory_order_relaxed);
  return steps;
}

void Engine::RunBatched(const int* env_ids, int n, bool reset, Batch* b, int row) {
  if (!reset) {
    StepRun(env_ids, n, b, row);
  } else {
    for (int i = 0; i < n; ++i) RunTask(env_ids[i], true, b, row + i);  // sent resets: reseeds, the general path
  }
}

void Engine::ExecuteBatched(const WorkItem& it) {
  if (it.batch != nullptr) {  // sync: the item's rows are pos, pos + 1, ... of its batch; Execute marks them done
    RunBatched(it.env_ids, it.count, it.reset, it.batch, it.pos);
    return;
  }
  // async: the item claims its rows of the batch ring at once (a StepBatch type's envs are cheap: the item completes
  // as a whole within microseconds), in pieces that each lie in one batch -- one claim and one completion per piece,
  // not one per stretch and per reset (each is a cache line the threads pass between them)
  ClaimRows(it.count,
            [&](Batch* b, int row, int done, int piece) { RunBatched(it.env_ids + done, piece, it.reset, b, row); });
}

void Engine::Execute(const WorkItem& it) {
  if (it.first >= 0) {  // a long run of consecutive envs: in pieces of kMaxRun, done as a whole
    WorkItem piece{nullptr, 0, 0, {}, it.reset};
    piece.batch = it.batch;
    for (int off = 0; off < it.count; off += WorkItem::kMaxRun) {
      piece.pos = it.pos + off;
      piece.count = std::min(WorkItem::kMaxRun, it.count - off);
      for (int i = 0; i < piece.count; ++i) piece.env_ids[i] = it.first + off + i;
      ExecuteRun(piece);
    }
  } else {
    ExecuteRun(it);
  }
  if (it.batch != nullptr) MarkDone(it.batch, it.count);
}

void Engine::ExecuteRun(const WorkItem& it) {
  // Time every item of expensive envs, one in 16 cheap ones, runs included (two clock reads per run of 16 CartPoles
  // were 5% of the run; runs of a type without StepBatch stay one env long until the estimate has settled, and a
  // StepBatch type's run length does not depend on it). On a loaded
  // machine a step's wall time includes the time its thread was preempted, and one such sample made the estimate
  // jump past kHelpMaxNs: the caller stopped helping and the pool lost a runnable thread just when it was short of
  // CPU. So expensive items are timed in CPU time when the thread was preempted (see ItemClock); cheap ones by the
  // wall clock only (reading the thread's usage is a ~1 us syscall, noise for a costly item but not for a 100 ns
  // one). The estimate is per env.
  static thread_local uint32_t sample = 0;
  const bool costly = item_cost_ns_.load(std::memory_order_relaxed) > kAlwaysTimeNs;
  const bool timed = costly || ((++sample) & 15) == 0;
  const ItemClock t0 = !timed ? ItemClock{} : costly ? ItemClock::Now() : ItemClock{WallNs(), 0, 0};

  if (step_batch_ != nullptr) {
    ExecuteBatched(it);
  } else if (it.batch == nullptr) {
    if (it.count > 1 && !costly) {
      RunClaimed(it);
    } else {
      RunStaged(it);
    }
  } else {
    for (int i = 0; i < it.count; ++i) RunTask(it.env_ids[i], it.reset, it.batch, it.pos + i);
  }
  if (timed) UpdateCost((costly ? ItemClock::Now().CostSince(t0) : WallNs() - t0.wall) / it.count);
}

}  // namespace pp
