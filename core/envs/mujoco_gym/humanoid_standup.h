// HumanoidStandup-v4 / HumanoidStandup-v5, aligned with gymnasium 1.4's humanoidstandup_v4.py / _v5.py.
// reward = forward_reward_weight * qpos[2] / timestep - ctrl cost - clip(contact cost) + healthy_reward; never
// terminates. The observation is Humanoid's (humanoid.h), with the same v4/v5 defaults.
// gymnasium -> config names: uph_cost_weight -> forward_reward_weight (gymnasium 1.4 accepts uph_cost_weight
// but never applies it; here it is applied: identical at the default 1), impact_cost_weight ->
// contact_cost_weight, impact_cost_range -> contact_cost_min/max; the constant +1 is healthy_reward.
#pragma once

#include "core/envs/mujoco_gym/humanoid.h"

namespace pp::mujoco_gym {

template <int V>
class HumanoidStandupEnv : public MujocoTask<HumanoidStandupEnv<V>> {
  using Base = MujocoTask<HumanoidStandupEnv<V>>;
  using Base::d_, Base::m_, Base::n_, Base::p_, Base::info_;

 public:
  static constexpr const char* kName = V == 4 ? "HumanoidStandup-v4" : "HumanoidStandup-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    return TaskKeys(V, "humanoidstandup.xml", 5, 1000, kInf,
                    {{"forward_reward_weight",
                      1.0,
                      "weight of the height reward qpos[2] / timestep (gymnasium's uph_cost_weight)",
                      {}},
                     CtrlWeightKey(0.1),
                     ContactWeightKey(5e-7),
                     MinKey("contact_cost", -kInf, "impact cost clip"),
                     MaxKey("contact_cost", 10.0, "impact cost clip"),
                     {"healthy_reward", 1.0, "constant reward per step", {}},
                     ResetNoiseKey(1e-2, false)},
                    HumanoidObs::Keys(V));
  }
  static std::vector<const char*> InfoNames() {
    if (V == 4) return {"reward_linup", "reward_quadctrl", "reward_impact", "reward_alive"};
    return {"x_position",    "y_position",  "z_distance_from_origin", "reward_linup", "reward_quadctrl",
            "reward_impact", "reward_alive"};
  }
  static int ObsDim(const Config& c, const mjModel* m) { return HumanoidObs(c).Dim(Dims(m)); }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    Base::DefineSpec(c, b);
    if (V == 5) DefineTendonInfo(b, LoadModel(c).get());
  }

  HumanoidStandupEnv(const Config& c, int env_id, uint64_t seed)
      : Base(c, env_id, seed, /*normal_qvel=*/false), obs_(c), contact_cost_(ReadRange(c, "contact_cost")) {
    need_cfrc_ = obs_.uses_cfrc() || p_.contact_w != 0.0;
  }

  void Reset(Output& out) override {
    this->ResetWithNoise(out);
    WritePositions(out);
  }

  void Step(const ActionView& action, Output& out) override {
    this->Simulate(action.Get<double>(0), need_cfrc_);
    const double uph = p_.forward_w * ((d_->qpos[2] - 0.0) / m_->opt.timestep);
    const double ctrl_cost = p_.CtrlCost(d_->ctrl, n_.nu);
    double impact = 0.0;
    if (need_cfrc_) impact = this->ClippedContactCost(contact_cost_);
    out.SetReward(uph - ctrl_cost - impact + p_.healthy_reward);
    this->WriteObs(out, false);
    info_.Set(out, {{kRewardLinup, uph},
                    {kRewardQuadctrl, -ctrl_cost},
                    {kRewardImpact, -impact},
                    {kRewardAlive, p_.healthy_reward}});
    WritePositions(out);
  }

  void WriteFrame(double* o) { obs_.Write(o, n_, d_); }

 private:
  void WritePositions(Output& out) {
    info_.Set(
        out,
        {{kXPosition, d_->qpos[0]}, {kYPosition, d_->qpos[1]}, {kZDistanceFromOrigin, d_->qpos[2] - m_->qpos0[2]}});
    if (V == 5) PutTendons(out, tendon_slot_, d_, n_.ntendon);
  }

  HumanoidObs obs_;
  Range contact_cost_;
  bool need_cfrc_ = true;
  const int tendon_slot_ = static_cast<int>(InfoNames().size());
};

}  // namespace pp::mujoco_gym
