// InvertedPendulum-v4 / InvertedPendulum-v5, aligned with gymnasium 1.4's inverted_pendulum_v4.py / _v5.py.
// Terminates when the observation is not finite or the pole angle qpos[1] leaves [healthy_z_min, healthy_z_max]
// (gymnasium: |angle| > 0.2). v4 pays healthy_reward on every step; v5 only when not terminated
// (reward_if_not_terminated).
#pragma once

#include "core/envs/mujoco_gym/mujoco_env.h"

namespace pp::mujoco_gym {

template <int V>
class InvertedPendulumEnv : public MujocoEnv {
  enum Field { kRewardSurvive, kNumFields };
  static constexpr std::array<const char*, kNumFields> kFields = {"reward_survive"};
  static std::vector<const char*> InfoNames() {
    if (V == 4) return {};
    return {"reward_survive"};
  }
  static int ObsDim(const mjModel* m) { return Dims(m).nq + Dims(m).nv; }

 public:
  static constexpr const char* kName = V == 4 ? "InvertedPendulum-v4" : "InvertedPendulum-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    auto k = BaseKeys("inverted_pendulum.xml", 2, 1000, 950.0);
    std::vector<ConfigKey> own = {
        {"healthy_reward", 1.0, "reward per step", {}},
        {"reward_if_not_terminated", V == 5, "pay healthy_reward only on non-terminal steps (v5)", {}},
        {"healthy_z_min", -0.2, "healthy pole angle range (inclusive)", {}},
        {"healthy_z_max", 0.2, "healthy pole angle range (inclusive)", {}},
        {"reset_noise_scale", 0.01, "qpos += U(-s, s), qvel = U(-s, s) on reset", {}},
    };
    k.insert(k.end(), own.begin(), own.end());
    return k;
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    ModelPtr m = LoadModel(c);
    DefineCommonSpec(c, b, m.get(), ObsDim(m.get()), InfoNames());
  }

  InvertedPendulumEnv(const Config& c, int env_id, uint64_t seed)
      : MujocoEnv(c, env_id, seed),
        info_(kFields, InfoNames()),
        healthy_reward_(c.Get<double>("healthy_reward")),
        only_if_alive_(c.Get<bool>("reward_if_not_terminated")),
        min_(c.Get<double>("healthy_z_min")),
        max_(c.Get<double>("healthy_z_max")),
        noise_(c.Get<double>("reset_noise_scale")) {
    SetObsDim(ObsDim(m_));
  }

  void Reset(Output& out) override {
    ResetData();
    ResetUniformNoise(noise_, /*normal_qvel=*/false);
    Forward();
    WriteObs(out, true);
    info_.Set(out, kRewardSurvive, 0.0);
  }

  void Step(const ActionView& action, Output& out) override {
    Simulate(action.Get<double>(0), false);
    WriteObs(out, false);
    const double angle = d_->qpos[1];
    const bool terminated = !StateFinite() || angle < min_ || angle > max_;
    const double reward = (only_if_alive_ && terminated) ? 0.0 : healthy_reward_;
    out.SetReward(reward);
    out.SetTerminated(terminated);
    info_.Set(out, kRewardSurvive, reward);
  }

 private:
  void WriteObs(Output& out, bool reset) {
    double* o = ObsBegin(out);
    o = Put(o, d_->qpos, n_.nq);
    Put(o, d_->qvel, n_.nv);
    ObsEnd(out, reset);
  }

  InfoFields<kNumFields> info_;
  double healthy_reward_;
  bool only_if_alive_;
  double min_, max_, noise_;
};

}  // namespace pp::mujoco_gym
