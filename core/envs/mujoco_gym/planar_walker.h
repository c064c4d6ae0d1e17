// Hopper and Walker2d share one implementation (gymnasium 1.4's hopper_v4/v5.py, walker2d_v4/v5.py):
// reward = forward_reward_weight * x velocity + healthy reward - ctrl cost; observation qpos[1:] (or all) and
// qvel clipped to [velocity_min, velocity_max]; healthy = z and the torso angle strictly inside their ranges
// (Hopper: and qpos[2:], qvel strictly inside the healthy_state range).
// v4 vs v5: legacy_healthy_reward (v4 pays the healthy reward even when unhealthy if terminate_when_unhealthy)
// and the info fields (v4: x_position, x_velocity; v5 adds z_distance_from_origin and the reward terms).
#pragma once

#include "core/envs/mujoco_gym/mujoco_env.h"

namespace pp::mujoco_gym {

template <int V, bool kHopper>
class PlanarWalkerEnv : public MujocoEnv {
  enum Field { kX, kZDist, kXVel, kRewardForward, kRewardCtrl, kRewardSurvive, kNumFields };
  static constexpr std::array<const char*, kNumFields> kFields = {
      "x_position", "z_distance_from_origin", "x_velocity", "reward_forward", "reward_ctrl", "reward_survive"};
  static int ObsDim(const Config& c, const mjModel* m) {
    const Dims d(m);
    return d.nq + d.nv - (c.Get<bool>("exclude_current_positions_from_observation") ? 1 : 0);
  }

 public:
  static std::vector<const char*> InfoNames() {
    if (V == 4) return {"x_position", "x_velocity"};
    return {"x_position", "z_distance_from_origin", "x_velocity", "reward_forward", "reward_ctrl", "reward_survive"};
  }
  static std::vector<ConfigKey> CommonKeys(const char* xml, int frame_skip, double threshold, double ctrl_w,
                                           double z_min, double z_max, double angle, double noise) {
    auto k = BaseKeys(xml, frame_skip, 1000, threshold);
    std::vector<ConfigKey> own = {
        {"terminate_when_unhealthy", true, "terminate when unhealthy", {}},
        {"legacy_healthy_reward", V == 4, "v4: healthy reward also when unhealthy if terminate_when_unhealthy", {}},
        {"exclude_current_positions_from_observation", true, "drop the root x from the observation", {}},
        {"forward_reward_weight", 1.0, "weight of the x velocity reward", {}},
        {"ctrl_cost_weight", ctrl_w, "weight of the control cost", {}},
        {"healthy_reward", 1.0, "reward per healthy step", {}},
        {"healthy_z_min", z_min, "healthy torso height range (exclusive)", {}},
        {"healthy_z_max", z_max, "healthy torso height range (exclusive)", {}},
        {"healthy_angle_min", -angle, "healthy torso angle range (exclusive)", {}},
        {"healthy_angle_max", angle, "healthy torso angle range (exclusive)", {}},
        {"velocity_min", -10.0, "observed qvel is clipped to [velocity_min, velocity_max]", {}},
        {"velocity_max", 10.0, "observed qvel is clipped to [velocity_min, velocity_max]", {}},
        {"reset_noise_scale", noise, "qpos += U(-s, s), qvel = U(-s, s) on reset", {}},
    };
    if (kHopper) {
      own.push_back({"healthy_state_min", -100.0, "healthy range of qpos[2:] and qvel (exclusive)", {}});
      own.push_back({"healthy_state_max", 100.0, "healthy range of qpos[2:] and qvel (exclusive)", {}});
    }
    k.insert(k.end(), own.begin(), own.end());
    return k;
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    ModelPtr m = LoadModel(c);
    DefineCommonSpec(c, b, m.get(), ObsDim(c, m.get()), InfoNames());
  }

