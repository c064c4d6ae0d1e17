// MPE/simple_reference-v3 (mpe2's simple_reference_v3): two agents and three landmarks of different colors. Each
// agent knows the landmark the other agent should reach and can tell it (10 words); its own reward is minus the
// other agent's distance to that landmark, blended by local_ratio with the mean of both. Observation: [self_vel,
// landmark_rel_positions, goal_color, the other agent's utterance] (21). Actions: Discrete(50) (move + 5 * say)
// or Box(0, 1, (15,)) (5 move values, then 10 say values).
#pragma once

#include <vector>

#include "core/envs/mpe/mpe_env.h"

namespace pp::mpe {

class SimpleReferenceEnv : public MpeEnv {
 public:
  static constexpr const char* kName = "MpeSimpleReference";
  static constexpr int kDimC = 10;
  static constexpr int kObsDim = 2 + 3 * 2 + 3 + kDimC;

  static std::vector<ConfigKey> ConfigKeys() {
    return MpeConfigKeys(
        {{"local_ratio", 0.5, "weight of each agent's own reward; the mean reward weighs 1 - local_ratio", {}}});
  }
  static std::vector<AgentSpec> Agents() { return SameAgents("agent", 2, kObsDim, ActionLayout{true, false, kDimC}); }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    LocalRatio(c);
    MpeSpec(c, b, "simple_reference", Agents());
  }

  SimpleReferenceEnv(const Config& c, int env_id, uint64_t seed) : MpeEnv(c, env_id, seed, LocalRatio(c)) {
    world_.Build(2, 3, kDimC);
    for (int i = 0; i < 2; ++i) world_.agent(i).collide = false;
    static constexpr double kColors[3][3] = {{0.75, 0.25, 0.25}, {0.25, 0.75, 0.25}, {0.25, 0.25, 0.75}};
    for (int l = 0; l < 3; ++l) {
      world_.landmark(l).collide = false;
      world_.landmark(l).movable = false;
      for (int k = 0; k < 3; ++k) world_.landmark(l).color[k] = kColors[l][k];
    }
    Init(Agents());
  }

 protected:
  // Agent 0's goal landmark, then agent 1's, then the positions.
  void ResetWorld() override {
    for (int& g : goal_) g = static_cast<int>(rng_.Integers(0, 3));
    PlaceUniformly();
  }
  // Minus the distance of the other agent (goal_a) to this agent's goal landmark (goal_b).
  double Reward(int i) const override { return -World::Dist(world_.agent(1 - i), world_.landmark(goal_[i])); }
  // The mean of both agents' rewards (Python's sum from 0, divided by the agent count).
  double GlobalReward() const override { return (0.0 + Reward(0) + Reward(1)) / 2; }

  void Observation(int i, double* obs) const override {
    const Entity& agent = world_.agent(i);
    int at = 0;
    obs[at++] = agent.vel[0];
    obs[at++] = agent.vel[1];
    for (int l = 0; l < 3; ++l) {
      for (int k = 0; k < 2; ++k) obs[at++] = world_.landmark(l).pos[k] - agent.pos[k];
    }
    for (int k = 0; k < 3; ++k) obs[at++] = world_.landmark(goal_[i]).color[k];
    for (int k = 0; k < kDimC; ++k) obs[at++] = world_.c(1 - i)[k];
  }

  std::vector<double> ScenarioState() const override { return {double(goal_[0]), double(goal_[1])}; }
  size_t ScenarioStateSize() const override { return 2; }
  void SetScenarioState(const std::vector<double>& s) override {
    const int g0 = IndexValue(s[0], 3, "agent 0's goal landmark");
    const int g1 = IndexValue(s[1], 3, "agent 1's goal landmark");
    goal_[0] = g0;
    goal_[1] = g1;
  }

 private:
  int goal_[2] = {0, 0};
};

}  // namespace pp::mpe
