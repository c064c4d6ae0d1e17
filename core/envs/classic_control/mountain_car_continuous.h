// MountainCarContinuous-v0, aligned with gymnasium.envs.classic_control.Continuous_MountainCarEnv.
// Action: float32 Box(-1, 1, (1,)); force = action clipped to [-1, 1], power 0.0015; reward -0.1 * action^2
// (of the unclipped action) per step, +100 on reaching the goal (position >= 0.45 and velocity >= goal_velocity,
// default 0). Reset: position ~ U(-0.6, -0.4), velocity 0.
//
// Precision: gymnasium keeps the state as a float32 array after every step (but float64 right after reset), and
// NumPy 2 computes with float32 scalars in float32 (Python floats are "weak"). This env reproduces those roundings
// (see Advance), so its trajectory matches gymnasium's to the last bit, not just to a tolerance.
#pragma once

#include <cmath>
#include <random>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"
#include "core/envs/classic_control/mountain_car.h"
#include "core/envs/classic_control/py_math.h"

namespace pp::classic_control {

class MountainCarContinuousEnv : public MountainCarBase {
 public:
  static constexpr const char* kName = "MountainCarContinuous";
  static constexpr double kMinAction = -1.0, kMaxAction = 1.0;
  static constexpr double kGoalPosition = 0.45, kPower = 0.0015;

  static std::vector<ConfigKey> ConfigKeys() { return Keys(999, 90.0); }
  static void DefineSpec(const Config&, SpecBuilder& b) {
    DefineObs(b);
    b.Action("action", DType::kFloat32, {1}, {kMinAction}, {kMaxAction});
  }

  using MountainCarBase::MountainCarBase;

  void Reset(Output& out) override {
    DrawStart();
    float32_state_ = false;
    Write(out);
  }

  void Step(const ActionView& action, Output& out) override { StepTo(action, out); }
  static void StepBatch(Env* const* envs, int n, const BatchRows& rows) noexcept {
    StepEach<MountainCarContinuousEnv>(envs, n, rows);
  }
  // Step's body for Step and StepBatch alike (ActionView/Output or BatchRow); never throws
  template <class A, class O>
  void StepTo(const A& action, O& out) {
    const float a = action.template Get<float>(0)[0];
    const bool terminated = float32_state_ ? Advance<float>(a) : Advance<double>(a);
    float32_state_ = true;  // gymnasium stores the new state as a float32 array
    double reward = terminated ? 100.0 : 0.0;
    reward -= PyPow2(static_cast<double>(a)) * 0.1;  // math.pow(action[0], 2), of the unclipped action
    out.SetTerminated(terminated);
    out.SetReward(reward);
    Write(out);
  }

  // A state set from outside counts as a float64 state (as gymnasium's is right after reset); set gymnasium's
  // state as a float64 array to match it.
  void SetState(const std::vector<double>& s) override {
    SetPositionVelocity(s, "MountainCarContinuous");
    float32_state_ = false;
  }
  // Snapshots also keep whether the state is float32 (it changes how the next step rounds).
  std::vector<double> SaveState() const override { return {pos_, vel_, float32_state_ ? 1.0 : 0.0}; }
  void LoadState(const std::vector<double>& s) override {
    if (s.size() != 3 || (s[2] != 0.0 && s[2] != 1.0)) {
      throw std::invalid_argument("a MountainCarContinuous snapshot has 3 values (position, velocity, float32)");
    }
    SetState({s[0], s[1]});
    float32_state_ = s[2] == 1.0;
  }

 private:
  // One step of gymnasium's dynamics with NumPy 2's scalar typing: T is the type of the state scalars (float64
  // right after reset, float32 afterwards); Python float constants are "weak" and take T's precision in
  // arithmetic and comparisons with T. Returns `terminated`; stores the new state rounded to float32.
  template <typename T>
  bool Advance(float a) {
    T pos = static_cast<T>(pos_), vel = static_cast<T>(vel_);
    const double three_pos =
        std::is_same_v<T, float> ? static_cast<double>(3.0f * static_cast<float>(pos_)) : 3.0 * pos_;
    const double gravity_term = kGravity * std::cos(three_pos);  // math.cos: a Python float
    // force * power - gravity_term: float32 when the force is the float32 action itself; a Python float when
    // the action was clipped (min/max return the Python float bound).
    if (a < kMinAction || a > kMaxAction) {
      const double accel = (a < kMinAction ? kMinAction : kMaxAction) * kPower - gravity_term;
      vel = vel + static_cast<T>(accel);
    } else {
      const float accel = a * static_cast<float>(kPower) - static_cast<float>(gravity_term);
      vel = vel + static_cast<T>(accel);
    }
    if (vel > static_cast<T>(kMaxSpeed)) vel = static_cast<T>(kMaxSpeed);
    if (vel < static_cast<T>(-kMaxSpeed)) vel = static_cast<T>(-kMaxSpeed);
    pos = pos + vel;
    if (pos > static_cast<T>(kMaxPosition)) pos = static_cast<T>(kMaxPosition);
    if (pos < static_cast<T>(kMinPosition)) pos = static_cast<T>(kMinPosition);
    if (pos == static_cast<T>(kMinPosition) && vel < 0) vel = 0;
    const bool terminated = pos >= static_cast<T>(kGoalPosition) && vel >= static_cast<T>(goal_velocity_);
    pos_ = static_cast<float>(pos);
    vel_ = static_cast<float>(vel);
    return terminated;
  }
  bool float32_state_ = false;
};

}  // namespace pp::classic_control
