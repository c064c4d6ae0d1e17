// ManipulatorBringBall-v1, ManipulatorBringPeg-v1, ManipulatorInsertBall-v1, ManipulatorInsertPeg-v1, aligned
// with dm_control 1.0.50's suite/manipulator.py: a planar arm brings a ball or a peg to a target (bring) or into
// a cup or slot (insert). The model is manipulator.xml without the props the task does not use.
//
// Task state outside the physics state: the target's (and the receptacle's) pose, which dm_control writes into
// the model's body_pos/body_quat on every reset. Each env owns its model copy, so that is per env here too.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"
#include "core/envs/mujoco_dmc/manipulation_common.h"

namespace pp::mujoco_dmc {

class ManipulatorEnv : public DmcTask<ManipulatorEnv> {
 public:
  static constexpr const char* kName = "DmcManipulator";
  static const std::vector<DomainTask>& Tasks() {
    static const std::vector<DomainTask> t = {
        {"bring_ball", "ManipulatorBringBall-v1",
         "dm_control:suite.manipulator.make_model(use_peg=False, insert=False)"},
        {"bring_peg", "ManipulatorBringPeg-v1", "dm_control:suite.manipulator.make_model(use_peg=True, insert=False)"},
        {"insert_ball", "ManipulatorInsertBall-v1",
         "dm_control:suite.manipulator.make_model(use_peg=False, insert=True)"},
        {"insert_peg", "ManipulatorInsertPeg-v1", "dm_control:suite.manipulator.make_model(use_peg=True, insert=True)"},
    };
    return t;
  }
  // control_timestep 0.01 s of 0.001 s physics steps; each task id selects its model builder's arguments
  static std::vector<ConfigKey> ConfigKeys() {
    return DomainKeys("dm_control:suite.manipulator.make_model(use_peg=False, insert=False)", 10, Tasks());
  }
  static std::vector<ObsDef> Observations(const Config&, const mjModel*) {
    return {{"arm_pos", {PlanarArm::kJoints, 2}},
            {"arm_vel", {PlanarArm::kJoints}},
            {"touch", {PlanarArm::kTouchSensors}},
            {"hand_pos", {4}},
            {"object_pos", {4}},
            {"object_vel", {3}},
            {"target_pos", {4}}};
  }

  ManipulatorEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed, true),  // own model: the target's pose changes per episode
        v_(c),
        arm_(m_),
        object_(BodyId(v_.object)),
        target_(BodyId(v_.target)),
        receptacle_(v_.insert ? BodyId(v_.receptacle) : -1),
        grasp_site_(SiteId("grasp")) {
    // the object's slide x, slide z and hinge y joints, in dm_control's order ('xzy')
    const std::string obj = v_.object;
    for (int i = 0; i < 3; ++i) {
      const int j = JointId((obj + "_" + "xzy"[i]).c_str());
      object_qpos_[i] = static_cast<int>(m_->jnt_qposadr[j]);
      object_dof_[i] = static_cast<int>(m_->jnt_dofadr[j]);
    }
    if (v_.peg) {
      peg_sites_ = {SiteId("peg_grasp"),  SiteId("peg_pinch"),      SiteId("pinch"),  SiteId("peg"),
                    SiteId("target_peg"), SiteId("target_peg_tip"), SiteId("peg_tip")};
    } else {
      ball_sites_ = {SiteId("ball"), SiteId("target_ball")};
    }
  }

 protected:
  // The target's pose (x, z, qw, qy): the task state dm_control keeps in the model (the receptacle, if any,
  // has the same pose).
  int TaskStateSize() const override { return 4; }
  void GetTaskState(double* s) const override { ModelPose(target_, s); }
  void SetTaskState(const double* s) override {
    PlaceBody(target_, s[0], s[1], s[2], s[3]);
    if (v_.insert) PlaceBody(receptacle_, s[0], s[1], s[2], s[3]);
  }

  // dm_control's Bring.initialize_episode: redraw arm, target and object until nothing penetrates.
  void InitializeEpisode() override {
    do {
      arm_.Randomize(d_, [this](double lo, double hi) { return Uniform(lo, hi); });
      const double target_x = Uniform(-.4, .4), target_z = Uniform(.1, .4);
      double target_angle;
      if (v_.insert) {
        target_angle = Uniform(-mjPI / 3, mjPI / 3);
        PlaceBody(receptacle_, target_x, target_z, std::cos(target_angle / 2), std::sin(target_angle / 2));
      } else {
        target_angle = Uniform(-mjPI, mjPI);
      }
      PlaceBody(target_, target_x, target_z, std::cos(target_angle / 2), std::sin(target_angle / 2));
      PlaceObject(target_x, target_z, target_angle);
      AfterReset();
    } while (d_->ncon > 0);
  }

