// Pusher-v4 / Pusher-v5, aligned with gymnasium 1.4's pusher_v4.py / pusher_v5.py.
// reward = dist_cost_weight * -|object - goal| + ctrl_cost_weight * -|a|^2 + near_cost_weight * -|object - tip|.
// v4 vs v5: v4 uses pusher.xml and computes the reward from the state *before* the step (reward_after_step) with
// unweighted terms in info (weighted_reward_info); v5 uses pusher_v5.xml, the state after the step, weighted info.
// gymnasium 1.4 refuses to build Pusher-v4 with mujoco >= 3 (its pusher.xml behaves differently than under
// mujoco 2); this Pusher-v4 is gymnasium's v4 code run on mujoco 3, as EnvPool provides it.
// gymnasium -> config names: reward_near_weight -> near_cost_weight, reward_dist_weight -> dist_cost_weight,
// reward_control_weight -> ctrl_cost_weight.
#pragma once

#include "core/envs/mujoco_gym/mujoco_env.h"

namespace pp::mujoco_gym {

template <int V>
class PusherEnv : public MujocoTask<PusherEnv<V>> {
  using Base = MujocoTask<PusherEnv<V>>;
  using Base::d_, Base::m_, Base::n_, Base::p_, Base::info_;

 public:
  static constexpr const char* kName = V == 4 ? "Pusher-v4" : "Pusher-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    return TaskKeys(
        V, V == 4 ? "pusher.xml" : "pusher_v5.xml", 5, 100, 0.0,
        {CtrlWeightKey(0.1),
         {"dist_cost_weight", 1.0, "weight of the object-goal distance", {}},
         {"near_cost_weight", 0.5, "weight of the object-fingertip distance", {}},
         RewardAfterStepKey(V),
         {"weighted_reward_info", V == 5, "report weighted (v5) or unweighted (v4) reward terms in info", {}},
         {"reset_qvel_scale", 0.005, "arm qvel = U(-s, s) on reset", {}},
         MinKey("cylinder_x", -0.3, "object start x range"),
         MaxKey("cylinder_x", 0.0, "object start x range"),
         MinKey("cylinder_y", -0.2, "object start y range"),
         MaxKey("cylinder_y", 0.2, "object start y range"),
         {"cylinder_dist_min", 0.17, "the object starts farther than this from the goal (rejection sampling)", {}}});
  }
  static std::vector<const char*> InfoNames() { return {"reward_dist", "reward_ctrl", "reward_near"}; }
  static int ObsDim(const Config&, const mjModel*) { return 23; }

  PusherEnv(const Config& c, int env_id, uint64_t seed)
      : Base(c, env_id, seed, /*normal_qvel=*/false),
        dist_w_(c.Get<double>("dist_cost_weight")),
        near_w_(c.Get<double>("near_cost_weight")),
        weighted_info_(c.Get<bool>("weighted_reward_info")),
        tips_(BodyId(m_, "tips_arm")),
        object_(BodyId(m_, "object")),
        goal_(BodyId(m_, "goal")),
        qvel_scale_(c.Get<double>("reset_qvel_scale")),
        cylinder_x_(ReadRange(c, "cylinder_x")),
        cylinder_y_(ReadRange(c, "cylinder_y")),
        dist_min_(c.Get<double>("cylinder_dist_min")) {
    if (n_.nq < 11 || n_.nv < 11) throw std::invalid_argument("the Pusher model needs 7 arm + 4 object/goal joints");
  }

  void Reset(Output& out) override {
    this->ResetData();
    double cx, cy;
    do {
      cx = this->Uniform(cylinder_x_.min, cylinder_x_.max);
      cy = this->Uniform(cylinder_y_.min, cylinder_y_.max);
    } while (!(std::sqrt(cx * cx + cy * cy) > dist_min_));
    const int nq = n_.nq, nv = n_.nv;
    for (int i = 0; i < nq; ++i) d_->qpos[i] = m_->qpos0[i];
    d_->qpos[nq - 4] = cx;
    d_->qpos[nq - 3] = cy;
    d_->qpos[nq - 2] = 0.0;  // goal
    d_->qpos[nq - 1] = 0.0;
    for (int i = 0; i < nv; ++i) d_->qvel[i] = i < nv - 4 ? this->Uniform(-qvel_scale_, qvel_scale_) : 0.0;
    this->Forward();
    this->WriteObs(out, true);
    info_.Clear(out);
  }

  void Step(const ActionView& action, Output& out) override {
    const double* a = action.Get<double>(0);
    double near = 0, dist = 0;
    if (!p_.after_step) Distances(&near, &dist);
    this->Simulate(a, false);
    if (p_.after_step) Distances(&near, &dist);
    const double ctrl = -this->SumSquares(a, n_.nu);
    const double w_dist = -dist * dist_w_, w_ctrl = ctrl * p_.ctrl_w, w_near = -near * near_w_;
    out.SetReward(w_dist + w_ctrl + w_near);
    this->WriteObs(out, false);
    info_.Set(out, {{kRewardDist, weighted_info_ ? w_dist : -dist},
                    {kRewardCtrl, weighted_info_ ? w_ctrl : ctrl},
                    {kRewardNear, weighted_info_ ? w_near : -near}});
  }

  void WriteFrame(double* o) {
    o = Put(Put(o, d_->qpos, 7), d_->qvel, 7);
    for (int body : {tips_, object_, goal_}) o = Put(o, d_->xpos + 3 * body, 3);
  }

 private:
  // |object - tips_arm| and |object - goal| (body frame positions, gymnasium's get_body_com)
  void Distances(double* near, double* dist) const {
    double s1 = 0, s2 = 0;
    for (int k = 0; k < 3; ++k) {
      const double v1 = d_->xpos[3 * object_ + k] - d_->xpos[3 * tips_ + k];
      const double v2 = d_->xpos[3 * object_ + k] - d_->xpos[3 * goal_ + k];
      s1 += v1 * v1;
      s2 += v2 * v2;
    }
    *near = std::sqrt(s1);
    *dist = std::sqrt(s2);
  }

  double dist_w_, near_w_;
  bool weighted_info_;
  int tips_, object_, goal_;
  double qvel_scale_;
  Range cylinder_x_, cylinder_y_;
  double dist_min_;
};

}  // namespace pp::mujoco_gym
