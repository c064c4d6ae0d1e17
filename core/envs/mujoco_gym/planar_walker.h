// Hopper-v4/v5 and Walker2d-v4/v5: one implementation (gymnasium 1.4's hopper_v4/v5.py, walker2d_v4/v5.py;
// Walker2d-v5 uses walker2d_v5.xml, whose feet have equal friction):
// reward = forward_reward_weight * x velocity + healthy reward - ctrl cost; observation qpos[1:] (or all) and
// qvel clipped to [velocity_min, velocity_max]; healthy = z and the torso angle strictly inside their ranges
// (Hopper: and qpos[2:], qvel strictly inside the healthy_state range).
// v4 vs v5: legacy_healthy_reward (v4 pays the healthy reward even when unhealthy if terminate_when_unhealthy)
// and the info fields (v4: x_position, x_velocity; v5 adds z_distance_from_origin and the reward terms).
// gymnasium -> config names: healthy_state_range -> healthy_state_min/max (Hopper), healthy_z_range ->
// healthy_z_min/max, healthy_angle_range -> healthy_angle_min/max; the observed velocity clip (-10, 10) is
// velocity_min/max.
#pragma once

#include "core/envs/mujoco_gym/mujoco_env.h"

namespace pp::mujoco_gym {

template <int V, bool kHopper>
class PlanarWalkerEnv : public MujocoTask<PlanarWalkerEnv<V, kHopper>> {
  using Base = MujocoTask<PlanarWalkerEnv<V, kHopper>>;
  using Base::d_, Base::m_, Base::n_, Base::p_, Base::info_;

 public:
  static constexpr const char* kName =
      kHopper ? (V == 4 ? "Hopper-v4" : "Hopper-v5") : (V == 4 ? "Walker2d-v4" : "Walker2d-v5");
  static std::vector<ConfigKey> ConfigKeys() {
    const char* xml = kHopper ? "hopper.xml" : (V == 4 ? "walker2d.xml" : "walker2d_v5.xml");
    const double z_min = kHopper ? 0.7 : 0.8, z_max = kHopper ? kInf : 2.0, angle = kHopper ? 0.2 : 1.0;
    auto keys = TaskKeys(
        V, xml, 4, 1000, kHopper ? 3800.0 : kInf,
        {TerminateKey(), LegacyHealthyKey(V), ExcludePositionsKey("x"), ForwardWeightKey(1.0), CtrlWeightKey(1e-3),
         HealthyRewardKey(1.0), MinKey("healthy_z", z_min, "healthy torso height (exclusive)"),
         MaxKey("healthy_z", z_max, "healthy torso height (exclusive)"),
         MinKey("healthy_angle", -angle, "healthy torso angle (exclusive)"),
         MaxKey("healthy_angle", angle, "healthy torso angle (exclusive)"),
         MinKey("velocity", -10.0, "observed qvel clip"), MaxKey("velocity", 10.0, "observed qvel clip"),
         ResetNoiseKey(5e-3, false)});
    if (kHopper) {  // gymnasium's healthy_state_range
      keys.push_back(MinKey("healthy_state", -100.0, "healthy qpos[2:] and qvel (exclusive)"));
      keys.push_back(MaxKey("healthy_state", 100.0, "healthy qpos[2:] and qvel (exclusive)"));
    }
    return keys;
  }
  static std::vector<const char*> InfoNames() {
    if (V == 4) return {"x_position", "x_velocity"};
    return {"x_position", "z_distance_from_origin", "x_velocity", "reward_forward", "reward_ctrl", "reward_survive"};
  }
  static int ObsDim(const Config& c, const mjModel* m) {
    return Dims(m).nq + Dims(m).nv - (c.Get<bool>("exclude_current_positions_from_observation") ? 1 : 0);
  }

  PlanarWalkerEnv(const Config& c, int env_id, uint64_t seed)
      : Base(c, env_id, seed, /*normal_qvel=*/false),
        angle_(ReadRange(c, "healthy_angle")),
        velocity_(ReadRange(c, "velocity")),
        state_(kHopper ? ReadRange(c, "healthy_state") : Range{0.0, 0.0}) {}

  void Reset(Output& out) override {
    this->ResetWithNoise(out);
    info_.Set(out, {{kXPosition, d_->qpos[0]}, {kZDistanceFromOrigin, d_->qpos[1] - m_->qpos0[1]}});
  }

  void Step(const ActionView& action, Output& out) override {
    const auto m = this->Locomote(action.Get<double>(0), d_->qpos, false);
    const bool healthy = IsHealthy();
    const double healthy_reward = p_.HealthyReward(healthy);
    out.SetReward((m.forward + healthy_reward) - m.ctrl_cost);
    out.SetTerminated(!healthy && p_.terminate);
    this->WriteObs(out, false);
    info_.Set(out, {{kXPosition, m.x},
                    {kZDistanceFromOrigin, d_->qpos[1] - m_->qpos0[1]},
                    {kXVelocity, m.xv},
                    {kRewardForward, m.forward},
                    {kRewardCtrl, -m.ctrl_cost},
                    {kRewardSurvive, healthy_reward}});
  }

  void WriteFrame(double* o) { PutClipped(this->PutQpos(o, 1), d_->qvel, n_.nv, velocity_.min, velocity_.max); }

 private:
  bool IsHealthy() const {
    const double z = d_->qpos[1], angle = d_->qpos[2];
    if (kHopper) {
      for (int i = 2; i < n_.nq; ++i) {
        if (!(state_.min < d_->qpos[i] && d_->qpos[i] < state_.max)) return false;
      }
      for (int i = 0; i < n_.nv; ++i) {
        if (!(state_.min < d_->qvel[i] && d_->qvel[i] < state_.max)) return false;
      }
    }
    return p_.z_min < z && z < p_.z_max && angle_.min < angle && angle < angle_.max;
  }

  Range angle_, velocity_, state_;
};

template <int V>
using HopperEnv = PlanarWalkerEnv<V, true>;
template <int V>
using Walker2dEnv = PlanarWalkerEnv<V, false>;

}  // namespace pp::mujoco_gym
