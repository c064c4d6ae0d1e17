// LqrLqr21-v1 and LqrLqr62-v1, aligned with dm_control 1.0.50's suite/lqr.py: a chain of 2 (6) point masses on
// springs, the first 1 (2) driven by motors; reward 1 - (|q|^2 / 2 + 0.1 |u|^2 / 2); the episode terminates
// (discount 0) once the state's norm falls below 1e-6. dm_control has no time limit here; EnvPool's is 1000 steps.
//
// The model is dm_control's generated chain (get_model_and_assets with a fixed seed). dm_control draws each joint's
// stiffness from U(15, 25) when it builds an env's model; here each env draws them from its own generator when it
// is made, so they stay fixed for the env's lifetime as in dm_control (task state: GetState appends them).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"

namespace pp::mujoco_dmc {

class LqrEnv : public DmcTask<LqrEnv> {
 public:
  static constexpr const char* kName = "DmcLqr";
  static const std::vector<DomainTask>& Tasks() {
    static const std::vector<DomainTask> t = {
        {"lqr_2_1", "LqrLqr21-v1", "dm_control:suite.lqr.get_model_and_assets(n_bodies=2, n_actuators=1, random=0)"},
        {"lqr_6_2", "LqrLqr62-v1", "dm_control:suite.lqr.get_model_and_assets(n_bodies=6, n_actuators=2, random=0)"},
    };
    return t;
  }
  // dm_control's default control_timestep: one 0.03 s physics step; each task id selects the chain's size
  static std::vector<ConfigKey> ConfigKeys() {
    return DomainKeys("dm_control:suite.lqr.get_model_and_assets(n_bodies=2, n_actuators=1, random=0)", 1, Tasks());
  }
  static std::vector<ObsDef> Observations(const Config&, const mjModel* m) {
    return {{"position", {static_cast<int>(m->nq)}}, {"velocity", {static_cast<int>(m->nv)}}};
  }

  LqrEnv(const Config& c, int env_id, uint64_t seed) : DmcTask(c, env_id, seed, true) {
    for (int j = 0; j < m_->njnt; ++j) MutableModel()->jnt_stiffness[j] = Uniform(kStiffnessMin, kStiffnessMax);
  }

 protected:
  // The joints' stiffness: the task state dm_control keeps in the model.
  int TaskStateSize() const override { return static_cast<int>(m_->njnt); }
  void GetTaskState(double* s) const override { Put(s, m_->jnt_stiffness, static_cast<int>(m_->njnt)); }
  void SetTaskState(const double* s) override { Put(MutableModel()->jnt_stiffness, s, static_cast<int>(m_->njnt)); }

  // A random state on the sphere of radius sqrt(2): qpos = sqrt(2) * u / |u| with u ~ N(0, 1)^nq.
  void InitializeEpisode() override {
    double norm = 0;
    for (int i = 0; i < m_->nq; ++i) {
      d_->qpos[i] = Normal();
      norm += d_->qpos[i] * d_->qpos[i];
    }
    norm = std::sqrt(norm);
    for (int i = 0; i < m_->nq; ++i) d_->qpos[i] = std::sqrt(2.0) * d_->qpos[i] / norm;
  }

  void WriteObservation(Output& out) override {
    Put(Obs(out, 0), d_->qpos, static_cast<int>(m_->nq));
    Put(Obs(out, 1), d_->qvel, static_cast<int>(m_->nv));
  }

  double Reward() override {
    const double state_cost = 0.5 * Dot(d_->qpos, m_->nq);
    const double control_cost = 0.5 * Dot(d_->ctrl, m_->nu);
    return 1 - (state_cost + kControlCostCoef * control_cost);
  }

  // dm_control's get_termination: the physics state (qpos, qvel, act) is within 1e-6 of the origin.
  bool Terminated() override {
    return std::sqrt(Dot(d_->qpos, m_->nq) + Dot(d_->qvel, m_->nv) + Dot(d_->act, m_->na)) < kTerminalTol;
  }

 private:
  static constexpr double kControlCostCoef = 0.1;
  static constexpr double kTerminalTol = 1e-6;
  static constexpr double kStiffnessMin = 15, kStiffnessMax = 25;

  static double Dot(const double* x, int n) {
    double s = 0;
    for (int i = 0; i < n; ++i) s += x[i] * x[i];
    return s;
  }
};

}  // namespace pp::mujoco_dmc
