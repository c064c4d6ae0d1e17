// MPE/simple_world_comm-v3 (mpe2's simple_world_comm_v3): simple_tag with a leader, food and forests. Agents:
// leadadversary_0 (an adversary that also speaks, 4 words, to the others), adversary_0 .. (num_adversaries - 1 of
// them), agent_0 .. (num_good good agents). Landmarks: num_obstacles obstacles (colliding), num_food food, num_forests
// forests. An agent in a forest sees only the others in that forest; an agent outside sees nobody inside one (zeros
// instead), except the leader, which sees everyone. Good agents get -5 per adversary touching them, a penalty for
// leaving the screen, +2 per food touched, minus 0.05 x the distance to the nearest food; adversaries get -0.1 x the
// distance to the nearest good agent, +5 per touching (good agent, adversary) pair. Observations: adversaries
// [self_vel, self_pos, landmark_rel_positions, other_agent_rel_positions, good_agent_velocities, in_forest, leader's
// utterance], good agents [self_vel, self_pos, landmark_rel_positions, other_agent_rel_positions, in_forest,
// other good agents' velocities]. Actions: leader Discrete(20) / Box(0, 1, (9,)) (move + 5 * say), others
// Discrete(5) / Box(0, 1, (5,)).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "core/envs/mpe/mpe_env.h"

namespace pp::mpe {

class SimpleWorldCommEnv : public MpeEnv {
 public:
  static constexpr const char* kName = "MpeSimpleWorldComm";
  static constexpr int kMax = 256;
  static constexpr int kDimC = 4;

  static std::vector<ConfigKey> ConfigKeys() {
    return MpeConfigKeys({{"num_good", int64_t{2}, "number of good agents", {}},
                          {"num_adversaries", int64_t{4}, "number of adversaries, the leader included", {}},
                          {"num_obstacles", int64_t{1}, "number of obstacles", {}},
                          {"num_food", int64_t{2}, "number of food landmarks", {}},
                          {"num_forests", int64_t{2}, "number of forests", {}}});
  }
  static std::vector<AgentSpec> Agents(const Config& c) {
    const Sizes n = ReadSizes(c);
    const int agents = n.good + n.adversaries;
    const int landmarks = n.obstacles + n.food + n.forests;
    const int base = 4 + 2 * landmarks + 2 * (agents - 1) + n.forests;
    std::vector<AgentSpec> out;
    for (int i = 0; i < n.adversaries; ++i) {
      const std::string name = i == 0 ? "leadadversary_0" : "adversary_" + std::to_string(i - 1);
      out.push_back({name, base + 2 * n.good + kDimC, ActionLayout{true, i > 0, kDimC}});
    }
    for (const AgentSpec& a : SameAgents("agent", n.good, base + 2 * (n.good - 1), ActionLayout{true, true, kDimC})) {
      out.push_back(a);
    }
    return out;
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) { MpeSpec(c, b, "simple_world_comm", Agents(c)); }

  SimpleWorldCommEnv(const Config& c, int env_id, uint64_t seed) : MpeEnv(c, env_id, seed, -1.0), n_(ReadSizes(c)) {
    const int agents = n_.good + n_.adversaries;
    world_.Build(agents, n_.obstacles + n_.food + n_.forests, kDimC);
    for (int i = 0; i < agents; ++i) {
      const bool adversary = i < n_.adversaries;
      Entity& a = world_.agent(i);
      world_.set_silent(i, i > 0);
      a.size = adversary ? 0.075 : 0.045;
      a.accel = adversary ? 3.0 : 4.0;
      a.max_speed = adversary ? 1.0 : 1.3;
    }
    for (int l = 0; l < world_.num_landmarks(); ++l) {
      Entity& e = world_.landmark(l);
      e.movable = false;
      e.collide = l < n_.obstacles;
      e.size = l < n_.obstacles ? 0.2 : l < n_.obstacles + n_.food ? 0.03 : 0.3;
    }
    in_forest_.assign(static_cast<size_t>(agents) * static_cast<size_t>(n_.forests), false);
    Init(Agents(c));
  }

