// Pendulum domain (dm_control suite/pendulum.py): PendulumSwingup.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"

namespace pp::mujoco_dmc {

class PendulumEnv : public DmcTask<PendulumEnv> {
 public:
  static constexpr const char* kName = "DmcPendulum";
  static const std::vector<DomainTask>& Tasks() {
    static const std::vector<DomainTask> t = {
        {"swingup", "PendulumSwingup-v1"},
    };
    return t;
  }
  static std::vector<ConfigKey> ConfigKeys() {
    return DomainKeys("dm_control:suite.pendulum.get_model_and_assets()", 1, Tasks());
  }
  // orientation: the pole's (zz, xz); velocity: the hinge's angular velocity.
  static std::vector<ObsDef> Observations(const Config&, const mjModel*) {
    return {{"orientation", {2}}, {"velocity", {1}}};
  }

  PendulumEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed), hinge_(QposAdr("hinge")), hinge_v_(QvelAdr("hinge")), pole_(BodyId("pole")) {}

 protected:
  void InitializeEpisode() override { d_->qpos[hinge_] = Uniform(-kPi, kPi); }

  // Upright within 8 degrees (dm_control: _COSINE_BOUND = cos(deg2rad(8))).
  double Reward() override { return Tolerance(d_->xmat[9 * pole_ + 8], std::cos(8 * kPi / 180), 1); }

  void WriteObservation(Output& out) override {
    double* o = Obs(out, 0);
    o[0] = d_->xmat[9 * pole_ + 8];  // zz
    o[1] = d_->xmat[9 * pole_ + 2];  // xz
    Obs(out, 1)[0] = d_->qvel[hinge_v_];
  }

 private:
  int hinge_, hinge_v_, pole_;
};

}  // namespace pp::mujoco_dmc
