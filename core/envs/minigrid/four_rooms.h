// MiniGrid-FourRooms (minigrid.envs.FourRoomsEnv): a 19x19 grid of four rooms joined by one gap in each inner wall;
// the agent and the goal anywhere.
#pragma once

#include "core/envs/minigrid/minigrid_env.h"

namespace pp::minigrid {

class FourRoomsEnv : public MiniGridEnv {
 public:
  static constexpr const char* kName = "MiniGridFourRooms";
  static constexpr int kSize = 19;  // fixed in minigrid
  static std::vector<ConfigKey> ConfigKeys() {
    return MiniGridKeys(
        {{"max_episode_steps", int64_t{100}, "truncate after this many steps (minigrid's max_steps)", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) { MiniGridSpec(c, b); }
  FourRoomsEnv(const Config& c, int env_id, uint64_t seed)
      : MiniGridEnv(c, env_id, seed, kSize, kSize, /*see_through_walls=*/false) {}

 protected:
  void GenGrid() override {
    RoomsGrid(2, /*inset=*/0, [] { return Obj{}; });
    PlaceAgent();
    PlaceObj(Goal());
    mission_ = "reach the goal";
  }
};

}  // namespace pp::minigrid
