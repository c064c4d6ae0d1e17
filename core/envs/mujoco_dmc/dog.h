// DogStand-v1, DogWalk-v1, DogTrot-v1, DogRun-v1 and DogFetch-v1, aligned with dm_control 1.0.50's suite/dog.py:
// dog.xml (38 muscle-like actuators with activation state, 73 hinges) with dm_control's edits per task: the floor
// size (stand and walk 15 m, trot 45 m, run 135 m: move speed x the 15 s time limit; fetch 10 m) and no ball,
// target, walls or ball/head cameras except in fetch.
//
// Observation keys are EnvPool's, the same for every task: ball_state and target_position are zeros except in
// fetch (as EnvPool does). Reward: the product of dm_control's reward factors (standing heights, three upright
// axes, foot touch against body weight; move: forward speed; fetch: reaching and bringing the ball).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"
#include "core/envs/mujoco_dmc/manipulation_common.h"

namespace pp::mujoco_dmc {

class DogEnv : public DmcTask<DogEnv> {
 public:
  static constexpr const char* kName = "DmcDog";
  static const std::vector<DomainTask>& Tasks() {
    static const std::vector<DomainTask> t = {
        {"stand", "DogStand-v1", "dm_control:suite.dog.get_model_and_assets(floor_size=15)"},
        {"walk", "DogWalk-v1", "dm_control:suite.dog.get_model_and_assets(floor_size=15)"},
        {"trot", "DogTrot-v1", "dm_control:suite.dog.get_model_and_assets(floor_size=45)"},
        {"run", "DogRun-v1", "dm_control:suite.dog.get_model_and_assets(floor_size=135)"},
        {"fetch", "DogFetch-v1", "dm_control:suite.dog.get_model_and_assets(remove_ball=False)"},
    };
    return t;
  }
  // control_timestep 0.015 s of 0.005 s physics steps; each task id selects its floor size / the ball
  static std::vector<ConfigKey> ConfigKeys() {
    return DomainKeys("dm_control:suite.dog.get_model_and_assets(floor_size=15)", 3, Tasks());
  }
  static std::vector<ObsDef> Observations(const Config&, const mjModel* m) {
    int hinges = 0;
    for (int j = 0; j < m->njnt; ++j) hinges += m->jnt_type[j] == mjJNT_HINGE;
    return {{"joint_angles", {hinges}},
            {"joint_velocites", {hinges}},  // sic: dm_control's and EnvPool's spelling
            {"torso_pelvis_height", {2}},
            {"z_projection", {9}},
            {"torso_com_velocity", {3}},
            {"inertial_sensors", {9}},
            {"foot_forces", {12}},
            {"touch_sensors", {4}},
            {"actuator_state", {static_cast<int>(m->na)}},
            {"ball_state", {6}},
            {"target_position", {3}}};
  }

  DogEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed),
        kind_(static_cast<Kind>(TaskIndex(c, Tasks()))),
        torso_(BodyId("torso")),
        pelvis_(BodyId("pelvis")),
        skull_(BodyId("skull")),
        root_(JointId("root")),
        torso_linvel_(SensorAdr("torso_linvel")),
        inertial_{SensorAdr("accelerometer"), SensorAdr("velocimeter"), SensorAdr("gyro")},
        foot_forces_{SensorAdr("foot_L"), SensorAdr("foot_R"), SensorAdr("hand_L"), SensorAdr("hand_R")},
        touch_{SensorAdr("palm_L"), SensorAdr("palm_R"), SensorAdr("sole_L"), SensorAdr("sole_R")},
        // dm_control: -gravity_z x the mass of the torso's subtree (the whole dog)
        body_weight_(-m_->opt.gravity[2] * m_->body_subtreemass[BodyId("torso")]) {
    for (int j = 0; j < m_->njnt; ++j) {
      if (m_->jnt_type[j] == mjJNT_HINGE) hinges_.push_back(j);
    }
    if (m_->nu != m_->na) throw std::invalid_argument("dog.xml: every actuator must have an activation state");
    // dm_control measures them in the default pose on every reset: the same heights each time
    mj_resetData(m_, d_);
    AfterReset();
    for (int i = 0; i < 2; ++i) stand_height_[i] = kStandHeightFraction * TorsoPelvisHeight(i);
    if (kind_ == Kind::kFetch) {
      floor_ = GeomId("floor");
      ball_root_ = JointId("ball_root");
      ball_ = GeomId("ball");
      target_ = GeomId("target");
      head_ = SiteId("head");
      upper_bite_ = SiteId("upper_bite");
      lower_bite_ = SiteId("lower_bite");
    }
  }

