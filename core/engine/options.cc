// Engine options from a config: the common keys, validated and range-checked in one place; and per-env seeds.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifdef __linux__
#include <sched.h>
#endif

#include "core/engine/engine.h"

namespace pp {

namespace {
constexpr int kMaxEnvs = 1 << 20;  // sanity bounds: larger values are typos, and would exhaust memory
constexpr int kMaxThreads = 4096;  // or the system's thread limit long before doing anything useful
}  // namespace

std::vector<int> UsableCpus() {
  std::vector<int> cpus;
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
  }
#endif
  if (cpus.empty()) {  // no affinity interface: every CPU the system reports
    const unsigned n = std::thread::hardware_concurrency();
    for (unsigned c = 0; c < std::max(n, 1u); ++c) cpus.push_back(static_cast<int>(c));
  }
  return cpus;
}

namespace {
// The CPU time per second this process's cgroup may use, in CPUs rounded up (0: no quota, or not known).
// cgroup v2: "<quota> <period>" or "max <period>" in cpu.max of the process's own cgroup; v1: cfs_quota_us and
// cfs_period_us. A container limited with --cpus=2 on a 64-core host still sees 64 CPUs in its affinity mask.
int CgroupCpuQuota() {
  auto read_two = [](const std::string& path, const char* fmt, double* a, double* b) {
    FILE* f = std::fopen(path.c_str(), "r");
    if (f == nullptr) return false;
    const bool ok = std::fscanf(f, fmt, a, b) == 2;
    std::fclose(f);
    return ok;
  };
  auto cpus = [](double quota, double period) { return quota > 0 && period > 0 ? int(std::ceil(quota / period)) : 0; };
  std::string group;  // the v2 cgroup path: the line "0::<path>" of /proc/self/cgroup
  if (FILE* f = std::fopen("/proc/self/cgroup", "r")) {
    char line[4096];
    while (std::fgets(line, sizeof(line), f) != nullptr) {
      std::string l(line);
      if (l.rfind("0::", 0) == 0) group = l.substr(3, l.find_last_not_of("\n") - 2);
    }
    std::fclose(f);
  }
  double quota = 0, period = 0;
  // "max <period>" does not match "%lf %lf": no quota
  for (const std::string& dir : {"/sys/fs/cgroup" + group, std::string("/sys/fs/cgroup")}) {
    if (read_two(dir + "/cpu.max", "%lf %lf", &quota, &period)) return cpus(quota, period);
  }
  double q1 = 0, p1 = 0;
  FILE* fq = std::fopen("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "r");
  FILE* fp = std::fopen("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "r");
  const bool ok = fq && fp && std::fscanf(fq, "%lf", &q1) == 1 && std::fscanf(fp, "%lf", &p1) == 1;
  if (fq) std::fclose(fq);
  if (fp) std::fclose(fp);
  return ok ? cpus(q1, p1) : 0;
}
}  // namespace

int NumCores() {
  // the CPUs this process may run on (affinity mask), further capped by its cgroup's CPU quota
  int n = static_cast<int>(UsableCpus().size());
  if (const int quota = CgroupCpuQuota(); quota > 0) n = std::min(n, quota);
  return std::max(n, 1);
}

uint64_t EnvSeed(int64_t seed, int env_id) {
  // in uint64: seed + env_id cannot overflow for seed <= 2**63 - 1 (no signed-overflow UB, no 32-bit truncation)
  return static_cast<uint64_t>(seed) + static_cast<uint64_t>(env_id);
}

EngineOptions ParseOptions(const Config& c, bool step_waits_elsewhere) {
  EngineOptions o{};
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
  if (o.num_threads == 0) {
    // A worker per core but the caller's: the caller steps queued envs itself while it waits in step/recv
    // (Engine::WaitFor), so cores - 1 workers keep every core busy without one runnable thread too many. On the
    // 2-core machine 1 worker measured as fast as 2 or faster for every in-process env (docs/benchmarks.md:
    // CartPole async 13.3M vs 7.9M, Pong sync 6.0K vs 4.2K). A step that waits on another process (ViZDoom)
    // leaves its core idle while it waits: there a worker per core measured better (2.1K vs 1.6K).
    const int cores = NumCores();
    o.num_threads = std::min(o.batch_size, step_waits_elsewhere ? cores : std::max(cores - 1, 1));
  }
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

int ThreadPoolSize(int64_t asked) {
  if (asked < 0 || asked > kMaxThreads) {
    throw std::invalid_argument("ThreadPool num_threads must be in [0, " + std::to_string(kMaxThreads) +
                                "] (0 = automatic), got " + std::to_string(asked));
  }
  return asked == 0 ? NumCores() : static_cast<int>(asked);
}

}  // namespace pp
