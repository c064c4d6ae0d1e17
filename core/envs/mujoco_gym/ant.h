// Ant-v4 / Ant-v5, aligned with gymnasium 1.4's ant_v4.py / ant_v5.py.
// v4 vs v5: v4's healthy reward is paid even when unhealthy if terminate_when_unhealthy (legacy_healthy_reward),
// v4 adds the contact cost only with use_contact_force and then observes cfrc_ext of every body including the
// world (v5: always the contact cost; observed bodies 1..), and v4's info reports -contact_cost as reward_ctrl
// when use_contact_force (as gymnasium does; reward_contact has the contact cost in both versions).
// gymnasium -> config names: include_cfrc_ext_in_observation (v5) / use_contact_forces (v4) -> use_contact_force,
// healthy_z_range -> healthy_z_min/max, contact_force_range -> contact_force_min/max.
#pragma once

#include "core/envs/mujoco_gym/mujoco_env.h"

namespace pp::mujoco_gym {

template <int V>
class AntEnv : public MujocoTask<AntEnv<V>> {
  using Base = MujocoTask<AntEnv<V>>;
  using Base::d_, Base::n_, Base::p_, Base::info_;

 public:
  static constexpr const char* kName = V == 4 ? "Ant-v4" : "Ant-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    return TaskKeys(
        V, "ant.xml", 5, 1000, 6000.0,
        {{"use_contact_force", V == 5, "observe the clipped cfrc_ext (v4: and pay the contact cost)", {}},
         {"exclude_worldbody_contact_forces", V == 5, "observe cfrc_ext of bodies 1.. only (v5) or all (v4)", {}},
         LegacyHealthyKey(V),
         TerminateKey(),
         ExcludePositionsKey("x, y"),
         ForwardWeightKey(1.0),
         CtrlWeightKey(0.5),
         ContactWeightKey(5e-4),
         HealthyRewardKey(1.0),
         MinKey("healthy_z", 0.2, "healthy torso height (inclusive)"),
         MaxKey("healthy_z", 1.0, "healthy torso height (inclusive)"),
         MinKey("contact_force", -1.0, "cfrc_ext clip"),
         MaxKey("contact_force", 1.0, "cfrc_ext clip"),
         ResetNoiseKey(0.1, true),
         {"main_body", int64_t{1}, "index of the body whose x/y velocity is rewarded (gymnasium's main_body)", {}}});
  }
  static std::vector<const char*> InfoNames() {
    if (V == 4) {
      return {"reward_forward",       "reward_ctrl", "reward_survive", "x_position",     "y_position",
              "distance_from_origin", "x_velocity",  "y_velocity",     "forward_reward", "reward_contact"};
    }
    return {"x_position",     "y_position",  "distance_from_origin", "x_velocity",    "y_velocity",
            "reward_forward", "reward_ctrl", "reward_contact",       "reward_survive"};
  }
  static int ObsDim(const Config& c, const mjModel* m) {
    const Dims d(m);
    int n = d.nq + d.nv - (c.Get<bool>("exclude_current_positions_from_observation") ? 2 : 0);
    if (c.Get<bool>("use_contact_force")) {
      n += 6 * (d.nbody - (c.Get<bool>("exclude_worldbody_contact_forces") ? 1 : 0));
    }
    return n;
  }

  AntEnv(const Config& c, int env_id, uint64_t seed)
      : Base(c, env_id, seed, /*normal_qvel=*/true),
        use_contact_force_(c.Get<bool>("use_contact_force")),
        exclude_world_(c.Get<bool>("exclude_worldbody_contact_forces")),
        force_(ReadRange(c, "contact_force")),
        main_body_(IntInRange(c, "main_body", 0, n_.nbody - 1)) {
    pay_contact_ = V == 5 || use_contact_force_;
    need_cfrc_ = use_contact_force_ || (pay_contact_ && p_.contact_w != 0.0);
  }

  void Reset(Output& out) override {
    this->ResetWithNoise(out);
    if (V == 4) {
      info_.SetPlanePosition(out, d_->xpos[3 * main_body_], d_->xpos[3 * main_body_ + 1]);
    } else {
      info_.SetPlanePosition(out, d_->qpos[0], d_->qpos[1]);
    }
  }

  void Step(const ActionView& action, Output& out) override {
    const auto m = this->Locomote(action.Get<double>(0), d_->xpos + 3 * main_body_, need_cfrc_);
    const bool healthy = this->StateFinite() && p_.z_min <= d_->qpos[2] && d_->qpos[2] <= p_.z_max;
    const double healthy_reward = p_.HealthyReward(healthy);
    double contact_cost = 0.0;
    if (need_cfrc_) {
      double s = 0.0;
      for (int i = 0; i < 6 * n_.nbody; ++i) {
        const double f = Clip(d_->cfrc_ext[i], force_.min, force_.max);
        s += f * f;
      }
      contact_cost = p_.contact_w * s;
    }
    const double costs = pay_contact_ ? m.ctrl_cost + contact_cost : m.ctrl_cost;
    out.SetReward((m.forward + healthy_reward) - costs);
    out.SetTerminated(!healthy && p_.terminate);
    this->WriteObs(out, false);

    info_.SetPlanePosition(out, V == 4 ? m.x : d_->qpos[0], V == 4 ? m.y : d_->qpos[1]);
    info_.Set(out, {{kXVelocity, m.xv},
                    {kYVelocity, m.yv},
                    {kRewardForward, m.forward},
                    {kForwardReward, m.forward},
                    {kRewardCtrl, (V == 4 && use_contact_force_) ? -contact_cost : -m.ctrl_cost},
                    {kRewardContact, -contact_cost},
                    {kRewardSurvive, healthy_reward}});
  }

  void WriteFrame(double* o) {
    o = Put(this->PutQpos(o, 2), d_->qvel, n_.nv);
    if (use_contact_force_) {
      const int b0 = exclude_world_ ? 1 : 0;
      PutClipped(o, d_->cfrc_ext + 6 * b0, 6 * (n_.nbody - b0), force_.min, force_.max);
    }
  }

 private:
  bool use_contact_force_, exclude_world_, pay_contact_ = true, need_cfrc_ = true;
  Range force_;
  int main_body_;
};

}  // namespace pp::mujoco_gym
