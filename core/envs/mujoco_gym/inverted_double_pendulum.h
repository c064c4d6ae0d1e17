// InvertedDoublePendulum-v4 / -v5, aligned with gymnasium 1.4's inverted_double_pendulum_v4.py / _v5.py.
// Observation: qpos[0], sin(qpos[1:]), cos(qpos[1:]), clip(qvel), clip(qfrc_constraint)[:constraint_obs_dim]
// (v4: 3, v5: 1; clip range [observation_min, observation_max]). Terminates when the tip's height
// site_xpos[0].z <= healthy_z_max. reward = alive bonus - 0.01 x^2 - (y - 2)^2 - 1e-3 v1^2 - 5e-3 v2^2 where the
// alive bonus (healthy_reward) is paid on every step in v4 and only on non-terminal steps in v5.
#pragma once

#include "core/envs/mujoco_gym/mujoco_env.h"

namespace pp::mujoco_gym {

template <int V>
class InvertedDoublePendulumEnv : public MujocoEnv {
  enum Field { kRewardSurvive, kDistPenalty, kVelPenalty, kNumFields };
  static constexpr std::array<const char*, kNumFields> kFields = {"reward_survive", "distance_penalty",
                                                                  "velocity_penalty"};
  static std::vector<const char*> InfoNames() {
    if (V == 4) return {};
    return {"reward_survive", "distance_penalty", "velocity_penalty"};
  }
  static int ConstraintDim(const Config& c, const mjModel* m) {
    return IntInRange(c, "constraint_obs_dim", 0, Dims(m).nv);
  }
  static int ObsDim(const Config& c, const mjModel* m) {
    const Dims d(m);
    return 1 + 2 * (d.nq - 1) + d.nv + ConstraintDim(c, m);
  }

 public:
  static constexpr const char* kName = V == 4 ? "InvertedDoublePendulum-v4" : "InvertedDoublePendulum-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    auto k = BaseKeys("inverted_double_pendulum.xml", 5, 1000, 9100.0);
    std::vector<ConfigKey> own = {
        {"healthy_reward", 10.0, "alive bonus per step", {}},
        {"reward_if_not_terminated", V == 5, "pay the alive bonus only on non-terminal steps (v5)", {}},
        {"constraint_obs_dim", int64_t{V == 4 ? 3 : 1}, "observed entries of qfrc_constraint", {}},
        {"healthy_z_max", 1.0, "terminate when the tip height is <= this", {}},
        {"observation_min", -10.0, "qvel and qfrc_constraint are clipped to [observation_min, observation_max]", {}},
        {"observation_max", 10.0, "qvel and qfrc_constraint are clipped to [observation_min, observation_max]", {}},
        {"reset_noise_scale", 0.1, "qpos += U(-s, s), qvel = s * N(0, 1) on reset", {}},
    };
    k.insert(k.end(), own.begin(), own.end());
    return k;
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    ModelPtr m = LoadModel(c);
    DefineCommonSpec(c, b, m.get(), ObsDim(c, m.get()), InfoNames());
  }

  InvertedDoublePendulumEnv(const Config& c, int env_id, uint64_t seed)
      : MujocoEnv(c, env_id, seed),
        info_(kFields, InfoNames()),
        healthy_reward_(c.Get<double>("healthy_reward")),
        only_if_alive_(c.Get<bool>("reward_if_not_terminated")),
        constraint_dim_(ConstraintDim(c, m_)),
        y_max_(c.Get<double>("healthy_z_max")),
        obs_min_(c.Get<double>("observation_min")),
        obs_max_(c.Get<double>("observation_max")),
        noise_(c.Get<double>("reset_noise_scale")) {
    if (m_->nsite < 1) throw std::invalid_argument("the InvertedDoublePendulum model needs a site (the tip)");
    if (n_.nv < 3) throw std::invalid_argument("the InvertedDoublePendulum model needs 3 degrees of freedom");
    SetObsDim(ObsDim(c, m_));
  }

  void Reset(Output& out) override {
    ResetData();
    ResetUniformNoise(noise_, /*normal_qvel=*/true);
    Forward();
    WriteObs(out, true);
    for (int f = 0; f < kNumFields; ++f) info_.Set(out, f, 0.0);
  }

  void Step(const ActionView& action, Output& out) override {
    Simulate(action.Get<double>(0), false);
    const double x = d_->site_xpos[0], y = d_->site_xpos[2];
    WriteObs(out, false);
    const bool terminated = y <= y_max_;
    const double v1 = d_->qvel[1], v2 = d_->qvel[2];
    const double dist_penalty = 0.01 * (x * x) + (y - 2) * (y - 2);
    const double vel_penalty = 1e-3 * (v1 * v1) + 5e-3 * (v2 * v2);
    const double alive = (only_if_alive_ && terminated) ? 0.0 : healthy_reward_;
    out.SetReward(alive - dist_penalty - vel_penalty);
    out.SetTerminated(terminated);
    info_.Set(out, kRewardSurvive, alive);
    info_.Set(out, kDistPenalty, -dist_penalty);
    info_.Set(out, kVelPenalty, -vel_penalty);
  }

 private:
  void WriteObs(Output& out, bool reset) {
    double* o = ObsBegin(out);
    *o++ = d_->qpos[0];
    for (int i = 1; i < n_.nq; ++i) *o++ = std::sin(d_->qpos[i]);
    for (int i = 1; i < n_.nq; ++i) *o++ = std::cos(d_->qpos[i]);
    o = PutClipped(o, d_->qvel, n_.nv, obs_min_, obs_max_);
    PutClipped(o, d_->qfrc_constraint, constraint_dim_, obs_min_, obs_max_);
    ObsEnd(out, reset);
  }

  InfoFields<kNumFields> info_;
  double healthy_reward_;
  bool only_if_alive_;
  int constraint_dim_;
  double y_max_, obs_min_, obs_max_, noise_;
};

}  // namespace pp::mujoco_gym
