// MPE/simple_tag-v3 (mpe2's simple_tag_v3): predator-prey. num_adversaries slower adversaries chase num_good faster
// good agents among num_obstacles obstacles (everything collides). Each adversary gets +10 for every touching
// (good agent, adversary) pair; each good agent -10 for every adversary touching it and a penalty for leaving the
// screen. Observation: [self_vel, self_pos, landmark_rel_positions, other_agent_rel_positions, good_agent_velocities]
// (adversaries 4 + 2 num_obstacles + 2 (agents - 1) + 2 num_good; good agents 2 less: they do not see their own
// velocity among the good agents'). num_agent_neighbors / num_landmark_neighbors (0: all) keep only the nearest,
// zero-padded (then velocity slots of adversaries are zeros, and every agent's observation has the same size).
// terminate_on_success ends the episode once every good agent touches an adversary. mpe2's curriculum (a stage
// advanced by a method call during training) is not a config key here. Actions: Discrete(5) / Box(0, 1, (5,)).
#pragma once

#include <cmath>
#include <vector>

#include "core/envs/mpe/mpe_env.h"

namespace pp::mpe {

class SimpleTagEnv : public MpeEnv {
 public:
  static constexpr const char* kName = "MpeSimpleTag";
  static constexpr int kMax = 256;

  static std::vector<ConfigKey> ConfigKeys() {
    return MpeConfigKeys(
        {{"num_good", int64_t{1}, "number of good agents (prey)", {}},
         {"num_adversaries", int64_t{3}, "number of adversaries (predators)", {}},
         {"num_obstacles", int64_t{2}, "number of obstacles", {}},
         {"terminate_on_success", false, "end the episode (terminated) once every good agent touches an adversary", {}},
         {"num_agent_neighbors", int64_t{0}, "observe only this many nearest other agents (0: all)", {}},
         {"num_landmark_neighbors", int64_t{0}, "observe only this many nearest obstacles (0: all)", {}}});
  }
  static std::vector<AgentSpec> Agents(const Config& c) {
    const int good = IntInRange(c, "num_good", 1, kMax);
    const int adversaries = IntInRange(c, "num_adversaries", 0, kMax);
    const int obstacles = IntInRange(c, "num_obstacles", 0, kMax);
    const int others = good + adversaries - 1;
    const int landmark_slots = NeighborSlots(c, "num_landmark_neighbors", obstacles);
    const bool all_agents = c.Get<int64_t>("num_agent_neighbors") == 0;
    const int agent_slots = NeighborSlots(c, "num_agent_neighbors", others);
    const int base = 4 + 2 * landmark_slots + 2 * agent_slots;
    const ActionLayout move{true, true, 2};
    // full observability: velocities of the good agents among the others; else one velocity slot per agent slot
    std::vector<AgentSpec> agents =
        SameAgents("adversary", adversaries, base + 2 * (all_agents ? good : agent_slots), move);
    for (const AgentSpec& a : SameAgents("agent", good, base + 2 * (all_agents ? good - 1 : agent_slots), move)) {
      agents.push_back(a);
    }
    return agents;
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) { MpeSpec(c, b, "simple_tag", Agents(c)); }

  SimpleTagEnv(const Config& c, int env_id, uint64_t seed)
      : MpeEnv(c, env_id, seed, -1.0),
        num_adversaries_(IntInRange(c, "num_adversaries", 0, kMax)),
        terminate_on_success_(c.Get<bool>("terminate_on_success")) {
    const int good = IntInRange(c, "num_good", 1, kMax);
    const int obstacles = IntInRange(c, "num_obstacles", 0, kMax);
    const int agents = num_adversaries_ + good;
    agents_ = NeighborsOf(c, "num_agent_neighbors", agents - 1);
    landmarks_ = NeighborsOf(c, "num_landmark_neighbors", obstacles);
    world_.Build(agents, obstacles, 2);
    for (int i = 0; i < agents; ++i) {
      const bool adversary = i < num_adversaries_;
      Entity& a = world_.agent(i);
      world_.set_silent(i, true);
      a.size = adversary ? 0.075 : 0.05;
      a.accel = adversary ? 3.0 : 4.0;
      a.max_speed = adversary ? 1.0 : 1.3;
    }
    for (int l = 0; l < obstacles; ++l) {
      world_.landmark(l).movable = false;
      world_.landmark(l).size = 0.2;
    }
    Init(Agents(c));
  }

 protected:
  // Agents uniformly in [-1, 1]^2, then obstacles in [-0.9, 0.9]^2.
  void ResetWorld() override {
    for (int i = 0; i < world_.num_agents(); ++i) Place(world_.agent(i), 1.0);
    for (int l = 0; l < world_.num_landmarks(); ++l) Place(world_.landmark(l), 0.9);
    for (int i = 0; i < world_.num_agents(); ++i) std::fill(world_.c(i), world_.c(i) + world_.dim_c(), 0.0);
  }
  double Reward(int i) const override {
    const Entity& agent = world_.agent(i);
    double rew = 0;
    if (i < num_adversaries_) {
      for (int g = num_adversaries_; g < world_.num_agents(); ++g) {
        for (int a = 0; a < num_adversaries_; ++a) {
          if (Colliding(world_.agent(g), world_.agent(a))) rew += 10;
        }
      }
      return rew;
    }
    for (int a = 0; a < num_adversaries_; ++a) {
      if (Colliding(world_.agent(a), agent)) rew -= 10;
    }
    for (int k = 0; k < 2; ++k) rew -= ScreenPenalty(std::fabs(agent.pos[k]));
    return rew;
  }
  bool IsTerminal() const override {
    if (!terminate_on_success_) return false;
    for (int g = num_adversaries_; g < world_.num_agents(); ++g) {
      bool caught = false;
      for (int a = 0; a < num_adversaries_ && !caught; ++a) caught = Colliding(world_.agent(g), world_.agent(a));
      if (!caught) return false;
    }
    return true;
  }
  void Observation(int i, double* obs) const override {
    int at = ObserveSelf(i, obs);
    at = ObserveLandmarks(i, landmarks_, obs, at);
    at = ObserveOtherAgents(i, agents_, obs, at);
    if (!agents_.nearest) {  // the good agents' velocities only
      for (int j : seen_) {
        if (j < num_adversaries_) continue;
        for (int k = 0; k < 2; ++k) obs[at++] = world_.agent(j).vel[k];
      }
      return;
    }
    // padded_velocities: one slot per agent slot, zeros for adversaries and past the agents seen
    for (int s = 0; s < agents_.slots; ++s) {
      const bool good = s < static_cast<int>(seen_.size()) && seen_[static_cast<size_t>(s)] >= num_adversaries_;
      for (int k = 0; k < 2; ++k) obs[at++] = good ? world_.agent(seen_[static_cast<size_t>(s)]).vel[k] : 0.0;
    }
  }

 private:
  int num_adversaries_;
  bool terminate_on_success_;
  Neighbors agents_, landmarks_;
};

}  // namespace pp::mpe
