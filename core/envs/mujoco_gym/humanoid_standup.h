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
class HumanoidStandupEnv : public MujocoEnv {
  enum Field { kX, kY, kZDist, kRewardLinup, kRewardQuadctrl, kRewardImpact, kRewardAlive, kNumFields };
  static constexpr std::array<const char*, kNumFields> kFields = {
      "x_position", "y_position", "z_distance_from_origin", "reward_linup", "reward_quadctrl", "reward_impact",
      "reward_alive"};
  static std::vector<const char*> InfoNames() {
    if (V == 4) return {"reward_linup", "reward_quadctrl", "reward_impact", "reward_alive"};
    return {"x_position", "y_position", "z_distance_from_origin", "reward_linup", "reward_quadctrl", "reward_impact",
            "reward_alive"};
  }

 public:
  static constexpr const char* kName = V == 4 ? "HumanoidStandup-v4" : "HumanoidStandup-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    auto k = BaseKeys("humanoidstandup.xml", 5, 1000, kInf);
    auto obs = HumanoidObs::Keys(V);
    std::vector<ConfigKey> own = {
        {"forward_reward_weight", 1.0, "weight of the height reward qpos[2] / timestep (gymnasium's uph_cost_weight)", {}},
        {"ctrl_cost_weight", 0.1, "weight of the control cost", {}},
        {"contact_cost_weight", 5e-7, "weight of the impact cost (sum of squared cfrc_ext)", {}},
        {"contact_cost_min", -kInf, "the impact cost is clipped to [contact_cost_min, contact_cost_max]", {}},
        {"contact_cost_max", 10.0, "the impact cost is clipped to [contact_cost_min, contact_cost_max]", {}},
        {"healthy_reward", 1.0, "constant reward per step", {}},
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

  HumanoidStandupEnv(const Config& c, int env_id, uint64_t seed)
      : MujocoEnv(c, env_id, seed),
        info_(kFields, InfoNames()),
        obs_(c),
        uph_w_(c.Get<double>("forward_reward_weight")),
        ctrl_w_(c.Get<double>("ctrl_cost_weight")),
        contact_w_(c.Get<double>("contact_cost_weight")),
        contact_min_(c.Get<double>("contact_cost_min")),
        contact_max_(c.Get<double>("contact_cost_max")),
        healthy_reward_(c.Get<double>("healthy_reward")),
        noise_(c.Get<double>("reset_noise_scale")) {
    need_cfrc_ = obs_.uses_cfrc() || contact_w_ != 0.0;
    tendon_slot_ = static_cast<int>(InfoNames().size());
    SetObsDim(obs_.Dim(n_));
  }

  void Reset(Output& out) override {
    ResetData();
    ResetUniformNoise(noise_, /*normal_qvel=*/false);
    Forward();
    WriteObs(out, true);
    for (int f = 0; f < kNumFields; ++f) info_.Set(out, f, 0.0);
    WritePositions(out);
  }

  void Step(const ActionView& action, Output& out) override {
    Simulate(action.Get<double>(0), need_cfrc_);
    const double uph = uph_w_ * ((d_->qpos[2] - 0.0) / m_->opt.timestep);
    const double ctrl_cost = ctrl_w_ * SumSquares(d_->ctrl, n_.nu);
    double impact = 0.0;
    if (need_cfrc_) impact = Clip(contact_w_ * SumSquares(d_->cfrc_ext, 6 * n_.nbody), contact_min_, contact_max_);
    out.SetReward(uph - ctrl_cost - impact + healthy_reward_);
    WriteObs(out, false);
    info_.Set(out, kRewardLinup, uph);
    info_.Set(out, kRewardQuadctrl, -ctrl_cost);
    info_.Set(out, kRewardImpact, -impact);
    info_.Set(out, kRewardAlive, healthy_reward_);
    WritePositions(out);
  }

 private:
  void WriteObs(Output& out, bool reset) {
    obs_.Write(ObsBegin(out), n_, d_);
    ObsEnd(out, reset);
  }
  void WritePositions(Output& out) {
    info_.Set(out, kX, d_->qpos[0]);
    info_.Set(out, kY, d_->qpos[1]);
    info_.Set(out, kZDist, d_->qpos[2] - m_->qpos0[2]);
    if (V == 5) {
      Put(out.Info<double>(tendon_slot_), d_->ten_length, n_.ntendon);
      Put(out.Info<double>(tendon_slot_ + 1), d_->ten_velocity, n_.ntendon);
    }
  }

  InfoFields<kNumFields> info_;
  HumanoidObs obs_;
  double uph_w_, ctrl_w_, contact_w_, contact_min_, contact_max_, healthy_reward_, noise_;
  bool need_cfrc_ = true;
  int tendon_slot_ = 0;
};

}  // namespace pp::mujoco_gym