  PlanarWalkerEnv(const Config& c, int env_id, uint64_t seed)
      : MujocoEnv(c, env_id, seed),
        info_(kFields, InfoNames()),
        terminate_(c.Get<bool>("terminate_when_unhealthy")),
        legacy_healthy_(c.Get<bool>("legacy_healthy_reward")),
        no_pos_(c.Get<bool>("exclude_current_positions_from_observation")),
        forward_w_(c.Get<double>("forward_reward_weight")),
        ctrl_w_(c.Get<double>("ctrl_cost_weight")),
        healthy_reward_(c.Get<double>("healthy_reward")),
        z_min_(c.Get<double>("healthy_z_min")),
        z_max_(c.Get<double>("healthy_z_max")),
        angle_min_(c.Get<double>("healthy_angle_min")),
        angle_max_(c.Get<double>("healthy_angle_max")),
        vel_min_(c.Get<double>("velocity_min")),
        vel_max_(c.Get<double>("velocity_max")),
        state_min_(kHopper ? c.Get<double>("healthy_state_min") : 0.0),
        state_max_(kHopper ? c.Get<double>("healthy_state_max") : 0.0),
        noise_(c.Get<double>("reset_noise_scale")) {
    SetObsDim(ObsDim(c, m_));
  }

  void Reset(Output& out) override {
    ResetData();
    ResetUniformNoise(noise_, /*normal_qvel=*/false);
    Forward();
    WriteObs(out, true);
    for (int f = 0; f < kNumFields; ++f) info_.Set(out, f, 0.0);
    info_.Set(out, kX, d_->qpos[0]);
    info_.Set(out, kZDist, d_->qpos[1] - m_->qpos0[1]);
  }

  void Step(const ActionView& action, Output& out) override {
    const double* a = action.Get<double>(0);
    const double x0 = d_->qpos[0];
    Simulate(a, false);
    const double x1 = d_->qpos[0];
    const double xv = (x1 - x0) / dt_;
    const bool healthy = IsHealthy();
    const double forward = forward_w_ * xv;
    const double healthy_reward = (healthy || (legacy_healthy_ && terminate_)) ? healthy_reward_ : 0.0;
    const double ctrl_cost = ctrl_w_ * SumSquares(a, n_.nu);
    out.SetReward((forward + healthy_reward) - ctrl_cost);
    out.SetTerminated(!healthy && terminate_);
    WriteObs(out, false);
    info_.Set(out, kX, x1);
    info_.Set(out, kZDist, d_->qpos[1] - m_->qpos0[1]);
    info_.Set(out, kXVel, xv);
    info_.Set(out, kRewardForward, forward);
    info_.Set(out, kRewardCtrl, -ctrl_cost);
    info_.Set(out, kRewardSurvive, healthy_reward);
  }

 private:
  bool IsHealthy() const {
    const double z = d_->qpos[1], angle = d_->qpos[2];
    if (kHopper) {
      for (int i = 2; i < n_.nq; ++i) {
        if (!(state_min_ < d_->qpos[i] && d_->qpos[i] < state_max_)) return false;
      }
      for (int i = 0; i < n_.nv; ++i) {
        if (!(state_min_ < d_->qvel[i] && d_->qvel[i] < state_max_)) return false;
      }
    }
    return z_min_ < z && z < z_max_ && angle_min_ < angle && angle < angle_max_;
  }
  void WriteObs(Output& out, bool reset) {
    double* o = ObsBegin(out);
    o = Put(o, d_->qpos + (no_pos_ ? 1 : 0), n_.nq - (no_pos_ ? 1 : 0));
    PutClipped(o, d_->qvel, n_.nv, vel_min_, vel_max_);
    ObsEnd(out, reset);
  }

  InfoFields<kNumFields> info_;
  bool terminate_, legacy_healthy_, no_pos_;
  double forward_w_, ctrl_w_, healthy_reward_, z_min_, z_max_, angle_min_, angle_max_, vel_min_, vel_max_;
  double state_min_, state_max_, noise_;
};

}  // namespace pp::mujoco_gym
