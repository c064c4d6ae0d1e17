// SwimmerSwimmer6-v1 and SwimmerSwimmer15-v1, aligned with dm_control 1.0.50's suite/swimmer.py. The model of an
// n-link swimmer is the one dm_control's own builder (swimmer.get_model_and_assets(n)) writes; see dmc_env.h.
#pragma once

#include <cmath>

#include "core/envs/mujoco_dmc/dmc_env.h"
#include "core/envs/mujoco_dmc/locomotion.h"

namespace pp::mujoco_dmc {

class SwimmerEnv : public DmcTask<SwimmerEnv> {
 public:
  static constexpr const char* kName = "DmcSwimmer";
  static constexpr int kSubSteps = 15;  // control_timestep 0.03 s of 0.002 s physics steps
  static std::vector<std::string> TaskNames() { return {"swimmer6", "swimmer15"}; }

  static void DefineObs(const Config&, const mjModel* m, SpecBuilder& b) {
    b.Obs("obs:joints", DType::kFloat64, {static_cast<int>(m->nq) - 3});
    b.Obs("obs:to_target", DType::kFloat64, {2});
    b.Obs("obs:body_velocities", DType::kFloat64, {BodyVelocitiesSize(m)});
  }

  SwimmerEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed),
        head_(BodyId(m_, "head")),
        nose_(GeomId(m_, "nose")),
        target_(GeomId(m_, "target")),
        light_(LightId(m_, "target_light")) {}

  // Random joint angles and heading; the target (and the light above it) at a random spot, within 0.3 of the
  // origin with probability 0.2, else within 2.
  void InitializeEpisode() {
    RandomizeLimitedAndRotationalJoints(m_, d_, gen_);
    const double box = Uniform(0.0, 1.0) < 0.2 ? 0.3 : 2.0;
    const double x = Uniform(-box, box), y = Uniform(-box, box);
    m_->geom_pos[3 * target_] = x;
    m_->geom_pos[3 * target_ + 1] = y;
    m_->light_pos[3 * light_] = x;
    m_->light_pos[3 * light_ + 1] = y;
  }
  void WriteObs(Output& out) const {
    PutObs(out, 0, d_->qpos + 3, m_->nq - 3);  // the internal joints, without the planar root
    const auto to_target = NoseToTarget();
    PutObs(out, 1, to_target.data(), 2);
    // per body (head, then each segment): velocimeter x, y and gyro z, in the body's frame
    double* o = out.Obs<double>(2);
    for (int i = kFirstBodySensor; i + 6 <= m_->nsensordata; i += 6) {
      *o++ = d_->sensordata[i];
      *o++ = d_->sensordata[i + 1];
      *o++ = d_->sensordata[i + 5];
    }
  }
  double Reward() const {
    const double size = m_->geom_size[3 * target_];
    const auto v = NoseToTarget();
    return Tolerance(std::sqrt(v[0] * v[0] + v[1] * v[1]), 0.0, size, 5 * size, Sigmoid::kLongTail);
  }

 private:
  // sensordata: nose_pos, target_pos, head_xaxis, head_yaxis (3 each), then velocimeter and gyro (3 each) of the
  // head and of every segment.
  static constexpr int kFirstBodySensor = 12;
  static int BodyVelocitiesSize(const mjModel* m) {
    return static_cast<int>(m->nsensordata - kFirstBodySensor) / 6 * 3;
  }
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
