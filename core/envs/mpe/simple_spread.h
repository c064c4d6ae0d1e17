// MPE/simple_spread-v3 (mpe2's simple_spread_v3): N agents cover N landmarks. Every agent gets the global reward
// (minus the sum over landmarks of the closest agent's distance) blended by local_ratio with its own (-1 for each
// other agent it overlaps). Observation: [self_vel, self_pos, landmark_rel_positions, other_agent_rel_positions,
// communication] (6N with full observability; the agents are silent, so communication is zeros).
// num_agent_neighbors / num_landmark_neighbors (0: all, mpe2's None) keep only the nearest ones, zero-padded.
// mpe2's curriculum (a stage advanced by a method call during training) is not a config key here.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "core/envs/mpe/mpe_env.h"

namespace pp::mpe {

class SimpleSpreadEnv : public MpeEnv {
 public:
  static constexpr const char* kName = "MpeSimpleSpread";
  static constexpr int kMaxN = 256;
  static constexpr double kCaptureRadius = 0.1;

  static std::vector<ConfigKey> ConfigKeys() {
    return MpeConfigKeys(
        {{"N", int64_t{3}, "number of agents and of landmarks", {}},
         {"local_ratio", 0.5, "weight of each agent's own reward; the global reward weighs 1 - local_ratio", {}},
         {"terminate_on_success",
          false,
          "end the episode (terminated) once every landmark has an agent within 0.1",
          {}},
         {"num_agent_neighbors", int64_t{0}, "observe only this many nearest other agents (0: all)", {}},
         {"num_landmark_neighbors", int64_t{0}, "observe only this many nearest landmarks (0: all)", {}}});
  }
  static std::vector<AgentSpec> Agents(const Config& c) {
    const int n = IntInRange(c, "N", 1, kMaxN);
    const int agents_seen = NeighborSlots(c, "num_agent_neighbors", n - 1);
    const int landmarks_seen = NeighborSlots(c, "num_landmark_neighbors", n);
    return SameAgents("agent", n, 4 + 2 * landmarks_seen + 4 * agents_seen, ActionLayout{true, true, 2});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    LocalRatio(c);
    MpeSpec(c, b, "simple_spread", Agents(c));
  }

  SimpleSpreadEnv(const Config& c, int env_id, uint64_t seed)
      : MpeEnv(c, env_id, seed, LocalRatio(c)), terminate_on_success_(c.Get<bool>("terminate_on_success")) {
    const int n = IntInRange(c, "N", 1, kMaxN);
    agents_ = NeighborsOf(c, "num_agent_neighbors", n - 1);
    landmarks_ = NeighborsOf(c, "num_landmark_neighbors", n);
    world_.Build(n, n, 2);
    for (int i = 0; i < n; ++i) {
      world_.agent(i).size = 0.15;
      world_.set_silent(i, true);
      world_.landmark(i).collide = false;
      world_.landmark(i).movable = false;
    }
    Init(Agents(c));
  }

 protected:
  void ResetWorld() override { PlaceUniformly(); }

  // -1 for every other agent this one overlaps.
  double Reward(int i) const override {
    double rew = 0;
    const Entity& agent = world_.agent(i);
    for (int j = 0; j < world_.num_agents(); ++j) {
      const Entity& a = world_.agent(j);
      if (World::Dist(a, agent) < a.size + agent.size && j != i) rew -= 1.0;
    }
    return rew;
  }
  double GlobalReward() const override {
    double rew = 0;
    for (int l = 0; l < world_.num_landmarks(); ++l) rew -= ClosestAgent(l);
    return rew;
  }
  bool IsTerminal() const override {
    if (!terminate_on_success_) return false;
    for (int l = 0; l < world_.num_landmarks(); ++l) {
      if (ClosestAgent(l) >= kCaptureRadius) return false;
    }
    return true;
  }

  void Observation(int i, double* obs) const override {
    int at = ObserveSelf(i, obs);
    // the landmarks, then the other agents' positions, then their utterances, each in mpe2's order; the slots past
    // the observed entities (nearest-neighbor observations of fewer entities than slots) are zeros
    at = ObserveLandmarks(i, landmarks_, obs, at);
    at = ObserveOtherAgents(i, agents_, obs, at);
    for (int s = 0; s < agents_.slots; ++s) {
      const bool seen = s < static_cast<int>(seen_.size());
      for (int k = 0; k < world_.dim_c(); ++k) obs[at++] = seen ? world_.c(seen_[static_cast<size_t>(s)])[k] : 0.0;
    }
  }

 private:
  double ClosestAgent(int l) const {
    double best = 0;
    for (int j = 0; j < world_.num_agents(); ++j) {
      const double d = World::Dist(world_.agent(j), world_.landmark(l));
      if (j == 0 || d < best) best = d;
    }
    return best;
  }
  bool terminate_on_success_;
  Neighbors agents_, landmarks_;
};

}  // namespace pp::mpe
