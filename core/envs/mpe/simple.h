// MPE/simple-v3 (mpe2's simple_v3): one agent, one landmark; the reward is minus the squared distance between them.
// Observation: [self_vel, landmark_rel_position] (4).
#pragma once

#include <vector>

#include "core/envs/mpe/mpe_env.h"

namespace pp::mpe {

class SimpleEnv : public MpeEnv {
 public:
  static constexpr const char* kName = "MpeSimple";
  static std::vector<ConfigKey> ConfigKeys() { return MpeConfigKeys({}); }
  static std::vector<AgentSpec> Agents() { return SameAgents("agent", 1, 4, ActionLayout{true, true, 0}); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { MpeSpec(c, b, "simple", Agents()); }

  SimpleEnv(const Config& c, int env_id, uint64_t seed) : MpeEnv(c, env_id, seed, -1.0) {
    world_.Build(1, 1, 0);
    world_.agent(0).collide = false;
    world_.set_silent(0, true);
    world_.landmark(0).collide = false;
    world_.landmark(0).movable = false;
    Init(Agents());
  }

 protected:
  void ResetWorld() override { PlaceUniformly(); }
  double Reward(int i) const override { return -World::Dist2(world_.agent(i), world_.landmark(0)); }
  void Observation(int i, double* obs) const override {
    const Entity& a = world_.agent(i);
    const Entity& l = world_.landmark(0);
    obs[0] = a.vel[0];
    obs[1] = a.vel[1];
    obs[2] = l.pos[0] - a.pos[0];
    obs[3] = l.pos[1] - a.pos[1];
  }
};

}  // namespace pp::mpe
