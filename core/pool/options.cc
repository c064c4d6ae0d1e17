// Pool options from a config: the common keys, validated and range-checked in one place; and per-env seeds.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/pool/pool.h"

namespace pp {

namespace {
constexpr int kMaxEnvs = 1 << 20;  // sanity bounds: larger values are typos, and would exhaust memory
constexpr int kMaxThreads = 4096;  // or the system's thread limit long before doing anything useful
}  // namespace

int NumCores() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

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
    throw std::invalid_argument("num_threads must be in [0, " + std::to_string(kMaxThreads) +
                                "] (0 = automatic), got " + std::to_string(o.num_threads));
  }
  if (o.num_threads == 0) o.num_threads = std::min(o.batch_size, NumCores());
  if (o.max_episode_steps < 1) {
    throw std::invalid_argument("max_episode_steps must be >= 1, got " + std::to_string(o.max_episode_steps));
  }
  // players per env are the env's business (its spec's num_players_max); the pool only checks the key is sane
  if (const int players = c.Get<int>("max_num_players"); players < 1) {
    throw std::invalid_argument("max_num_players must be >= 1, got " + std::to_string(players));
  }
  if (o.thread_affinity_offset < -1) {
    throw std::invalid_argument("thread_affinity_offset must be >= -1, got " +
                                std::to_string(o.thread_affinity_offset));
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

}  // namespace pp
