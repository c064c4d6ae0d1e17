// Walker2d-v4 / Walker2d-v5 (gymnasium 1.4's walker2d_v4.py / walker2d_v5.py; v5 uses walker2d_v5.xml, whose
// feet have equal friction); the dynamics, rewards and termination live in planar_walker.h.
// gymnasium -> config names: healthy_z_range -> healthy_z_min/max, healthy_angle_range ->
// healthy_angle_min/max; the observed velocity clip (-10, 10) is velocity_min/max.
#pragma once

#include "core/envs/mujoco_gym/planar_walker.h"

namespace pp::mujoco_gym {

template <int V>
class Walker2dEnv : public PlanarWalkerEnv<V, false> {
 public:
  static constexpr const char* kName = V == 4 ? "Walker2d-v4" : "Walker2d-v5";
  static std::vector<ConfigKey> ConfigKeys() {
    return PlanarWalkerEnv<V, false>::CommonKeys(V == 4 ? "walker2d.xml" : "walker2d_v5.xml", 4, kInf, 1e-3, 0.8,
                                                 2.0, 1.0, 5e-3);
  }
  using PlanarWalkerEnv<V, false>::PlanarWalkerEnv;
};

}  // namespace pp::mujoco_gym
