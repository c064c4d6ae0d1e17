// HalfCheetah-v4 / HalfCheetah-v5, aligned with gymnasium 1.4's half_cheetah_v4.py / half_cheetah_v5.py.
// The two versions differ only in their info names (v4: reward_run; v5: reward_forward; both are provided).
#pragma once

#include "core/envs/mujoco_gym/mujoco_env.h"

namespace pp::mujoco_gym {

template <int V>
class HalfCheetahEnv : public MujocoEnv {
  enum Field { kX, kXVel, kRewardForward, kRewardRun, kRewardCtrl, kNumFields };
  static constexpr std::array<const char*, kNumFields> kFields = {"x_position", "x_velocity", "reward_forward",
                                                                  "reward_run", "reward_ctrl"};
  static std::vector<const char*> InfoNames() {
    if (V == 4) return {"x_position", "x_velocity", "reward_run", "reward_ctrl"};
    return {"x_position", "x_velocity", "reward_forward", "reward_ctrl", "reward_run"};
  }
  static int ObsDim(const Config& c, const mjModel* m) {
    const Dims d(m);
    return d.nq + d.nv - (c.Get<bool>("exclude_current_positions_from_observation") ? 1 : 0);
  }

 public:
  static constexpr const char* kName = V == 4 ? "HalfCheetah-v4" : "HalfCheetah-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    auto k = BaseKeys("half_cheetah.xml", 5, 1000, 4800.0);
    std::vector<ConfigKey> own = {
        {"exclude_current_positions_from_observation", true, "drop the root x from the observation", {}},
        {"forward_reward_weight", 1.0, "weight of the x velocity reward", {}},
        {"ctrl_cost_weight", 0.1, "weight of the control cost", {}},
        {"reset_noise_scale", 0.1, "qpos += U(-s, s), qvel = s * N(0, 1) on reset", {}},
    };
    k.insert(k.end(), own.begin(), own.end());
    return k;
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    ModelPtr m = LoadModel(c);
    DefineCommonSpec(c, b, m.get(), ObsDim(c, m.get()), InfoNames());
  }

  HalfCheetahEnv(const Config& c, int env_id, uint64_t seed)
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
    ResetUniformNoise(noise_, /*normal_qvel=*/true);
    Forward();
    WriteObs(out, true);
    for (int f = 0; f < kNumFields; ++f) info_.Set(out, f, 0.0);
    info_.Set(out, kX, d_->qpos[0]);
  }

  void Step(const ActionView& action, Output& out) override {
    const double* a = action.Get<double>(0);
    const double x0 = d_->qpos[0];
    Simulate(a, false);
    const double x1 = d_->qpos[0];
    const double xv = (x1 - x0) / dt_;
    const double forward = forward_w_ * xv;
    const double ctrl_cost = ctrl_w_ * SumSquares(a, n_.nu);
    out.SetReward(forward - ctrl_cost);
    WriteObs(out, false);
    info_.Set(out, kX, x1);
    info_.Set(out, kXVel, xv);
    info_.Set(out, kRewardForward, forward);
    info_.Set(out, kRewardRun, forward);
    info_.Set(out, kRewardCtrl, -ctrl_cost);
  }

 private:
  void WriteObs(Output& out, bool reset) {
    double* o = ObsBegin(out);
    o = Put(o, d_->qpos + (no_pos_ ? 1 : 0), n_.nq - (no_pos_ ? 1 : 0));
    Put(o, d_->qvel, n_.nv);
    ObsEnd(out, reset);
  }

  InfoFields<kNumFields> info_;
  bool no_pos_;
  double forward_w_, ctrl_w_, noise_;
};

}  // namespace pp::mujoco_gym
