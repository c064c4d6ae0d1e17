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
class PusherEnv : public MujocoEnv {
  enum Field { kRewardDist, kRewardCtrl, kRewardNear, kNumFields };
  static constexpr std::array<const char*, kNumFields> kFields = {"reward_dist", "reward_ctrl", "reward_near"};
  static std::vector<const char*> InfoNames() { return {"reward_dist", "reward_ctrl", "reward_near"}; }

 public:
  static constexpr const char* kName = V == 4 ? "Pusher-v4" : "Pusher-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    auto k = BaseKeys(V == 4 ? "pusher.xml" : "pusher_v5.xml", 5, 100, 0.0);
    std::vector<ConfigKey> own = {
        {"ctrl_cost_weight", 0.1, "weight of the control cost", {}},
        {"dist_cost_weight", 1.0, "weight of the object-goal distance", {}},
        {"near_cost_weight", 0.5, "weight of the object-fingertip distance", {}},
        {"reward_after_step", V == 5, "compute the reward from the state after the step (v5) or before (v4)", {}},
        {"weighted_reward_info", V == 5, "report weighted (v5) or unweighted (v4) reward terms in info", {}},
        {"reset_qvel_scale", 0.005, "arm qvel = U(-s, s) on reset", {}},
        {"cylinder_x_min", -0.3, "object start x ~ U(cylinder_x_min, cylinder_x_max)", {}},
        {"cylinder_x_max", 0.0, "object start x ~ U(cylinder_x_min, cylinder_x_max)", {}},
        {"cylinder_y_min", -0.2, "object start y ~ U(cylinder_y_min, cylinder_y_max)", {}},
        {"cylinder_y_max", 0.2, "object start y ~ U(cylinder_y_min, cylinder_y_max)", {}},
        {"cylinder_dist_min", 0.17, "the object starts farther than this from the goal (rejection sampling)", {}},
    };
    k.insert(k.end(), own.begin(), own.end());
    return k;
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    ModelPtr m = LoadModel(c);
    DefineCommonSpec(c, b, m.get(), 23, InfoNames());
  }

  PusherEnv(const Config& c, int env_id, uint64_t seed)
      : MujocoEnv(c, env_id, seed),
        info_(kFields, InfoNames()),
        ctrl_w_(c.Get<double>("ctrl_cost_weight")),
        dist_w_(c.Get<double>("dist_cost_weight")),
        near_w_(c.Get<double>("near_cost_weight")),
        after_(c.Get<bool>("reward_after_step")),
        weighted_info_(c.Get<bool>("weighted_reward_info")),
        qvel_scale_(c.Get<double>("reset_qvel_scale")),
        x_min_(c.Get<double>("cylinder_x_min")),
        x_max_(c.Get<double>("cylinder_x_max")),
        y_min_(c.Get<double>("cylinder_y_min")),
        y_max_(c.Get<double>("cylinder_y_max")),
        dist_min_(c.Get<double>("cylinder_dist_min")),
        tips_(BodyId(m_, "tips_arm")),
        object_(BodyId(m_, "object")),
        goal_(BodyId(m_, "goal")) {
    if (n_.nq < 11 || n_.nv < 11) throw std::invalid_argument("the Pusher model needs 7 arm + 4 object/goal joints");
    SetObsDim(23);
  }

  void Reset(Output& out) override {
    ResetData();
    double cx, cy;
    do {
      cx = Uniform(x_min_, x_max_);
      cy = Uniform(y_min_, y_max_);
    } while (!(std::sqrt(cx * cx + cy * cy) > dist_min_));
    const int nq = n_.nq, nv = n_.nv;
    for (int i = 0; i < nq; ++i) d_->qpos[i] = m_->qpos0[i];
    d_->qpos[nq - 4] = cx;
    d_->qpos[nq - 3] = cy;
    d_->qpos[nq - 2] = 0.0;  // goal
    d_->qpos[nq - 1] = 0.0;
    for (int i = 0; i < nv; ++i) d_->qvel[i] = i < nv - 4 ? Uniform(-qvel_scale_, qvel_scale_) : 0.0;
    Forward();
    WriteObs(out, true);
    for (int f = 0; f < kNumFields; ++f) info_.Set(out, f, 0.0);
  }

  void Step(const ActionView& action, Output& out) override {
    const double* a = action.Get<double>(0);
    double near = 0, dist = 0;
    if (!after_) Distances(&near, &dist);
    Simulate(a, false);
    if (after_) Distances(&near, &dist);
    const double ctrl = -SumSquares(a, n_.nu);
    const double w_dist = -dist * dist_w_, w_ctrl = ctrl * ctrl_w_, w_near = -near * near_w_;
    out.SetReward(w_dist + w_ctrl + w_near);
    WriteObs(out, false);
    info_.Set(out, kRewardDist, weighted_info_ ? w_dist : -dist);
    info_.Set(out, kRewardCtrl, weighted_info_ ? w_ctrl : ctrl);
    info_.Set(out, kRewardNear, weighted_info_ ? w_near : -near);
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
  void WriteObs(Output& out, bool reset) {
    double* o = ObsBegin(out);
    o = Put(o, d_->qpos, 7);
    o = Put(o, d_->qvel, 7);
    o = Put(o, d_->xpos + 3 * tips_, 3);
    o = Put(o, d_->xpos + 3 * object_, 3);
    Put(o, d_->xpos + 3 * goal_, 3);
    ObsEnd(out, reset);
  }

  InfoFields<kNumFields> info_;
  double ctrl_w_, dist_w_, near_w_;
  bool after_, weighted_info_;
  double qvel_scale_, x_min_, x_max_, y_min_, y_max_, dist_min_;
  int tips_, object_, goal_;
};

}  // namespace pp::mujoco_gym
