// Swimmer-v4 / Swimmer-v5, aligned with gymnasium 1.4's swimmer_v4.py / swimmer_v5.py.
// The versions differ only in info names (v4: reward_fwd, forward_reward; v5: reward_forward).
#pragma once

#include "core/envs/mujoco_gym/mujoco_env.h"

namespace pp::mujoco_gym {

template <int V>
class SwimmerEnv : public MujocoTask<SwimmerEnv<V>> {
  using Base = MujocoTask<SwimmerEnv<V>>;
  using Base::d_, Base::n_, Base::p_, Base::info_;

 public:
  static constexpr const char* kName = V == 4 ? "Swimmer-v4" : "Swimmer-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    return TaskKeys(
        V, "swimmer.xml", 4, 1000, 360.0,
        {ExcludePositionsKey("x, y"), ForwardWeightKey(1.0), CtrlWeightKey(1e-4), ResetNoiseKey(0.1, false)});
  }
  static std::vector<const char*> InfoNames() {
    if (V == 4) {
      return {"reward_fwd",           "reward_ctrl", "x_position", "y_position",
              "distance_from_origin", "x_velocity",  "y_velocity", "forward_reward"};
    }
    return {"x_position", "y_position",     "distance_from_origin", "x_velocity",
            "y_velocity", "reward_forward", "reward_ctrl",          "reward_fwd"};
  }
  static int ObsDim(const Config& c, const mjModel* m) {
    return Dims(m).nq + Dims(m).nv - (c.Get<bool>("exclude_current_positions_from_observation") ? 2 : 0);
  }

  SwimmerEnv(const Config& c, int env_id, uint64_t seed) : Base(c, env_id, seed, /*normal_qvel=*/false) {}

  void Reset(Output& out) override {
    this->ResetWithNoise(out);
    info_.SetPlanePosition(out, d_->qpos[0], d_->qpos[1]);
  }

  void Step(const ActionView& action, Output& out) override {
    const auto m = this->Locomote(action.Get<double>(0), d_->qpos, false);
    out.SetReward(m.forward - m.ctrl_cost);
    this->WriteObs(out, false);
    info_.SetPlanePosition(out, m.x, m.y);
    info_.Set(out, {{kXVelocity, m.xv},
                    {kYVelocity, m.yv},
                    {kRewardForward, m.forward},
                    {kRewardFwd, m.forward},
                    {kForwardReward, m.forward},
                    {kRewardCtrl, -m.ctrl_cost}});
  }

  void WriteFrame(double* o) { Put(this->PutQpos(o, 2), d_->qvel, n_.nv); }
};

}  // namespace pp::mujoco_gym
