// MiniGrid-DoorKey (minigrid.envs.DoorKeyEnv): a wall splits the room; the goal is behind a locked yellow door whose
// key lies on the agent's side.
#pragma once

#include "core/envs/minigrid/minigrid_env.h"

namespace pp::minigrid {

class DoorKeyEnv : public MiniGridEnv {
 public:
  static constexpr const char* kName = "MiniGridDoorKey";
  static std::vector<ConfigKey> ConfigKeys() {
    return MiniGridKeys(
        {{"max_episode_steps", int64_t{250}, "truncate after this many steps (minigrid's max_steps)", {}},
         {"size", int64_t{5}, "side of the square room, walls included", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "size", 5, 1024);
    MiniGridSpec(c, b);
  }
  DoorKeyEnv(const Config& c, int env_id, uint64_t seed)
      : MiniGridEnv(c, env_id, seed, c.Get<int>("size"), c.Get<int>("size"), /*see_through_walls=*/false) {}

 protected:
  void GenGrid() override {
    grid_.WallRect(0, 0, width_, height_);
    grid_.Set(width_ - 2, height_ - 2, Goal());
    const int split = RandInt(2, width_ - 2);
    grid_.VertWall(split, 0);
    PlaceAgent(0, 0, split, height_);
    const int door = RandInt(1, height_ - 2);
    grid_.Set(split, door, Door(kYellow, false, /*is_locked=*/true));
    PlaceObj(Key(kYellow), 0, 0, split, height_);
    mission_ = "use the key to open the door and then get to the goal";
  }
};

}  // namespace pp::minigrid
