// Reacher domain (dm_control suite/reacher.py): ReacherEasy (target radius .05), ReacherHard (.015). The target is
// a world geom that dm_control moves by editing the model (geom_pos) each episode: this env owns a model copy and
// reports the target's (x, y) as its task state.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"

namespace pp::mujoco_dmc {

class ReacherEnv : public DmcTask<ReacherEnv> {
 public:
  static constexpr const char* kName = "DmcReacher";
  static const std::vector<DomainTask>& Tasks() {
    static const std::vector<DomainTask> t = {
        {"easy", "ReacherEasy-v1"},
        {"hard", "ReacherHard-v1"},
    };
    return t;
  }
  static std::vector<ConfigKey> ConfigKeys() {
    return DomainKeys("dm_control:suite.reacher.get_model_and_assets()", 1, Tasks());
  }
  static std::vector<ObsDef> Observations(const Config&, const mjModel* m) {
    return {{"position", {static_cast<int>(m->nq)}}, {"to_target", {2}}, {"velocity", {static_cast<int>(m->nv)}}};
  }

  ReacherEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed, /*own_model=*/true), target_(GeomId("target")), finger_(GeomId("finger")) {
    MutableModel()->geom_size[3 * target_] = TaskIndex(c, Tasks()) == 0 ? .05 : .015;
  }

 protected:
  void InitializeEpisode() override {
    RandomizeLimitedAndRotationalJoints();
    const double angle = Uniform(0, 2 * kPi);
    const double radius = Uniform(.05, .20);
    double* pos = MutableModel()->geom_pos + 3 * target_;
    pos[0] = radius * std::sin(angle);
    pos[1] = radius * std::cos(angle);
  }

  double Reward() override {
    double to_target[2];
    ToTarget(to_target);
    const double radii = m_->geom_size[3 * target_] + m_->geom_size[3 * finger_];
    return Tolerance(Norm(to_target, 2), 0, radii);
  }

  void WriteObservation(Output& out) override {
    Put(Obs(out, 0), d_->qpos, static_cast<int>(m_->nq));
    ToTarget(Obs(out, 1));
    Put(Obs(out, 2), d_->qvel, static_cast<int>(m_->nv));
  }

  int TaskStateSize() const override { return 2; }
  void GetTaskState(double* s) const override { Put(s, m_->geom_pos + 3 * target_, 2); }
  void SetTaskState(const double* s) override { Put(MutableModel()->geom_pos + 3 * target_, s, 2); }

 private:
  // target - finger in the plane (x, y)
  void ToTarget(double* o) const {
    for (int i = 0; i < 2; ++i) o[i] = d_->geom_xpos[3 * target_ + i] - d_->geom_xpos[3 * finger_ + i];
  }

  int target_, finger_;
};

}  // namespace pp::mujoco_dmc
