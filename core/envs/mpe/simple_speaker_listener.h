// MPE/simple_speaker_listener-v4 (mpe2's simple_speaker_listener_v4): a speaker that cannot move sees the color of
// the goal landmark (one of three) and says one of 3 words; a listener that cannot speak hears it and moves. Both
// get minus the listener's squared distance to the goal. Observations: speaker [goal_color] (3), listener
// [self_vel, landmark_rel_positions, the speaker's utterance] (11). Actions: speaker Discrete(3) / Box(0, 1, (3,))
// (its utterance), listener Discrete(5) / Box(0, 1, (5,)) (its move).
#pragma once

#include <vector>

#include "core/envs/mpe/mpe_env.h"

namespace pp::mpe {

class SimpleSpeakerListenerEnv : public MpeEnv {
 public:
  static constexpr const char* kName = "MpeSimpleSpeakerListener";
  static constexpr int kDimC = 3;

  static std::vector<ConfigKey> ConfigKeys() { return MpeConfigKeys({}); }
  static std::vector<AgentSpec> Agents() {
    return {{"speaker_0", 3, ActionLayout{false, false, kDimC}}, {"listener_0", 11, ActionLayout{true, true, kDimC}}};
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) { MpeSpec(c, b, "simple_speaker_listener", Agents()); }

  SimpleSpeakerListenerEnv(const Config& c, int env_id, uint64_t seed) : MpeEnv(c, env_id, seed, -1.0) {
    world_.Build(2, 3, kDimC);
    for (int i = 0; i < 2; ++i) {
      world_.agent(i).collide = false;
      world_.agent(i).size = 0.075;
    }
    world_.agent(0).movable = false;
    world_.set_silent(1, true);
    static constexpr double kColors[3][3] = {{0.65, 0.15, 0.15}, {0.15, 0.65, 0.15}, {0.15, 0.15, 0.65}};
    for (int l = 0; l < 3; ++l) {
      world_.landmark(l).collide = false;
      world_.landmark(l).movable = false;
      world_.landmark(l).size = 0.04;
      for (int k = 0; k < 3; ++k) world_.landmark(l).color[k] = kColors[l][k];
    }
    Init(Agents());
  }

 protected:
  // The goal landmark, then the positions.
  void ResetWorld() override {
    goal_ = static_cast<int>(rng_.Integers(0, 3));
    PlaceUniformly();
  }
  double Reward(int) const override { return -World::Dist2(world_.agent(1), world_.landmark(goal_)); }
  void Observation(int i, double* obs) const override {
    if (i == 0) {
      for (int k = 0; k < 3; ++k) obs[k] = world_.landmark(goal_).color[k];
      return;
    }
    const Entity& listener = world_.agent(1);
    int at = 0;
    obs[at++] = listener.vel[0];
    obs[at++] = listener.vel[1];
    for (int l = 0; l < 3; ++l) {
      for (int k = 0; k < 2; ++k) obs[at++] = world_.landmark(l).pos[k] - listener.pos[k];
    }
    for (int k = 0; k < kDimC; ++k) obs[at++] = world_.c(0)[k];
  }

  std::vector<double> ScenarioState() const override { return {static_cast<double>(goal_)}; }
  size_t ScenarioStateSize() const override { return 1; }
  void SetScenarioState(const std::vector<double>& s) override { goal_ = IndexValue(s[0], 3, "the goal landmark"); }

 private:
  int goal_ = 0;
};

}  // namespace pp::mpe
