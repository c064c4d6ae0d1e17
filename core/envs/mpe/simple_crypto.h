// MPE/simple_crypto-v3 (mpe2's simple_crypto_v3): nobody moves. Alice (the speaker) sees the goal (one of two
// one-hot colors) and a key (another such color) and says 4 values; Bob (who knows the key) and Eve (who does not)
// hear her and each say their guess of the goal. Eve gets minus her guess's squared error; Alice and Bob get Eve's
// squared error minus Bob's (a silent guess, all zeros, counts nothing). Observations: eve [alice's utterance] (4),
// bob [key, alice's utterance] (8), alice [goal color, key] (8). Actions: Discrete(4) / Box(0, 1, (4,)) for all.
#pragma once

#include <vector>

#include "core/envs/mpe/mpe_env.h"

namespace pp::mpe {

class SimpleCryptoEnv : public MpeEnv {
 public:
  static constexpr const char* kName = "MpeSimpleCrypto";
  static constexpr int kDimC = 4;
  static constexpr int kEve = 0, kBob = 1, kAlice = 2;

  static std::vector<ConfigKey> ConfigKeys() { return MpeConfigKeys({}); }
  static std::vector<AgentSpec> Agents() {
    const ActionLayout speak{false, false, kDimC};
    return {{"eve_0", kDimC, speak}, {"bob_0", 2 * kDimC, speak}, {"alice_0", 2 * kDimC, speak}};
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) { MpeSpec(c, b, "simple_crypto", Agents()); }

  SimpleCryptoEnv(const Config& c, int env_id, uint64_t seed) : MpeEnv(c, env_id, seed, -1.0) {
    world_.Build(3, 2, kDimC);
    for (int i = 0; i < 3; ++i) {
      world_.agent(i).collide = false;
      world_.agent(i).movable = false;
    }
    for (int l = 0; l < 2; ++l) {
      world_.landmark(l).collide = false;
      world_.landmark(l).movable = false;
    }
    Init(Agents());
  }

 protected:
  // The goal landmark, the key landmark, then the positions.
  void ResetWorld() override {
    goal_ = static_cast<int>(rng_.Integers(0, 2));
    key_ = static_cast<int>(rng_.Integers(0, 2));
    PlaceUniformly();
  }
  double Reward(int i) const override {
    if (i == kEve) return Silent(kEve) ? 0.0 : 0 - GuessError(kEve);
    // Python's ints: each sum starts at 0 and stays the int 0 while nothing is added
    const bool eve = !Silent(kEve), bob = !Silent(kBob);
    if (eve && bob) return GuessError(kEve) + (0 - GuessError(kBob));
    if (bob) return 0 - GuessError(kBob);
    return eve ? GuessError(kEve) : 0.0;
  }
  void Observation(int i, double* obs) const override {
    int at = 0;
    if (i == kAlice) {
      for (int k = 0; k < kDimC; ++k) obs[at++] = Color(goal_, k);
    }
    if (i != kEve) {
      for (int k = 0; k < kDimC; ++k) obs[at++] = Color(key_, k);
    }
    if (i != kAlice) {
      for (int k = 0; k < kDimC; ++k) obs[at++] = world_.c(kAlice)[k];
    }
  }

  std::vector<double> ScenarioState() const override { return {double(goal_), double(key_)}; }
  size_t ScenarioStateSize() const override { return 2; }
  void SetScenarioState(const std::vector<double>& s) override {
    const int goal = IndexValue(s[0], 2, "the goal landmark");
    key_ = IndexValue(s[1], 2, "the key landmark");
    goal_ = goal;
  }

 private:
  // Landmark l's color: one-hot at l, dim_c values.
  static double Color(int l, int k) { return k == l ? 1.0 : 0.0; }
  // (a.state.c == np.zeros(dim_c)).all()
  bool Silent(int a) const {
    for (int k = 0; k < kDimC; ++k) {
      if (world_.c(a)[k] != 0.0) return false;
    }
    return true;
  }
  // np.sum(np.square(a.state.c - goal color)), summed left to right.
  double GuessError(int a) const {
    double sum = 0;
    for (int k = 0; k < kDimC; ++k) {
      const double d = world_.c(a)[k] - Color(goal_, k);
      sum = k == 0 ? d * d : sum + d * d;
    }
    return sum;
  }

  int goal_ = 0, key_ = 0;
};

}  // namespace pp::mpe
