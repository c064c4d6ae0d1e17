// The env base class and the views an env uses to read its action and write its results.
// An env writes straight into its row(s) of the pool's batch buffer: no copies, no allocation.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine/spec.h"

namespace pp {

// An env's random generator: std::mt19937's algorithm and output, draw for draw, with its 624 state words stored as
// 32 bits each. (std::mt19937 stores them in uint_fast32_t, 64 bits on Linux: 5 KB an env instead of 2.5 KB. With
// 256 FrozenLakes the generators' states alone were 1.3 MB, beyond a core's L2, and each refill of one env's 624
// words, every 624 draws, read and wrote them from further out.) Every distribution draws the same values from it:
// they depend on the generator's outputs and range (0..2^32-1), not on the type it stores them in.
using Generator = std::mersenne_twister_engine<uint32_t, 32, 624, 397, 31, 0x9908b0dfU, 11, 0xffffffffU, 7, 0x9d2c5680U,
                                               15, 0xefc60000U, 18, 1812433253U>;

// Seeds an env's generator from a full 64-bit value. Values below 2**32 seed mt19937 directly (bit-identical to
// EnvPool, which seeds with seed + env_id); larger values go through a seed_seq of both 32-bit halves, so
// seed=1 and seed=1+2**32 give different streams. A seed_seq state equal to a direct 32-bit seeding's would
// need a 19937-bit coincidence: no collision in practice.
inline void SeedGenerator(Generator& gen, uint64_t seed) {
  if (seed <= 0xffffffffULL) {
    gen.seed(static_cast<Generator::result_type>(seed));
    return;
  }
  std::seed_seq seq{static_cast<uint32_t>(seed & 0xffffffffULL), static_cast<uint32_t>(seed >> 32)};
  gen.seed(seq);
}

// Checks a std::mt19937 state in its text form's words (624 state words, then the position) from a snapshot, which
// may come from anywhere: throws std::invalid_argument for the states std::mt19937 would accept but that no seeding
// or drawing reaches. Its recurrence's state is the top bit of word 0 and words 1..623; when all of them are zero it
// yields zeros forever (a distribution's rejection loop waiting for a non-zero draw never ends). The position is how
// many of the words have been handed out, at most 624 (then the next draw refills them).
inline void CheckGeneratorWords(const std::vector<uint32_t>& words) {
  constexpr size_t n = Generator::state_size;
  if (words.size() != n + 1) {
    throw std::invalid_argument("a generator state has " + std::to_string(n + 1) + " words, got " +
                                std::to_string(words.size()));
  }
  if (words[n] > n) {
    throw std::invalid_argument("a generator state's position (its last word) is at most " + std::to_string(n) +
                                ", got " + std::to_string(words[n]));
  }
  bool degenerate = (words[0] & 0x80000000u) == 0;
  for (size_t i = 1; i < n && degenerate; ++i) degenerate = words[i] == 0;
  if (degenerate) throw std::invalid_argument("a generator state of all-zero words (it would draw only zeros)");
}

// Pointers to this env's action rows, one entry per declared action array.
class ActionView {
 public:
  ActionView() = default;
  ActionView(const std::vector<const uint8_t*>* ptrs, const std::vector<size_t>* row_bytes)
      : ptrs_(ptrs), row_bytes_(row_bytes) {}
  // Pointer to the action array `idx` for player `player` (dtype as declared in the spec).
  template <typename T>
  const T* Get(int idx = 0, int player = 0) const {
    return reinterpret_cast<const T*>((*ptrs_)[idx] + player * (*row_bytes_)[idx]);
  }
  // The common case: one Discrete action (int32 scalar).
  int Discrete(int player = 0) const { return *Get<int32_t>(0, player); }

 private:
  const std::vector<const uint8_t*>* ptrs_ = nullptr;
  const std::vector<size_t>* row_bytes_ = nullptr;
};

// Where this env's results go for the current step.
class Output {
 public:
  struct Target {
    uint8_t* ptr;      // start of this env's first row of the array
    size_t row_bytes;  // bytes per row (one player, or one env for per-env arrays)
  };
  // obs[i], info[i], then reward, terminated, truncated (set up by the pool).
  std::vector<Target> obs, info;
  uint8_t* reward = nullptr;
  DType reward_dtype = DType::kFloat32;
  bool* terminated = nullptr;
  bool* truncated = nullptr;
  int num_players = 1;

