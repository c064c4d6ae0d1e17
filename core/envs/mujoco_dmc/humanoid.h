// The humanoid domains, aligned with dm_control 1.0.50: HumanoidStand/Walk/Run/RunPureState-v1
// (suite/humanoid.py, 21 actuators, features relative to the "torso") and HumanoidCMUStand/Walk/Run-v1
// (suite/humanoid_CMU.py, the 56-actuator CMU body, relative to the "thorax"). Both share the reset, the
// observation features and the reward; the bodies differ in names and in which axis of the upper body counts as
// upright.
#pragma once

#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"
#include "core/envs/mujoco_dmc/locomotion.h"

namespace pp::mujoco_dmc {

struct SuiteHumanoid {
  static constexpr const char* kName = "DmcHumanoid";
  static constexpr const char* kBuilder = "dm_control:suite.humanoid.get_model_and_assets()";
  static constexpr int kFrameSkip = 5;  // control_timestep 0.025 s of 0.005 s physics steps
  static constexpr const char* kUpper = "torso";
  static constexpr const char* kLimbs[4] = {"left_hand", "left_foot", "right_hand", "right_foot"};
  static constexpr int kUprightAxis = 8;  // xmat's zz: the torso's z axis projected on the world's z
};
struct CmuHumanoid {
  static constexpr const char* kName = "DmcHumanoidCMU";
  static constexpr const char* kBuilder = "dm_control:suite.humanoid_CMU.get_model_and_assets()";
  static constexpr int kFrameSkip = 10;  // control_timestep 0.02 s of 0.002 s physics steps
  static constexpr const char* kUpper = "thorax";
  static constexpr const char* kLimbs[4] = {"lhand", "lfoot", "rhand", "rfoot"};
  static constexpr int kUprightAxis = 7;  // xmat's zy: the thorax's y axis projected on the world's z
};

template <class Body>
class HumanoidEnv : public DmcTask<HumanoidEnv<Body>> {
  using Base = DmcTask<HumanoidEnv<Body>>;
  using Base::d_, Base::m_, Base::Obs;
  static constexpr bool kCmu = std::is_same_v<Body, CmuHumanoid>;

 public:
  static constexpr const char* kName = Body::kName;
  static const std::vector<DomainTask>& Tasks() {
    static const std::vector<DomainTask> t = kCmu ? std::vector<DomainTask>{
        {"stand", "HumanoidCMUStand-v1"},
        {"walk", "HumanoidCMUWalk-v1"},
        {"run", "HumanoidCMURun-v1"},
    } : std::vector<DomainTask>{
        {"stand", "HumanoidStand-v1"},
        {"walk", "HumanoidWalk-v1"},
        {"run", "HumanoidRun-v1"},
        {"run_pure_state", "HumanoidRunPureState-v1"},
    };
    return t;
  }
  static std::vector<ConfigKey> ConfigKeys() { return DomainKeys(Body::kBuilder, Body::kFrameSkip, Tasks()); }
  // EnvPool's keys, the same for every task of the domain: the features (joint angles without the free root, the
  // head's height, hands and feet relative to the upper body in its frame, the upper body's z axis, the centre of
  // mass velocity), the suite humanoid's qpos ("position") and qvel. dm_control's RunPureState observes position
  // and velocity, the other tasks the features and velocity; every task here writes all of them.
  static std::vector<ObsDef> Observations(const Config&, const mjModel* m) {
    const int nq = static_cast<int>(m->nq), nv = static_cast<int>(m->nv);
    std::vector<ObsDef> obs = {{"joint_angles", {nq - 7}},
                               {"head_height", {}},
                               {"extremities", {12}},
                               {"torso_vertical", {3}},
                               {"com_velocity", {3}}};
    if (!kCmu) obs.push_back({"position", {nq}});
    obs.push_back({"velocity", {nv}});
    return obs;
  }

  HumanoidEnv(const Config& c, int env_id, uint64_t seed)
      : Base(c, env_id, seed),
        move_speed_(kMoveSpeed[TaskIndex(c, Tasks())]),
        upper_(this->BodyId(Body::kUpper)),
        head_(this->BodyId("head")),
        com_vel_(this->SensorId(kCmu ? "thorax_subtreelinvel" : "torso_subtreelinvel")) {
    for (int i = 0; i < 4; ++i) limbs_[i] = this->BodyId(Body::kLimbs[i]);
  }

 protected:
  // Random joint angles until the body touches nothing (dm_control redraws them all).
  void InitializeEpisode() override {
    do {
      this->RandomizeLimitedAndRotationalJoints();
      this->AfterReset();
    } while (d_->ncon > 0);
  }

  double Reward() override {
    const double standing = Tolerance(HeadHeight(), kStandHeight, kInf, kStandHeight / 4);
    const double upright = Tolerance(d_->xmat[9 * upper_ + Body::kUprightAxis], 0.9, kInf, 1.9, Sigmoid::kLinear, 0.0);
    const double stand_reward = standing * upright;
    const double small_control = (4 + SmallControl(m_, d_)) / 5;
    const double* com_vel = this->SensorData(com_vel_);
    if (move_speed_ == 0) {
      const double dont_move = NumpySum(2, [com_vel](int i) { return Tolerance(com_vel[i], 0.0, 0.0, 2.0); }) / 2;
      return small_control * stand_reward * dont_move;
    }
    const double speed = std::sqrt(com_vel[0] * com_vel[0] + com_vel[1] * com_vel[1]);
    const double move = (5 * Tolerance(speed, move_speed_, kInf, move_speed_, Sigmoid::kLinear, 0.0) + 1) / 6;
    return small_control * stand_reward * move;
  }

  void WriteObservation(Output& out) override {
    const int nq = static_cast<int>(m_->nq), nv = static_cast<int>(m_->nv);
    Put(Obs(out, 0), d_->qpos + 7, nq - 7);  // without the free root joint
    *Obs(out, 1) = HeadHeight();
    double* ext = Obs(out, 2);
    const double* frame = d_->xmat + 9 * upper_;
    const double* origin = d_->xpos + 3 * upper_;
    for (int l = 0; l < 4; ++l) {
      // (limb - upper body) . R: the limb's position in the upper body's frame
      const double* p = d_->xpos + 3 * limbs_[l];
      const double v[3] = {p[0] - origin[0], p[1] - origin[1], p[2] - origin[2]};
      for (int j = 0; j < 3; ++j) ext[3 * l + j] = v[0] * frame[j] + v[1] * frame[3 + j] + v[2] * frame[6 + j];
    }
    Put(Obs(out, 3), frame + 6, 3);  // xmat's zx, zy, zz
    Put(Obs(out, 4), this->SensorData(com_vel_), 3);
    if (!kCmu) Put(Obs(out, 5), d_->qpos, nq);
    Put(Obs(out, kCmu ? 5 : 6), d_->qvel, nv);
  }

 private:
  static constexpr double kStandHeight = 1.4;
  static constexpr double kMoveSpeed[] = {0.0, 1.0, 10.0, 10.0};  // per task, m/s (0: only stand)
  double HeadHeight() const { return d_->xpos[3 * head_ + 2]; }

  double move_speed_;
  int upper_, head_;
  int com_vel_;  // sensor: the upper body's subtree linear velocity
  int limbs_[4];
};

}  // namespace pp::mujoco_dmc
