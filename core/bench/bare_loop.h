// The physical limit of one core: one env of a type stepped in a tight C++ loop on the calling thread -- no pool,
// no queue, no threads, no Python. The benchmark reports pool throughput as a fraction of cores x this rate.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/item_clock.h"
#include "core/engine/layout.h"
#include "core/engine/registry.h"
#include "core/engine/spec.h"

namespace pp {

struct BareResult {
  int64_t steps = 0;       // env steps taken (resets not counted)
  int64_t resets = 0;      // episodes started
  double seconds = 0;      // wall time of the loop, resets included
  double cpu_seconds = 0;  // this thread's CPU time in the loop (its wall time where there is no thread clock)
};

namespace bare {

// kActionSets precomputed random action rows (like the Python benchmark's precomputed batches), valid for the
// spec: integers uniform in [low, high], floats uniform in [low, high] (finite bounds; +-1 otherwise).
constexpr int kActionSets = 64;

inline double Bound(const std::vector<double>& b, size_t j, double fallback) {
  if (b.empty()) return fallback;
  double v = b.size() == 1 ? b[0] : b[j];
  return std::isfinite(v) ? v : fallback;
}

inline std::vector<uint8_t> RandomActionRow(const ArraySpec& a, int players, std::mt19937& gen) {
  const size_t n = a.NumElements() * static_cast<size_t>(players);
  std::vector<uint8_t> row(a.RowBytes() * static_cast<size_t>(players));
  for (size_t i = 0; i < n; ++i) {
    const size_t j = i % a.NumElements();
    const double lo = Bound(a.low, j, -1.0), hi = Bound(a.high, j, 1.0);
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(gen);
    const double x = IsIntegral(a.dtype) ? std::floor(lo + u * (hi - lo + 1)) : lo + u * (hi - lo);
    switch (a.dtype) {
      case DType::kBool: row[i] = x != 0; break;
      case DType::kUInt8: row[i] = static_cast<uint8_t>(x); break;
      case DType::kInt32: reinterpret_cast<int32_t*>(row.data())[i] = static_cast<int32_t>(std::fmin(x, hi)); break;
      case DType::kInt64: reinterpret_cast<int64_t*>(row.data())[i] = static_cast<int64_t>(std::fmin(x, hi)); break;
      case DType::kFloat32: reinterpret_cast<float*>(row.data())[i] = static_cast<float>(x); break;
      case DType::kFloat64: reinterpret_cast<double*>(row.data())[i] = x; break;
    }
  }
  return row;
}

}  // namespace bare

// Steps one env of `type` for about `seconds` (at least `min_steps`), resetting it when an episode ends or
// reaches the config's max_episode_steps, as the pool would.
inline BareResult BareStepLoop(const EnvClass& type, const Config& config, double seconds, int64_t min_steps) {
  const Spec spec = type.make_spec(config);
  std::unique_ptr<Env> env = type.create(config, 0, 0);
  const int players = env->NumPlayers();
  // the env writes into one block laid out as the pool's (one env row)
  const Layout layout(spec, 1, std::max(players, 1), AutoReset::kNextStep);
  std::vector<uint8_t> block(layout.block_bytes + 64);
  uint8_t* base = block.data() + (64 - reinterpret_cast<uintptr_t>(block.data()) % 64) % 64;
  Output out;
  for (int k = 0; k < layout.num_obs; ++k)
    out.obs.push_back({base + layout.entries[k].offset, layout.entries[k].row_bytes});
  for (int k = 0; k < layout.num_info; ++k) {
    const auto& e = layout.entries[layout.num_obs + k];
    out.info.push_back({base + e.offset, e.row_bytes});
  }
  out.reward = base + layout.entries[layout.reward].offset;
  out.reward_dtype = spec.reward_dtype;
  out.terminated = reinterpret_cast<bool*>(base + layout.entries[layout.terminated].offset);
  out.truncated = reinterpret_cast<bool*>(base + layout.entries[layout.truncated].offset);
  out.num_players = players;

  std::mt19937 gen(0);
  std::vector<std::vector<std::vector<uint8_t>>> sets(bare::kActionSets);  // [set][action array] -> rows
  std::vector<std::vector<const uint8_t*>> ptrs(bare::kActionSets);
  std::vector<size_t> row_bytes;
  for (const auto& a : spec.action) row_bytes.push_back(a.RowBytes());
  for (int s = 0; s < bare::kActionSets; ++s) {
    for (const auto& a : spec.action) sets[s].push_back(bare::RandomActionRow(a, players, gen));
    for (const auto& r : sets[s]) ptrs[s].push_back(r.data());
  }

  const int max_steps = config.Get<int>("max_episode_steps");
  BareResult res;
  int elapsed = 0;
  auto reset = [&] {
    *out.terminated = *out.truncated = false;
    env->Reset(out);
    elapsed = 0;
    ++res.resets;
  };
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const int64_t cpu0 = ItemClock::Now().cpu;
  const auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  reset();
  while (res.steps < min_steps || Clock::now() < deadline) {
    for (int i = 0; i < 64; ++i) {  // the clock is read once per 64 steps
      *out.terminated = *out.truncated = false;
      env->Step(ActionView(&ptrs[res.steps % bare::kActionSets], &row_bytes), out);
      ++res.steps;
      if (*out.terminated || *out.truncated || ++elapsed >= max_steps) reset();
    }
  }
  res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  res.cpu_seconds = static_cast<double>(ItemClock::Now().cpu - cpu0) * 1e-9;
  return res;
}

}  // namespace pp
