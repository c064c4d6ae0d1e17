// Corridor-v0: the worked example of docs/adding-an-env.md (tested by tests/envs/test_guide_example.py).
// The agent stands in a corridor of `length` cells and walks left (action 0) or right (action 1). A move goes the
// other way with probability `slip_prob`. Reaching the last cell ends the episode with reward +1; every other step
// costs 0.01. Observation: a one-hot float32 vector of the agent's cell. info["slipped"] says whether the move
// slipped.
#pragma once

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"

namespace pp::examples {

class CorridorEnv : public Env {
 public:
  // The env type's name (task ids are given in register.cc).
  static constexpr const char* kName = "_Corridor";  // leading "_": makeable, but not listed by list_all_envs()

  // The env's own config keys with their defaults. Re-declaring a common key changes its default.
  static std::vector<ConfigKey> ConfigKeys() {
    return {{"max_episode_steps", int64_t{100}, "truncate after this many steps", {}},
            {"length", int64_t{8}, "number of cells; the last one is the goal", {}},
            {"slip_prob", 0.1, "probability that a move goes the other way", {}}};
  }

  // Arrays the env writes and reads, for a given config. Throw std::invalid_argument for bad values:
  // make() and make_spec() raise it as a ValueError.
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    const int length = IntInRange(c, "length", 2, 1 << 20);  // checked before narrowing: no wrap-around
    const double slip = c.Get<double>("slip_prob");
    if (!(slip >= 0.0 && slip <= 1.0)) {
      throw std::invalid_argument("Corridor: slip_prob must be in [0, 1], got " + std::to_string(slip));
    }
    b.Obs("obs", DType::kFloat32, {length}, {0.0}, {1.0});  // Box(0, 1, (length,), float32)
    b.Info("slipped", DType::kBool);                        // info["slipped"], one per env
    b.DiscreteAction(2);                                    // Discrete(2)
  }

  // One instance per env id; `seed` is the pool's seed + env id and seeds gen_.
  CorridorEnv(const Config& c, int env_id, uint64_t seed)
      : Env(c, env_id, seed), length_(c.Get<int>("length")), slip_(c.Get<double>("slip_prob")) {}

  void Reset(Output& out) override {
    pos_ = std::uniform_int_distribution<int>(0, length_ - 2)(gen_);  // any cell but the goal
    slipped_ = false;
    Write(out);
  }

  void Step(const ActionView& action, Output& out) override {
    int move = action.Discrete() == 1 ? 1 : -1;
    slipped_ = std::uniform_real_distribution<double>(0.0, 1.0)(gen_) < slip_;
    if (slipped_) move = -move;
    pos_ = std::clamp(pos_ + move, 0, length_ - 1);
    const bool at_goal = pos_ == length_ - 1;
    out.SetReward(at_goal ? 1.0 : -0.01);
    out.SetTerminated(at_goal);
    Write(out);
  }

  // Optional: the state as doubles, so tests can put the env in any state.
  std::vector<double> GetState() const override { return {double(pos_)}; }
  void SetState(const std::vector<double>& s) override {
    const int pos = s.size() == 1 ? static_cast<int>(s[0]) : -1;
    if (pos < 0 || pos > length_ - 2) throw std::invalid_argument("Corridor state is one cell in [0, length - 1)");
    pos_ = pos;
  }

 private:
  // Write this env's row of every output array: the whole row, since the buffers are reused.
  void Write(Output& out) {
    float* obs = out.Obs<float>(0);
    std::fill(obs, obs + length_, 0.0f);
    obs[pos_] = 1.0f;
    *out.Info<bool>(0) = slipped_;
  }

  int length_;
  double slip_;
  int pos_ = 0;
  bool slipped_ = false;
};

}  // namespace pp::examples
