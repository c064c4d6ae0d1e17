// Spec: config keys with defaults and the named arrays an env reads (actions) and writes (observations, info).
// Nothing here knows about any specific environment.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace pp {

enum class DType : uint8_t { kBool, kUInt8, kInt32, kInt64, kFloat32, kFloat64 };

inline size_t DTypeSize(DType d) {
  switch (d) {
    case DType::kBool:
    case DType::kUInt8: return 1;
    case DType::kInt32:
    case DType::kFloat32: return 4;
    case DType::kInt64:
    case DType::kFloat64: return 8;
  }
  return 0;
}

inline const char* DTypeName(DType d) {
  switch (d) {
    case DType::kBool: return "bool";
    case DType::kUInt8: return "uint8";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
  }
  return "?";
}

template <typename T>
constexpr DType DTypeOf();
template <>
constexpr DType DTypeOf<bool>() {
  return DType::kBool;
}
template <>
constexpr DType DTypeOf<uint8_t>() {
  return DType::kUInt8;
}
template <>
constexpr DType DTypeOf<int32_t>() {
  return DType::kInt32;
}
template <>
constexpr DType DTypeOf<int64_t>() {
  return DType::kInt64;
}
template <>
constexpr DType DTypeOf<float>() {
  return DType::kFloat32;
}
template <>
constexpr DType DTypeOf<double>() {
  return DType::kFloat64;
}

inline bool IsIntegral(DType d) {
  return d == DType::kUInt8 || d == DType::kInt32 || d == DType::kInt64 || d == DType::kBool;
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// One named array. `shape` is the shape of one row (one env, or one player of a multi-player env).
// `low`/`high` are either empty (unbounded), one value (broadcast) or one value per element.
// An integral scalar array with finite bounds is exposed as a Discrete space (n = high - low + 1).
struct ArraySpec {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int> shape;
  std::vector<double> low, high;
  bool per_player = true;  // rows per player (obs, reward, actions) or per env (terminated, info scalars)
  // The bounds EnvPool 1.2.5 declares for this array where they differ from `low`/`high` (which are the reference
  // package's), in the same form; empty: EnvPool's are `low`/`high`. Only the EnvPool face (parallel_pool.envpool)
  // shows them, so that one spec serves both faces.
  std::vector<double> envpool_low, envpool_high;

  size_t NumElements() const {
    size_t n = 1;
    for (int s : shape) n *= static_cast<size_t>(s);
    return n;
  }
  size_t RowBytes() const { return NumElements() * DTypeSize(dtype); }
};

using ConfigValue = std::variant<bool, int64_t, double, std::string>;

struct ConfigKey {
  std::string name;
  ConfigValue default_value;
  std::string doc;
  std::vector<std::string> choices;  // for str keys: the allowed values (empty = any)
  // for float keys: +-inf is a meaningful value (an end of a range or a threshold that may be absent). Every other
  // float key is finite (CheckFloatKeys); NaN is never a value.
  bool unbounded = false;
};

// Resolved configuration of one pool: every key of the env type has a value.
class Config {
 public:
  Config() = default;
  explicit Config(std::map<std::string, ConfigValue> v) : values_(std::move(v)) {}

  template <typename T>
  T Get(const std::string& key) const {
    auto it = values_.find(key);
    if (it == values_.end()) throw std::out_of_range("config key '" + key + "' is not defined");
    if constexpr (std::is_same_v<T, int> || std::is_same_v<T, int64_t>) {
      const int64_t v = std::get<int64_t>(it->second);
      // range-check before narrowing: a value that does not fit must never wrap into a valid-looking one
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
        throw std::invalid_argument("config key '" + key + "' is " + std::to_string(v) + ", outside the range [" +
                                    std::to_string(std::numeric_limits<T>::min()) + ", " +
                                    std::to_string(std::numeric_limits<T>::max()) + "]");
      }
      return static_cast<T>(v);
    } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (auto* i = std::get_if<int64_t>(&it->second)) return static_cast<T>(*i);
      return static_cast<T>(std::get<double>(it->second));
    } else {
      return std::get<T>(it->second);
    }
  }
  bool Has(const std::string& key) const { return values_.count(key) != 0; }
  const std::map<std::string, ConfigValue>& values() const { return values_; }
  std::map<std::string, ConfigValue>& mutable_values() { return values_; }

 private:
  std::map<std::string, ConfigValue> values_;
};

// What an env type declares. Built by the env's static Define*() functions.
// A player of an env whose players differ, in the pool's shared arrays (every row has the largest player's shape):
// its name, how many leading values of its (1-d) observation row are its own (zeros follow), and its action's
// bound (a Discrete action: its own n; a Box: how many leading values it reads).
struct PlayerSpec {
  std::string name;
  int obs_size = 0;
  int action_size = 0;
};

struct Spec {
  std::vector<ArraySpec> obs;     // observation arrays ("obs" for a single array, else "obs:<name>")
  std::vector<ArraySpec> info;    // extra info arrays written by the env (e.g. "lives")
  std::vector<ArraySpec> action;  // action arrays
  DType reward_dtype = DType::kFloat32;
  int num_players_max = 1;          // largest player count an env of this config can have
  std::vector<int> render_shape;    // (height, width) of Env::Render's RGB frame; empty: no C++ renderer
  std::vector<PlayerSpec> players;  // one per player where the env names them; empty: every player has the full spaces
};