  template <typename T>
  T* Obs(int idx = 0, int player = 0) {
    return reinterpret_cast<T*>(obs[idx].ptr + player * obs[idx].row_bytes);
  }
  template <typename T>
  T* Info(int idx = 0, int player = 0) {
    return reinterpret_cast<T*>(info[idx].ptr + player * info[idx].row_bytes);
  }
  void SetReward(double r, int player = 0) {
    if (reward_dtype == DType::kFloat64) {
      reinterpret_cast<double*>(reward)[player] = r;
    } else {
      reinterpret_cast<float*>(reward)[player] = static_cast<float>(r);
    }
  }
  void SetTerminated(bool t) { *terminated = t; }
  // An env may end an episode by truncation itself (the pool also truncates at max_episode_steps).
  void SetTruncated(bool t) { *truncated = t; }
};

// The rows of a run of n envs stepped in one call (an env type's optional StepBatch, see Env): row i of each array
// is env i's. Only for single-player types with one observation array and no info arrays.
struct BatchRows {
  const uint8_t* const* action;  // n pointers: env i's row of action array 0 (the engine's copy)
  uint8_t* obs;                  // observation rows, obs_row_bytes apart
  size_t obs_row_bytes;
  uint8_t* reward;  // n rewards in reward_dtype (preset to 0)
  DType reward_dtype;
  bool* terminated;  // n flags (preset to false)

  int Discrete(int i) const { return *reinterpret_cast<const int32_t*>(action[i]); }
  template <typename T>
  T* Obs(int i) const {
    return reinterpret_cast<T*>(obs + obs_row_bytes * static_cast<size_t>(i));
  }
  // the same conversion as Output::SetReward, so a batched step's reward is bit-identical to Step's
  void SetReward(int i, double r) const {
    if (reward_dtype == DType::kFloat64) {
      reinterpret_cast<double*>(reward)[i] = r;
    } else {
      reinterpret_cast<float*>(reward)[i] = static_cast<float>(r);
    }
  }
};

// Row i of a BatchRows under Output's and ActionView's names (obs array 0, action array 0, player 0), so that an
// env's step written once as `template <class A, class O> void StepTo(const A& action, O& out)` serves both its
// Step (ActionView, Output) and its StepBatch (StepEach).
struct BatchRow {
  const BatchRows* rows;
  int i;
  int Discrete(int = 0) const { return rows->Discrete(i); }
  template <typename T>
  const T* Get(int = 0, int = 0) const {
    return reinterpret_cast<const T*>(rows->action[i]);
  }
  template <typename T>
  T* Obs(int = 0, int = 0) const {
    return rows->Obs<T>(i);
  }
  void SetReward(double r, int = 0) const { rows->SetReward(i, r); }
  void SetTerminated(bool t) const { rows->terminated[i] = t; }
};

class Env;

// StepBatch for an env class E with a public StepTo (see BatchRow): each env's StepTo on its row.
template <class E>
void StepEach(Env* const* envs, int n, const BatchRows& rows) noexcept {
  for (int i = 0; i < n; ++i) {
    const BatchRow row{&rows, i};
    static_cast<E*>(envs[i])->StepTo(row, row);
  }
}

// Base class of every environment. One instance per env_id, only ever touched by one thread at a time.
// Rules: draw randomness only from gen_ (seeded by the pool), keep no global state, never call Python.
class Env {
 public:
  Env(const Config& config, int env_id, uint64_t seed) : env_id_(env_id) {
    (void)config;
    SeedGenerator(gen_, seed);
  }
  virtual ~Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  // Players this env controls (fixed for the env's lifetime). Single-player envs keep 1.
  virtual int NumPlayers() const { return 1; }
  // Start a new episode and write its first observation (reward/terminated/truncated are preset to 0).
  virtual void Reset(Output& out) = 0;
  // Advance one step; write observation, reward, and terminated (truncated is preset to false).
  virtual void Step(const ActionView& action, Output& out) = 0;

