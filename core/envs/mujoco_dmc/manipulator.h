// ManipulatorBringBall-v1, ManipulatorBringPeg-v1, ManipulatorInsertBall-v1, ManipulatorInsertPeg-v1, aligned
// with dm_control 1.0.50's suite/manipulator.py: a planar arm brings a ball or a peg to a target (bring) or into
// a cup or slot (insert). The model is manipulator.xml without the props the task does not use.
//
// Task state outside the physics state: the target's (and the receptacle's) pose, which dm_control writes into
// the model's body_pos/body_quat on every reset. Each env owns its model copy, so that is per env here too.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"
#include "core/envs/mujoco_dmc/manipulation_common.h"

namespace pp::mujoco_dmc {

class ManipulatorEnv : public DmcTask<ManipulatorEnv> {
 public:
  static constexpr const char* kName = "DmcManipulator";
  static constexpr const char* kXml = "manipulator.xml";
  static constexpr int kSubSteps = 10;  // control_timestep 0.01 s of 0.001 s physics steps
  static std::vector<std::string> TaskNames() { return {"bring_ball", "bring_peg", "insert_ball", "insert_peg"}; }

  // The props the task keeps; dm_control removes the others from the model.
  static mjModel* LoadModel(const Config& c) {
    const Variant v(c);
    return EditModel(ModelPath(c), [&v](mjSpec* spec) {
      for (const char* prop : {"ball", "target_ball", "cup", "peg", "target_peg", "slot"}) {
        const std::string p = prop;
        if (p != v.object && p != v.target && !(v.insert && p == v.receptacle)) DeleteElement(spec, mjOBJ_BODY, p);
      }
    });
  }

  static void DefineObs(const Config&, const mjModel*, SpecBuilder& b) {
    b.Obs("arm_pos", DType::kFloat64, {PlanarArm::kJoints, 2});
    b.Obs("arm_vel", DType::kFloat64, {PlanarArm::kJoints});
    b.Obs("touch", DType::kFloat64, {kTouchSensors});
    b.Obs("hand_pos", DType::kFloat64, {4});
    b.Obs("object_pos", DType::kFloat64, {4});
    b.Obs("object_vel", DType::kFloat64, {3});
    b.Obs("target_pos", DType::kFloat64, {4});
  }

  ManipulatorEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed),
        v_(c),
        arm_(m_),
        hand_(BodyId(m_, "hand")),
        object_(BodyId(m_, v_.object)),
        target_(BodyId(m_, v_.target)),
        receptacle_(v_.insert ? BodyId(m_, v_.receptacle) : -1),
        grasp_site_(SiteId(m_, "grasp")) {
    static const char* const kTouch[kTouchSensors] = {"palm_touch", "finger_touch", "thumb_touch", "fingertip_touch",
                                                      "thumbtip_touch"};
    for (int i = 0; i < kTouchSensors; ++i) touch_[i] = SensorAdr(m_, kTouch[i]);
    // the object's slide x, slide z and hinge y joints, in dm_control's order ('xzy')
    const std::string obj = v_.object;
    for (int i = 0; i < 3; ++i) {
      const int j = JointId(m_, (obj + "_" + "xzy"[i]).c_str());
      object_qpos_[i] = static_cast<int>(m_->jnt_qposadr[j]);
      object_dof_[i] = static_cast<int>(m_->jnt_dofadr[j]);
    }
    if (v_.peg) {
      peg_sites_ = {SiteId(m_, "peg_grasp"),  SiteId(m_, "peg_pinch"),      SiteId(m_, "pinch"),  SiteId(m_, "peg"),
                    SiteId(m_, "target_peg"), SiteId(m_, "target_peg_tip"), SiteId(m_, "peg_tip")};
    } else {
      ball_sites_ = {SiteId(m_, "ball"), SiteId(m_, "target_ball")};
    }
  }

  // dm_control's Bring.initialize_episode: redraw arm, target and object until nothing penetrates.
  void InitializeEpisode() {
    do {
      arm_.Randomize(d_, [this](double lo, double hi) { return Uniform(lo, hi); });
      const double target_x = Uniform(-.4, .4), target_z = Uniform(.1, .4);
      double target_angle;
      if (v_.insert) {
        target_angle = Uniform(-mjPI / 3, mjPI / 3);
        PlaceBody(receptacle_, target_x, target_z, target_angle);
      } else {
        target_angle = Uniform(-mjPI, mjPI);
      }
      PlaceBody(target_, target_x, target_z, target_angle);
      PlaceObject(target_x, target_z, target_angle);
      ForwardWithoutActuation();
    } while (d_->ncon > 0);
  }

  void WriteObs(Output& out) const {
    arm_.PutPos(d_, out.Obs<double>(0));
    arm_.PutVel(d_, out.Obs<double>(1));
    double* touch = out.Obs<double>(2);
    for (int i = 0; i < kTouchSensors; ++i) touch[i] = std::log1p(d_->sensordata[touch_[i]]);
    Put2dPose(d_, hand_, out.Obs<double>(3));
    Put2dPose(d_, object_, out.Obs<double>(4));
    double* vel = out.Obs<double>(5);
    for (int i = 0; i < 3; ++i) vel[i] = d_->qvel[object_dof_[i]];
    Put2dPose(d_, target_, out.Obs<double>(6));
  }

  double Reward() const {
    if (!v_.peg) return IsClose(SiteDistance(d_, ball_sites_[0], ball_sites_[1]));
    const auto& s = peg_sites_;
    const double grasping = (IsClose(SiteDistance(d_, s[0], grasp_site_)) + IsClose(SiteDistance(d_, s[1], s[2]))) / 2;
    const double bringing = (IsClose(SiteDistance(d_, s[3], s[4])) + IsClose(SiteDistance(d_, s[5], s[6]))) / 2;
    return std::max(bringing, grasping / 3);
  }

 private:
  static constexpr int kTouchSensors = 5;
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

  static double IsClose(double distance) { return Tolerance(distance, 0, kClose, 2 * kClose); }

  // The body's (x, z) position and a rotation of `angle` about y, written into this env's model.
  void PlaceBody(int body, double x, double z, double angle) {
    m_->body_pos[3 * body] = x;
    m_->body_pos[3 * body + 2] = z;
    m_->body_quat[4 * body] = std::cos(angle / 2);
    m_->body_quat[4 * body + 2] = std::sin(angle / 2);
  }

  // The object starts in the hand, in the target, or anywhere (then also moving along x).
  void PlaceObject(double target_x, double target_z, double target_angle) {
    const double u = Uniform(0, 1);  // numpy's choice(p=[in_hand, in_target, uniform]) compares one uniform
    double x, z, angle;
    if (u < kPInHand) {
      ForwardWithoutActuation();  // the grasp site where the new arm angles put it
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
  int hand_, object_, target_, receptacle_, grasp_site_;
  int touch_[kTouchSensors];
  int object_qpos_[3], object_dof_[3];
  std::vector<int> peg_sites_, ball_sites_;
};

}  // namespace pp::mujoco_dmc
