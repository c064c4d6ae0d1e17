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
class AntEnv : public MujocoEnv {
  enum Field { kRewardForward, kRewardCtrl, kRewardContact, kRewardSurvive, kX, kY, kDist, kXVel, kYVel,
               kForwardReward, kNumFields };
  static constexpr std::array<const char*, kNumFields> kFields = {
      "reward_forward", "reward_ctrl", "reward_contact", "reward_survive", "x_position", "y_position",
      "distance_from_origin", "x_velocity", "y_velocity", "forward_reward"};
  static std::vector<const char*> InfoNames() {
    if (V == 4) {
      return {"reward_forward", "reward_ctrl", "reward_survive", "x_position", "y_position", "distance_from_origin",
              "x_velocity", "y_velocity", "forward_reward", "reward_contact"};
    }
    return {"x_position", "y_position", "distance_from_origin", "x_velocity", "y_velocity",
            "reward_forward", "reward_ctrl", "reward_contact", "reward_survive"};
  }
  static int ObsDim(const Config& c, const mjModel* m) {
    const Dims d(m);
    int n = d.nq + d.nv - (c.Get<bool>("exclude_current_positions_from_observation") ? 2 : 0);
    if (c.Get<bool>("use_contact_force")) {
      n += 6 * (d.nbody - (c.Get<bool>("exclude_worldbody_contact_forces") ? 1 : 0));
    }
    return n;
  }

