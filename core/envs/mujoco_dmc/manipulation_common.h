// Helpers the DMC domains manipulator, stacker and quadruped share:
//  * the planar arm of manipulator and stacker: its joints' randomisation and dm_control's observation pieces;
//  * vectors expressed in a body's frame (dm_control's `vector.dot(xmat.reshape(3, 3))`).
#pragma once

#include <mujoco/mujoco.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace pp::mujoco_dmc {

// out = R^T v for a body frame R (MuJoCo's row-major xmat): numpy's `v.dot(xmat.reshape(3, 3))`.
inline void InFrame(const double* xmat, const double* v, double* out) { mju_mulMatTVec3(out, xmat, v); }

// The planar arm of manipulator.xml and stacker.xml.
class PlanarArm {
 public:
  static constexpr int kJoints = 8;
  static constexpr int kTouchSensors = 5;

  explicit PlanarArm(const mjModel* m) {
    static const char* const kNames[kJoints] = {"arm_root", "arm_shoulder", "arm_elbow", "arm_wrist",
                                                "finger",   "fingertip",    "thumb",     "thumbtip"};
    for (int i = 0; i < kJoints; ++i) {
      const int j = mj_name2id(m, mjOBJ_JOINT, kNames[i]);
      if (j < 0) throw std::invalid_argument(std::string("the model has no joint named '") + kNames[i] + "'");
      qpos_[i] = static_cast<int>(m->jnt_qposadr[j]);
      dof_[i] = static_cast<int>(m->jnt_dofadr[j]);
      // dm_control: limited joints within their range, the others anywhere in [-pi, pi)
      lo_[i] = m->jnt_limited[j] ? m->jnt_range[2 * j] : -mjPI;
      hi_[i] = m->jnt_limited[j] ? m->jnt_range[2 * j + 1] : mjPI;
    }
    static const char* const kTouch[kTouchSensors] = {"palm_touch", "finger_touch", "thumb_touch", "fingertip_touch",
                                                      "thumbtip_touch"};
    for (int i = 0; i < kTouchSensors; ++i) {
      const int s = mj_name2id(m, mjOBJ_SENSOR, kTouch[i]);
      if (s < 0) throw std::invalid_argument(std::string("the model has no sensor named '") + kTouch[i] + "'");
      touch_[i] = static_cast<int>(m->sensor_adr[s]);
    }
    hand_ = mj_name2id(m, mjOBJ_BODY, "hand");
    if (hand_ < 0) throw std::invalid_argument("the model has no body named 'hand'");
  }

  // Random arm angles (one uniform per joint, in joint order), then the hand made symmetric: finger = thumb.
  template <class Uniform>
  void Randomize(mjData* d, Uniform&& uniform) const {
    for (int i = 0; i < kJoints; ++i) d->qpos[qpos_[i]] = uniform(lo_[i], hi_[i]);
    d->qpos[qpos_[kFinger]] = d->qpos[qpos_[kThumb]];
  }
  // The observations both tasks begin with, into o[0..3]: arm_pos ((sin, cos) of each joint angle, (8, 2)),
  // arm_vel (joint velocities), touch (log1p of the touch sensors), hand_pos (the hand's 2-D pose).
  void PutObs(const mjData* d, double* const o[4]) const;

 private:
  static constexpr int kFinger = 4, kThumb = 6;
  int qpos_[kJoints], dof_[kJoints], touch_[kTouchSensors], hand_;
  double lo_[kJoints], hi_[kJoints];
};

// dm_control's body_2d_pose: the body's (x, z) position, then (qw, qy) of its orientation if asked.
inline double* Put2dPose(const mjData* d, int body, double* o, bool orientation = true) {
  *o++ = d->xpos[3 * body];
  *o++ = d->xpos[3 * body + 2];
  if (orientation) {
    *o++ = d->xquat[4 * body];
    *o++ = d->xquat[4 * body + 2];
  }
  return o;
}

inline void PlanarArm::PutObs(const mjData* d, double* const o[4]) const {
  for (int i = 0; i < kJoints; ++i) {
    o[0][2 * i] = std::sin(d->qpos[qpos_[i]]);
    o[0][2 * i + 1] = std::cos(d->qpos[qpos_[i]]);
    o[1][i] = d->qvel[dof_[i]];
  }
  for (int i = 0; i < kTouchSensors; ++i) o[2][i] = std::log1p(d->sensordata[touch_[i]]);
  Put2dPose(d, hand_, o[3]);
}

// Euclidean distance between two sites (dm_control's site_distance).
inline double SiteDistance(const mjData* d, int a, int b) {
  const double* p = d->site_xpos + 3 * a;
  const double* q = d->site_xpos + 3 * b;
  const double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

}  // namespace pp::mujoco_dmc
