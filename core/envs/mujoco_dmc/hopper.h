// HopperStand-v1 and HopperHop-v1, aligned with dm_control 1.0.50's suite/hopper.py.
#pragma once

#include <cmath>

#include "core/envs/mujoco_dmc/dmc_env.h"
#include "core/envs/mujoco_dmc/locomotion.h"

namespace pp::mujoco_dmc {

class HopperEnv : public DmcTask<HopperEnv> {
 public:
  static constexpr const char* kName = "DmcHopper";
  static constexpr const char* kXml = "hopper.xml";
  static constexpr int kSubSteps = 4;  // control_timestep 0.02 s of 0.005 s physics steps
  static std::vector<std::string> TaskNames() { return {"stand", "hop"}; }

  static void DefineObs(const Config&, const mjModel* m, SpecBuilder& b) {
    b.Obs("obs:position", DType::kFloat64, {static_cast<int>(m->nq) - 1});
    b.Obs("obs:velocity", DType::kFloat64, {static_cast<int>(m->nv)});
    b.Obs("obs:touch", DType::kFloat64, {2});
  }

  HopperEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed),
        hop_(c.Get<std::string>("task_name") == "hop"),
        torso_(BodyId(m_, "torso")),
        foot_(BodyId(m_, "foot")),
        speed_(SensorAdr(m_, "torso_subtreelinvel")),
        toe_(SensorAdr(m_, "touch_toe")),
        heel_(SensorAdr(m_, "touch_heel")) {}

  void InitializeEpisode() { RandomizeLimitedAndRotationalJoints(m_, d_, gen_); }
  void WriteObs(Output& out) const {
    PutObs(out, 0, d_->qpos + 1, m_->nq - 1);  // without the horizontal position
    PutObs(out, 1, d_->qvel, m_->nv);
    const double touch[2] = {std::log1p(d_->sensordata[toe_]), std::log1p(d_->sensordata[heel_])};
    PutObs(out, 2, touch, 2);
  }
  double Reward() const {
    // the torso's height over the foot, between the bodies' centres of mass (xipos)
    const double height = d_->xipos[3 * torso_ + 2] - d_->xipos[3 * foot_ + 2];
    const double standing = Tolerance(height, kStandHeight, 2.0);
    if (hop_) {
      return standing * Tolerance(d_->sensordata[speed_], kHopSpeed, kInf, kHopSpeed / 2, Sigmoid::kLinear, 0.5);
    }
    return standing * ((SmallControl(m_, d_) + 4) / 5);
  }

 private:
  static constexpr double kStandHeight = 0.6, kHopSpeed = 2;
  bool hop_;
  int torso_, foot_, speed_, toe_, heel_;
};

}  // namespace pp::mujoco_dmc
