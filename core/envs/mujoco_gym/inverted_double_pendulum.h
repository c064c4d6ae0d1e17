// InvertedDoublePendulum-v4 / -v5, aligned with gymnasium 1.4's inverted_double_pendulum_v4.py / _v5.py.
// Observation: qpos[0], sin(qpos[1:]), cos(qpos[1:]), clip(qvel), clip(qfrc_constraint)[:constraint_obs_dim]
// (v4: 3, v5: 1; clip range [observation_min, observation_max]). Terminates when the tip's height
// site_xpos[0].z <= healthy_z_max. reward = alive bonus - 0.01 x^2 - (y - 2)^2 - 1e-3 v1^2 - 5e-3 v2^2 where the
// alive bonus (healthy_reward) is paid on every step in v4 and only on non-terminal steps in v5.
#pragma once

#include "core/envs/mujoco_gym/mujoco_env.h"

namespace pp::mujoco_gym {

template <int V>
class InvertedDoublePendulumEnv : public MujocoTask<InvertedDoublePendulumEnv<V>> {
  using Base = MujocoTask<InvertedDoublePendulumEnv<V>>;
  using Base::d_, Base::m_, Base::n_, Base::p_, Base::info_;
  static int ConstraintDim(const Config& c, const mjModel* m) {
    return IntInRange(c, "constraint_obs_dim", 0, Dims(m).nv);
  }

 public:
  static constexpr const char* kName = V == 4 ? "InvertedDoublePendulum-v4" : "InvertedDoublePendulum-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    return TaskKeys(V, "inverted_double_pendulum.xml", 5, 1000, 9100.0,
                    {HealthyRewardKey(10.0),
                     RewardIfNotTerminatedKey(V),
                     {"constraint_obs_dim", int64_t{V == 4 ? 3 : 1}, "observed entries of qfrc_constraint", {}},
                     {"healthy_z_max", 1.0, "terminate when the tip height is <= this", {}},
                     MinKey("observation", -10.0, "qvel and qfrc_constraint clip"),
                     MaxKey("observation", 10.0, "qvel and qfrc_constraint clip"),
                     ResetNoiseKey(0.1, true)});
  }
  static std::vector<const char*> InfoNames() {
    if (V == 4) return {};
    return {"reward_survive", "distance_penalty", "velocity_penalty"};
  }
  static int ObsDim(const Config& c, const mjModel* m) {
    const Dims d(m);
    return 1 + 2 * (d.nq - 1) + d.nv + ConstraintDim(c, m);
  }

  InvertedDoublePendulumEnv(const Config& c, int env_id, uint64_t seed)
      : Base(c, env_id, seed, /*normal_qvel=*/true),
        constraint_dim_(ConstraintDim(c, m_)),
        clip_(ReadRange(c, "observation")) {
    if (m_->nsite < 1) throw std::invalid_argument("the InvertedDoublePendulum model needs a site (the tip)");
    if (n_.nv < 3) throw std::invalid_argument("the InvertedDoublePendulum model needs 3 degrees of freedom");
  }

  void Reset(Output& out) override { this->ResetWithNoise(out); }

  void Step(const ActionView& action, Output& out) override {
    this->Simulate(action.Get<double>(0), false);
    const double x = d_->site_xpos[0], y = d_->site_xpos[2];
    this->WriteObs(out, false);
    const bool terminated = y <= p_.z_max;
    const double v1 = d_->qvel[1], v2 = d_->qvel[2];
    const double dist_penalty = 0.01 * (x * x) + (y - 2) * (y - 2);
    const double vel_penalty = 1e-3 * (v1 * v1) + 5e-3 * (v2 * v2);
    const double alive = (p_.if_not_terminated && terminated) ? 0.0 : p_.healthy_reward;
    out.SetReward(alive - dist_penalty - vel_penalty);
    out.SetTerminated(terminated);
    info_.Set(out, {{kRewardSurvive, alive}, {kDistancePenalty, -dist_penalty}, {kVelocityPenalty, -vel_penalty}});
  }

  void WriteFrame(double* o) {
    *o++ = d_->qpos[0];
    for (int i = 1; i < n_.nq; ++i) *o++ = std::sin(d_->qpos[i]);
    for (int i = 1; i < n_.nq; ++i) *o++ = std::cos(d_->qpos[i]);
    o = PutClipped(o, d_->qvel, n_.nv, clip_.min, clip_.max);
    PutClipped(o, d_->qfrc_constraint, constraint_dim_, clip_.min, clip_.max);
  }

 private:
  int constraint_dim_;
  Range clip_;
};

}  // namespace pp::mujoco_gym
