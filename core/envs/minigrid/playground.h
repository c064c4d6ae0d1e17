// MiniGrid-Playground (minigrid.envs.PlaygroundEnv): a 3x3 grid of rooms joined by closed doors of random colours,
// twelve random objects, no mission (the empty string) and no reward.
#pragma once

#include "core/envs/minigrid/minigrid_env.h"

namespace pp::minigrid {

class PlaygroundEnv : public MiniGridEnv {
 public:
  static constexpr const char* kName = "MiniGridPlayground";
  static constexpr int kSize = 19;  // fixed in minigrid
  static std::vector<ConfigKey> ConfigKeys() {
    return MiniGridKeys(
        {{"max_episode_steps", int64_t{100}, "truncate after this many steps (minigrid's max_steps)", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) { MiniGridSpec(c, b); }
  PlaygroundEnv(const Config& c, int env_id, uint64_t seed)
      : MiniGridEnv(c, env_id, seed, kSize, kSize, /*see_through_walls=*/false) {}

 protected:
  void GenGrid() override {
    RoomsGrid(3, /*inset=*/1, [this] { return Door(RandColor()); });
    PlaceAgent();
    for (int k = 0; k < 12; ++k) {
      const uint8_t type = kKinds[RandInt(0, 3)];
      PlaceObj(Obj::Make(type, kColorNames[RandInt(0, 6)]));
    }
    mission_.clear();
  }
};

}  // namespace pp::minigrid
