// Swimmer domain (dm_control 1.0.50's suite/swimmer.py): SwimmerSwimmer6-v1, SwimmerSwimmer15-v1. The n-link
// model is dm_control's own (its builder, swimmer.get_model_and_assets(n), through the xml_file key).
#pragma once

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"

namespace pp::mujoco_dmc {

class SwimmerEnv : public DmcTask<SwimmerEnv> {
 public:
  static constexpr const char* kName = "DmcSwimmer";
  static const std::vector<DomainTask>& Tasks() {
    static const std::vector<DomainTask> t = {
        {"swimmer6", "SwimmerSwimmer6-v1"},
        {"swimmer15", "SwimmerSwimmer15-v1", "dm_control:suite.swimmer.get_model_and_assets(n_joints=15)"},
    };
    return t;
  }
  // frame_skip 15: control_timestep 0.03 s of 0.002 s physics steps.
  static std::vector<ConfigKey> ConfigKeys() {
    return DomainKeys("dm_control:suite.swimmer.get_model_and_assets(n_joints=6)", 15, Tasks());
  }
  // joints: the internal joint angles (qpos without the planar root); to_target: the target's x, y relative to
  // the nose in the head's frame; body_velocities: per body (head, then each segment), its velocimeter's x, y and
  // its gyro's z.
  static std::vector<ObsDef> Observations(const Config&, const mjModel* m) {
    return {{"joints", {static_cast<int>(m->nq) - 3}},
            {"to_target", {2}},
            {"body_velocities", {static_cast<int>(m->nsensordata - kFirstBodySensor) / 6 * 3}}};
  }

  SwimmerEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed, /*own_model=*/true),
        head_(BodyId("head")),
        nose_(GeomId("nose")),
        target_(GeomId("target")),
        light_(Id(mjOBJ_LIGHT, "target_light")) {
    TaskIndex(c, Tasks());
  }

 protected:
  // Random joint angles and heading; the target (and the light above it) at a random spot, within 0.3 of the
  // origin with probability 0.2, else within 2.
  void InitializeEpisode() override {
    RandomizeLimitedAndRotationalJoints();
    const double box = Rand() < 0.2 ? 0.3 : 2.0;
    const double target[2] = {Uniform(-box, box), Uniform(-box, box)};
    SetTaskState(target);
  }
  double Reward() override {
    const double size = m_->geom_size[3 * target_];
    const auto v = NoseToTarget();
    return Tolerance(std::sqrt(v[0] * v[0] + v[1] * v[1]), 0.0, size, 5 * size, Sigmoid::kLongTail);
  }
  void WriteObservation(Output& out) override {
    Put(Obs(out, 0), d_->qpos + 3, static_cast<int>(m_->nq) - 3);
    const auto to_target = NoseToTarget();
    Put(Obs(out, 1), to_target.data(), 2);
    double* o = Obs(out, 2);
    for (int i = kFirstBodySensor; i + 6 <= m_->nsensordata; i += 6) {
      *o++ = d_->sensordata[i];      // velocimeter x
      *o++ = d_->sensordata[i + 1];  // velocimeter y
      *o++ = d_->sensordata[i + 5];  // gyro z
    }
  }
  // The target's x, y (the model's geom_pos, which dm_control edits per episode).
  int TaskStateSize() const override { return 2; }
  void GetTaskState(double* s) const override {
    s[0] = m_->geom_pos[3 * target_];
    s[1] = m_->geom_pos[3 * target_ + 1];
  }
  void SetTaskState(const double* s) override {
    mjModel* m = MutableModel();
    for (int i = 0; i < 2; ++i) m->geom_pos[3 * target_ + i] = m->light_pos[3 * light_ + i] = s[i];
  }

 private:
  // sensordata: nose_pos, target_pos, head_xaxis, head_yaxis (3 each), then velocimeter and gyro (3 each) of the
  // head and of every segment.
  static constexpr int kFirstBodySensor = 12;
  // The vector from the nose to the target in the head's frame, x and y.
  std::array<double, 2> NoseToTarget() const {
    const double* t = d_->geom_xpos + 3 * target_;
    const double* n = d_->geom_xpos + 3 * nose_;
    const double* r = d_->xmat + 9 * head_;
    const double v[3] = {t[0] - n[0], t[1] - n[1], t[2] - n[2]};
    return {v[0] * r[0] + v[1] * r[3] + v[2] * r[6], v[0] * r[1] + v[1] * r[4] + v[2] * r[7]};
  }

  int head_, nose_, target_, light_;
};

}  // namespace pp::mujoco_dmc
