// MPE/simple_push-v3 (mpe2's simple_push_v3): an adversary and a good agent (they collide) and two landmarks, one of
// which is the good agent's goal. The good agent gets minus its distance to the goal; the adversary that distance
// minus its own. Observations: adversary [self_vel, landmark_rel_positions, other_agent_rel_position] (8), good agent
// [self_vel, goal_rel_position, own color (it tells the goal), landmark_rel_positions, landmark colors,
// other_agent_rel_position] (19). Actions: Discrete(5) / Box(0, 1, (5,)) for both.
#pragma once

#include <vector>

#include "core/envs/mpe/mpe_env.h"

namespace pp::mpe {

class SimplePushEnv : public MpeEnv {
 public:
  static constexpr const char* kName = "MpeSimplePush";

  static std::vector<ConfigKey> ConfigKeys() { return MpeConfigKeys({}); }
  static std::vector<AgentSpec> Agents() {
    return {{"adversary_0", 8, ActionLayout{true, true, 2}}, {"agent_0", 19, ActionLayout{true, true, 2}}};
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) { MpeSpec(c, b, "simple_push", Agents()); }

  SimplePushEnv(const Config& c, int env_id, uint64_t seed) : MpeEnv(c, env_id, seed, -1.0) {
    world_.Build(2, 2, 2);
    for (int i = 0; i < 2; ++i) {
      world_.set_silent(i, true);
      world_.landmark(i).collide = false;
      world_.landmark(i).movable = false;
      // reset_world's colors: 0.1 each, plus 0.8 on channel i + 1
      for (int k = 0; k < 3; ++k) world_.landmark(i).color[k] = 0.1;
      world_.landmark(i).color[i + 1] += 0.8;
    }
    Init(Agents());
  }

 protected:
  // The goal landmark (and the good agent's color that shows it), then the positions.
  void ResetWorld() override {
    SetGoal(static_cast<int>(rng_.Integers(0, 2)));
    PlaceUniformly();
  }
  double Reward(int i) const override {
    const double agent_to_goal = World::Dist(world_.agent(1), world_.landmark(goal_));
    if (i == 1) return -agent_to_goal;
    return agent_to_goal - World::Dist(world_.landmark(goal_), world_.agent(0));
  }
  void Observation(int i, double* obs) const override {
    const Entity& agent = world_.agent(i);
    const Entity& other = world_.agent(1 - i);
    int at = 0;
    obs[at++] = agent.vel[0];
    obs[at++] = agent.vel[1];
    if (i == 1) {
      for (int k = 0; k < 2; ++k) obs[at++] = world_.landmark(goal_).pos[k] - agent.pos[k];
      for (int k = 0; k < 3; ++k) obs[at++] = agent.color[k];
    }
    for (int l = 0; l < 2; ++l) {
      for (int k = 0; k < 2; ++k) obs[at++] = world_.landmark(l).pos[k] - agent.pos[k];
    }
    if (i == 1) {
      for (int l = 0; l < 2; ++l) {
        for (int k = 0; k < 3; ++k) obs[at++] = world_.landmark(l).color[k];
      }
    }
    for (int k = 0; k < 2; ++k) obs[at++] = other.pos[k] - agent.pos[k];
  }

  std::vector<double> ScenarioState() const override { return {static_cast<double>(goal_)}; }
  size_t ScenarioStateSize() const override { return 1; }
  void SetScenarioState(const std::vector<double>& s) override { SetGoal(IndexValue(s[0], 2, "the goal landmark")); }

 private:
  // The good agent's color: 0.25 each, plus 0.5 on channel goal + 1.
  void SetGoal(int goal) {
    goal_ = goal;
    Entity& agent = world_.agent(1);
    for (int k = 0; k < 3; ++k) agent.color[k] = 0.25;
    agent.color[goal + 1] += 0.5;
  }

  int goal_ = 0;
};

}  // namespace pp::mpe
