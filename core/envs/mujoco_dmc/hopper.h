// Hopper domain (dm_control 1.0.50's suite/hopper.py): HopperStand-v1, HopperHop-v1.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"
#include "core/envs/mujoco_dmc/locomotion.h"

namespace pp::mujoco_dmc {

class HopperEnv : public DmcTask<HopperEnv> {
 public:
  static constexpr const char* kName = "DmcHopper";
  static const std::vector<DomainTask>& Tasks() {
    static const std::vector<DomainTask> t = {
        {"stand", "HopperStand-v1"},
        {"hop", "HopperHop-v1"},
    };
    return t;
  }
  // frame_skip 4: control_timestep 0.02 s of 0.005 s physics steps.
  static std::vector<ConfigKey> ConfigKeys() {
    return DomainKeys("dm_control:suite.hopper.get_model_and_assets()", 4, Tasks());
  }
  // position: qpos without the horizontal root coordinate; velocity: qvel; touch: log1p of the toe's and the
  // heel's touch sensors.
  static std::vector<ObsDef> Observations(const Config&, const mjModel* m) {
    return {{"position", {static_cast<int>(m->nq) - 1}}, {"velocity", {static_cast<int>(m->nv)}}, {"touch", {2}}};
  }

  HopperEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed),
        hop_(TaskIndex(c, Tasks()) == 1),
        torso_(BodyId("torso")),
        foot_(BodyId("foot")),
        speed_(SensorId("torso_subtreelinvel")),
        toe_(SensorId("touch_toe")),
        heel_(SensorId("touch_heel")) {}

 protected:
  void InitializeEpisode() override { RandomizeLimitedAndRotationalJoints(); }
  double Reward() override {
    // the torso's height over the foot, between the bodies' centres of mass (xipos)
    const double height = d_->xipos[3 * torso_ + 2] - d_->xipos[3 * foot_ + 2];
    const double standing = Tolerance(height, kStandHeight, 2.0);
    if (hop_) {
      return standing * Tolerance(SensorData(speed_)[0], kHopSpeed, kInf, kHopSpeed / 2, Sigmoid::kLinear, 0.5);
    }
    return standing * ((SmallControl(m_, d_) + 4) / 5);
  }
  void WriteObservation(Output& out) override {
    Put(Obs(out, 0), d_->qpos + 1, static_cast<int>(m_->nq) - 1);
    Put(Obs(out, 1), d_->qvel, static_cast<int>(m_->nv));
    double* touch = Obs(out, 2);
    touch[0] = std::log1p(SensorData(toe_)[0]);
    touch[1] = std::log1p(SensorData(heel_)[0]);
  }

 private:
  static constexpr double kStandHeight = 0.6, kHopSpeed = 2;
  bool hop_;
  int torso_, foot_;
  int speed_, toe_, heel_;  // sensors
};

}  // namespace pp::mujoco_dmc
