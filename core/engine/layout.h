// Layout of one result block: every output array of a batch in one aligned allocation,
// plus a recycling pool of such blocks so that steady-state stepping allocates nothing.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine/fork.h"
#include "core/engine/spec.h"

namespace pp {

enum class AutoReset { kNextStep, kSameStep, kDisabled };

struct OutputEntry {
  std::string name;  // "obs", "obs:<k>", "info:<k>", "reward", "terminated", "truncated", "env_id", ...
  DType dtype;
  std::vector<int> shape;  // of one row
  bool per_player;
  size_t row_bytes;
  size_t offset;  // within the block
};

// Output arrays, in this fixed order: obs..., info..., reward, terminated, truncated, env_id, elapsed_step,
// players.env_id, and (same-step mode only) final copies of obs... info... elapsed_step.
struct Layout {
  static constexpr int64_t kMaxPlayerRows = int64_t{1} << 24;
  static constexpr size_t kMaxBlockBytes = size_t{1} << 40;  // far beyond any machine: only wrap-around is refused

  // bytes * count, refusing a product that is negative or beyond kMaxBlockBytes (no size_t wrap-around)
  static size_t CheckedBytes(size_t bytes, int64_t count, const std::string& what) {
    if (count < 0 || (count > 0 && bytes > kMaxBlockBytes / static_cast<size_t>(count))) {
      throw std::invalid_argument("output '" + what + "' of this config is too large (" + std::to_string(count) +
                                  " x " + std::to_string(bytes) + " bytes)");
    }
    return bytes * static_cast<size_t>(count);
  }

  std::vector<OutputEntry> entries;
  int num_obs = 0, num_info = 0;
  int reward = 0, terminated = 0, truncated = 0, env_id = 0, elapsed = 0, player_env_id = 0;
  int final_begin = -1;  // index of the first final_* entry (-1: none)
  int env_rows = 0, player_rows = 0;
  size_t block_bytes = 0;

  Layout(const Spec& spec, int env_rows_, int max_players, AutoReset mode) {
    env_rows = env_rows_;
    // in 64 bits, then bounded: a large max_num_players times the batch size must not wrap around in int
    const int64_t rows = int64_t{env_rows_} * max_players;
    if (rows > kMaxPlayerRows) {
      throw std::invalid_argument("a batch of " + std::to_string(env_rows_) + " envs with up to " +
                                  std::to_string(max_players) + " players each has " + std::to_string(rows) +
                                  " player rows, more than the limit of " + std::to_string(kMaxPlayerRows) +
                                  " (lower batch_size or max_num_players)");
    }
    player_rows = static_cast<int>(rows);
    auto add = [&](std::string name, DType t, std::vector<int> shape, bool per_player) {
      OutputEntry e{std::move(name), t, std::move(shape), per_player, 0, 0};
      e.row_bytes = DTypeSize(t);
      for (int s : e.shape) e.row_bytes = CheckedBytes(e.row_bytes, s, e.name);
      entries.push_back(std::move(e));
      return static_cast<int>(entries.size()) - 1;
    };
    auto obs_name = [&](const ArraySpec& a) {
      return spec.obs.size() == 1 && a.name == "obs" ? a.name : "obs:" + a.name;
    };
    for (const auto& a : spec.obs) add(obs_name(a), a.dtype, a.shape, true);
    for (const auto& a : spec.info) add("info:" + a.name, a.dtype, a.shape, a.per_player);
    num_obs = static_cast<int>(spec.obs.size());
    num_info = static_cast<int>(spec.info.size());
    reward = add("reward", spec.reward_dtype, {}, true);
    terminated = add("terminated", DType::kBool, {}, false);
    truncated = add("truncated", DType::kBool, {}, false);
    env_id = add("env_id", DType::kInt32, {}, false);
    elapsed = add("elapsed_step", DType::kInt32, {}, false);
    player_env_id = add("players.env_id", DType::kInt32, {}, true);
    if (mode == AutoReset::kSameStep) {
      final_begin = static_cast<int>(entries.size());
      for (int i = 0; i < num_obs + num_info; ++i) {
        OutputEntry e = entries[i];
        add("final:" + e.name, e.dtype, e.shape, e.per_player);
      }
      add("final:elapsed_step", DType::kInt32, {}, false);
    }
    size_t off = 0;
    for (auto& e : entries) {
      off = (off + 63) & ~size_t{63};
      e.offset = off;
      off += CheckedBytes(e.row_bytes, e.per_player ? player_rows : env_rows, e.name);
      if (off > kMaxBlockBytes) {
        throw std::invalid_argument("a batch of this config needs more than " + std::to_string(kMaxBlockBytes >> 30) +
                                    " GiB (at output '" + e.name + "'): lower batch_size or max_num_players");
      }
    }
    block_bytes = (off + 63) & ~size_t{63};
    if (block_bytes == 0) block_bytes = 64;
  }
};

// Blocks are handed to Python (numpy arrays view them, zero copy) and come back here when those arrays die.
class BlockPool {
 public:
  explicit BlockPool(size_t bytes) : bytes_(bytes) {}
  ~BlockPool() {
    for (void* p : free_) std::free(p);
  }
  uint8_t* Acquire() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (!free_.empty()) {
        void* p = free_.back();
        free_.pop_back();
        return static_cast<uint8_t*>(p);
      }
    }
    void* p = std::aligned_alloc(64, bytes_);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<uint8_t*>(p);
  }
  void Release(uint8_t* p) {
    if (stamp_.Forked()) return;  // arrays outliving a fork in the child: leak (mu_ may be a locked copy)
    std::lock_guard<std::mutex> lk(mu_);
    if (free_.size() < kMaxFree) {
      free_.push_back(p);
    } else {
      std::free(p);
    }
  }
  size_t bytes() const { return bytes_; }

 private:
  static constexpr size_t kMaxFree = 64;
  size_t bytes_;
  ForkStamp stamp_;
  std::mutex mu_;
  std::vector<void*> free_;
};

}  // namespace pp
