// Finger domain (dm_control suite/finger.py): FingerSpin, FingerTurnEasy (target radius .07), FingerTurnHard
// (.03). Every observation is a function of the model's sensors, as in dm_control. Turn places the target site on
// the spinner's circle each episode by editing the model (site_pos), and Spin lowers the hinge damping: this env
// owns a model copy and reports the target's (x, z) as its task state. All three tasks have EnvPool's five
// observation keys (dm_control's Spin has only position, velocity and touch; target_position and dist_to_target
// are computed the same way there, from the target site Spin never moves).
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"

namespace pp::mujoco_dmc {

class FingerEnv : public DmcTask<FingerEnv> {
 public:
  static constexpr const char* kName = "DmcFinger";
  static const std::vector<DomainTask>& Tasks() {
    static const std::vector<DomainTask> t = {
        {"spin", "FingerSpin-v1"},
        {"turn_easy", "FingerTurnEasy-v1"},
        {"turn_hard", "FingerTurnHard-v1"},
    };
    return t;
  }
  // control_timestep .02 s over the model's 10 ms timestep: 2 physics steps per env step.
  static std::vector<ConfigKey> ConfigKeys() {
    return DomainKeys("dm_control:suite.finger.get_model_and_assets()", 2, Tasks());
  }
  static std::vector<ObsDef> Observations(const Config&, const mjModel*) {
    return {{"position", {4}}, {"velocity", {3}}, {"touch", {2}}, {"target_position", {2}}, {"dist_to_target", {}}};
  }

  FingerEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed, /*own_model=*/true),
        task_(TaskIndex(c, Tasks())),
        target_site_(SiteId("target")),
        proximal_(SensorId("proximal")),
        distal_(SensorId("distal")),
        proximal_v_(SensorId("proximal_velocity")),
        distal_v_(SensorId("distal_velocity")),
        hinge_v_(SensorId("hinge_velocity")),
        tip_(SensorId("tip")),
        target_(SensorId("target")),
        spinner_(SensorId("spinner")),
        touch_top_(SensorId("touchtop")),
        touch_bottom_(SensorId("touchbottom")) {
    mjModel* m = MutableModel();
    if (task_ == 0) {
      m->site_rgba[4 * target_site_ + 3] = 0;
      m->site_rgba[4 * SiteId("tip") + 3] = 0;
      m->dof_damping[m->jnt_dofadr[JointId("hinge")]] = .03;
    } else {
      m->site_size[3 * target_site_] = task_ == 1 ? .07 : .03;
    }
    // The spinner hangs from the world: its hinge's anchor is fixed (dm_control reads it from the last forward).
    Forward();
    const int hinge = JointId("hinge");
    hinge_x_ = d_->xanchor[3 * hinge];
    hinge_z_ = d_->xanchor[3 * hinge + 2];
    const double* cap = m_->geom_size + 3 * GeomId("cap1");
    spinner_radius_ = cap[0] + cap[1] + cap[2];
  }

 protected:
  void InitializeEpisode() override {
    if (task_ != 0) {
      const double angle = Uniform(-kPi, kPi);
      double* pos = MutableModel()->site_pos + 3 * target_site_;
      pos[0] = hinge_x_ + spinner_radius_ * std::sin(angle);
      pos[2] = hinge_z_ + spinner_radius_ * std::cos(angle);
    }
    SetRandomJointAngles();
  }

  double Reward() override {
    if (task_ == 0) return *SensorData(hinge_v_) <= -kSpinVelocity ? 1.0 : 0.0;
    return DistToTarget() <= 0 ? 1.0 : 0.0;
  }

  void WriteObservation(Output& out) override {
    double* pos = Obs(out, 0);
    pos[0] = *SensorData(proximal_);
    pos[1] = *SensorData(distal_);
    Relative(tip_, pos + 2);
    double* vel = Obs(out, 1);
    vel[0] = *SensorData(proximal_v_);
    vel[1] = *SensorData(distal_v_);
    vel[2] = *SensorData(hinge_v_);
    double* touch = Obs(out, 2);
    touch[0] = std::log1p(*SensorData(touch_top_));
    touch[1] = std::log1p(*SensorData(touch_bottom_));
    Relative(target_, Obs(out, 3));
    *Obs(out, 4) = DistToTarget();
  }

  int TaskStateSize() const override { return 2; }
  void GetTaskState(double* s) const override {
    s[0] = m_->site_pos[3 * target_site_];
    s[1] = m_->site_pos[3 * target_site_ + 2];
  }
  void SetTaskState(const double* s) override {
    double* pos = MutableModel()->site_pos + 3 * target_site_;
    pos[0] = s[0];
    pos[2] = s[1];
  }

 private:
  static constexpr double kSpinVelocity = 15.0;
  static constexpr int kMaxAttempts = 1000;

  // dm_control's _set_random_joint_angles: randomize until no contact (at most 1000 attempts).
  void SetRandomJointAngles() {
    for (int i = 0; i < kMaxAttempts; ++i) {
      RandomizeLimitedAndRotationalJoints();
      AfterReset();
      if (d_->ncon == 0) return;
    }
    throw std::runtime_error("finger: could not find a collision-free state after 1000 attempts");
  }
  // A framepos sensor's (x, z) relative to the spinner's.
  void Relative(int sensor, double* o) const {
    o[0] = SensorData(sensor)[0] - SensorData(spinner_)[0];
    o[1] = SensorData(sensor)[2] - SensorData(spinner_)[2];
  }
  double DistToTarget() const {
    double target[2], tip[2];
    Relative(target_, target);
    Relative(tip_, tip);
    const double to_target[2] = {target[0] - tip[0], target[1] - tip[1]};
    return Norm(to_target, 2) - m_->site_size[3 * target_site_];
  }

  int task_;
  int target_site_;
  int proximal_, distal_, proximal_v_, distal_v_, hinge_v_, tip_, target_, spinner_, touch_top_, touch_bottom_;
  double hinge_x_ = 0, hinge_z_ = 0, spinner_radius_ = 0;
};

}  // namespace pp::mujoco_dmc