 protected:
  void InitializeEpisode() override {
    // a random heading, random horizontal root velocities and a random activation per actuator
    const double azimuth = Uniform(0, 2 * kPi);
    double* root = d_->qpos + m_->jnt_qposadr[root_];
    root[3] = std::cos(azimuth / 2);
    root[4] = root[5] = 0;
    root[6] = std::sin(azimuth / 2);
    d_->qvel[0] = 2 * Normal();
    d_->qvel[1] = 2 * Normal();
    d_->qvel[5] = 2 * Normal();
    for (int i = 0; i < m_->nu; ++i)
      d_->act[i] = Uniform(m_->actuator_ctrlrange[2 * i], m_->actuator_ctrlrange[2 * i + 1]);
    if (kind_ == Kind::kFetch) ThrowBall();
  }

  void WriteObservation(Output& out) override {
    double* angles = Obs(out, 0);
    double* velocities = Obs(out, 1);
    for (int j : hinges_) {
      *angles++ = d_->qpos[m_->jnt_qposadr[j]];
      *velocities++ = d_->qvel[m_->jnt_dofadr[j]];
    }
    double* heights = Obs(out, 2);
    for (int i = 0; i < 2; ++i) heights[i] = TorsoPelvisHeight(i);
    double* z = Obs(out, 3);
    for (int body : {skull_, torso_, pelvis_}) z = Put(z, d_->xmat + 9 * body + 6, 3);  // zx, zy, zz
    InFrame(d_->xmat + 9 * torso_, d_->sensordata + torso_linvel_, Obs(out, 4));
    PutSensors(inertial_.data(), 3, 3, Obs(out, 5));
    PutSensors(foot_forces_.data(), 4, 3, Obs(out, 6));
    PutSensors(touch_.data(), 4, 1, Obs(out, 7));
    Put(Obs(out, 8), d_->act, static_cast<int>(m_->na));
    double* ball = Obs(out, 9);
    double* target = Obs(out, 10);
    if (kind_ == Kind::kFetch) {
      BallInHeadFrame(ball);
      TargetInHeadFrame(target);
    } else {
      std::fill(ball, ball + 6, 0.0);
      std::fill(target, target + 3, 0.0);
    }
  }

  // np.prod of dm_control's reward factors, multiplied in their order
  double Reward() override {
    double r = Tolerance(TorsoPelvisHeight(0), stand_height_[0], kInf, stand_height_[0]);
    r *= Tolerance(TorsoPelvisHeight(1), stand_height_[1], kInf, stand_height_[1]);
    for (int body : {skull_, torso_, pelvis_}) {
      r *= Tolerance(d_->xmat[9 * body + 8], kMinUprightCosine, kInf, kMinUprightCosine + 1, Sigmoid::kLinear, 0.0);
    }
    double touch = 0;
    for (int adr : touch_) touch += d_->sensordata[adr];
    r *= Tolerance(touch, body_weight_, kInf, body_weight_, Sigmoid::kLinear, 0.9);
    switch (kind_) {
      case Kind::kStand: return r;
      case Kind::kWalk: return r * Forward(kWalkSpeed);
      case Kind::kTrot: return r * Forward(kTrotSpeed);
      case Kind::kRun: return r * Forward(kRunSpeed);
      case Kind::kFetch: return FetchReward(r);
    }
    return r;
  }

 private:
  enum class Kind { kStand, kWalk, kTrot, kRun, kFetch };
  static constexpr double kStandHeightFraction = 0.9;  // of the default pose's torso and pelvis heights
  static constexpr double kWalkSpeed = 1, kTrotSpeed = 3, kRunSpeed = 9;    // m/s above which the move reward is 1
  static inline const double kMinUprightCosine = std::cos(30 * kPi / 180);  // within 30 degrees: upright

  int SensorAdr(const char* name) const { return static_cast<int>(m_->sensor_adr[SensorId(name)]); }
  double TorsoPelvisHeight(int i) const { return d_->xpos[3 * (i == 0 ? torso_ : pelvis_) + 2]; }
  // `n` sensors of `dim` values each, in order
  double* PutSensors(const int* adrs, int n, int dim, double* o) const {
    for (int i = 0; i < n; ++i) o = Put(o, d_->sensordata + adrs[i], dim);
    return o;
  }

