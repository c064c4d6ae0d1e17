// Humanoid-v4 / Humanoid-v5, aligned with gymnasium 1.4's humanoid_v4.py / humanoid_v5.py, and the observation
// shared with HumanoidStandup: qpos[2:] (or all), qvel, cinert, cvel, qfrc_actuator, cfrc_ext.
// v4 vs v5: v4 observes every body (world included) and all of qfrc_actuator (exclude_worldbody_observations,
// exclude_root_actuator_forces), pays the healthy reward even when unhealthy if terminate_when_unhealthy
// (legacy_healthy_reward), has no contact cost in the reward (use_contact_force) and reports the x/y of the
// centre of mass as x_position/y_position (v5: qpos[0], qpos[1]).
// gymnasium -> config names: healthy_z_range -> healthy_z_min/max, contact_cost_range -> contact_cost_min/max;
// include_*_in_observation keep gymnasium's names.
#pragma once

#include "core/envs/mujoco_gym/mujoco_env.h"

namespace pp::mujoco_gym {

// The Humanoid/HumanoidStandup observation and its config keys.
class HumanoidObs {
 public:
  static std::vector<ConfigKey> Keys(int version) {
    return {
        {"exclude_current_positions_from_observation", true, "drop the root x, y from the observation", {}},
        {"exclude_worldbody_observations", version == 5, "observe cinert/cvel/cfrc_ext of bodies 1.. only", {}},
        {"exclude_root_actuator_forces", version == 5, "observe qfrc_actuator[6:] only", {}},
        {"include_cinert_in_observation", true, "observe the bodies' com-based inertia (cinert)", {}},
        {"include_cvel_in_observation", true, "observe the bodies' com-based velocity (cvel)", {}},
        {"include_qfrc_actuator_in_observation", true, "observe the actuator forces (qfrc_actuator)", {}},
        {"include_cfrc_ext_in_observation", true, "observe the external contact forces (cfrc_ext)", {}},
    };
  }
  explicit HumanoidObs(const Config& c)
      : no_pos_(c.Get<bool>("exclude_current_positions_from_observation")),
        b0_(c.Get<bool>("exclude_worldbody_observations") ? 1 : 0),
        q0_(c.Get<bool>("exclude_root_actuator_forces") ? 6 : 0),
        cinert_(c.Get<bool>("include_cinert_in_observation")),
        cvel_(c.Get<bool>("include_cvel_in_observation")),
        qfrc_(c.Get<bool>("include_qfrc_actuator_in_observation")),
        cfrc_(c.Get<bool>("include_cfrc_ext_in_observation")) {}
  int Dim(const Dims& n) const {
    const int nb = n.nbody - b0_;
    return n.nq - (no_pos_ ? 2 : 0) + n.nv + (cinert_ ? 10 * nb : 0) + (cvel_ ? 6 * nb : 0) +
           (qfrc_ ? n.nv - q0_ : 0) + (cfrc_ ? 6 * nb : 0);
  }
  void Write(double* o, const Dims& n, const mjData* d) const {
    const int nb = n.nbody - b0_;
    o = Put(o, d->qpos + (no_pos_ ? 2 : 0), n.nq - (no_pos_ ? 2 : 0));
    o = Put(o, d->qvel, n.nv);
    if (cinert_) o = Put(o, d->cinert + 10 * b0_, 10 * nb);
    if (cvel_) o = Put(o, d->cvel + 6 * b0_, 6 * nb);
    if (qfrc_) o = Put(o, d->qfrc_actuator + q0_, n.nv - q0_);
    if (cfrc_) Put(o, d->cfrc_ext + 6 * b0_, 6 * nb);
  }
  bool uses_cfrc() const { return cfrc_; }

