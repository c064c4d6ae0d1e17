// Point-mass domain (dm_control suite/point_mass.py): PointMassEasy, PointMassHard. Hard randomizes the actuator
// gains each episode: the two controls drive random, not-too-parallel unit directions, stored in the model's
// tendon wrap parameters (wrap_prm[0..3]); so this env owns a model copy and reports those four values as its task
// state.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"

namespace pp::mujoco_dmc {

class PointMassEnv : public DmcTask<PointMassEnv> {
 public:
  static constexpr const char* kName = "DmcPointMass";
  static const std::vector<DomainTask>& Tasks() {
    static const std::vector<DomainTask> t = {
        {"easy", "PointMassEasy-v1"},
        {"hard", "PointMassHard-v1"},
    };
    return t;
  }
  static std::vector<ConfigKey> ConfigKeys() {
    return DomainKeys("dm_control:suite.point_mass.get_model_and_assets()", 1, Tasks());
  }
  static std::vector<ObsDef> Observations(const Config&, const mjModel* m) {
    return {{"position", {static_cast<int>(m->nq)}}, {"velocity", {static_cast<int>(m->nv)}}};
  }

  PointMassEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed, /*own_model=*/true),
        randomize_gains_(TaskIndex(c, Tasks()) == 1),
        target_(GeomId("target")),
        mass_(GeomId("pointmass")) {
    if (m_->nwrap < 4) throw std::invalid_argument("the point_mass model needs 4 tendon wraps (config key 'xml_file')");
  }

 protected:
  void InitializeEpisode() override {
    RandomizeLimitedAndRotationalJoints();
    if (!randomize_gains_) return;
    double dir1[2], dir2[2];
    RandomDirection(dir1);
    do {
      RandomDirection(dir2);
    } while (std::abs(dir1[0] * dir2[0] + dir1[1] * dir2[1]) > 0.9);
    double* wrap = MutableModel()->wrap_prm;
    wrap[0] = dir1[0], wrap[1] = dir1[1], wrap[2] = dir2[0], wrap[3] = dir2[1];
  }

  double Reward() override {
    double to_target[3];
    for (int i = 0; i < 3; ++i) to_target[i] = d_->geom_xpos[3 * target_ + i] - d_->geom_xpos[3 * mass_ + i];
    const double dist = Norm(to_target, 3);
    const double target_size = m_->geom_size[3 * target_];
    const double near_target = Tolerance(dist, 0, target_size, target_size);
    double control = 0;
    for (int i = 0; i < m_->nu; ++i) control += Tolerance(d_->ctrl[i], 0, 0, 1, Sigmoid::kQuadratic, 0);
    const double small_control = (control / static_cast<double>(m_->nu) + 4) / 5;
    return near_target * small_control;
  }

  void WriteObservation(Output& out) override {
    Put(Obs(out, 0), d_->qpos, static_cast<int>(m_->nq));
    Put(Obs(out, 1), d_->qvel, static_cast<int>(m_->nv));
  }

  int TaskStateSize() const override { return 4; }
  void GetTaskState(double* s) const override { Put(s, m_->wrap_prm, 4); }
  void SetTaskState(const double* s) override { Put(MutableModel()->wrap_prm, s, 4); }

 private:
  // numpy: d = randn(2); d /= norm(d)
  void RandomDirection(double* d) {
    d[0] = Normal();
    d[1] = Normal();
    const double n = Norm(d, 2);
    d[0] /= n;
    d[1] /= n;
  }

  bool randomize_gains_;
  int target_, mass_;
};

}  // namespace pp::mujoco_dmc
