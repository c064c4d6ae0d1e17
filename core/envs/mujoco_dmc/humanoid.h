// The humanoid domains, aligned with dm_control 1.0.50: HumanoidStand/Walk/Run/RunPureState-v1
// (suite/humanoid.py, 21 actuators, "torso") and HumanoidCMUStand/Walk/Run-v1 (suite/humanoid_CMU.py, the
// 56-actuator CMU body, "thorax"). Both tasks share the reset, the observation features and the reward; the
// models differ in body names and in which axis of the upper body counts as upright.
#pragma once

#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"
#include "core/envs/mujoco_dmc/locomotion.h"

namespace pp::mujoco_dmc {

// One humanoid body: its model file, the upper body the features are relative to, and its extremities.
struct SuiteHumanoid {
  static constexpr const char* kName = "DmcHumanoid";
  static constexpr const char* kXml = "humanoid.xml";
  static constexpr const char* kUpper = "torso";
  static constexpr const char* kLimbs[4] = {"left_hand", "left_foot", "right_hand", "right_foot"};
  static constexpr int kUprightAxis = 8;  // xmat's zz: the torso's z axis projected on the world's z
  static constexpr int kSubSteps = 5;     // control_timestep 0.025 s of 0.005 s physics steps
};
struct CmuHumanoid {
  static constexpr const char* kName = "DmcHumanoidCMU";
  static constexpr const char* kXml = "humanoid_CMU.xml";
  static constexpr const char* kUpper = "thorax";
  static constexpr const char* kLimbs[4] = {"lhand", "lfoot", "rhand", "rfoot"};
  static constexpr int kUprightAxis = 7;  // xmat's zy: the thorax's y axis projected on the world's z
  static constexpr int kSubSteps = 10;    // control_timestep 0.02 s of 0.002 s physics steps
};

template <class Body>
class HumanoidEnv : public DmcTask<HumanoidEnv<Body>> {
  using Base = DmcTask<HumanoidEnv<Body>>;
  using Base::d_, Base::m_;
  static constexpr bool kCmu = std::is_same_v<Body, CmuHumanoid>;

 public:
  static constexpr const char* kName = Body::kName;
  static constexpr const char* kXml = Body::kXml;
  static constexpr int kSubSteps = Body::kSubSteps;
  static std::vector<std::string> TaskNames() {
    if (kCmu) return {"stand", "walk", "run"};
    return {"stand", "walk", "run", "run_pure_state"};
  }

  static void DefineObs(const Config&, const mjModel* m, SpecBuilder& b) {
    b.Obs("obs:joint_angles", DType::kFloat64, {static_cast<int>(m->nq) - 7});
    b.Obs("obs:head_height", DType::kFloat64, {});
    b.Obs("obs:extremities", DType::kFloat64, {12});
    b.Obs("obs:torso_vertical", DType::kFloat64, {3});
    b.Obs("obs:com_velocity", DType::kFloat64, {3});
    if (!kCmu) b.Obs("obs:position", DType::kFloat64, {static_cast<int>(m->nq)});
    b.Obs("obs:velocity", DType::kFloat64, {static_cast<int>(m->nv)});
  }

  HumanoidEnv(const Config& c, int env_id, uint64_t seed)
      : Base(c, env_id, seed),
        pure_(c.Get<std::string>("task_name") == "run_pure_state"),
        move_speed_(MoveSpeed(c.Get<std::string>("task_name"))),
        upper_(BodyId(m_, Body::kUpper)),
        head_(BodyId(m_, "head")),
        com_vel_(SensorAdr(m_, kCmu ? "thorax_subtreelinvel" : "torso_subtreelinvel")) {
    for (int i = 0; i < 4; ++i) limbs_[i] = BodyId(m_, Body::kLimbs[i]);
  }

  // Random joint angles until the body touches nothing (dm_control retries the whole draw).
  void InitializeEpisode() {
    do {
      RandomizeLimitedAndRotationalJoints(m_, d_, this->gen_);
      this->ForwardWithoutActuation();
    } while (d_->ncon > 0);
  }

  void WriteObs(Output& out) const {
    const int nq = static_cast<int>(m_->nq), nv = static_cast<int>(m_->nv);
    const int velocity = kCmu ? 5 : 6;
    this->PutObs(out, velocity, d_->qvel, nv);
    if (!kCmu) {
      if (pure_) {
        this->PutObs(out, 5, d_->qpos, nq);
      } else {
        this->ZeroObs(out, 5, nq);
      }
    }
    if (pure_) {
      for (int k = 0; k < 5; ++k) this->ZeroObs(out, k, k == 0 ? nq - 7 : k == 1 ? 1 : k == 2 ? 12 : 3);
      return;
    }
    this->PutObs(out, 0, d_->qpos + 7, nq - 7);  // without the free root joint
    *out.Obs<double>(1) = HeadHeight();
    double* ext = out.Obs<double>(2);
    const double* frame = d_->xmat + 9 * upper_;
    const double* origin = d_->xpos + 3 * upper_;
    for (int l = 0; l < 4; ++l) {
      // (limb - upper body) expressed in the upper body's frame: v . R
      const double* p = d_->xpos + 3 * limbs_[l];
      const double v[3] = {p[0] - origin[0], p[1] - origin[1], p[2] - origin[2]};
      for (int j = 0; j < 3; ++j) ext[3 * l + j] = v[0] * frame[j] + v[1] * frame[3 + j] + v[2] * frame[6 + j];
    }
    this->PutObs(out, 3, frame + 6, 3);  // xmat's zx, zy, zz
    this->PutObs(out, 4, d_->sensordata + com_vel_, 3);
  }

  double Reward() const {
    const double standing = Tolerance(HeadHeight(), kStandHeight, kInf, kStandHeight / 4);
    const double upright =
        Tolerance(d_->xmat[9 * upper_ + Body::kUprightAxis], 0.9, kInf, 1.9, Sigmoid::kLinear, 0.0);
    const double stand_reward = standing * upright;
    const double small_control = (4 + SmallControl(m_, d_)) / 5;
    const double* com_vel = d_->sensordata + com_vel_;
    if (move_speed_ == 0) {
      const double dont_move = NumpySum(2, [com_vel](int i) { return Tolerance(com_vel[i], 0.0, 0.0, 2.0); }) / 2;
      return small_control * stand_reward * dont_move;
    }
    const double speed = std::sqrt(com_vel[0] * com_vel[0] + com_vel[1] * com_vel[1]);
    const double move = (5 * Tolerance(speed, move_speed_, kInf, move_speed_, Sigmoid::kLinear, 0.0) + 1) / 6;
    return small_control * stand_reward * move;
  }

 private:
  static constexpr double kStandHeight = 1.4;
  // The target horizontal speed of the centre of mass in m/s (0: only stand).
  static double MoveSpeed(const std::string& task) { return task == "stand" ? 0.0 : task == "walk" ? 1.0 : 10.0; }
  double HeadHeight() const { return d_->xpos[3 * head_ + 2]; }

  bool pure_;
  double move_speed_;
  int upper_, head_, com_vel_;
  int limbs_[4];
};

}  // namespace pp::mujoco_dmc
