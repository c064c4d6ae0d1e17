// StackerStack2-v1 and StackerStack4-v1, aligned with dm_control 1.0.50's suite/stacker.py: the planar arm of
// the manipulator stacks 2 or 4 boxes on a target. The model is stacker.xml without the boxes the task does not
// use.
//
// Task state outside the physics state: the target's position, which dm_control writes into the model's body_pos
// on every reset (per env here: each env owns its model copy).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"
#include "core/envs/mujoco_dmc/manipulation_common.h"

namespace pp::mujoco_dmc {

class StackerEnv : public DmcTask<StackerEnv> {
 public:
  static constexpr const char* kName = "DmcStacker";
  static const std::vector<DomainTask>& Tasks() {
    static const std::vector<DomainTask> t = {
        {"stack_2", "StackerStack2-v1", "dm_control:suite.stacker.make_model(n_boxes=2)"},
        {"stack_4", "StackerStack4-v1", "dm_control:suite.stacker.make_model(n_boxes=4)"},
    };
    return t;
  }
  // control_timestep 0.01 s of 0.001 s physics steps; each task id selects its model builder's n_boxes
  static std::vector<ConfigKey> ConfigKeys() {
    return DomainKeys("dm_control:suite.stacker.make_model(n_boxes=2)", 10, Tasks());
  }
  static std::vector<ObsDef> Observations(const Config& c, const mjModel*) {
    const int n = NumBoxes(c);
    return {{"arm_pos", {PlanarArm::kJoints, 2}},
            {"arm_vel", {PlanarArm::kJoints}},
            {"touch", {PlanarArm::kTouchSensors}},
            {"hand_pos", {4}},
            {"box_pos", {n, 4}},
            {"box_vel", {3 * n}},
            {"target_pos", {2}}};
  }

  StackerEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed, true),  // own model: the target's position changes per episode
        n_boxes_(NumBoxes(c)),
        arm_(m_),
        target_(BodyId("target")),
        target_site_(SiteId("target")),
        grasp_site_(SiteId("grasp")),
        box_size_(m_->geom_size[3 * GeomId("target")]) {
    for (int b = 0; b < n_boxes_; ++b) {
      const std::string box = "box" + std::to_string(b);
      boxes_.push_back(BodyId(box.c_str()));
      box_sites_.push_back(SiteId(box.c_str()));
      // dm_control's joint order per box: box<b>_x, box<b>_y (the hinge), box<b>_z
      for (const char* dim : {"_x", "_y", "_z"}) {
        const int j = JointId((box + dim).c_str());
        box_qpos_.push_back(static_cast<int>(m_->jnt_qposadr[j]));
        box_dof_.push_back(static_cast<int>(m_->jnt_dofadr[j]));
      }
    }
  }

 protected:
  // The target's (x, z) position: the task state dm_control keeps in the model.
  int TaskStateSize() const override { return 2; }
  void GetTaskState(double* s) const override {
    s[0] = m_->body_pos[3 * target_];
    s[1] = m_->body_pos[3 * target_ + 2];
  }
  void SetTaskState(const double* s) override {
    MutableModel()->body_pos[3 * target_] = s[0];
    MutableModel()->body_pos[3 * target_ + 2] = s[1];
  }

  // dm_control's Stack.initialize_episode: redraw arm, target and boxes until nothing penetrates.
  void InitializeEpisode() override {
    do {
      arm_.Randomize(d_, [this](double lo, double hi) { return Uniform(lo, hi); });
      // the target sits on an odd multiple of the box half-size: 2 * randint(n_boxes) + 1
      const int target_height = 2 * std::uniform_int_distribution<int>(0, n_boxes_ - 1)(gen_) + 1;
      MutableModel()->body_pos[3 * target_ + 2] = box_size_ * target_height;
      MutableModel()->body_pos[3 * target_] = Uniform(-.37, .37);
      for (int b = 0; b < n_boxes_; ++b) {
        const int* q = box_qpos_.data() + 3 * b;  // x, y, z
        d_->qpos[q[0]] = Uniform(.1, .3);
        d_->qpos[q[2]] = Uniform(0, .7);
        d_->qpos[q[1]] = Uniform(0, 2 * mjPI);
      }
      AfterReset();
    } while (d_->ncon > 0);
  }

  void WriteObservation(Output& out) override {
    double* const arm[4] = {Obs(out, 0), Obs(out, 1), Obs(out, 2), Obs(out, 3)};
    arm_.PutObs(d_, arm);  // dm_control's touch: log1p of all sensordata, i.e. the five touch sensors
    double* pos = out.Obs<double>(4);
    for (int b : boxes_) pos = Put2dPose(d_, b, pos);
    double* vel = out.Obs<double>(5);
    for (int dof : box_dof_) *vel++ = d_->qvel[dof];
    Put2dPose(d_, target_, out.Obs<double>(6), false);
  }

  double Reward() override {
    double nearest = kInf;
    for (int s : box_sites_) nearest = std::min(nearest, SiteDistance(d_, s, target_site_));
    const double box_is_close = Tolerance(nearest, 0, 0, 2 * box_size_);
    const double hand_is_far = Tolerance(SiteDistance(d_, grasp_site_, target_site_), .1, kInf, kClose);
    return box_is_close * hand_is_far;
  }

 private:
  static constexpr int kMaxBoxes = 4;    // stacker.xml holds box0 .. box3
  static constexpr double kClose = .01;  // metres

  static int NumBoxes(const Config& c) { return TaskIndex(c, Tasks()) == 0 ? 2 : 4; }

  int n_boxes_;
  PlanarArm arm_;
  int target_, target_site_, grasp_site_;
  double box_size_;
  std::vector<int> boxes_, box_sites_, box_qpos_, box_dof_;
};

}  // namespace pp::mujoco_dmc
