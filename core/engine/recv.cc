// Engine::Recv: waiting for a batch (the caller runs queued items itself while it waits, then spins, then sleeps),
// ordered (sync) and completion-order (async) batches, and the env errors a batch carries.
#include "core/engine/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <system_error>

#include "core/engine/item_clock.h"

namespace pp {

namespace {

constexpr int kWaitSpin = 4000;  // pause iterations the caller spins before blocking

}  // namespace

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
    if (!(newest ? queue_.TryPopBack(&item) : queue_.TryPop(&item, spinners_))) break;  // (the caller's lane)
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
  // Items left behind go to the workers. When the caller stopped helping because they turned out slow, the send
  // counted on it: every worker is woken -- but not the one whose seat the caller keeps. When the caller's batch
  // was complete first, the items are a later batch's (async), for which the send woke the workers it wanted: only
  // those of them that have fallen asleep since are woken. (Waking every worker there put a third runnable thread
  // on two cores each call: an async CartPole@256 loop with 2 workers ran at 0.73 of the rate of 1 worker.)
  if (!seat_kept_) Notify(complete() ? sent_want_ : opts_.num_threads);
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
  last_recv_ns_ = WallNs();
  num_pending_ -= r.env_rows;
  if (r.batch->first_id >= 0) {  // a send of consecutive ids (an ordered batch): no id to read from the rows
    std::memset(pending_.data() + r.batch->first_id, 0, static_cast<size_t>(r.env_rows));
    return;
  }
  const auto& eid = layout_.entries[layout_.env_id];
  const int32_t* ids = reinterpret_cast<const int32_t*>(r.block + eid.offset);
  for (int i = 0; i < r.env_rows; ++i) pending_[ids[i]] = 0;
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

}  // namespace pp
