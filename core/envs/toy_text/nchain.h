// NChain-v0, as EnvPool has it (gym 0.20's NChain with n=5, slip=0.2, small=2, large=10): a chain of 5 states.
// Action 0 moves forward (reward 10 when already at the end, else 0), action 1 returns to state 0 with reward 2.
// With probability 0.2 the other action is taken instead. No termination; the pool truncates at max_episode_steps.
// The slip is drawn exactly as EnvPool draws it, so seeds reproduce EnvPool's episodes.
#pragma once

#include <random>
#include <stdexcept>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"
#include "core/envs/toy_text/state_index.h"

namespace pp::toy_text {

class NChainEnv : public Env {
 public:
  static constexpr const char* kName = "NChain";
  static constexpr int kStates = 5;
  static constexpr double kSlip = 0.2, kSmall = 2.0, kLarge = 10.0;
  static std::vector<ConfigKey> ConfigKeys() {
    return {{"max_episode_steps", int64_t{1000}, "truncate after this many steps", {}}};
  }
  static void DefineSpec(const Config&, SpecBuilder& b) {
    b.Obs("obs", DType::kInt32, {}, {0.0}, {double(kStates - 1)});
    b.DiscreteAction(2);
  }

  NChainEnv(const Config& c, int env_id, uint64_t seed) : Env(c, env_id, seed) {}

  void Reset(Output& out) override {
    s_ = 0;
    Write(out);
  }

  void Step(const ActionView& action, Output& out) override { StepTo(action, out); }
  static void StepBatch(Env* const* envs, int n, const BatchRows& rows) noexcept { StepEach<NChainEnv>(envs, n, rows); }
  // Step's body for Step and StepBatch alike (ActionView/Output or BatchRow); never throws
  template <class A, class O>
  void StepTo(const A& action, O& out) {
    int a = action.Discrete();
    if (std::uniform_real_distribution<double>(0.0, 1.0)(gen_) < kSlip) a = 1 - a;
    if (a != 0) {
      s_ = 0;
      out.SetReward(kSmall);
    } else if (s_ < kStates - 1) {
      ++s_;
    } else {
      out.SetReward(kLarge);
    }
    Write(out);
  }

  std::vector<double> GetState() const override { return {double(s_)}; }
  void SetState(const std::vector<double>& s) override { s_ = StateIndex(s, kStates, "NChain"); }

 private:
  template <class O>
  void Write(O& out) {
    *out.template Obs<int32_t>(0) = s_;
  }
  int s_ = 0;
};

}  // namespace pp::toy_text
