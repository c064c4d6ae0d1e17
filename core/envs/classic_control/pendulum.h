// Pendulum-v1 (and EnvPool's Pendulum-v0), aligned with gymnasium.envs.classic_control.PendulumEnv (g = 10.0,
// m = l = 1, dt = 0.05, max speed 8, max torque 2). Obs: float32 (cos th, sin th, thdot); action: float32
// Box(-2, 2, (1,)), clipped; reward = -(angle_normalize(th)^2 + 0.1 thdot^2 + 0.001 u^2); never terminates.
// Reset: th ~ U(-pi, pi), thdot ~ U(-1, 1) (drawn in that order, as EnvPool does).
//
// As in gymnasium, th is not wrapped in the state (only inside the cost). NumPy 2 computes `u**2`, `0.001 * u^2`
// and `3.0 * u` in float32 (u is the float32 action), and so does this env.
// `version` (EnvPool's key): 1 = gymnasium's Pendulum-v1 (th advances with the clipped thdot); 0 = the old gym
// Pendulum-v0 order (th advances with thdot before clipping).
//
// PendulumEnv<true> is phys2d/Pendulum-v0, aligned with gymnasium's functional jax env
// (gymnasium.envs.phys2d.pendulum): Pendulum-v1's rules with every quantity in float32 (jax's default), an
// unbounded observation space and no `version` key (EnvPool 1.2.5 registers the id on its classic Pendulum with
// version 0, whose update order the functional env does not have).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"
#include "core/envs/classic_control/py_math.h"

namespace pp::classic_control {

template <bool kPhys2d>
class PendulumEnv : public Env {
 public:
  static constexpr const char* kName = kPhys2d ? "phys2d/Pendulum" : "Pendulum";
  static constexpr double kMaxSpeed = 8.0, kMaxTorque = 2.0, kDt = 0.05, kG = 10.0, kM = 1.0, kL = 1.0;

  static std::vector<ConfigKey> ConfigKeys() {
    std::vector<ConfigKey> keys = {{"max_episode_steps", int64_t{200}, "truncate after this many steps", {}}};
    if (!kPhys2d) {
      keys.push_back(
          {"version", int64_t{1}, "1: gymnasium Pendulum-v1 dynamics; 0: old gym Pendulum-v0 update order", {}});
      keys.push_back({"g", kG, "gravity (gymnasium's PendulumEnv(g=...)); may differ per env", {}});
    }
    return keys;
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    if (kPhys2d) {
      b.Obs("obs", DType::kFloat32, {3}, {-kInf}, {kInf});
      b.Action("action", DType::kFloat32, {1}, {-kMaxTorque}, {kMaxTorque});
      return;
    }
    const int64_t v = c.Get<int64_t>("version");
    if (v != 0 && v != 1) {
      throw std::invalid_argument("config key 'version' must be 0 or 1, got " + std::to_string(v));
    }
    b.Obs("obs", DType::kFloat32, {3}, {-1.0, -1.0, -kMaxSpeed}, {1.0, 1.0, kMaxSpeed});
    b.Action("action", DType::kFloat32, {1}, {-kMaxTorque}, {kMaxTorque});
  }

  PendulumEnv(const Config& c, int env_id, uint64_t seed)
      : Env(c, env_id, seed), version_(kPhys2d ? 1 : c.Get<int>("version")), g_(kPhys2d ? kG : c.Get<double>("g")) {}

  void Reset(Output& out) override {
    if (kPhys2d) {  // float32 draws, as jax.random.uniform's
      th_ = std::uniform_real_distribution<float>(-static_cast<float>(M_PI), static_cast<float>(M_PI))(gen_);
      thdot_ = std::uniform_real_distribution<float>(-1.0f, 1.0f)(gen_);
    } else {
      th_ = std::uniform_real_distribution<double>(-M_PI, M_PI)(gen_);
      thdot_ = std::uniform_real_distribution<double>(-1.0, 1.0)(gen_);
    }
    Write(out);
  }