// Helper used by env headers to declare arrays readably.
class SpecBuilder {
 public:
  explicit SpecBuilder(Spec* s) : s_(s) {}
  // Obs, Info and Action return the index of the array in its group; envs use it to address outputs.
  int Obs(std::string name, DType t, std::vector<int> shape, std::vector<double> low = {},
          std::vector<double> high = {}) {
    s_->obs.push_back({std::move(name), t, std::move(shape), std::move(low), std::move(high), true, {}, {}});
    return static_cast<int>(s_->obs.size()) - 1;
  }
  // EnvPool 1.2.5's own bounds for observation array `index`, where they differ from those Obs declared.
  void EnvPoolObsBounds(int index, std::vector<double> low, std::vector<double> high) {
    s_->obs.at(static_cast<size_t>(index)).envpool_low = std::move(low);
    s_->obs.at(static_cast<size_t>(index)).envpool_high = std::move(high);
  }
  int Info(std::string name, DType t, std::vector<int> shape = {}, bool per_player = false) {
    s_->info.push_back({std::move(name), t, std::move(shape), {}, {}, per_player, {}, {}});
    return static_cast<int>(s_->info.size()) - 1;
  }
  int Action(std::string name, DType t, std::vector<int> shape, std::vector<double> low = {},
             std::vector<double> high = {}) {
    s_->action.push_back({std::move(name), t, std::move(shape), std::move(low), std::move(high), true, {}, {}});
    return static_cast<int>(s_->action.size()) - 1;
  }
  // A Discrete(n) action: int32 scalar in [0, n-1].
  int DiscreteAction(int n, std::string name = "action") {
    return Action(std::move(name), DType::kInt32, {}, {0.0}, {static_cast<double>(n - 1)});
  }
  void Reward(DType t) { s_->reward_dtype = t; }
  void MaxPlayers(int n) { s_->num_players_max = n; }
  // Names the next player and its part of the shared arrays (PlayerSpec); an env calls it for all its players or none.
  void Player(std::string name, int obs_size, int action_size) {
    s_->players.push_back({std::move(name), obs_size, action_size});
  }
  // The env draws RGB frames of this size in Env::Render.
  void RenderSize(int height, int width) { s_->render_shape = {height, width}; }

 private:
  Spec* s_;
};

// Config keys every env type has, with EnvPool's names and defaults.
inline std::vector<ConfigKey> CommonConfigKeys() {
  return {
      {"num_envs", int64_t{1}, "number of environments in the pool", {}},
      {"batch_size", int64_t{0}, "envs returned per recv (0 = num_envs, i.e. sync mode)", {}},
      {"num_threads",
       int64_t{0},
       "worker threads (0 = min(batch_size, cores - 1), the caller helps; a step waiting on a process: cores)",
       {}},
      {"seed", int64_t{42}, "env i is seeded with seed + i (64-bit, in [0, 2**63 - 1])", {}},
      {"max_episode_steps", int64_t{1000}, "truncate episodes after this many steps", {}},
      {"thread_affinity_offset", int64_t{-1}, "pin worker i to core offset+i (-1 = no pinning)", {}},
      {"max_num_players", int64_t{1}, "players per env (multi-player envs)", {}},
      {"autoreset_mode",
       std::string("next_step"),
       "next_step | same_step | disabled",
       {"next_step", "same_step", "disabled"}},
      {"reward_threshold", kInf, "the score at which the task counts as solved (informational)", {}, true},
  };
}

// The one check of float config values, for every env type (the registry runs it before an env is built): NaN is
// refused everywhere, +-inf wherever the key is not `unbounded` (a weight, a scale or a noise of inf only turns the
// env's rewards or states into inf and NaN). Throws std::invalid_argument naming the key.
inline void CheckFloatKeys(const std::vector<ConfigKey>& keys, const Config& c) {
  for (const ConfigKey& k : keys) {
    if (!std::holds_alternative<double>(k.default_value) || !c.Has(k.name)) continue;
    const double v = c.Get<double>(k.name);
    if (std::isnan(v) || (!k.unbounded && std::isinf(v))) {
      throw std::invalid_argument("config key '" + k.name + "' must be " +
                                  (k.unbounded ? "a number or +-inf" : "a finite number") + ", got " +
                                  std::to_string(v));
    }
  }
}

// An int config key that sizes arrays or loops, checked against [lo, hi] before it is narrowed to int (so a huge
// value cannot wrap around into a plausible one). Throws std::invalid_argument naming the key and the range.
inline int IntInRange(const Config& c, const std::string& key, int64_t lo, int64_t hi) {
  const int64_t v = c.Get<int64_t>(key);
  if (v < lo || v > hi) {
    throw std::invalid_argument("config key '" + key + "' must be in [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "], got " + std::to_string(v));
  }
  return static_cast<int>(v);
}

}  // namespace pp
