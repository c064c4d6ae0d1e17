// FishUpright-v1 and FishSwim-v1, aligned with dm_control 1.0.50's suite/fish.py.
#pragma once

#include <array>
#include <cmath>

#include "core/envs/mujoco_dmc/dmc_env.h"

namespace pp::mujoco_dmc {

class FishEnv : public DmcTask<FishEnv> {
 public:
  static constexpr const char* kName = "DmcFish";
  static constexpr const char* kXml = "fish.xml";
  static constexpr int kSubSteps = 10;  // control_timestep 0.04 s of 0.004 s physics steps
  static std::vector<std::string> TaskNames() { return {"upright", "swim"}; }

  // EnvPool's keys (the same for both tasks): Upright, which does not observe the target, zeroes it.
  static void DefineObs(const Config&, const mjModel* m, SpecBuilder& b) {
    b.Obs("obs:joint_angles", DType::kFloat64, {kNumJoints});
    b.Obs("obs:upright", DType::kFloat64, {});
    b.Obs("obs:velocity", DType::kFloat64, {static_cast<int>(m->nv)});
    b.Obs("obs:target", DType::kFloat64, {3});
  }

  FishEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed),
        swim_(c.Get<std::string>("task_name") == "swim"),
        root_(m_->jnt_qposadr[JointId(m_, "root")]),
        torso_(BodyId(m_, "torso")),
        mouth_(GeomId(m_, "mouth")),
        target_(GeomId(m_, "target")) {
    static constexpr const char* kJoints[kNumJoints] = {"tail1",          "tail_twist",    "tail2",        "finright_roll",
                                                        "finright_pitch", "finleft_roll", "finleft_pitch"};
    for (int i = 0; i < kNumJoints; ++i) joints_[i] = m_->jnt_qposadr[JointId(m_, kJoints[i])];
  }

  // A uniformly random orientation, the tail and fin joints in [-0.2, 0.2], and (Swim) a random target.
  void InitializeEpisode() {
    double* quat = d_->qpos + root_ + 3;
    for (int i = 0; i < 4; ++i) quat[i] = Normal();
    const double n = std::sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
    for (int i = 0; i < 4; ++i) quat[i] /= n;
    for (int adr : joints_) d_->qpos[adr] = Uniform(-0.2, 0.2);
    if (swim_) {
      double* pos = m_->geom_pos + 3 * target_;
      pos[0] = Uniform(-0.4, 0.4);
      pos[1] = Uniform(-0.4, 0.4);
      pos[2] = Uniform(0.1, 0.3);
    } else {
      m_->geom_rgba[4 * target_ + 3] = 0;  // Upright hides the target (it only shows in renders)
    }
  }
  void WriteObs(Output& out) const {
    double* angles = out.Obs<double>(0);
    for (int i = 0; i < kNumJoints; ++i) angles[i] = d_->qpos[joints_[i]];
    *out.Obs<double>(1) = Upright();
    PutObs(out, 2, d_->qvel, m_->nv);
    const auto target = swim_ ? MouthToTarget() : std::array<double, 3>{0.0, 0.0, 0.0};
    PutObs(out, 3, target.data(), 3);
  }
  double Reward() const {
    if (!swim_) return Tolerance(Upright(), 1.0, 1.0, 1.0);
    const double radii = m_->geom_size[3 * mouth_] + m_->geom_size[3 * target_];
    const auto v = MouthToTarget();
    const double in_target = Tolerance(std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]), 0.0, radii, 2 * radii);
    const double is_upright = 0.5 * (Upright() + 1);
    return (7 * in_target + is_upright) / 8;
  }

 private:
  static constexpr int kNumJoints = 7;
  double Upright() const { return d_->xmat[9 * torso_ + 8]; }  // the torso's zz
  // The vector from the mouth to the target in the mouth's frame.
  std::array<double, 3> MouthToTarget() const {
    const double* t = d_->geom_xpos + 3 * target_;
    const double* p = d_->geom_xpos + 3 * mouth_;
    const double* r = d_->geom_xmat + 9 * mouth_;
    const double v[3] = {t[0] - p[0], t[1] - p[1], t[2] - p[2]};
    std::array<double, 3> out;
    for (int j = 0; j < 3; ++j) out[j] = v[0] * r[j] + v[1] * r[3 + j] + v[2] * r[6 + j];
    return out;
  }

  bool swim_;
  int root_, torso_, mouth_, target_;
  std::array<int, kNumJoints> joints_;
};

}  // namespace pp::mujoco_dmc
