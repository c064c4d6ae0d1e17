// CliffWalking-v0, aligned with gymnasium.envs.toy_text.CliffWalkingEnv (gymnasium 1.4's CliffWalking-v1; v0 and
// v1 differ only by v1's slippery option, which EnvPool 1.2.5 also has). A 4x12 grid; start (3, 0), goal (3, 11),
// cliff (3, 1..10). Actions: 0 up, 1 right, 2 down, 3 left. Reward -1 per step; stepping onto the cliff gives -100
// and returns the agent to the start (no termination); reaching the goal terminates. With is_slippery the move
// goes in the intended or either perpendicular direction with probability 1/3 each (drawn as EnvPool draws it).
// info["prob"]: the probability of the transition taken (1, or 1/3 when slippery), as EnvPool and gymnasium report.
#pragma once

#include <algorithm>
#include <random>
#include <stdexcept>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"
#include "core/envs/toy_text/state_index.h"

namespace pp::toy_text {

class CliffWalkingEnv : public Env {
 public:
  static constexpr const char* kName = "CliffWalking";
  static constexpr int kRows = 4, kCols = 12;
  static std::vector<ConfigKey> ConfigKeys() {
    return {{"max_episode_steps", int64_t{2147483647}, "truncate after this many steps", {}},
            {"is_slippery", false, "moves may slip to a perpendicular direction (1/3 each)", {}}};
  }
  static void DefineSpec(const Config&, SpecBuilder& b) {
    b.Obs("obs", DType::kInt32, {}, {0.0}, {double(kRows * kCols - 1)});
    b.Info("prob", DType::kFloat32);
    b.DiscreteAction(4);
  }

  CliffWalkingEnv(const Config& c, int env_id, uint64_t seed)
      : Env(c, env_id, seed), slippery_(c.Get<bool>("is_slippery")) {}

  void Reset(Output& out) override {
    row_ = 3;
    col_ = 0;
    Write(out, 1.0f);
  }

  void Step(const ActionView& action, Output& out) override {
    int dir = action.Discrete();
    if (slippery_) dir = (dir + std::uniform_int_distribution<int>(0, 2)(gen_) - 1 + 4) % 4;
    switch (dir) {
      case 0: row_ = std::max(row_ - 1, 0); break;
      case 1: col_ = std::min(col_ + 1, kCols - 1); break;
      case 2: row_ = std::min(row_ + 1, kRows - 1); break;
      default: col_ = std::max(col_ - 1, 0); break;
    }
    if (row_ == 3 && col_ > 0 && col_ < kCols - 1) {  // the cliff
      out.SetReward(-100.0);
      row_ = 3;
      col_ = 0;
    } else {
      out.SetReward(-1.0);
      out.SetTerminated(row_ == 3 && col_ == kCols - 1);
    }
    Write(out, slippery_ ? 1.0f / 3.0f : 1.0f);
  }

  // (state index row * 12 + col), as gymnasium's env.unwrapped.s
  std::vector<double> GetState() const override { return {double(row_ * kCols + col_)}; }
  void SetState(const std::vector<double>& s) override {
    const int v = StateIndex(s, kRows * kCols, "CliffWalking");
    row_ = v / kCols;
    col_ = v % kCols;
  }

 private:
  void Write(Output& out, float prob) {
    *out.Obs<int32_t>(0) = row_ * kCols + col_;
    *out.Info<float>(0) = prob;
  }
  bool slippery_;
  int row_ = 3, col_ = 0;
};

}  // namespace pp::toy_text
