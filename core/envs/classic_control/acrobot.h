// Acrobot-v1, aligned with gymnasium.envs.classic_control.AcrobotEnv ("book" dynamics, no torque noise,
// one classic RK4 step of dt = 0.2 per env step). State (th1, th2, dth1, dth2); obs float32
// (cos th1, sin th1, cos th2, sin th2, dth1, dth2); Discrete(3) action = torque -1 / 0 / +1; reward -1 per
// step, 0 on the terminating step; terminated when -cos(th1) - cos(th1 + th2) > 1.
// Reset: each state value ~ U(-0.1, 0.1), rounded to float32 as gymnasium does. info["state"] = (th1, th2) as
// float32, as EnvPool has it.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"
#include "core/envs/classic_control/py_math.h"

namespace pp::classic_control {

class AcrobotEnv : public Env {
 public:
  static constexpr const char* kName = "Acrobot";
  static constexpr double kDt = 0.2;
  static constexpr double kL1 = 1.0, kM1 = 1.0, kM2 = 1.0, kLc1 = 0.5, kLc2 = 0.5, kI1 = 1.0, kI2 = 1.0, kG = 9.8;
  static constexpr double kMaxVel1 = 4 * M_PI, kMaxVel2 = 9 * M_PI;

  static std::vector<ConfigKey> ConfigKeys() {
    return {{"max_episode_steps", int64_t{500}, "truncate after this many steps", {}},
            {"reward_threshold", -100.0, "solved score", {}}};
  }
  static void DefineSpec(const Config&, SpecBuilder& b) {
    b.Obs("obs", DType::kFloat32, {6}, {-1.0, -1.0, -1.0, -1.0, -kMaxVel1, -kMaxVel2},
          {1.0, 1.0, 1.0, 1.0, kMaxVel1, kMaxVel2});
    b.Info("state", DType::kFloat32, {2});
    b.DiscreteAction(3);
  }

  AcrobotEnv(const Config& c, int env_id, uint64_t seed) : Env(c, env_id, seed) {}

  void Reset(Output& out) override {
    std::uniform_real_distribution<double> u(-0.1, 0.1);
    for (double& v : s_) v = static_cast<float>(u(gen_));
    Write(out);
  }

  void Step(const ActionView& action, Output& out) override {
    const double torque = static_cast<double>(action.Discrete() - 1);
    // gymnasium's rk4 over t = [0, dt]: the torque rides along as a fifth state value with derivative 0.
    using V = std::array<double, 5>;
    const V y0 = {s_[0], s_[1], s_[2], s_[3], torque};
    constexpr double dt = kDt - 0.0, dt2 = dt / 2.0;
    auto axpy = [](const V& y, double h, const V& k) {
      V r;
      for (int i = 0; i < 5; ++i) r[i] = y[i] + h * k[i];
      return r;
    };
    const V k1 = Derivs(y0);
    const V k2 = Derivs(axpy(y0, dt2, k1));
    const V k3 = Derivs(axpy(y0, dt2, k2));
    const V k4 = Derivs(axpy(y0, dt, k3));
    for (int i = 0; i < 4; ++i) {
      s_[i] = y0[i] + dt / 6.0 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    }
    s_[0] = Wrap(s_[0], -M_PI, M_PI);
    s_[1] = Wrap(s_[1], -M_PI, M_PI);
    s_[2] = std::min(std::max(s_[2], -kMaxVel1), kMaxVel1);
    s_[3] = std::min(std::max(s_[3], -kMaxVel2), kMaxVel2);
    const bool terminated = -std::cos(s_[0]) - std::cos(s_[1] + s_[0]) > 1.0;
    out.SetTerminated(terminated);
    out.SetReward(terminated ? 0.0 : -1.0);
    Write(out);
  }

  // gymnasium's env.unwrapped.state: (th1, th2, dth1, dth2).
  std::vector<double> GetState() const override { return {s_, s_ + 4}; }
  void SetState(const std::vector<double>& s) override {
    if (s.size() != 4) throw std::invalid_argument("Acrobot state has 4 values (th1, th2, dth1, dth2)");
    // Only the states a step can leave: Wrap moves an angle by one turn per pass (gymnasium's loop), so an angle
    // far out (or one a huge velocity sends far out in the next step) would take ~|angle| / 2pi passes, forever
    // once a turn is below the angle's precision.
    const double bound[4] = {M_PI, M_PI, kMaxVel1, kMaxVel2};
    static const char* const kNames[4] = {"th1", "th2", "dth1", "dth2"};
    for (int i = 0; i < 4; ++i) {
      if (!(std::abs(s[i]) <= bound[i])) {
        throw std::invalid_argument(std::string("Acrobot state: ") + kNames[i] + " must be in [-" +
                                    std::to_string(bound[i]) + ", " + std::to_string(bound[i]) + "], got " +
                                    std::to_string(s[i]));
      }
    }
    for (int i = 0; i < 4; ++i) s_[i] = s[i];
  }

 private:
  // gymnasium's _dsdt ("book" variant), with its operation order.
  static std::array<double, 5> Derivs(const std::array<double, 5>& y) {
    const double th1 = y[0], th2 = y[1], dth1 = y[2], dth2 = y[3], a = y[4];
    const double d1 =
        kM1 * (kLc1 * kLc1) + kM2 * (kL1 * kL1 + kLc2 * kLc2 + 2 * kL1 * kLc2 * std::cos(th2)) + kI1 + kI2;
    const double d2 = kM2 * (kLc2 * kLc2 + kL1 * kLc2 * std::cos(th2)) + kI2;  // constants**2 are exact
    const double phi2 = kM2 * kLc2 * kG * std::cos(th1 + th2 - M_PI / 2.0);
    const double phi1 = -kM2 * kL1 * kLc2 * PyPow2(dth2) * std::sin(th2) -
                        2 * kM2 * kL1 * kLc2 * dth2 * dth1 * std::sin(th2) +
                        (kM1 * kLc1 + kM2 * kL1) * kG * std::cos(th1 - M_PI / 2) + phi2;
    const double ddth2 = (a + d2 / d1 * phi1 - kM2 * kL1 * kLc2 * PyPow2(dth1) * std::sin(th2) - phi2) /
                         (kM2 * (kLc2 * kLc2) + kI2 - PyPow2(d2) / d1);
    const double ddth1 = -(d2 * ddth2 + phi1) / d1;
    return {dth1, dth2, ddth1, ddth2, 0.0};
  }
  static double Wrap(double x, double m, double big_m) {
    const double diff = big_m - m;
    while (x > big_m) x = x - diff;
    while (x < m) x = x + diff;
    return x;
  }
  void Write(Output& out) {
    float* o = out.Obs<float>(0);
    o[0] = static_cast<float>(std::cos(s_[0]));
    o[1] = static_cast<float>(std::sin(s_[0]));
    o[2] = static_cast<float>(std::cos(s_[1]));
    o[3] = static_cast<float>(std::sin(s_[1]));
    o[4] = static_cast<float>(s_[2]);
    o[5] = static_cast<float>(s_[3]);
    float* st = out.Info<float>(0);
    st[0] = static_cast<float>(s_[0]);
    st[1] = static_cast<float>(s_[1]);
  }
  double s_[4] = {0, 0, 0, 0};
};

}  // namespace pp::classic_control