 protected:
  // Agents in [-1, 1]^2; every landmark in [-0.9, 0.9]^2, then the food and the forests again (mpe2's world
  // landmarks list holds them too, and reset_world places them twice: the second draw stands).
  void ResetWorld() override {
    for (int i = 0; i < world_.num_agents(); ++i) Place(world_.agent(i), 1.0);
    for (int i = 0; i < world_.num_agents(); ++i) std::fill(world_.c(i), world_.c(i) + world_.dim_c(), 0.0);
    for (int l = 0; l < world_.num_landmarks(); ++l) Place(world_.landmark(l), 0.9);
    for (int l = n_.obstacles; l < world_.num_landmarks(); ++l) Place(world_.landmark(l), 0.9);
  }
  double Reward(int i) const override {
    const Entity& agent = world_.agent(i);
    double rew = 0;
    if (i < n_.adversaries) {
      double nearest = 0;  // Python's min over the good agents
      for (int g = n_.adversaries; g < world_.num_agents(); ++g) {
        const double d = World::Dist(world_.agent(g), agent);
        if (g == n_.adversaries || d < nearest) nearest = d;
      }
      rew -= 0.1 * nearest;
      for (int g = n_.adversaries; g < world_.num_agents(); ++g) {
        for (int a = 0; a < n_.adversaries; ++a) {
          if (Colliding(world_.agent(g), world_.agent(a))) rew += 5;
        }
      }
      return rew;
    }
    for (int a = 0; a < n_.adversaries; ++a) {
      if (Colliding(world_.agent(a), agent)) rew -= 5;
    }
    for (int k = 0; k < 2; ++k) rew -= 2 * ScreenPenalty(std::fabs(agent.pos[k]));
    double nearest = 0;
    for (int f = 0; f < n_.food; ++f) {
      const Entity& food = world_.landmark(n_.obstacles + f);
      if (Colliding(agent, food)) rew += 2;
    }
    for (int f = 0; f < n_.food; ++f) {
      const double d = World::Dist(world_.landmark(n_.obstacles + f), agent);
      if (f == 0 || d < nearest) nearest = d;
    }
    return rew - 0.05 * nearest;
  }
  void PrepareObservations() override {
    for (int i = 0; i < world_.num_agents(); ++i) {
      for (int f = 0; f < n_.forests; ++f) {
        in_forest_[static_cast<size_t>(i * n_.forests + f)] =
            Colliding(world_.agent(i), world_.landmark(n_.obstacles + n_.food + f));
      }
    }
  }
  void Observation(int i, double* obs) const override {
    const Entity& agent = world_.agent(i);
    const bool adversary = i < n_.adversaries;
    int at = ObserveSelf(i, obs);
    for (int l = 0; l < world_.num_landmarks(); ++l) {
      for (int k = 0; k < 2; ++k) obs[at++] = world_.landmark(l).pos[k] - agent.pos[k];
    }
    for (int j = 0; j < world_.num_agents(); ++j) {
      if (j == i) continue;
      const bool seen = Sees(i, j);
      for (int k = 0; k < 2; ++k) obs[at++] = seen ? world_.agent(j).pos[k] - agent.pos[k] : 0.0;
    }
    if (!adversary) at = InForestFlags(i, obs, at);
    for (int j = n_.adversaries; j < world_.num_agents(); ++j) {
      if (j == i) continue;
      const bool seen = Sees(i, j);
      for (int k = 0; k < 2; ++k) obs[at++] = seen ? world_.agent(j).vel[k] : 0.0;
    }
    if (adversary) {
      at = InForestFlags(i, obs, at);
      for (int k = 0; k < kDimC; ++k) obs[at++] = world_.c(0)[k];
    }
  }

 private:
  struct Sizes {
    int good, adversaries, obstacles, food, forests;
  };
  static Sizes ReadSizes(const Config& c) {
    return {IntInRange(c, "num_good", 1, kMax), IntInRange(c, "num_adversaries", 1, kMax),
            IntInRange(c, "num_obstacles", 0, kMax), IntInRange(c, "num_food", 1, kMax),
            IntInRange(c, "num_forests", 0, kMax)};
  }
  bool InForest(int i, int f) const { return in_forest_[static_cast<size_t>(i * n_.forests + f)] != 0; }
  // Whether agent i sees agent j: both in one forest, or neither in any, or i is the leader (it sees everyone).
  bool Sees(int i, int j) const {
    bool i_in = false, j_in = false;
    for (int f = 0; f < n_.forests; ++f) {
      if (InForest(i, f) && InForest(j, f)) return true;
      i_in = i_in || InForest(i, f);
      j_in = j_in || InForest(j, f);
    }
    return (!i_in && !j_in) || i == 0;
  }
  // in_forest: 1 for each forest agent i is in, else -1.
  int InForestFlags(int i, double* obs, int at) const {
    for (int f = 0; f < n_.forests; ++f) obs[at++] = InForest(i, f) ? 1.0 : -1.0;
    return at;
  }

  Sizes n_;
  std::vector<char> in_forest_;  // agent x forest: is_collision(agent, forest), for the current world
};

}  // namespace pp::mpe
