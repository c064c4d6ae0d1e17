// Swimmer-v4 / Swimmer-v5, aligned with gymnasium 1.4's swimmer_v4.py / swimmer_v5.py.
// The versions differ only in info names (v4: reward_fwd, forward_reward; v5: reward_forward).
#pragma once

#include "core/envs/mujoco_gym/mujoco_env.h"

namespace pp::mujoco_gym {

template <int V>
class SwimmerEnv : public MujocoEnv {
  enum Field { kX, kY, kDist, kXVel, kYVel, kRewardForward, kRewardFwd, kForwardReward, kRewardCtrl, kNumFields };
  static constexpr std::array<const char*, kNumFields> kFields = {
      "x_position", "y_position", "distance_from_origin", "x_velocity", "y_velocity",
      "reward_forward", "reward_fwd", "forward_reward", "reward_ctrl"};
  static std::vector<const char*> InfoNames() {
    if (V == 4) {
      return {"reward_fwd", "reward_ctrl", "x_position", "y_position", "distance_from_origin", "x_velocity",
              "y_velocity", "forward_reward"};
    }
    return {"x_position", "y_position", "distance_from_origin", "x_velocity", "y_velocity",
            "reward_forward", "reward_ctrl", "reward_fwd"};
  }
  static int ObsDim(const Config& c, const mjModel* m) {
    const Dims d(m);
    return d.nq + d.nv - (c.Get<bool>("exclude_current_positions_from_observation") ? 2 : 0);
  }

 public:
  static constexpr const char* kName = V == 4 ? "Swimmer-v4" : "Swimmer-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    auto k = BaseKeys("swimmer.xml", 4, 1000, 360.0);
    std::vector<ConfigKey> own = {
        {"exclude_current_positions_from_observation", true, "drop the root x, y from the observation", {}},
        {"forward_reward_weight", 1.0, "weight of the x velocity reward", {}},
        {"ctrl_cost_weight", 1e-4, "weight of the control cost", {}},
        {"reset_noise_scale", 0.1, "qpos += U(-s, s), qvel = U(-s, s) on reset", {}},
    };
    k.insert(k.end(), own.begin(), own.end());
    return k;
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    ModelPtr m = LoadModel(c);
    DefineCommonSpec(c, b, m.get(), ObsDim(c, m.get()), InfoNames());
  }

  SwimmerEnv(const Config& c, int env_id, uint64_t seed)
      : MujocoEnv(c, env_id, seed),
        info_(kFields, InfoNames()),
        no_pos_(c.Get<bool>("exclude_current_positions_from_observation")),
        forward_w_(c.Get<double>("forward_reward_weight")),
        ctrl_w_(c.Get<double>("ctrl_cost_weight")),
        noise_(c.Get<double>("reset_noise_scale")) {
    SetObsDim(ObsDim(c, m_));
  }

  void Reset(Output& out) override {
    ResetData();
    ResetUniformNoise(noise_, /*normal_qvel=*/false);
    Forward();
    WriteObs(out, true);
    for (int f = 0; f < kNumFields; ++f) info_.Set(out, f, 0.0);
    const double x = d_->qpos[0], y = d_->qpos[1];
    info_.Set(out, kX, x);
    info_.Set(out, kY, y);
    info_.Set(out, kDist, std::sqrt(x * x + y * y));
  }

  void Step(const ActionView& action, Output& out) override {
    const double* a = action.Get<double>(0);
    const double x0 = d_->qpos[0], y0 = d_->qpos[1];
    Simulate(a, false);
    const double x1 = d_->qpos[0], y1 = d_->qpos[1];
    const double xv = (x1 - x0) / dt_, yv = (y1 - y0) / dt_;
    const double forward = forward_w_ * xv;
    const double ctrl_cost = ctrl_w_ * SumSquares(a, n_.nu);
    out.SetReward(forward - ctrl_cost);
    WriteObs(out, false);
    info_.Set(out, kX, x1);
    info_.Set(out, kY, y1);
    info_.Set(out, kDist, std::sqrt(x1 * x1 + y1 * y1));
    info_.Set(out, kXVel, xv);
    info_.Set(out, kYVel, yv);
    info_.Set(out, kRewardForward, forward);
    info_.Set(out, kRewardFwd, forward);
    info_.Set(out, kForwardReward, forward);
    info_.Set(out, kRewardCtrl, -ctrl_cost);
  }

 private:
  void WriteObs(Output& out, bool reset) {
    double* o = ObsBegin(out);
    o = Put(o, d_->qpos + (no_pos_ ? 2 : 0), n_.nq - (no_pos_ ? 2 : 0));
    Put(o, d_->qvel, n_.nv);
    ObsEnd(out, reset);
  }

  InfoFields<kNumFields> info_;
  bool no_pos_;
  double forward_w_, ctrl_w_, noise_;
};

}  // namespace pp::mujoco_gym