 public:
  static constexpr const char* kName = V == 4 ? "Ant-v4" : "Ant-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    auto k = BaseKeys("ant.xml", 5, 1000, 6000.0);
    std::vector<ConfigKey> own = {
        {"use_contact_force", V == 5, "observe the clipped cfrc_ext (v4: and pay the contact cost)", {}},
        {"exclude_worldbody_contact_forces", V == 5, "observe cfrc_ext of bodies 1.. only (v5) or all (v4)", {}},
        {"legacy_healthy_reward", V == 4, "v4: healthy reward also when unhealthy if terminate_when_unhealthy", {}},
        {"terminate_when_unhealthy", true, "terminate when the torso leaves healthy_z or the state is not finite", {}},
        {"exclude_current_positions_from_observation", true, "drop the torso x, y from the observation", {}},
        {"forward_reward_weight", 1.0, "weight of the x velocity reward", {}},
        {"ctrl_cost_weight", 0.5, "weight of the control cost", {}},
        {"contact_cost_weight", 5e-4, "weight of the contact cost", {}},
        {"healthy_reward", 1.0, "reward per healthy step", {}},
        {"healthy_z_min", 0.2, "healthy torso height range (inclusive)", {}},
        {"healthy_z_max", 1.0, "healthy torso height range (inclusive)", {}},
        {"contact_force_min", -1.0, "cfrc_ext clip range", {}},
        {"contact_force_max", 1.0, "cfrc_ext clip range", {}},
        {"reset_noise_scale", 0.1, "qpos += U(-s, s), qvel = s * N(0, 1) on reset", {}},
        {"main_body", int64_t{1}, "index of the body whose x/y velocity is rewarded (gymnasium's main_body)", {}},
    };
    k.insert(k.end(), own.begin(), own.end());
    return k;
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    ModelPtr m = LoadModel(c);
    DefineCommonSpec(c, b, m.get(), ObsDim(c, m.get()), InfoNames());
  }

  AntEnv(const Config& c, int env_id, uint64_t seed)
      : MujocoEnv(c, env_id, seed),
        info_(kFields, InfoNames()),
        use_contact_force_(c.Get<bool>("use_contact_force")),
        exclude_world_(c.Get<bool>("exclude_worldbody_contact_forces")),
        legacy_healthy_(c.Get<bool>("legacy_healthy_reward")),
        terminate_(c.Get<bool>("terminate_when_unhealthy")),
        no_pos_(c.Get<bool>("exclude_current_positions_from_observation")),
        forward_w_(c.Get<double>("forward_reward_weight")),
        ctrl_w_(c.Get<double>("ctrl_cost_weight")),
        contact_w_(c.Get<double>("contact_cost_weight")),
        healthy_reward_(c.Get<double>("healthy_reward")),
        z_min_(c.Get<double>("healthy_z_min")),
        z_max_(c.Get<double>("healthy_z_max")),
        f_min_(c.Get<double>("contact_force_min")),
        f_max_(c.Get<double>("contact_force_max")),
        noise_(c.Get<double>("reset_noise_scale")),
        main_body_(IntInRange(c, "main_body", 0, n_.nbody - 1)) {
    pay_contact_ = V == 5 || use_contact_force_;
    need_cfrc_ = use_contact_force_ || (pay_contact_ && contact_w_ != 0.0);
    SetObsDim(ObsDim(c, m_));
  }

  void Reset(Output& out) override {
    ResetData();
    ResetUniformNoise(noise_, /*normal_qvel=*/true);
    Forward();
    WriteObs(out, true);
    const double x = V == 4 ? d_->xpos[3 * main_body_] : d_->qpos[0];
    const double y = V == 4 ? d_->xpos[3 * main_body_ + 1] : d_->qpos[1];
    for (int f = 0; f < kNumFields; ++f) info_.Set(out, f, 0.0);
    info_.Set(out, kX, x);
    info_.Set(out, kY, y);
    info_.Set(out, kDist, std::sqrt(x * x + y * y));
  }

  void Step(const ActionView& action, Output& out) override {
    const double* a = action.Get<double>(0);
    const double x0 = d_->xpos[3 * main_body_], y0 = d_->xpos[3 * main_body_ + 1];
    Simulate(a, need_cfrc_);
    const double x1 = d_->xpos[3 * main_body_], y1 = d_->xpos[3 * main_body_ + 1];
    const double xv = (x1 - x0) / dt_, yv = (y1 - y0) / dt_;

    const double forward = xv * forward_w_;
    const bool healthy = StateFinite() && z_min_ <= d_->qpos[2] && d_->qpos[2] <= z_max_;
    const double healthy_reward = (healthy || (legacy_healthy_ && terminate_)) ? healthy_reward_ : 0.0;
    const double ctrl_cost = ctrl_w_ * SumSquares(a, n_.nu);
    double contact_cost = 0.0;
    if (need_cfrc_) {
      double s = 0.0;
      for (int i = 0; i < 6 * n_.nbody; ++i) {
        const double f = Clip(d_->cfrc_ext[i], f_min_, f_max_);
        s += f * f;
      }
      contact_cost = contact_w_ * s;
    }
    const double costs = pay_contact_ ? ctrl_cost + contact_cost : ctrl_cost;
    out.SetReward((forward + healthy_reward) - costs);
    out.SetTerminated(!healthy && terminate_);
    WriteObs(out, false);

    const double x = V == 4 ? x1 : d_->qpos[0], y = V == 4 ? y1 : d_->qpos[1];
    info_.Set(out, kRewardForward, forward);
    info_.Set(out, kRewardCtrl, (V == 4 && use_contact_force_) ? -contact_cost : -ctrl_cost);
    info_.Set(out, kRewardContact, -contact_cost);
    info_.Set(out, kRewardSurvive, healthy_reward);
    info_.Set(out, kX, x);
    info_.Set(out, kY, y);
    info_.Set(out, kDist, std::sqrt(x * x + y * y));
    info_.Set(out, kXVel, xv);
    info_.Set(out, kYVel, yv);
    info_.Set(out, kForwardReward, forward);
  }

 private:
  void WriteObs(Output& out, bool reset) {
    double* o = ObsBegin(out);
    o = Put(o, d_->qpos + (no_pos_ ? 2 : 0), n_.nq - (no_pos_ ? 2 : 0));
    o = Put(o, d_->qvel, n_.nv);
    if (use_contact_force_) {
      const int b0 = exclude_world_ ? 1 : 0;
      PutClipped(o, d_->cfrc_ext + 6 * b0, 6 * (n_.nbody - b0), f_min_, f_max_);
    }
    ObsEnd(out, reset);
  }

  InfoFields<kNumFields> info_;
  bool use_contact_force_, exclude_world_, legacy_healthy_, terminate_, no_pos_, pay_contact_, need_cfrc_;
  double forward_w_, ctrl_w_, contact_w_, healthy_reward_, z_min_, z_max_, f_min_, f_max_, noise_;
  int main_body_;
};

}  // namespace pp::mujoco_gym