 private:
  bool no_pos_;
  int b0_, q0_;
  bool cinert_, cvel_, qfrc_, cfrc_;
};

// tendon_length / tendon_velocity info arrays (gymnasium v5 Humanoid and HumanoidStandup), declared after the
// scalar info fields.
inline void DefineTendonInfo(SpecBuilder& b, const mjModel* m) {
  b.Info("tendon_length", DType::kFloat64, {Dims(m).ntendon});
  b.Info("tendon_velocity", DType::kFloat64, {Dims(m).ntendon});
}

template <int V>
class HumanoidEnv : public MujocoEnv {
  enum Field { kX, kY, kDist, kXVel, kYVel, kRewardSurvive, kRewardForward, kRewardCtrl, kRewardContact,
               kRewardLinvel, kRewardQuadctrl, kRewardAlive, kRewardImpact, kForwardReward, kNumFields };
  static constexpr std::array<const char*, kNumFields> kFields = {
      "x_position", "y_position", "distance_from_origin", "x_velocity", "y_velocity", "reward_survive",
      "reward_forward", "reward_ctrl", "reward_contact", "reward_linvel", "reward_quadctrl", "reward_alive",
      "reward_impact", "forward_reward"};
  static std::vector<const char*> InfoNames() {
    if (V == 4) {
      return {"reward_linvel", "reward_quadctrl", "reward_alive", "x_position", "y_position", "distance_from_origin",
              "x_velocity", "y_velocity", "forward_reward", "reward_impact"};
    }
    return {"x_position", "y_position", "distance_from_origin", "x_velocity", "y_velocity", "reward_survive",
            "reward_forward", "reward_ctrl", "reward_contact", "reward_linvel", "reward_quadctrl", "reward_alive",
            "reward_impact"};
  }

 public:
  static constexpr const char* kName = V == 4 ? "Humanoid-v4" : "Humanoid-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    auto k = BaseKeys("humanoid.xml", 5, 1000, kInf);
    auto obs = HumanoidObs::Keys(V);
    std::vector<ConfigKey> own = {
        {"legacy_healthy_reward", V == 4, "v4: healthy reward also when unhealthy if terminate_when_unhealthy", {}},
        {"use_contact_force", V == 5, "subtract the contact cost from the reward (v5)", {}},
        {"terminate_when_unhealthy", true, "terminate when the torso height leaves (healthy_z_min, healthy_z_max)", {}},
        {"forward_reward_weight", 1.25, "weight of the centre-of-mass x velocity reward", {}},
        {"ctrl_cost_weight", 0.1, "weight of the control cost", {}},
        {"healthy_reward", 5.0, "reward per healthy step", {}},
        {"healthy_z_min", 1.0, "healthy torso height range (exclusive)", {}},
        {"healthy_z_max", 2.0, "healthy torso height range (exclusive)", {}},
        {"contact_cost_weight", 5e-7, "weight of the contact cost (sum of squared cfrc_ext)", {}},
        {"contact_cost_min", -kInf, "the contact cost is clipped to [contact_cost_min, contact_cost_max]", {}},
        {"contact_cost_max", 10.0, "the contact cost is clipped to [contact_cost_min, contact_cost_max]", {}},
        {"reset_noise_scale", 1e-2, "qpos += U(-s, s), qvel = U(-s, s) on reset", {}},
    };
    k.insert(k.end(), obs.begin(), obs.end());
    k.insert(k.end(), own.begin(), own.end());
    return k;
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    ModelPtr m = LoadModel(c);
    DefineCommonSpec(c, b, m.get(), HumanoidObs(c).Dim(Dims(m.get())), InfoNames());
    if (V == 5) DefineTendonInfo(b, m.get());
  }

  HumanoidEnv(const Config& c, int env_id, uint64_t seed)
      : MujocoEnv(c, env_id, seed),
        info_(kFields, InfoNames()),
        obs_(c),
        legacy_healthy_(c.Get<bool>("legacy_healthy_reward")),
        pay_contact_(c.Get<bool>("use_contact_force")),
        terminate_(c.Get<bool>("terminate_when_unhealthy")),
        forward_w_(c.Get<double>("forward_reward_weight")),
        ctrl_w_(c.Get<double>("ctrl_cost_weight")),
        healthy_reward_(c.Get<double>("healthy_reward")),
        z_min_(c.Get<double>("healthy_z_min")),
        z_max_(c.Get<double>("healthy_z_max")),
        contact_w_(c.Get<double>("contact_cost_weight")),
        contact_min_(c.Get<double>("contact_cost_min")),
        contact_max_(c.Get<double>("contact_cost_max")),
        noise_(c.Get<double>("reset_noise_scale")) {
    need_cfrc_ = obs_.uses_cfrc() || (pay_contact_ && contact_w_ != 0.0);
    tendon_slot_ = static_cast<int>(InfoNames().size());
    SetObsDim(obs_.Dim(n_));
    double total = 0.0;
    for (int b = 0; b < n_.nbody; ++b) total += m_->body_mass[b];
    total_mass_ = total;
  }

