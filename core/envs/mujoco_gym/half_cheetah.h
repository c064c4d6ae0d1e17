// HalfCheetah-v4 / HalfCheetah-v5, aligned with gymnasium 1.4's half_cheetah_v4.py / half_cheetah_v5.py.
// The two versions differ only in their info names (v4: reward_run; v5: reward_forward; both are provided).
#pragma once

#include "core/envs/mujoco_gym/mujoco_env.h"

namespace pp::mujoco_gym {

template <int V>
class HalfCheetahEnv : public MujocoTask<HalfCheetahEnv<V>> {
  using Base = MujocoTask<HalfCheetahEnv<V>>;
  using Base::d_, Base::n_, Base::p_, Base::info_;

 public:
  static constexpr const char* kName = V == 4 ? "HalfCheetah-v4" : "HalfCheetah-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    return TaskKeys(V, "half_cheetah.xml", 5, 1000, 4800.0,
                    {ExcludePositionsKey("x"), ForwardWeightKey(1.0), CtrlWeightKey(0.1), ResetNoiseKey(0.1, true)});
  }
  static std::vector<const char*> InfoNames() {
    if (V == 4) return {"x_position", "x_velocity", "reward_run", "reward_ctrl"};
    return {"x_position", "x_velocity", "reward_forward", "reward_ctrl", "reward_run"};
  }
  static int ObsDim(const Config& c, const mjModel* m) {
    return Dims(m).nq + Dims(m).nv - (c.Get<bool>("exclude_current_positions_from_observation") ? 1 : 0);
  }

  HalfCheetahEnv(const Config& c, int env_id, uint64_t seed) : Base(c, env_id, seed, /*normal_qvel=*/true) {}

  void Reset(Output& out) override {
    this->ResetWithNoise(out);
    info_.Set(out, kXPosition, d_->qpos[0]);
  }

  void Step(const ActionView& action, Output& out) override {
    const auto m = this->Locomote(action.Get<double>(0), d_->qpos, false);
    out.SetReward(m.forward - m.ctrl_cost);
    this->WriteObs(out, false);
    info_.Set(out, {{kXPosition, m.x},
                    {kXVelocity, m.xv},
                    {kRewardForward, m.forward},
                    {kRewardRun, m.forward},
                    {kRewardCtrl, -m.ctrl_cost}});
  }

  void WriteFrame(double* o) { Put(this->PutQpos(o, 1), d_->qvel, n_.nv); }
};

}  // namespace pp::mujoco_gym
