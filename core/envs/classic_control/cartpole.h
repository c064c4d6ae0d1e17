// CartPole-v0/v1, aligned with gymnasium.envs.classic_control.CartPoleEnv (Euler integration,
// float64 state, float32 observation, reward 1 on every step including the terminating one).
//
// CartPoleEnv<true> is phys2d/CartPole-v0/v1, aligned with gymnasium's functional jax env
// (gymnasium.envs.phys2d.cartpole): the same Euler step, but computed in float32 (jax's default) and with that
// env's pole-mass-length constant, masspole + length = 0.6 (the classic env has masspole * length = 0.05), so its
// pole is twelve times as heavy in the coupling terms. EnvPool 1.2.5 registers these ids on its classic CartPole.
#pragma once

#include <cmath>
#include <random>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"

namespace pp::classic_control {

template <bool kPhys2d>
class CartPoleEnv : public Env {
  using Real = std::conditional_t<kPhys2d, float, double>;

 public:
  static constexpr const char* kName = kPhys2d ? "phys2d/CartPole" : "CartPole";
  static std::vector<ConfigKey> ConfigKeys() {
    return {{"max_episode_steps", int64_t{500}, "truncate after this many steps", {}},
            {"reward_threshold", 475.0, "solved score", {}},
            {"sutton_barto_reward", false, "reward 0 per step and -1 on termination (gymnasium's kwarg)", {}}};
  }
  static void DefineSpec(const Config&, SpecBuilder& b) {
    const double x = 2.4 * 2, th = 12 * 2 * M_PI / 360 * 2;
    if (kPhys2d) {  // the functional env's space is unbounded
      b.Obs("obs", DType::kFloat32, {4}, {-kInf}, {kInf});
    } else {
      b.Obs("obs", DType::kFloat32, {4}, {-x, -kInf, -th, -kInf}, {x, kInf, th, kInf});
    }
    b.DiscreteAction(2);
  }

  CartPoleEnv(const Config& c, int env_id, uint64_t seed)
      : Env(c, env_id, seed), sutton_barto_(c.Get<bool>("sutton_barto_reward")) {}

  void Reset(Output& out) override {
    std::uniform_real_distribution<Real> u(-0.05, 0.05);
    for (Real& v : s_) v = u(gen_);
    Write(out.Obs<float>(0));
  }

  void Step(const ActionView& action, Output& out) override {
    bool terminated = false;
    out.SetReward(Advance(action.Discrete(), &terminated));
    out.SetTerminated(terminated);
    Write(out.Obs<float>(0));
  }

  // The engine's batched path: the same Advance per env, into row i (bit-identical to Step).
  static void StepBatch(Env* const* envs, int n, const BatchRows& rows) noexcept {
    for (int i = 0; i < n; ++i) {
      auto* e = static_cast<CartPoleEnv*>(envs[i]);
      rows.SetReward(i, e->Advance(rows.Discrete(i), &rows.terminated[i]));
      e->Write(rows.Obs<float>(i));
    }
  }

  std::vector<double> GetState() const override { return {s_, s_ + 4}; }
  void SetState(const std::vector<double>& s) override {
    if (s.size() != 4) throw std::invalid_argument("CartPole state has 4 values");
    for (int i = 0; i < 4; ++i) s_[i] = static_cast<Real>(s[i]);
  }

 private:
  // One Euler step of the state; returns the reward and sets *terminated.
  double Advance(int action, bool* terminated) {
    // gymnasium's constants are Python floats; in the float32 variant jax rounds each to float32 where used.
    constexpr Real kGravity = 9.8, kMassPole = 0.1, kTotalMass = 1.0 + 0.1;
    constexpr Real kLength = 0.5, kPoleMassLength = kPhys2d ? 0.1 + 0.5 : 0.1 * 0.5, kForceMag = 10.0, kTau = 0.02;
    constexpr Real kFourThirds = 4.0 / 3.0;
    constexpr Real kThetaThreshold = 12 * 2 * M_PI / 360, kXThreshold = 2.4;
    auto outside = [&] {
      return s_[0] < -kXThreshold || s_[0] > kXThreshold || s_[2] < -kThetaThreshold || s_[2] > kThetaThreshold;
    };
    // sutton_barto_reward: -1 where the episode ends; the functional env (phys2d) tests the state before the step
    const bool was_outside = kPhys2d && outside();
    const Real force = action == 1 ? kForceMag : -kForceMag;
    const Real cos_t = std::cos(s_[2]), sin_t = std::sin(s_[2]);
    // Operation order follows gymnasium's step, so results agree to the last bit where libm does.
    const Real temp = (force + kPoleMassLength * (s_[3] * s_[3]) * sin_t) / kTotalMass;
    const Real theta_acc =
        (kGravity * sin_t - cos_t * temp) / (kLength * (kFourThirds - kMassPole * (cos_t * cos_t) / kTotalMass));
    const Real x_acc = temp - kPoleMassLength * theta_acc * cos_t / kTotalMass;
    s_[0] += kTau * s_[1];
    s_[1] += kTau * x_acc;
    s_[2] += kTau * s_[3];
    s_[3] += kTau * theta_acc;
    *terminated = outside();
    return !sutton_barto_ ? 1.0 : (kPhys2d ? was_outside : *terminated) ? -1.0 : 0.0;
  }
  void Write(float* o) const {
    for (int i = 0; i < 4; ++i) o[i] = static_cast<float>(s_[i]);
  }
  Real s_[4] = {0, 0, 0, 0};
  bool sutton_barto_;
};

}  // namespace pp::classic_control