  void Step(const ActionView& action, Output& out) override { StepTo(action, out); }
  static void StepBatch(Env* const* envs, int n, const BatchRows& rows) noexcept {
    StepEach<PendulumEnv>(envs, n, rows);
  }
  // Step's body for Step and StepBatch alike (ActionView/Output or BatchRow); never throws
  template <class A, class O>
  void StepTo(const A& action, O& out) {
    const float u =
        std::clamp(action.template Get<float>(0)[0], static_cast<float>(-kMaxTorque), static_cast<float>(kMaxTorque));
    if (kPhys2d) {
      StepFloat32(u, out);
      return;
    }
    const float u_cost = 0.001f * PyPow2(u);
    const double cost = PyPow2(AngleNormalize(th_)) + 0.1 * PyPow2(thdot_) + static_cast<double>(u_cost);
    const double torque_term = static_cast<double>(3.0f * u);  // 3 / (m l^2) * u, in float32
    const double new_thdot = thdot_ + (3 * g_ / (2 * kL) * std::sin(th_) + torque_term) * kDt;
    const double clipped = std::clamp(new_thdot, -kMaxSpeed, kMaxSpeed);
    th_ = th_ + (version_ == 0 ? new_thdot : clipped) * kDt;
    thdot_ = clipped;
    out.SetReward(-cost);
    Write(out);
  }

  // gymnasium's env.unwrapped.state: (th, thdot).
  std::vector<double> GetState() const override { return {th_, thdot_}; }
  void SetState(const std::vector<double>& s) override {
    if (s.size() != 2) throw std::invalid_argument("Pendulum state has 2 values (th, thdot)");
    // thdot as a step leaves it (clipped to the max speed), so its cost term stays finite; th is never wrapped (it
    // grows as the pendulum spins) but must fit the float32 the functional variant computes in
    if (!(std::abs(s[1]) <= kMaxSpeed)) {
      throw std::invalid_argument("Pendulum state: thdot must be in [-8, 8], got " + std::to_string(s[1]));
    }
    if (kPhys2d && !(std::abs(s[0]) <= std::numeric_limits<float>::max())) {
      throw std::invalid_argument("Pendulum state: th must fit in float32, got " + std::to_string(s[0]));
    }
    th_ = kPhys2d ? static_cast<float>(s[0]) : s[0];
    thdot_ = kPhys2d ? static_cast<float>(s[1]) : s[1];
  }

 private:
  // The functional env's transition and reward, term by term in float32 (Python float constants become float32
  // where jax meets them; `x**2` is x * x there). th_ and thdot_ hold float32 values.
  template <class O>
  void StepFloat32(float u, O& out) {
    const float th = static_cast<float>(th_), thdot = static_cast<float>(thdot_);
    const float pi = static_cast<float>(M_PI), two_pi = static_cast<float>(2 * M_PI);
    float th_norm = std::fmod(th + pi, two_pi);  // jnp's floored % : the remainder takes the divisor's sign
    if (th_norm != 0 && th_norm < 0) th_norm += two_pi;
    th_norm -= pi;
    const float cost = th_norm * th_norm + 0.1f * (thdot * thdot) + 0.001f * (u * u);
    const float new_thdot = std::clamp(thdot + (15.0f * std::sin(th) + 3.0f * u) * 0.05f,
                                       -static_cast<float>(kMaxSpeed), static_cast<float>(kMaxSpeed));
    th_ = th + new_thdot * 0.05f;
    thdot_ = new_thdot;
    out.SetReward(-cost);
    Write(out);
  }

  // ((x + pi) mod 2 pi) - pi with Python/NumPy's floored modulo.
  static double AngleNormalize(double x) {
    constexpr double k2Pi = 2 * M_PI;
    double m = std::fmod(x + M_PI, k2Pi);
    if (m != 0 && m < 0) m += k2Pi;
    if (m == 0) m = 0.0;  // +0, as NumPy returns
    return m - M_PI;
  }
  template <class O>
  void Write(O& out) {
    float* o = out.template Obs<float>(0);
    o[0] = static_cast<float>(std::cos(th_));
    o[1] = static_cast<float>(std::sin(th_));
    o[2] = static_cast<float>(thdot_);
  }
  int version_;
  double g_;
  double th_ = 0, thdot_ = 0;
};

}  // namespace pp::classic_control
