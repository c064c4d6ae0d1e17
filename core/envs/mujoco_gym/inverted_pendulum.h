// InvertedPendulum-v4 / InvertedPendulum-v5, aligned with gymnasium 1.4's inverted_pendulum_v4.py / _v5.py.
// Terminates when the observation is not finite or the pole angle qpos[1] leaves [healthy_z_min, healthy_z_max]
// (gymnasium: |angle| > 0.2). v4 pays healthy_reward on every step; v5 only when not terminated
// (reward_if_not_terminated).
#pragma once

#include "core/envs/mujoco_gym/mujoco_env.h"

namespace pp::mujoco_gym {

template <int V>
class InvertedPendulumEnv : public MujocoTask<InvertedPendulumEnv<V>> {
  using Base = MujocoTask<InvertedPendulumEnv<V>>;
  using Base::d_, Base::n_, Base::p_, Base::info_;

 public:
  static constexpr const char* kName = V == 4 ? "InvertedPendulum-v4" : "InvertedPendulum-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    return TaskKeys(V, "inverted_pendulum.xml", 2, 1000, 950.0,
                    {HealthyRewardKey(1.0), RewardIfNotTerminatedKey(V),
                     MinKey("healthy_z", -0.2, "healthy pole angle (inclusive)"),
                     MaxKey("healthy_z", 0.2, "healthy pole angle (inclusive)"), ResetNoiseKey(0.01, false)});
  }
  static std::vector<const char*> InfoNames() {
    if (V == 4) return {};
    return {"reward_survive"};
  }
  static int ObsDim(const Config&, const mjModel* m) { return Dims(m).nq + Dims(m).nv; }

  InvertedPendulumEnv(const Config& c, int env_id, uint64_t seed) : Base(c, env_id, seed, /*normal_qvel=*/false) {}

  void Reset(Output& out) override { this->ResetWithNoise(out); }

  void Step(const ActionView& action, Output& out) override {
    this->Simulate(action.Get<double>(0), false);
    this->WriteObs(out, false);
    const double angle = d_->qpos[1];
    const bool terminated = !this->StateFinite() || angle < p_.z_min || angle > p_.z_max;
    const double reward = (p_.if_not_terminated && terminated) ? 0.0 : p_.healthy_reward;
    out.SetReward(reward);
    out.SetTerminated(terminated);
    info_.Set(out, kRewardSurvive, reward);
  }

  void WriteFrame(double* o) { Put(Put(o, d_->qpos, n_.nq), d_->qvel, n_.nv); }
};

}  // namespace pp::mujoco_gym
