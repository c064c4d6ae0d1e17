// MPE/simple_adversary-v3 (mpe2's simple_adversary_v3): one adversary and N good agents, N landmarks, one of which
// is the goal. The good agents know the goal; the adversary does not. Rewards: the adversary gets minus its distance
// to the goal; each good agent minus the closest good agent's distance to the goal plus the adversary's distance.
// Observations: adversary [landmark_rel_positions, other_agent_rel_positions] (4N), good agents [goal_rel_position,
// landmark_rel_positions, other_agent_rel_positions] (2 + 4N); num_agent_neighbors / num_landmark_neighbors
// (0: all, mpe2's None) keep only the nearest ones, zero-padded. Actions: Discrete(5) / Box(0, 1, (5,)) for all.
#pragma once

#include <algorithm>
#include <vector>

#include "core/envs/mpe/mpe_env.h"

namespace pp::mpe {

class SimpleAdversaryEnv : public MpeEnv {
 public:
  static constexpr const char* kName = "MpeSimpleAdversary";
  static constexpr int kMaxN = 256;

  static std::vector<ConfigKey> ConfigKeys() {
    return MpeConfigKeys(
        {{"N", int64_t{2}, "number of good agents, and of landmarks", {}},
         {"num_agent_neighbors", int64_t{0}, "observe only this many nearest other agents (0: all)", {}},
         {"num_landmark_neighbors", int64_t{0}, "observe only this many nearest landmarks (0: all)", {}}});
  }
  static std::vector<AgentSpec> Agents(const Config& c) {
    const int n = IntInRange(c, "N", 1, kMaxN);
    const int seen = 2 * NeighborSlots(c, "num_landmark_neighbors", n) + 2 * NeighborSlots(c, "num_agent_neighbors", n);
    std::vector<AgentSpec> agents = {{"adversary_0", seen, ActionLayout{true, true, 2}}};
    for (const AgentSpec& a : SameAgents("agent", n, 2 + seen, ActionLayout{true, true, 2})) agents.push_back(a);
    return agents;
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) { MpeSpec(c, b, "simple_adversary", Agents(c)); }

  SimpleAdversaryEnv(const Config& c, int env_id, uint64_t seed) : MpeEnv(c, env_id, seed, -1.0) {
    const int n = IntInRange(c, "N", 1, kMaxN);
    agents_ = NeighborsOf(c, "num_agent_neighbors", n);
    landmarks_ = NeighborsOf(c, "num_landmark_neighbors", n);
    world_.Build(n + 1, n, 2);
    for (int i = 0; i < n + 1; ++i) {
      world_.agent(i).collide = false;
      world_.agent(i).size = 0.15;
      world_.set_silent(i, true);
    }
    for (int l = 0; l < n; ++l) {
      world_.landmark(l).collide = false;
      world_.landmark(l).movable = false;
      world_.landmark(l).size = 0.08;
    }
    Init(Agents(c));
  }

 protected:
  // The goal landmark, then the positions.
  void ResetWorld() override {
    goal_ = static_cast<int>(rng_.Integers(0, world_.num_landmarks()));
    PlaceUniformly();
  }
  double Reward(int i) const override {
    const double adversary = GoalDistance(0);
    if (i == 0) return -adversary;
    double closest = 0;  // Python's min: the first of the smallest
    for (int j = 1; j < world_.num_agents(); ++j) {
      const double d = GoalDistance(j);
      if (j == 1 || d < closest) closest = d;
    }
    return -closest + (0 + adversary);  // the adversaries' distances summed from 0
  }
  void Observation(int i, double* obs) const override {
    const Entity& agent = world_.agent(i);
    int at = 0;
    if (i != 0) {
      for (int k = 0; k < 2; ++k) obs[at++] = world_.landmark(goal_).pos[k] - agent.pos[k];
    }
    at = ObserveLandmarks(i, landmarks_, obs, at);
    ObserveOtherAgents(i, agents_, obs, at);
  }

  std::vector<double> ScenarioState() const override { return {static_cast<double>(goal_)}; }
  size_t ScenarioStateSize() const override { return 1; }
  void SetScenarioState(const std::vector<double>& s) override {
    goal_ = IndexValue(s[0], world_.num_landmarks(), "the goal landmark");
  }

 private:
  double GoalDistance(int j) const { return World::Dist(world_.agent(j), world_.landmark(goal_)); }

  int goal_ = 0;
  Neighbors agents_, landmarks_;
};

}  // namespace pp::mpe
