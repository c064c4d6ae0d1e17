// LqrLqr21-v1 and LqrLqr62-v1, aligned with dm_control 1.0.50's suite/lqr.py: a chain of 2 (6) point masses on
// springs, the first 1 (2) driven by motors; reward 1 - (|q|^2 / 2 + 0.1 |u|^2 / 2); the episode terminates
// (discount 0) once the state's norm falls below 1e-6. dm_control has no time limit here; EnvPool's is 1000 steps.
//
// The model: lqr.xml plus dm_control's generated chain (bodies, slide joints, spheres, sites, motors and tendons),
// built on MuJoCo's mjSpec. dm_control draws each joint's stiffness from U(15, 25) when it builds an env's model;
// here each env draws them from its own generator when it is made, so they stay fixed for the env's lifetime as in
// dm_control (task state outside the physics state: GetState appends them).
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"
#include "core/envs/mujoco_dmc/manipulation_common.h"

namespace pp::mujoco_dmc {

class LqrEnv : public DmcTask<LqrEnv> {
 public:
  static constexpr const char* kName = "DmcLqr";
  static constexpr const char* kXml = "lqr.xml";
  static constexpr int kSubSteps = 1;  // dm_control's default control_timestep: the physics step (0.03 s)
  static std::vector<std::string> TaskNames() { return {"lqr_2_1", "lqr_6_2"}; }

  static mjModel* LoadModel(const Config& c) {
    const Size size = SizeOf(c);
    return EditModel(ModelPath(c), [size](mjSpec* spec) { AddChain(spec, size); });
  }

  static void DefineObs(const Config&, const mjModel* m, SpecBuilder& b) {
    b.Obs("position", DType::kFloat64, {static_cast<int>(m->nq)});
    b.Obs("velocity", DType::kFloat64, {static_cast<int>(m->nv)});
  }

  LqrEnv(const Config& c, int env_id, uint64_t seed) : DmcTask(c, env_id, seed) {
    for (int j = 0; j < m_->njnt; ++j) m_->jnt_stiffness[j] = Uniform(kStiffnessMin, kStiffnessMax);
  }

  // A random state on the sphere of radius sqrt(2): qpos = sqrt(2) * u / |u| with u ~ N(0, 1)^nq.
  void InitializeEpisode() {
    double norm = 0;
    for (int i = 0; i < m_->nq; ++i) {
      d_->qpos[i] = Normal();
      norm += d_->qpos[i] * d_->qpos[i];
    }
    norm = std::sqrt(norm);
    for (int i = 0; i < m_->nq; ++i) d_->qpos[i] = std::sqrt(2.0) * d_->qpos[i] / norm;
  }

  void WriteObs(Output& out) const {
    PutObs(out, 0, d_->qpos, m_->nq);
    PutObs(out, 1, d_->qvel, m_->nv);
  }

  double Reward() const {
    const double state_cost = 0.5 * Dot(d_->qpos, m_->nq);
    const double control_cost = 0.5 * Dot(d_->ctrl, m_->nu);
    return 1 - (state_cost + kControlCostCoef * control_cost);
  }

  // dm_control's get_termination: the physics state (qpos, qvel, act) is within 1e-6 of the origin.
  bool Terminated() const {
    return std::sqrt(Dot(d_->qpos, m_->nq) + Dot(d_->qvel, m_->nv) + Dot(d_->act, m_->na)) < kTerminalTol;
  }

  // dm_control's physics state, then the joints' stiffness (the task state dm_control keeps in its model).
  std::vector<double> GetState() const override {
    std::vector<double> s = DmcTask::GetState();
    s.insert(s.end(), m_->jnt_stiffness, m_->jnt_stiffness + m_->njnt);
    return s;
  }
  // Accepts the physics state alone (the stiffness stays) or with the stiffness appended.
  void SetState(const std::vector<double>& state) override {
    const size_t physics = DmcTask::GetState().size();
    const size_t full = physics + static_cast<size_t>(m_->njnt);
    if (state.size() != physics && state.size() != full) {
      throw std::invalid_argument("lqr state: expected " + std::to_string(physics) + " values (or " +
                                  std::to_string(full) + " with the joints' stiffness), got " +
                                  std::to_string(state.size()));
    }
    for (size_t j = physics; j < state.size(); ++j) m_->jnt_stiffness[j - physics] = state[j];
    DmcTask::SetState(std::vector<double>(state.begin(), state.begin() + static_cast<std::ptrdiff_t>(physics)));
  }

 private:
  struct Size {
    int bodies, actuators;
  };
  static constexpr double kControlCostCoef = 0.1;
  static constexpr double kTerminalTol = 1e-6;
  static constexpr double kStiffnessMin = 15, kStiffnessMax = 25;

  static Size SizeOf(const Config& c) { return c.Get<std::string>("task_name") == "lqr_2_1" ? Size{2, 1} : Size{6, 2}; }

  static double Dot(const double* x, int n) {
    double s = 0;
    for (int i = 0; i < n; ++i) s += x[i] * x[i];
    return s;
  }

  // dm_control's _make_model: body_i (0.25 m along x from its parent; the first also 0.1 m up) with a slide
  // joint_i, a sphere geom_i and site_i; motor_i on the first `actuators` joints; a tendon between consecutive
  // sites (only drawn). Joint, geom, site and tendon attributes come from lqr.xml's defaults.
  static void AddChain(mjSpec* spec, Size size) {
    mjsBody* parent = mjs_findBody(spec, "world");
    for (int i = 0; i < size.bodies; ++i) {
      const std::string id = std::to_string(i);
      mjsBody* body = mjs_addBody(parent, nullptr);
      mjs_setName(body->element, ("body_" + id).c_str());
      body->pos[0] = .25;
      body->pos[2] = i == 0 ? .1 : 0;
      mjsJoint* joint = mjs_addJoint(body, nullptr);
      mjs_setName(joint->element, ("joint_" + id).c_str());
      joint->stiffness[0] = (kStiffnessMin + kStiffnessMax) / 2;  // each env sets its own (see the class comment)
      mjs_setName(mjs_addGeom(body, nullptr)->element, ("geom_" + id).c_str());
      mjs_setName(mjs_addSite(body, nullptr)->element, ("site_" + id).c_str());
      if (i < size.actuators) {
        mjsActuator* motor = mjs_addActuator(spec, nullptr);
        mjs_setName(motor->element, ("motor_" + id).c_str());
        mjs_setToMotor(motor);
        motor->trntype = mjTRN_JOINT;
        mjs_setString(motor->target, ("joint_" + id).c_str());
      }
      if (i < size.bodies - 1) {
        mjsTendon* tendon = mjs_addTendon(spec, nullptr);
        mjs_setName(tendon->element, ("tendon_" + id).c_str());
        mjs_wrapSite(tendon, ("site_" + id).c_str());
        mjs_wrapSite(tendon, ("site_" + std::to_string(i + 1)).c_str());
      }
      parent = body;
    }
  }
};

}  // namespace pp::mujoco_dmc
