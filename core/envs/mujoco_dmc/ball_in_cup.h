// Ball-in-cup domain (dm_control suite/ball_in_cup.py): BallInCupCatch.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"

namespace pp::mujoco_dmc {

class BallInCupEnv : public DmcTask<BallInCupEnv> {
 public:
  static constexpr const char* kName = "DmcBallInCup";
  static const std::vector<DomainTask>& Tasks() {
    static const std::vector<DomainTask> t = {
        {"catch", "BallInCupCatch-v1"},
    };
    return t;
  }
  // control_timestep .02 s over the model's 2 ms timestep: 10 physics steps per env step.
  static std::vector<ConfigKey> ConfigKeys() {
    return DomainKeys("dm_control:suite.ball_in_cup.get_model_and_assets()", 10, Tasks());
  }
  static std::vector<ObsDef> Observations(const Config&, const mjModel* m) {
    return {{"position", {static_cast<int>(m->nq)}}, {"velocity", {static_cast<int>(m->nv)}}};
  }

  BallInCupEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed),
        ball_x_(QposAdr("ball_x")),
        ball_z_(QposAdr("ball_z")),
        ball_(BodyId("ball")),
        ball_geom_(GeomId("ball")),
        target_(SiteId("target")) {}

 protected:
  // The ball somewhere above the cup, redrawn until it touches nothing.
  void InitializeEpisode() override {
    do {
      d_->qpos[ball_x_] = Uniform(-.2, .2);
      d_->qpos[ball_z_] = Uniform(.2, .5);
      AfterReset();
    } while (d_->ncon > 0);
  }

  // 1 when the ball is entirely inside the target box (x and z).
  double Reward() override {
    const double ball_size = m_->geom_size[3 * ball_geom_];
    for (int axis : {0, 2}) {
      const double gap = std::abs(d_->site_xpos[3 * target_ + axis] - d_->xpos[3 * ball_ + axis]);
      if (!(gap < m_->site_size[3 * target_ + axis] - ball_size)) return 0.0;
    }
    return 1.0;
  }

  void WriteObservation(Output& out) override {
    Put(Obs(out, 0), d_->qpos, static_cast<int>(m_->nq));
    Put(Obs(out, 1), d_->qvel, static_cast<int>(m_->nv));
  }

 private:
  int ball_x_, ball_z_, ball_, ball_geom_, target_;
};

}  // namespace pp::mujoco_dmc
