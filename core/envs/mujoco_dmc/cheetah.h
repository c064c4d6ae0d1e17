// CheetahRun-v1, aligned with dm_control 1.0.50's suite/cheetah.py.
#pragma once

#include "core/envs/mujoco_dmc/dmc_env.h"

namespace pp::mujoco_dmc {

class CheetahEnv : public DmcTask<CheetahEnv> {
 public:
  static constexpr const char* kName = "DmcCheetah";
  static constexpr const char* kXml = "cheetah.xml";
  static constexpr int kSubSteps = 1;  // no control_timestep: dm_control steps the 0.01 s physics once
  static std::vector<std::string> TaskNames() { return {"run"}; }

  static void DefineObs(const Config&, const mjModel* m, SpecBuilder& b) {
    b.Obs("obs:position", DType::kFloat64, {static_cast<int>(m->nq) - 1});
    b.Obs("obs:velocity", DType::kFloat64, {static_cast<int>(m->nv)});
  }

  CheetahEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed), speed_(SensorAdr(m_, "torso_subtreelinvel")) {}

  // Limited joints uniform in their range, then 200 physics steps with zero control so the cheetah settles on
  // the ground, and the clock back to 0.
  void InitializeEpisode() {
    for (int j = 0; j < m_->njnt; ++j) {
      if (m_->jnt_limited[j]) d_->qpos[m_->jnt_qposadr[j]] = Uniform(m_->jnt_range[2 * j], m_->jnt_range[2 * j + 1]);
    }
    PhysicsStep(200);
    d_->time = 0;
  }
  void WriteObs(Output& out) const {
    PutObs(out, 0, d_->qpos + 1, m_->nq - 1);  // without the horizontal position
    PutObs(out, 1, d_->qvel, m_->nv);
  }
  double Reward() const {
    return Tolerance(d_->sensordata[speed_], kRunSpeed, kInf, kRunSpeed, Sigmoid::kLinear, 0.0);
  }

 private:
  static constexpr double kRunSpeed = 10;
  int speed_;
};

}  // namespace pp::mujoco_dmc
