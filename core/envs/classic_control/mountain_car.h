// MountainCar-v0, aligned with gymnasium.envs.classic_control.MountainCarEnv: float64 state (position, velocity),
// Discrete(3) action (push left / none / right), reward -1 on every step, terminated when
// position >= 0.5 and velocity >= goal_velocity (default 0). Reset: position ~ U(-0.6, -0.4), velocity 0.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"

namespace pp::classic_control {

// What MountainCar-v0 and MountainCarContinuous-v0 share: gymnasium's float64 (position, velocity) state, its
// reset draw, the goal_velocity key, the observation.
class MountainCarBase : public Env {
 public:
  static constexpr double kMinPosition = -1.2, kMaxPosition = 0.6, kMaxSpeed = 0.07;
  static constexpr double kGoalVelocity = 0.0, kGravity = 0.0025;

  // The keys of both envs, with each one's episode limit and solved score.
  static std::vector<ConfigKey> Keys(int64_t max_episode_steps, double reward_threshold) {
    return {{"max_episode_steps", max_episode_steps, "truncate after this many steps", {}},
            {"reward_threshold", reward_threshold, "solved score", {}},
            {"goal_velocity", kGoalVelocity, "the goal also needs velocity >= this (gymnasium's goal_velocity)", {}}};
  }
  static void DefineObs(SpecBuilder& b) {
    b.Obs("obs", DType::kFloat32, {2}, {kMinPosition, -kMaxSpeed}, {kMaxPosition, kMaxSpeed});
  }

  MountainCarBase(const Config& c, int env_id, uint64_t seed)
      : Env(c, env_id, seed), goal_velocity_(c.Get<double>("goal_velocity")) {}

  // gymnasium's env.unwrapped.state: (position, velocity).
  std::vector<double> GetState() const override { return {pos_, vel_}; }

 protected:
  // gymnasium's reset: position ~ U(-0.6, -0.4), velocity 0.
  void DrawStart() {
    pos_ = std::uniform_real_distribution<double>(-0.6, -0.4)(gen_);
    vel_ = 0.0;
  }
  // SetState's (position, velocity); `name` starts the error message.
  void SetPositionVelocity(const std::vector<double>& s, const char* name) {
    if (s.size() != 2) throw std::invalid_argument(std::string(name) + " state has 2 values (position, velocity)");
    pos_ = s[0];
    vel_ = s[1];
  }
  template <class O>
  void Write(O& out) {
    float* o = out.template Obs<float>(0);
    o[0] = static_cast<float>(pos_);
    o[1] = static_cast<float>(vel_);
  }

  double goal_velocity_;
  double pos_ = 0, vel_ = 0;
};

class MountainCarEnv : public MountainCarBase {
 public:
  static constexpr const char* kName = "MountainCar";
  static constexpr double kGoalPosition = 0.5, kForce = 0.001;

  static std::vector<ConfigKey> ConfigKeys() { return Keys(200, -110.0); }
  static void DefineSpec(const Config&, SpecBuilder& b) {
    DefineObs(b);
    b.DiscreteAction(3);
  }

  using MountainCarBase::MountainCarBase;

  void Reset(Output& out) override {
    DrawStart();
    Write(out);
  }

  void Step(const ActionView& action, Output& out) override { StepTo(action, out); }
  static void StepBatch(Env* const* envs, int n, const BatchRows& rows) noexcept {
    StepEach<MountainCarEnv>(envs, n, rows);
  }
  // Step's body for Step and StepBatch alike (ActionView/Output or BatchRow); never throws
  template <class A, class O>
  void StepTo(const A& action, O& out) {
    // Same operations, in the same order, as gymnasium's step.
    vel_ += (action.Discrete() - 1) * kForce + std::cos(3 * pos_) * (-kGravity);
    vel_ = std::clamp(vel_, -kMaxSpeed, kMaxSpeed);
    pos_ += vel_;
    pos_ = std::clamp(pos_, kMinPosition, kMaxPosition);
    if (pos_ == kMinPosition && vel_ < 0) vel_ = 0.0;
    out.SetTerminated(pos_ >= kGoalPosition && vel_ >= goal_velocity_);
    out.SetReward(-1.0);
    Write(out);
  }

  void SetState(const std::vector<double>& s) override { SetPositionVelocity(s, "MountainCar"); }
};

}  // namespace pp::classic_control
