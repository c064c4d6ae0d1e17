// Reacher-v4 / Reacher-v5, aligned with gymnasium 1.4's reacher_v4.py / reacher_v5.py.
// reward = dist_cost_weight * -|fingertip - target| + ctrl_cost_weight * -|a|^2 (info: the weighted terms).
// v4 vs v5: v4 computes the reward from the state before the step (reward_after_step) and observes the
// fingertip-target vector's z (obs_include_z_distance: 11 vs 10 values).
// gymnasium -> config names: reward_dist_weight -> dist_cost_weight, reward_control_weight -> ctrl_cost_weight.
#pragma once

#include <string>

#include "core/envs/mujoco_gym/mujoco_env.h"

namespace pp::mujoco_gym {

template <int V>
class ReacherEnv : public MujocoTask<ReacherEnv<V>> {
  using Base = MujocoTask<ReacherEnv<V>>;
  using Base::d_, Base::m_, Base::n_, Base::p_, Base::info_;

 public:
  static constexpr const char* kName = V == 4 ? "Reacher-v4" : "Reacher-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    return TaskKeys(V, "reacher.xml", 2, 50, -3.75,
                    {CtrlWeightKey(1.0),
                     {"dist_cost_weight", 1.0, "weight of the fingertip-target distance", {}},
                     RewardAfterStepKey(V),
                     {"obs_include_z_distance", V == 4, "observe the z of the fingertip-target vector (v4)", {}},
                     {"reset_qpos_scale", 0.1, "qpos += U(-s, s) on reset", {}},
                     {"reset_qvel_scale", 0.005, "arm qvel = U(-s, s) on reset", {}},
                     {"reset_goal_scale", 0.2, "target ~ U(-s, s)^2 with |target| < s (rejection sampling)", {}}});
  }
  static std::vector<const char*> InfoNames() { return {"reward_dist", "reward_ctrl"}; }
  static int ObsDim(const Config& c, const mjModel* m) {
    return 4 + (Dims(m).nq - 2) + 2 + (c.Get<bool>("obs_include_z_distance") ? 3 : 2);
  }

  ReacherEnv(const Config& c, int env_id, uint64_t seed)
      : Base(c, env_id, seed, /*normal_qvel=*/false),
        dist_w_(c.Get<double>("dist_cost_weight")),
        z_(c.Get<bool>("obs_include_z_distance")),
        fingertip_(BodyId(m_, "fingertip")),
        target_(BodyId(m_, "target")),
        qpos_scale_(c.Get<double>("reset_qpos_scale")),
        qvel_scale_(c.Get<double>("reset_qvel_scale")),
        goal_scale_(c.Get<double>("reset_goal_scale")) {
    if (n_.nq < 4 || n_.nv < 4) throw std::invalid_argument("the Reacher model needs 2 arm + 2 target joints");
    // the rejection sampling in Reset would never accept a target otherwise (a hang, not an error)
    if (!(goal_scale_ > 0)) {
      throw std::invalid_argument("config key 'reset_goal_scale' must be > 0, got " + std::to_string(goal_scale_));
    }
  }

  void Reset(Output& out) override {
    this->ResetData();
    const int nq = n_.nq, nv = n_.nv;
    for (int i = 0; i < nq; ++i) d_->qpos[i] = m_->qpos0[i] + this->Uniform(-qpos_scale_, qpos_scale_);
    double gx, gy;
    do {
      gx = this->Uniform(-goal_scale_, goal_scale_);
      gy = this->Uniform(-goal_scale_, goal_scale_);
    } while (!(std::sqrt(gx * gx + gy * gy) < goal_scale_));
    d_->qpos[nq - 2] = gx;
    d_->qpos[nq - 1] = gy;
    for (int i = 0; i < nv; ++i) d_->qvel[i] = i < nv - 2 ? this->Uniform(-qvel_scale_, qvel_scale_) : 0.0;
    this->Forward();
    this->WriteObs(out, true);
    info_.Clear(out);
  }

  void Step(const ActionView& action, Output& out) override {
    const double* a = action.Get<double>(0);
    double dist = 0;
    if (!p_.after_step) dist = Distance();
    this->Simulate(a, false);
    if (p_.after_step) dist = Distance();
    const double reward_dist = -dist * dist_w_;
    const double reward_ctrl = -this->SumSquares(a, n_.nu) * p_.ctrl_w;
    out.SetReward(reward_dist + reward_ctrl);
    this->WriteObs(out, false);
    info_.Set(out, {{kRewardDist, reward_dist}, {kRewardCtrl, reward_ctrl}});
  }

  void WriteFrame(double* o) {
    *o++ = std::cos(d_->qpos[0]);
    *o++ = std::cos(d_->qpos[1]);
    *o++ = std::sin(d_->qpos[0]);
    *o++ = std::sin(d_->qpos[1]);
    o = Put(Put(o, d_->qpos + 2, n_.nq - 2), d_->qvel, 2);
    for (int k = 0; k < (z_ ? 3 : 2); ++k) *o++ = d_->xpos[3 * fingertip_ + k] - d_->xpos[3 * target_ + k];
  }

 private:
  double Distance() const {
    double s = 0;
    for (int k = 0; k < 3; ++k) {
      const double v = d_->xpos[3 * fingertip_ + k] - d_->xpos[3 * target_ + k];
      s += v * v;
    }
    return std::sqrt(s);
  }

  double dist_w_;
  bool z_;
  int fingertip_, target_;
  double qpos_scale_, qvel_scale_, goal_scale_;
};

}  // namespace pp::mujoco_gym
