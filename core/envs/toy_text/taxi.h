// Taxi-v3, aligned with gymnasium.envs.toy_text.TaxiEnv (the deterministic, dry version; gymnasium 1.4 calls it
// Taxi-v4, whose dry transitions are unchanged). A 5x5 grid with walls and four stands R(0,0) G(0,4) Y(4,0)
// B(4,3). Actions: 0 south, 1 north, 2 east, 3 west, 4 pickup, 5 dropoff. Reward -1 per step, +20 for delivering
// the passenger (terminates), -10 for an illegal pickup or dropoff. Observation:
// ((taxi_row * 5 + taxi_col) * 5 + passenger) * 4 + destination, passenger 4 meaning "in the taxi".
// Reset: uniform over the 300 states with the passenger at a stand other than the destination (gymnasium's initial
// distribution). The draws follow EnvPool's order (row, col, passenger, destination), redrawing the destination
// while it equals the passenger's stand, so a seed gives EnvPool's start state whenever EnvPool's is valid
// (EnvPool also starts a quarter of its episodes with passenger == destination, which gymnasium never does).
#pragma once

#include <random>
#include <stdexcept>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"
#include "core/envs/toy_text/state_index.h"

namespace pp::toy_text {

class TaxiEnv : public Env {
 public:
  static constexpr const char* kName = "Taxi";
  static std::vector<ConfigKey> ConfigKeys() {
    return {{"max_episode_steps", int64_t{200}, "truncate after this many steps", {}},
            {"reward_threshold", 8.0, "solved score", {}}};
  }
  static void DefineSpec(const Config&, SpecBuilder& b) {
    b.Obs("obs", DType::kInt32, {}, {0.0}, {499.0});
    b.DiscreteAction(6);
  }

  TaxiEnv(const Config& c, int env_id, uint64_t seed) : Env(c, env_id, seed) {}

  void Reset(Output& out) override {
    std::uniform_int_distribution<int> pos(0, 4), stand(0, 3);
    row_ = pos(gen_);
    col_ = pos(gen_);
    pass_ = stand(gen_);
    do {
      dest_ = stand(gen_);
    } while (dest_ == pass_);
    Write(out);
  }

  void Step(const ActionView& action, Output& out) override { StepTo(action, out); }
  static void StepBatch(Env* const* envs, int n, const BatchRows& rows) noexcept { StepEach<TaxiEnv>(envs, n, rows); }
  // Step's body for Step and StepBatch alike (ActionView/Output or BatchRow); never throws
  template <class A, class O>
  void StepTo(const A& action, O& out) {
    double reward = -1.0;
    switch (action.Discrete()) {
      case 0:
        if (row_ < 4) ++row_;
        break;
      case 1:
        if (row_ > 0) --row_;
        break;
      case 2:  // the map's wall characters between columns: kWalls[row][col + 1] is east of col
        if (kWalls[row_][col_ + 1] == ':') ++col_;
        break;
      case 3:
        if (kWalls[row_][col_] == ':') --col_;
        break;
      case 4:
        if (pass_ < 4 && AtStand(pass_)) {
          pass_ = 4;
        } else {
          reward = -10.0;
        }
        break;
      default: {
        const int here = StandHere();
        if (pass_ == 4 && here == dest_) {
          pass_ = dest_;
          reward = 20.0;
          out.SetTerminated(true);
        } else if (pass_ == 4 && here >= 0) {
          pass_ = here;
        } else {
          reward = -10.0;
        }
      }
    }
    out.SetReward(reward);
    Write(out);
  }

  // (encoded state), as gymnasium's env.unwrapped.s
  std::vector<double> GetState() const override { return {double(Encode())}; }
  void SetState(const std::vector<double>& s) override {
    const int v = StateIndex(s, 500, "Taxi");
    dest_ = v % 4;
    pass_ = (v / 4) % 5;
    col_ = (v / 20) % 5;
    row_ = v / 100;
  }

 private:
  static constexpr int kStands[4][2] = {{0, 0}, {0, 4}, {4, 0}, {4, 3}};
  // Row r of gymnasium's map, every second character: '|' is a wall, ':' an open boundary between columns.
  static constexpr const char* kWalls[5] = {"|:|::|", "|:|::|", "|::::|", "||:|:|", "||:|:|"};

  bool AtStand(int i) const { return row_ == kStands[i][0] && col_ == kStands[i][1]; }
  int StandHere() const {
    for (int i = 0; i < 4; ++i) {
      if (AtStand(i)) return i;
    }
    return -1;
  }
  int Encode() const { return ((row_ * 5 + col_) * 5 + pass_) * 4 + dest_; }
  template <class O>
  void Write(O& out) {
    *out.template Obs<int32_t>(0) = Encode();
  }

  int row_ = 0, col_ = 0, pass_ = 0, dest_ = 1;
};

}  // namespace pp::toy_text
