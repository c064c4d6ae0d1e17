// Planar walker domain (dm_control 1.0.50's suite/walker.py): WalkerStand-v1, WalkerWalk-v1, WalkerRun-v1.
#pragma once

#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"

namespace pp::mujoco_dmc {

class WalkerEnv : public DmcTask<WalkerEnv> {
 public:
  static constexpr const char* kName = "DmcWalker";
  static const std::vector<DomainTask>& Tasks() {
    static const std::vector<DomainTask> t = {
        {"stand", "WalkerStand-v1"},
        {"walk", "WalkerWalk-v1"},
        {"run", "WalkerRun-v1"},
    };
    return t;
  }
  // frame_skip 10: control_timestep 0.025 s of 0.0025 s physics steps.
  static std::vector<ConfigKey> ConfigKeys() {
    return DomainKeys("dm_control:suite.walker.get_model_and_assets()", 10, Tasks());
  }
  // orientations: xmat's xx and xz of every body but the world; height: the torso's z; velocity: qvel.
  static std::vector<ObsDef> Observations(const Config&, const mjModel* m) {
    return {{"orientations", {2 * (static_cast<int>(m->nbody) - 1)}},
            {"height", {}},
            {"velocity", {static_cast<int>(m->nv)}}};
  }

  WalkerEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed),
        move_speed_(kMoveSpeed[TaskIndex(c, Tasks())]),
        torso_(BodyId("torso")),
        speed_(SensorId("torso_subtreelinvel")) {}

 protected:
  void InitializeEpisode() override { RandomizeLimitedAndRotationalJoints(); }
  double Reward() override {
    const double standing = Tolerance(TorsoHeight(), kStandHeight, kInf, kStandHeight / 2);
    const double upright = (1 + d_->xmat[9 * torso_ + 8]) / 2;  // the torso's zz
    const double stand_reward = (3 * standing + upright) / 4;
    if (move_speed_ == 0) return stand_reward;
    const double move = Tolerance(SensorData(speed_)[0], move_speed_, kInf, move_speed_ / 2, Sigmoid::kLinear, 0.5);
    return stand_reward * (5 * move + 1) / 6;
  }
  void WriteObservation(Output& out) override {
    double* o = Obs(out, 0);
    for (int b = 1; b < m_->nbody; ++b) {
      *o++ = d_->xmat[9 * b];
      *o++ = d_->xmat[9 * b + 2];
    }
    *Obs(out, 1) = TorsoHeight();
    Put(Obs(out, 2), d_->qvel, static_cast<int>(m_->nv));
  }

 private:
  static constexpr double kStandHeight = 1.2;
  static constexpr double kMoveSpeed[] = {0.0, 1.0, 8.0};  // per task, m/s (0: only stand)
  double TorsoHeight() const { return d_->xpos[3 * torso_ + 2]; }

  double move_speed_;
  int torso_;
  int speed_;  // sensor: the torso's subtree linear velocity
};

}  // namespace pp::mujoco_dmc
