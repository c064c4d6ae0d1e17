// Cartpole domain (dm_control suite/cartpole.py): CartpoleBalance, CartpoleBalanceSparse, CartpoleSwingup,
// CartpoleSwingupSparse, CartpoleTwoPoles, CartpoleThreePoles. The pole count comes from the model (the task ids of
// the multi-pole tasks select dm_control's builder with num_poles = 2 or 3).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"

namespace pp::mujoco_dmc {

class CartpoleEnv : public DmcTask<CartpoleEnv> {
 public:
  static constexpr const char* kName = "DmcCartpole";
  static const std::vector<DomainTask>& Tasks() {
    static const std::vector<DomainTask> t = {
        {"balance", "CartpoleBalance-v1"},
        {"balance_sparse", "CartpoleBalanceSparse-v1"},
        {"swingup", "CartpoleSwingup-v1"},
        {"swingup_sparse", "CartpoleSwingupSparse-v1"},
        {"two_poles", "CartpoleTwoPoles-v1", "dm_control:suite.cartpole.get_model_and_assets(num_poles=2)"},
        {"three_poles", "CartpoleThreePoles-v1", "dm_control:suite.cartpole.get_model_and_assets(num_poles=3)"},
    };
    return t;
  }
  static std::vector<ConfigKey> ConfigKeys() {
    return DomainKeys("dm_control:suite.cartpole.get_model_and_assets()", 1, Tasks());
  }
  // position: cart x, then (cos, sin) of each pole's angle: xmat's (zz, xz) per pole body; velocity: qvel.
  static std::vector<ObsDef> Observations(const Config&, const mjModel* m) {
    const int poles = static_cast<int>(m->nbody) - 2;
    return {{"position", {1 + 2 * poles}}, {"velocity", {static_cast<int>(m->nv)}}};
  }

  CartpoleEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed), slider_(QposAdr("slider")), hinge_(QposAdr("hinge_1")) {
    const int task = TaskIndex(c, Tasks());
    swing_up_ = task >= 2;  // swingup, swingup_sparse, two_poles, three_poles
    sparse_ = task == 1 || task == 3;
  }

 protected:
  void InitializeEpisode() override {
    const int nv = static_cast<int>(m_->nv);
    if (swing_up_) {
      d_->qpos[slider_] = .01 * Normal();
      d_->qpos[hinge_] = kPi + .01 * Normal();
      for (int i = 2; i < nv; ++i) d_->qpos[i] = .1 * Normal();
    } else {
      d_->qpos[slider_] = Uniform(-.1, .1);
      for (int i = 1; i < nv; ++i) d_->qpos[i] = Uniform(-.034, .034);
    }
    for (int i = 0; i < nv; ++i) d_->qvel[i] = .01 * Normal();
  }

  double Reward() override {
    const int poles = static_cast<int>(m_->nbody) - 2;
    const double cart = d_->qpos[slider_];
    if (sparse_) {
      double r = Tolerance(cart, -.25, .25);
      for (int p = 0; p < poles; ++p) r *= Tolerance(PoleCos(p), .995, 1);
      return r;
    }
    double upright = 0;
    for (int p = 0; p < poles; ++p) upright += (PoleCos(p) + 1) / 2;
    upright /= poles;
    const double centered = (1 + Tolerance(cart, 0, 0, 2)) / 2;
    const double small_control = (4 + Tolerance(d_->ctrl[0], 0, 0, 1, Sigmoid::kQuadratic, 0)) / 5;
    double small_velocity = 1;
    for (int i = 1; i < m_->nv; ++i) small_velocity = std::min(small_velocity, Tolerance(d_->qvel[i], 0, 0, 5));
    small_velocity = (1 + small_velocity) / 2;
    return upright * small_control * small_velocity * centered;
  }

  void WriteObservation(Output& out) override {
    double* pos = Obs(out, 0);
    *pos++ = d_->qpos[slider_];
    for (int p = 0; p < static_cast<int>(m_->nbody) - 2; ++p) {
      *pos++ = PoleCos(p);
      *pos++ = d_->xmat[9 * (p + 2) + 2];  // xz
    }
    Put(Obs(out, 1), d_->qvel, static_cast<int>(m_->nv));
  }

 private:
  double PoleCos(int p) const { return d_->xmat[9 * (p + 2) + 8]; }  // zz of pole body p (bodies 2, 3, ...)

  int slider_, hinge_;
  bool swing_up_ = false, sparse_ = false;
};

}  // namespace pp::mujoco_dmc
