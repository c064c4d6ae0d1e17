// Fish domain (dm_control 1.0.50's suite/fish.py): FishUpright-v1, FishSwim-v1.
#pragma once

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"

namespace pp::mujoco_dmc {

class FishEnv : public DmcTask<FishEnv> {
 public:
  static constexpr const char* kName = "DmcFish";
  static const std::vector<DomainTask>& Tasks() {
    static const std::vector<DomainTask> t = {
        {"upright", "FishUpright-v1"},
        {"swim", "FishSwim-v1"},
    };
    return t;
  }
  // frame_skip 10: control_timestep 0.04 s of 0.004 s physics steps.
  static std::vector<ConfigKey> ConfigKeys() {
    return DomainKeys("dm_control:suite.fish.get_model_and_assets()", 10, Tasks());
  }
  // EnvPool's keys for both tasks, in dm_control's order: the tail and fin joint angles, the torso's zz, the
  // target relative to the mouth in the mouth's frame (dm_control's Upright does not observe it: here it is the
  // hidden target at its default position, computed the same way), and qvel.
  static std::vector<ObsDef> Observations(const Config&, const mjModel* m) {
    return {{"joint_angles", {kNumJoints}}, {"upright", {}}, {"target", {3}}, {"velocity", {static_cast<int>(m->nv)}}};
  }

  FishEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed, /*own_model=*/true),
        swim_(TaskIndex(c, Tasks()) == 1),
        root_(QposAdr("root")),
        torso_(BodyId("torso")),
        mouth_(GeomId("mouth")),
        target_(GeomId("target")) {
    static constexpr const char* kJoints[kNumJoints] = {
        "tail1", "tail_twist", "tail2", "finright_roll", "finright_pitch", "finleft_roll", "finleft_pitch"};
    for (int i = 0; i < kNumJoints; ++i) joints_[i] = QposAdr(kJoints[i]);
  }

 protected:
  // A uniformly random orientation, the tail and fin joints in [-0.2, 0.2], and (Swim) a random target; Upright
  // hides the target (it only shows in renders).
  void InitializeEpisode() override {
    double* quat = d_->qpos + root_ + 3;
    for (int i = 0; i < 4; ++i) quat[i] = Normal();
    const double norm = std::sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
    for (int i = 0; i < 4; ++i) quat[i] /= norm;
    for (int adr : joints_) d_->qpos[adr] = Uniform(-0.2, 0.2);
    if (swim_) {
      const double target[3] = {Uniform(-0.4, 0.4), Uniform(-0.4, 0.4), Uniform(0.1, 0.3)};
      SetTaskState(target);
    } else {
      MutableModel()->geom_rgba[4 * target_ + 3] = 0;
    }
  }
  double Reward() override {
    if (!swim_) return Tolerance(Upright(), 1.0, 1.0, 1.0);
    const double radii = m_->geom_size[3 * mouth_] + m_->geom_size[3 * target_];
    const auto v = MouthToTarget();
    const double in_target = Tolerance(std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]), 0.0, radii, 2 * radii);
    const double is_upright = 0.5 * (Upright() + 1);
    return (7 * in_target + is_upright) / 8;
  }
  void WriteObservation(Output& out) override {
    double* angles = Obs(out, 0);
    for (int i = 0; i < kNumJoints; ++i) angles[i] = d_->qpos[joints_[i]];
    *Obs(out, 1) = Upright();
    const auto target = MouthToTarget();
    Put(Obs(out, 2), target.data(), 3);
    Put(Obs(out, 3), d_->qvel, static_cast<int>(m_->nv));
  }
  // Swim: the target's position (the model's geom_pos, which dm_control edits per episode).
  int TaskStateSize() const override { return swim_ ? 3 : 0; }
  void GetTaskState(double* s) const override {
    for (int i = 0; i < TaskStateSize(); ++i) s[i] = m_->geom_pos[3 * target_ + i];
  }
  void SetTaskState(const double* s) override {
    mjModel* m = MutableModel();
    for (int i = 0; i < TaskStateSize(); ++i) m->geom_pos[3 * target_ + i] = s[i];
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
