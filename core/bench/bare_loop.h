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
#include <stdexcept>
#include <string>
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

// kActionSets precomputed random action rows, valid for the spec: integers uniform in [low, high], floats uniform
// in [low, high] (finite bounds; +-1 otherwise). Many, so that an env's actions do not repeat within thousands of
// steps: a loop of one env repeating a short cycle of actions lets the CPU's branch predictor learn the branches of
// the env's trajectory, which no pool stepping many envs between an env's steps (or a policy) sees. With a cycle of
// 64, MiniGrid-DoorKey's bare loop ran 16-20% faster than with 4096 sets (and 16384), its observation's visibility
// branches predicted; FrozenLake and CartPole within noise (docs/decisions.md, "Physical limit = a bare C++ loop").
constexpr int kActionSets = 4096;

// The set env `env` takes at its `visit`-th step: each env goes through every set in turn, the envs offset from
// one another (so that no env repeats one action, whatever num_envs is).
inline int ActionSetOf(int64_t visit, int env) { return static_cast<int>((visit + env) % kActionSets); }

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

// Steps `num_envs` envs of `type` round robin on the calling thread for about `seconds` (at least `min_steps` steps
// in all), each writing its own row of one block laid out as the pool's, and resets an env when its episode ends or
// reaches the config's max_episode_steps, as the pool would. One env is the physical limit's loop: its state and row
// stay in the core's nearest cache. Many envs measure what their memory costs without any pool: each step then
// finds its env's state and row wherever the other envs' steps left them.
inline BareResult BareStepLoop(const EnvClass& type, const Config& config, double seconds, int64_t min_steps,
                               int num_envs = 1) {
  if (num_envs < 1) throw std::invalid_argument("num_envs must be >= 1, got " + std::to_string(num_envs));
  const Spec spec = type.make_spec(config);
  std::vector<std::unique_ptr<Env>> envs;
  for (int e = 0; e < num_envs; ++e) envs.push_back(type.create(config, e, static_cast<uint64_t>(e)));
  const int players = envs[0]->NumPlayers();
  const Layout layout(spec, num_envs, std::max(players, 1), AutoReset::kNextStep);
  std::vector<uint8_t> block(layout.block_bytes + 64);
  uint8_t* base = block.data() + (64 - reinterpret_cast<uintptr_t>(block.data()) % 64) % 64;
  // env e's rows: row e of each per-env array, rows e * players.. of each per-player one
  std::vector<Output> outs(static_cast<size_t>(num_envs));
  for (int e = 0; e < num_envs; ++e) {
    auto at = [&](int k) {
      const auto& entry = layout.entries[k];
      return base + entry.offset + entry.row_bytes * static_cast<size_t>(entry.per_player ? e * players : e);
    };
    Output& out = outs[e];
    for (int k = 0; k < layout.num_obs; ++k) out.obs.push_back({at(k), layout.entries[k].row_bytes});
    for (int k = 0; k < layout.num_info; ++k) {
      out.info.push_back({at(layout.num_obs + k), layout.entries[layout.num_obs + k].row_bytes});
    }
    out.reward = at(layout.reward);
    out.reward_dtype = spec.reward_dtype;
    out.terminated = reinterpret_cast<bool*>(at(layout.terminated));
    out.truncated = reinterpret_cast<bool*>(at(layout.truncated));
    out.num_players = players;
  }

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
  std::vector<int> elapsed(static_cast<size_t>(num_envs), 0);
  auto reset = [&](int e) {
    Output& out = outs[e];
    *out.terminated = *out.truncated = false;
    envs[e]->Reset(out);
    elapsed[e] = 0;
    ++res.resets;
  };
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const int64_t cpu0 = ItemClock::Now().cpu;
  const auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  for (int e = 0; e < num_envs; ++e) reset(e);
  for (int e = 0; res.steps < min_steps || Clock::now() < deadline;) {
    for (int i = 0; i < 64; ++i) {  // the clock is read once per 64 steps
      Output& out = outs[e];
      *out.terminated = *out.truncated = false;
      envs[e]->Step(ActionView(&ptrs[bare::ActionSetOf(res.steps / num_envs, e)], &row_bytes), out);
      ++res.steps;
      if (*out.terminated || *out.truncated || ++elapsed[e] >= max_steps) reset(e);
      if (++e == num_envs) e = 0;
    }
  }
  res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  res.cpu_seconds = static_cast<double>(ItemClock::Now().cpu - cpu0) * 1e-9;
  return res;
}

}  // namespace pp