  // Optional batched stepping, for envs whose step costs about as much as the engine's per-env bookkeeping:
  //   static void StepBatch(Env* const* envs, int n, const BatchRows& rows) noexcept;
  // steps n envs of the class (the pointers are of that class), env i exactly as its Step would (bit-identical:
  // share the arithmetic with Step), writing row i of `rows`. The engine then calls it once per run of stepping
  // envs instead of Step per env (resets, autoreset and envs of other types go one at a time). Declare it only
  // when Step and Reset never throw.

  // A reset with an explicit seed: reseed the generator, then tell the env (Reseeded).
  void Seed(uint64_t seed) {
    SeedGenerator(gen_, seed);
    Reseeded(seed);
  }
  int env_id() const { return env_id_; }
  // Takes over another env's random generator (the pool rebuilds an env with a new config at its next reset and
  // keeps its random stream going, so a config change does not replay or reseed the env's randomness). `from` is
  // an env of the same type; envs with randomness of their own beyond gen_ take it over in GeneratorAdopted.
  void AdoptGenerator(const Env& from) {
    gen_ = from.gen_;
    GeneratorAdopted(from);
  }

  // Optional, for alignment tests: the env's simulator state as doubles (e.g. CartPole's (x, x_dot, theta,
  // theta_dot), MuJoCo's qpos+qvel). SetState puts the env in that state without writing any output.
  virtual std::vector<double> GetState() const { throw std::runtime_error("this env does not expose its state"); }
  virtual void SetState(const std::vector<double>& state) {
    (void)state;
    throw std::runtime_error("this env does not expose its state");
  }
  // Snapshots (Engine::Snapshot / Restore): everything the env needs, besides its generator (the pool saves that),
  // to continue bit-identically. The default is GetState/SetState, complete for envs whose state is those values;
  // an env with more state (solver warm starts, frame stacks, an emulator) overrides both.
  virtual std::vector<double> SaveState() const { return GetState(); }
  virtual void LoadState(const std::vector<double>& state) { SetState(state); }
  // The generator's state (std::mt19937's text form: its 624 words and its position) and back.
  std::vector<uint32_t> GeneratorState() const;
  void SetGeneratorState(const std::vector<uint32_t>& words);
  // Optional: draw the current frame as RGB into `rgb` (height x width x 3 uint8, the size the spec declares
  // with SpecBuilder::RenderSize). Envs without it are drawn by the Python side (parallel_pool.render).
  virtual void Render(uint8_t* rgb) {
    (void)rgb;
    throw std::runtime_error("this env has no C++ renderer");
  }
  // Optional: called from another thread by Engine::Close when a Step or Reset of this env has not returned within
  // the close timeout. An env whose step waits on something it owns (ViZDoom's engine processes) stops it here,
  // so the step returns (with an error). Must be safe to call concurrently with Step/Reset, and must not throw.
  virtual void Abort() noexcept {}

 protected:
  // Called after Seed, before the Reset it precedes. For envs whose randomness also lives outside gen_ (an engine
  // process with its own seed), so that they can reseed it too.
  virtual void Reseeded(uint64_t seed) { (void)seed; }
  // Called by AdoptGenerator after gen_ is taken over. For envs whose random stream also lives outside gen_ and
  // goes on across episodes (MiniGrid's numpy generator), so that the rebuilt env continues that stream too.
  virtual void GeneratorAdopted(const Env& from) { (void)from; }

  int env_id_;
  Generator gen_;
};

inline std::vector<uint32_t> Env::GeneratorState() const {
  std::ostringstream os;
  os << gen_;
  std::istringstream is(os.str());
  std::vector<uint32_t> words;
  for (uint64_t w; is >> w;) words.push_back(static_cast<uint32_t>(w));
  return words;
}

inline void Env::SetGeneratorState(const std::vector<uint32_t>& words) {
  CheckGeneratorWords(words);
  std::ostringstream os;
  for (uint32_t w : words) os << w << ' ';
  std::istringstream is(os.str());
  Generator g;
  is >> g;
  if (is.fail()) throw std::invalid_argument("not a generator state");
  gen_ = g;
}

}  // namespace pp
