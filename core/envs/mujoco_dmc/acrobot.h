// Acrobot domain (dm_control suite/acrobot.py): AcrobotSwingup, AcrobotSwingupSparse.
#pragma once

#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"

namespace pp::mujoco_dmc {

class AcrobotEnv : public DmcTask<AcrobotEnv> {
 public:
  static constexpr const char* kName = "DmcAcrobot";
  static const std::vector<DomainTask>& Tasks() {
    static const std::vector<DomainTask> t = {
        {"swingup", "AcrobotSwingup-v1"},
        {"swingup_sparse", "AcrobotSwingupSparse-v1"},
    };
    return t;
  }
  static std::vector<ConfigKey> ConfigKeys() {
    return DomainKeys("dm_control:suite.acrobot.get_model_and_assets()", 1, Tasks());
  }
  // orientations: xz of the upper and lower arm, then their zz; velocity: qvel.
  static std::vector<ObsDef> Observations(const Config&, const mjModel* m) {
    return {{"orientations", {4}}, {"velocity", {static_cast<int>(m->nv)}}};
  }

  AcrobotEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed),
        sparse_(TaskIndex(c, Tasks()) == 1),
        shoulder_(QposAdr("shoulder")),
        elbow_(QposAdr("elbow")),
        arms_{BodyId("upper_arm"), BodyId("lower_arm")},
        target_(SiteId("target")),
        tip_(SiteId("tip")) {}

 protected:
  void InitializeEpisode() override {
    d_->qpos[shoulder_] = Uniform(-kPi, kPi);
    d_->qpos[elbow_] = Uniform(-kPi, kPi);
  }

  double Reward() override {
    double tip_to_target[3];
    for (int i = 0; i < 3; ++i) tip_to_target[i] = d_->site_xpos[3 * target_ + i] - d_->site_xpos[3 * tip_ + i];
    const double dist = Norm(tip_to_target, 3);
    return Tolerance(dist, 0, m_->site_size[3 * target_], sparse_ ? 0 : 1);
  }

  void WriteObservation(Output& out) override {
    double* o = Obs(out, 0);
    for (int b : arms_) *o++ = d_->xmat[9 * b + 2];  // xz
    for (int b : arms_) *o++ = d_->xmat[9 * b + 8];  // zz
    Put(Obs(out, 1), d_->qvel, static_cast<int>(m_->nv));
  }

 private:
  bool sparse_;
  int shoulder_, elbow_;
  int arms_[2];
  int target_, tip_;
};

}  // namespace pp::mujoco_dmc