  void Reset(Output& out) override {
    ResetData();
    ResetUniformNoise(noise_, /*normal_qvel=*/false);
    Forward();
    WriteObs(out, true);
    for (int f = 0; f < kNumFields; ++f) info_.Set(out, f, 0.0);
    double x = d_->qpos[0], y = d_->qpos[1];
    if (V == 4) MassCenter(&x, &y);
    info_.Set(out, kX, x);
    info_.Set(out, kY, y);
    info_.Set(out, kDist, std::sqrt(x * x + y * y));
    WriteTendons(out);
  }

  void Step(const ActionView& action, Output& out) override {
    const double* a = action.Get<double>(0);
    double x0, y0, x1, y1;
    MassCenter(&x0, &y0);
    Simulate(a, need_cfrc_);
    MassCenter(&x1, &y1);
    const double xv = (x1 - x0) / dt_, yv = (y1 - y0) / dt_;

    const double z = d_->qpos[2];
    const bool healthy = z_min_ < z && z < z_max_;
    const double forward = forward_w_ * xv;
    const double healthy_reward = (healthy || (legacy_healthy_ && terminate_)) ? healthy_reward_ : 0.0;
    const double ctrl_cost = ctrl_w_ * SumSquares(d_->ctrl, n_.nu);
    double contact_cost = 0.0;
    if (need_cfrc_) contact_cost = Clip(contact_w_ * SumSquares(d_->cfrc_ext, 6 * n_.nbody), contact_min_, contact_max_);
    const double costs = pay_contact_ ? ctrl_cost + contact_cost : ctrl_cost;
    out.SetReward((forward + healthy_reward) - costs);
    out.SetTerminated(!healthy && terminate_);
    WriteObs(out, false);

    const double x = V == 4 ? x1 : d_->qpos[0], y = V == 4 ? y1 : d_->qpos[1];
    info_.Set(out, kX, x);
    info_.Set(out, kY, y);
    info_.Set(out, kDist, std::sqrt(x * x + y * y));
    info_.Set(out, kXVel, xv);
    info_.Set(out, kYVel, yv);
    info_.Set(out, kRewardSurvive, healthy_reward);
    info_.Set(out, kRewardAlive, healthy_reward);
    info_.Set(out, kRewardForward, forward);
    info_.Set(out, kRewardLinvel, forward);
    info_.Set(out, kForwardReward, forward);
    info_.Set(out, kRewardCtrl, -ctrl_cost);
    info_.Set(out, kRewardQuadctrl, -ctrl_cost);
    info_.Set(out, kRewardContact, -contact_cost);
    info_.Set(out, kRewardImpact, -contact_cost);
    WriteTendons(out);
  }

 private:
  // gymnasium's mass_center: body-mass-weighted mean of xipos (x, y).
  void MassCenter(double* x, double* y) const {
    double sx = 0.0, sy = 0.0;
    for (int b = 0; b < n_.nbody; ++b) {
      sx += m_->body_mass[b] * d_->xipos[3 * b];
      sy += m_->body_mass[b] * d_->xipos[3 * b + 1];
    }
    *x = sx / total_mass_;
    *y = sy / total_mass_;
  }
  void WriteObs(Output& out, bool reset) {
    obs_.Write(ObsBegin(out), n_, d_);
    ObsEnd(out, reset);
  }
  void WriteTendons(Output& out) {
    if (V != 5) return;
    Put(out.Info<double>(tendon_slot_), d_->ten_length, n_.ntendon);
    Put(out.Info<double>(tendon_slot_ + 1), d_->ten_velocity, n_.ntendon);
  }

  InfoFields<kNumFields> info_;
  HumanoidObs obs_;
  bool legacy_healthy_, pay_contact_, terminate_, need_cfrc_ = true;
  double forward_w_, ctrl_w_, healthy_reward_, z_min_, z_max_, contact_w_, contact_min_, contact_max_, noise_;
  double total_mass_ = 1.0;
  int tendon_slot_ = 0;
};

}  // namespace pp::mujoco_gym
