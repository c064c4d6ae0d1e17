// MiniGrid-LavaGap (minigrid.envs.LavaGapEnv): a vertical strip of lava (or wall) with one gap between the agent,
// top-left facing right, and the goal, bottom-right.
#pragma once

#include "core/envs/minigrid/minigrid_env.h"

namespace pp::minigrid {

class LavaGapEnv : public MiniGridEnv {
 public:
  static constexpr const char* kName = "MiniGridLavaGap";
  static std::vector<ConfigKey> ConfigKeys() {
    return MiniGridKeys(
        {{"max_episode_steps", int64_t{100}, "truncate after this many steps (minigrid's max_steps)", {}},
         {"size", int64_t{5}, "side of the square room, walls included", {}},
         {"obstacle_type", std::string("lava"), "what the strip is made of", {"lava", "wall"}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "size", 5, 1024);
    MiniGridSpec(c, b);
  }
  LavaGapEnv(const Config& c, int env_id, uint64_t seed)
      : MiniGridEnv(c, env_id, seed, c.Get<int>("size"), c.Get<int>("size"), /*see_through_walls=*/false),
        lava_(c.Get<std::string>("obstacle_type") == "lava") {}

 protected:
  void GenGrid() override {
    WalledSquareWithGoal();
    const int gap_x = RandInt(2, width_ - 2);
    const int gap_y = RandInt(1, height_ - 1);
    grid_.VertWall(gap_x, 1, height_ - 2, lava_ ? Lava() : Wall());
    grid_.Set(gap_x, gap_y, Obj{});
    mission_ =
        lava_ ? "avoid the lava and get to the green goal square" : "find the opening and get to the green goal square";
  }

 private:
  bool lava_;
};

}  // namespace pp::minigrid