  // Move: the centre of mass's forward speed (in the torso frame) in [speed, 2 speed] gives 1, falling linearly
  // to 0 within max(1, speed) outside; scaled to [0.2, 1].
  double Forward(double speed) const {
    double v[3];
    InFrame(d_->xmat + 9 * torso_, d_->sensordata + torso_linvel_, v);
    const double forward = Tolerance(v[0], speed, 2 * speed, std::max(1.0, speed), Sigmoid::kLinear, 0.0);
    return (4 * forward + 1) / 5;
  }

  // Fetch: the ball flies towards the centre at an upward angle from 3/4 of the floor's half-size away.
  void ThrowBall() {
    const double radius = 0.75 * m_->geom_size[3 * floor_];
    const double azimuth = Uniform(0, 2 * kPi);
    double* pos = d_->qpos + m_->jnt_qposadr[ball_root_];
    pos[0] = radius * std::sin(azimuth);
    pos[1] = radius * std::cos(azimuth);
    pos[2] = 0.05;
    const double vertical_height = Uniform(0, 3);
    const double vertical_velocity = std::sqrt(2 * -m_->opt.gravity[2] * vertical_height);  // v = sqrt(2 g h)
    const double horizontal_speed = Uniform(0, 5);
    const double dx = -std::sin(azimuth) + 0.05 * Normal();
    const double dy = -std::cos(azimuth) + 0.05 * Normal();
    double* vel = d_->qvel + m_->jnt_dofadr[ball_root_];
    vel[0] = horizontal_speed * dx;
    vel[1] = horizontal_speed * dy;
    vel[2] = vertical_velocity;
  }

  // The ball's position and velocity relative to the head site, in the head's frame.
  void BallInHeadFrame(double* o) const {
    const double* head_frame = d_->site_xmat + 9 * head_;
    const double* head_pos = d_->site_xpos + 3 * head_;
    const double* ball_pos = d_->geom_xpos + 3 * ball_;
    mjtNum head_vel[6], ball_vel[6];  // (angular, linear), world frame
    mj_objectVelocity(m_, d_, mjOBJ_SITE, head_, head_vel, 0);
    mj_objectVelocity(m_, d_, mjOBJ_GEOM, ball_, ball_vel, 0);
    double to_ball[3], to_ball_vel[3];
    for (int i = 0; i < 3; ++i) {
      to_ball[i] = ball_pos[i] - head_pos[i];
      to_ball_vel[i] = ball_vel[3 + i] - head_vel[3 + i];
    }
    InFrame(head_frame, to_ball, o);
    InFrame(head_frame, to_ball_vel, o + 3);
  }

  void TargetInHeadFrame(double* o) const {
    const double* head_pos = d_->site_xpos + 3 * head_;
    const double* target_pos = d_->geom_xpos + 3 * target_;
    const double to_target[3] = {target_pos[0] - head_pos[0], target_pos[1] - head_pos[1], target_pos[2] - head_pos[2]};
    InFrame(d_->site_xmat + 9 * head_, to_target, o);
  }

  static double Distance(const double* a, const double* b) {
    const double v[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    return Norm(v, 3);
  }

  // Fetch: standing x reaching the ball with the mouth (scaled to [1/7, 1]; 1 once the ball is at the target)
  // x bringing it to the target (scaled to [1/2, 1]).
  double FetchReward(double standing) const {
    const double* ball = d_->geom_xpos + 3 * ball_;
    const double mouth =
        0.5 * (Distance(ball, d_->site_xpos + 3 * upper_bite_) + Distance(ball, d_->site_xpos + 3 * lower_bite_));
    const double bite_radius = m_->site_size[3 * upper_bite_];
    double reach = (6 * Tolerance(mouth, 0, bite_radius, 2, Sigmoid::kReciprocal) + 1) / 7;
    const double to_target = Distance(ball, d_->geom_xpos + 3 * target_);
    const double target_radius = m_->geom_size[3 * target_];
    const double near = Tolerance(to_target, 0, target_radius, m_->geom_size[3 * floor_], Sigmoid::kReciprocal);
    if (to_target < 2 * target_radius) reach = 1;  // let go of a fetched ball
    return standing * reach * ((near + 1) / 2);
  }

  Kind kind_;
  int torso_, pelvis_, skull_, root_, torso_linvel_;
  std::array<int, 3> inertial_;
  std::array<int, 4> foot_forces_, touch_;
  double body_weight_;
  std::array<double, 2> stand_height_{};
  std::vector<int> hinges_;
  int floor_ = -1, ball_root_ = -1, ball_ = -1, target_ = -1, head_ = -1, upper_bite_ = -1, lower_bite_ = -1;
};

}  // namespace pp::mujoco_dmc
