// Cheetah domain (dm_control 1.0.50's suite/cheetah.py): CheetahRun-v1.
#pragma once

#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"

namespace pp::mujoco_dmc {

class CheetahEnv : public DmcTask<CheetahEnv> {
 public:
  static constexpr const char* kName = "DmcCheetah";
  static const std::vector<DomainTask>& Tasks() {
    static const std::vector<DomainTask> t = {
        {"run", "CheetahRun-v1"},
    };
    return t;
  }
  // frame_skip 1: dm_control gives no control_timestep, so one env step is one 0.01 s physics step.
  static std::vector<ConfigKey> ConfigKeys() {
    return DomainKeys("dm_control:suite.cheetah.get_model_and_assets()", 1, Tasks());
  }
  // position: qpos without the horizontal root coordinate; velocity: qvel.
  static std::vector<ObsDef> Observations(const Config&, const mjModel* m) {
    return {{"position", {static_cast<int>(m->nq) - 1}}, {"velocity", {static_cast<int>(m->nv)}}};
  }

  CheetahEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed), speed_(SensorId("torso_subtreelinvel")) {
    TaskIndex(c, Tasks());
  }

 protected:
  // Limited joints uniform in their range, 200 physics steps with zero control so the cheetah settles on the
  // ground, and the clock back to 0.
  void InitializeEpisode() override {
    // dm_control's physics.reset() ends with this forward pass, and the settling steps below start from it
    // (their first mj_step2 reuses its position-dependent quantities).
    AfterReset();
    for (int j = 0; j < m_->njnt; ++j) {
      if (m_->jnt_limited[j]) d_->qpos[m_->jnt_qposadr[j]] = Uniform(m_->jnt_range[2 * j], m_->jnt_range[2 * j + 1]);
    }
    // physics.step(nstep=200) as dm_control's legacy step does it (the model integrates with Euler)
    mj_step2(m_, d_);
    for (int i = 1; i < kSettleSteps; ++i) mj_step(m_, d_);
    mj_step1(m_, d_);
    d_->time = 0;
  }
  double Reward() override {
    return Tolerance(SensorData(speed_)[0], kRunSpeed, kInf, kRunSpeed, Sigmoid::kLinear, 0.0);
  }
  void WriteObservation(Output& out) override {
    Put(Obs(out, 0), d_->qpos + 1, static_cast<int>(m_->nq) - 1);
    Put(Obs(out, 1), d_->qvel, static_cast<int>(m_->nv));
  }

 private:
  static constexpr double kRunSpeed = 10;
  static constexpr int kSettleSteps = 200;
  int speed_;  // sensor: the torso's subtree linear velocity
};

}  // namespace pp::mujoco_dmc
