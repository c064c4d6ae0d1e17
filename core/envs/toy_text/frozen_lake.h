// FrozenLake-v1 / FrozenLake8x8-v1, aligned with gymnasium.envs.toy_text.FrozenLakeEnv (the 4x4 and 8x8 maps).
// The agent walks from S to G over frozen tiles F; stepping onto a hole H or the goal G terminates (reward 1 at G,
// 0 elsewhere). Actions: 0 left, 1 down, 2 right, 3 up; moves off the board leave the agent in place.
// is_slippery: the move goes in the intended direction with probability success_rate and in each of the two
// perpendicular directions with probability (1 - success_rate) / 2 (gymnasium's transition table). With the
// default success_rate of 1/3 the slip is drawn exactly as EnvPool draws it (EnvPool's FrozenLake is always
// slippery), so seeds reproduce EnvPool's episodes. Observation: row * size + col.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"
#include "core/envs/toy_text/state_index.h"

namespace pp::toy_text {

class FrozenLakeEnv : public Env {
 public:
  static constexpr const char* kName = "FrozenLake";
  static std::vector<ConfigKey> ConfigKeys() {
    return {{"max_episode_steps", int64_t{100}, "truncate after this many steps", {}},
            {"reward_threshold", 0.7, "solved score", {}},
            {"size", int64_t{4}, "map: 4 (4x4) or 8 (8x8)", {}},
            {"is_slippery", true, "moves may slip to a perpendicular direction", {}},
            {"success_rate", 1.0 / 3.0, "with is_slippery: probability of moving in the intended direction", {}}};
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    const int n = CheckSize(c);
    const double p = c.Get<double>("success_rate");
    if (!(p >= 0.0 && p <= 1.0)) {
      throw std::invalid_argument("FrozenLake: success_rate must be in [0, 1], got " + std::to_string(p));
    }
    b.Obs("obs", DType::kInt32, {}, {0.0}, {double(n * n - 1)});
    b.DiscreteAction(4);
  }

  FrozenLakeEnv(const Config& c, int env_id, uint64_t seed)
      : Env(c, env_id, seed),
        size_(CheckSize(c)),
        map_(size_ == 8 ? kMap8 : kMap4),
        slippery_(c.Get<bool>("is_slippery")),
        success_(c.Get<double>("success_rate")),
        envpool_slip_(std::abs(success_ - 1.0 / 3.0) < 1e-12) {}

  void Reset(Output& out) override {
    row_ = col_ = 0;
    Write(out);
  }

  void Step(const ActionView& action, Output& out) override { StepTo(action, out); }
  static void StepBatch(Env* const* envs, int n, const BatchRows& rows) noexcept {
    StepEach<FrozenLakeEnv>(envs, n, rows);
  }
  // Step's body for Step and StepBatch alike (ActionView/Output or BatchRow); never throws
  template <class A, class O>
  void StepTo(const A& action, O& out) {
    const char here = map_[row_][col_];
    if (here == 'H' || here == 'G') {  // only reachable through SetState: gymnasium keeps the agent there
      out.SetTerminated(true);
      Write(out);
      return;
    }
    int dir = action.Discrete();
    if (slippery_) dir = (dir + Slip() + 4) % 4;
    switch (dir) {
      case 0: col_ = std::max(col_ - 1, 0); break;
      case 1: row_ = std::min(row_ + 1, size_ - 1); break;
      case 2: col_ = std::min(col_ + 1, size_ - 1); break;
      default: row_ = std::max(row_ - 1, 0); break;
    }
    const char there = map_[row_][col_];
    out.SetTerminated(there == 'H' || there == 'G');
    out.SetReward(there == 'G' ? 1.0 : 0.0);
    Write(out);
  }

  // (state index row * size + col), as gymnasium's env.unwrapped.s
  std::vector<double> GetState() const override { return {double(row_ * size_ + col_)}; }
  void SetState(const std::vector<double>& s) override {
    const int v = StateIndex(s, size_ * size_, "FrozenLake");
    row_ = v / size_;
    col_ = v % size_;
  }

 private:
  static int CheckSize(const Config& c) {
    const int64_t n = c.Get<int64_t>("size");
    if (n != 4 && n != 8) throw std::invalid_argument("config key 'size' must be 4 or 8, got " + std::to_string(n));
    return static_cast<int>(n);
  }
  // -1, 0 or +1 added to the intended direction.
  int Slip() {
    if (envpool_slip_) return std::uniform_int_distribution<int>(-1, 1)(gen_);
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(gen_);
    const double fail = (1.0 - success_) / 2.0;
    return u < fail ? -1 : (u < fail + success_ ? 0 : 1);
  }
  template <class O>
  void Write(O& out) {
    *out.template Obs<int32_t>(0) = row_ * size_ + col_;
  }

  static constexpr const char* kMap4[] = {"SFFF", "FHFH", "FFFH", "HFFG"};
  static constexpr const char* kMap8[] = {"SFFFFFFF", "FFFFFFFF", "FFFHFFFF", "FFFFFHFF",
                                          "FFFHFFFF", "FHHFFFHF", "FHFFHFHF", "FFFHFFFG"};
  int size_;
  const char* const* map_;
  bool slippery_;
  double success_;
  bool envpool_slip_;
  int row_ = 0, col_ = 0;
};

}  // namespace pp::toy_text
