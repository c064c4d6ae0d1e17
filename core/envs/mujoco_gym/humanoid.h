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
    std::vector<ConfigKey> keys = {
        ExcludePositionsKey("x, y"),
        {"exclude_worldbody_observations", version == 5, "observe cinert/cvel/cfrc_ext of bodies 1.. only", {}},
        {"exclude_root_actuator_forces", version == 5, "observe qfrc_actuator[6:] only", {}}};
    for (const char* part : {"cinert", "cvel", "qfrc_actuator", "cfrc_ext"}) {
      keys.push_back({std::string("include_") + part + "_in_observation", true, std::string("observe ") + part, {}});
    }
    return keys;
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
    return n.nq - (no_pos_ ? 2 : 0) + n.nv + (cinert_ ? 10 * nb : 0) + (cvel_ ? 6 * nb : 0) + (qfrc_ ? n.nv - q0_ : 0) +
           (cfrc_ ? 6 * nb : 0);
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
// Writes them; `slot` is the index of tendon_length among the info arrays (= the number of scalar fields).
inline void PutTendons(Output& out, int slot, const mjData* d, int ntendon) {
  Put(out.Info<double>(slot), d->ten_length, ntendon);
  Put(out.Info<double>(slot + 1), d->ten_velocity, ntendon);
}

template <int V>
class HumanoidEnv : public MujocoTask<HumanoidEnv<V>> {
  using Base = MujocoTask<HumanoidEnv<V>>;
  using Base::d_, Base::m_, Base::n_, Base::p_, Base::info_;

 public:
  static constexpr const char* kName = V == 4 ? "Humanoid-v4" : "Humanoid-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    return TaskKeys(V, "humanoid.xml", 5, 1000, kInf,
                    {LegacyHealthyKey(V),
                     {"use_contact_force", V == 5, "subtract the contact cost from the reward (v5)", {}},
                     TerminateKey(),
                     ForwardWeightKey(1.25),
                     CtrlWeightKey(0.1),
                     HealthyRewardKey(5.0),
                     MinKey("healthy_z", 1.0, "healthy torso height (exclusive)"),
                     MaxKey("healthy_z", 2.0, "healthy torso height (exclusive)"),
                     ContactWeightKey(5e-7),
                     MinKey("contact_cost", -kInf, "contact cost clip"),
                     MaxKey("contact_cost", 10.0, "contact cost clip"),
                     ResetNoiseKey(1e-2, false)},
                    HumanoidObs::Keys(V));
  }
  static std::vector<const char*> InfoNames() {
    if (V == 4) {
      return {"reward_linvel",        "reward_quadctrl", "reward_alive", "x_position",     "y_position",
              "distance_from_origin", "x_velocity",      "y_velocity",   "forward_reward", "reward_impact"};
    }
    return {"x_position",      "y_position",     "distance_from_origin", "x_velocity",     "y_velocity",
            "reward_survive",  "reward_forward", "reward_ctrl",          "reward_contact", "reward_linvel",
            "reward_quadctrl", "reward_alive",   "reward_impact"};
  }
  static int ObsDim(const Config& c, const mjModel* m) { return HumanoidObs(c).Dim(Dims(m)); }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    Base::DefineSpec(c, b);
    if (V == 5) DefineTendonInfo(b, LoadModel(c).get());
  }

  HumanoidEnv(const Config& c, int env_id, uint64_t seed)
      : Base(c, env_id, seed, /*normal_qvel=*/false),
        obs_(c),
        pay_contact_(c.Get<bool>("use_contact_force")),
        contact_cost_(ReadRange(c, "contact_cost")) {
    need_cfrc_ = obs_.uses_cfrc() || (pay_contact_ && p_.contact_w != 0.0);
    double total = 0.0;
    for (int b = 0; b < n_.nbody; ++b) total += m_->body_mass[b];
    total_mass_ = total;
  }

  void Reset(Output& out) override {
    this->ResetWithNoise(out);
    double x = d_->qpos[0], y = d_->qpos[1];
    if (V == 4) MassCenter(&x, &y);
    info_.SetPlanePosition(out, x, y);
    if (V == 5) PutTendons(out, tendon_slot_, d_, n_.ntendon);
  }

  void Step(const ActionView& action, Output& out) override {
    double x0, y0, x1, y1;
    MassCenter(&x0, &y0);
    this->Simulate(action.Get<double>(0), need_cfrc_);
    MassCenter(&x1, &y1);
    const double xv = (x1 - x0) / this->dt_, yv = (y1 - y0) / this->dt_;

    const double z = d_->qpos[2];
    const bool healthy = p_.z_min < z && z < p_.z_max;
    const double forward = p_.forward_w * xv;
    const double healthy_reward = p_.HealthyReward(healthy);
    const double ctrl_cost = p_.CtrlCost(d_->ctrl, n_.nu);
    double contact_cost = 0.0;
    if (need_cfrc_) contact_cost = this->ClippedContactCost(contact_cost_);
    const double costs = pay_contact_ ? ctrl_cost + contact_cost : ctrl_cost;
    out.SetReward((forward + healthy_reward) - costs);
    out.SetTerminated(!healthy && p_.terminate);
    this->WriteObs(out, false);

    info_.SetPlanePosition(out, V == 4 ? x1 : d_->qpos[0], V == 4 ? y1 : d_->qpos[1]);
    info_.Set(out, {{kXVelocity, xv},
                    {kYVelocity, yv},
                    {kRewardSurvive, healthy_reward},
                    {kRewardAlive, healthy_reward},
                    {kRewardForward, forward},
                    {kRewardLinvel, forward},
                    {kForwardReward, forward},
                    {kRewardCtrl, -ctrl_cost},
                    {kRewardQuadctrl, -ctrl_cost},
                    {kRewardContact, -contact_cost},
                    {kRewardImpact, -contact_cost}});
    if (V == 5) PutTendons(out, tendon_slot_, d_, n_.ntendon);
  }

  void WriteFrame(double* o) { obs_.Write(o, n_, d_); }

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

  HumanoidObs obs_;
  bool pay_contact_, need_cfrc_ = true;
  Range contact_cost_;
  double total_mass_ = 1.0;
  const int tendon_slot_ = static_cast<int>(InfoNames().size());
};

}  // namespace pp::mujoco_gym
