// WalkerStand-v1, WalkerWalk-v1 and WalkerRun-v1, aligned with dm_control 1.0.50's suite/walker.py.
#pragma once

#include "core/envs/mujoco_dmc/dmc_env.h"
#include "core/envs/mujoco_dmc/locomotion.h"

namespace pp::mujoco_dmc {

class WalkerEnv : public DmcTask<WalkerEnv> {
 public:
  static constexpr const char* kName = "DmcWalker";
  static constexpr const char* kXml = "walker.xml";
  static constexpr int kSubSteps = 10;  // control_timestep 0.025 s of 0.0025 s physics steps
  static std::vector<std::string> TaskNames() { return {"stand", "walk", "run"}; }

  static void DefineObs(const Config&, const mjModel* m, SpecBuilder& b) {
    b.Obs("obs:orientations", DType::kFloat64, {2 * (static_cast<int>(m->nbody) - 1)});
    b.Obs("obs:height", DType::kFloat64, {});
    b.Obs("obs:velocity", DType::kFloat64, {static_cast<int>(m->nv)});
  }

  WalkerEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed),
        move_speed_(MoveSpeed(c.Get<std::string>("task_name"))),
        torso_(BodyId(m_, "torso")),
        speed_(SensorAdr(m_, "torso_subtreelinvel")) {}

  void InitializeEpisode() { RandomizeLimitedAndRotationalJoints(m_, d_, gen_); }
  void WriteObs(Output& out) const {
    // the planar orientation of every body but the world: xmat's xx and xz entries
    double* o = out.Obs<double>(0);
    for (int b = 1; b < m_->nbody; ++b) {
      *o++ = d_->xmat[9 * b];
      *o++ = d_->xmat[9 * b + 2];
    }
    *out.Obs<double>(1) = TorsoHeight();
    PutObs(out, 2, d_->qvel, m_->nv);
  }
  double Reward() const {
    const double standing = Tolerance(TorsoHeight(), kStandHeight, kInf, kStandHeight / 2);
    const double upright = (1 + d_->xmat[9 * torso_ + 8]) / 2;  // xmat's zz
    const double stand_reward = (3 * standing + upright) / 4;
    if (move_speed_ == 0) return stand_reward;
    const double move =
        Tolerance(d_->sensordata[speed_], move_speed_, kInf, move_speed_ / 2, Sigmoid::kLinear, 0.5);
    return stand_reward * (5 * move + 1) / 6;
  }

 private:
  static constexpr double kStandHeight = 1.2;
  // The target horizontal speed in m/s (0: only stand).
  static double MoveSpeed(const std::string& task) { return task == "stand" ? 0.0 : task == "walk" ? 1.0 : 8.0; }
  double TorsoHeight() const { return d_->xpos[3 * torso_ + 2]; }

  double move_speed_;
  int torso_, speed_;
};

}  // namespace pp::mujoco_dmc
