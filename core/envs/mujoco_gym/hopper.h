// Hopper-v4 / Hopper-v5 (gymnasium 1.4's hopper_v4.py / hopper_v5.py); the dynamics, rewards and termination
// live in planar_walker.h. gymnasium -> config names: healthy_state_range -> healthy_state_min/max,
// healthy_z_range -> healthy_z_min/max, healthy_angle_range -> healthy_angle_min/max; the observed velocity
// clip (-10, 10) is velocity_min/max.
#pragma once

#include "core/envs/mujoco_gym/planar_walker.h"

namespace pp::mujoco_gym {

template <int V>
class HopperEnv : public PlanarWalkerEnv<V, true> {
 public:
  static constexpr const char* kName = V == 4 ? "Hopper-v4" : "Hopper-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    return PlanarWalkerEnv<V, true>::CommonKeys("hopper.xml", 4, 6000.0, 1e-3, 0.7, kInf, 0.2, 5e-3);
  }
  using PlanarWalkerEnv<V, true>::PlanarWalkerEnv;
};

}  // namespace pp::mujoco_gym