  void WriteObservation(Output& out) override {
    double* const arm[4] = {Obs(out, 0), Obs(out, 1), Obs(out, 2), Obs(out, 3)};
    arm_.PutObs(d_, arm);
    Put2dPose(d_, object_, out.Obs<double>(4));
    double* vel = out.Obs<double>(5);
    for (int i = 0; i < 3; ++i) vel[i] = d_->qvel[object_dof_[i]];
    Put2dPose(d_, target_, out.Obs<double>(6));
  }

  double Reward() override {
    if (!v_.peg) return IsClose(SiteDistance(d_, ball_sites_[0], ball_sites_[1]));
    const auto& s = peg_sites_;
    const double grasping = (IsClose(SiteDistance(d_, s[0], grasp_site_)) + IsClose(SiteDistance(d_, s[1], s[2]))) / 2;
    const double bringing = (IsClose(SiteDistance(d_, s[3], s[4])) + IsClose(SiteDistance(d_, s[5], s[6]))) / 2;
    return std::max(bringing, grasping / 3);
  }

 private:
  static constexpr double kClose = .01;  // metres: closer than this is "close"
  static constexpr double kPInHand = .1, kPInTarget = .1;

  // Which prop and whether it is inserted, from task_name.
  struct Variant {
    explicit Variant(const Config& c) {
      const std::string task = c.Get<std::string>("task_name");
      peg = task.find("peg") != std::string::npos;
      insert = task.rfind("insert", 0) == 0;
      object = peg ? "peg" : "ball";
      target = peg ? "target_peg" : "target_ball";
      receptacle = peg ? "slot" : "cup";
    }
    bool peg, insert;
    const char *object, *target, *receptacle;
  };

  double IsClose(double distance) const { return Tolerance(distance, 0, kClose, 2 * kClose); }

  // The body's (x, z) position and its rotation about y (quaternion qw, qy), written into this env's model.
  void PlaceBody(int body, double x, double z, double qw, double qy) {
    mjModel* m = MutableModel();
    m->body_pos[3 * body] = x;
    m->body_pos[3 * body + 2] = z;
    m->body_quat[4 * body] = qw;
    m->body_quat[4 * body + 2] = qy;
  }
  // The body's pose as PlaceBody takes it, from the model.
  void ModelPose(int body, double* s) const {
    s[0] = m_->body_pos[3 * body];
    s[1] = m_->body_pos[3 * body + 2];
    s[2] = m_->body_quat[4 * body];
    s[3] = m_->body_quat[4 * body + 2];
  }

  // The object starts in the hand, in the target, or anywhere (then also moving along x).
  void PlaceObject(double target_x, double target_z, double target_angle) {
    const double u = Uniform(0, 1);  // numpy's choice(p=[in_hand, in_target, uniform]) compares one uniform
    double x, z, angle;
    if (u < kPInHand) {
      AfterReset();  // the grasp site where the new arm angles put it
      const double* grasp = d_->site_xpos + 3 * grasp_site_;
      const double* frame = d_->site_xmat + 9 * grasp_site_;
      x = grasp[0];
      z = grasp[2];
      angle = mjPI - std::atan2(frame[6], frame[0]);  // the grasp direction's (xx, zx)
    } else if (u < kPInHand + kPInTarget) {
      x = target_x;
      z = target_z;
      angle = target_angle;
    } else {
      x = Uniform(-.5, .5);
      z = Uniform(0, .7);
      angle = Uniform(0, 2 * mjPI);
      d_->qvel[object_dof_[0]] = Uniform(-5, 5);
    }
    d_->qpos[object_qpos_[0]] = x;
    d_->qpos[object_qpos_[1]] = z;
    d_->qpos[object_qpos_[2]] = angle;
  }

  Variant v_;
  PlanarArm arm_;
  int object_, target_, receptacle_, grasp_site_;
  int object_qpos_[3], object_dof_[3];
  std::vector<int> peg_sites_, ball_sites_;
};

}  // namespace pp::mujoco_dmc
