// MiniGrid-DistShift (minigrid.envs.DistShiftEnv): a 9x7 room with two strips of lava (rows 1 and strip2_row)
// between the agent, top-left, and the goal, top-right. Sees through walls, as minigrid's DistShiftEnv does.
#pragma once

#include "core/envs/minigrid/minigrid_env.h"

namespace pp::minigrid {

class DistShiftEnv : public MiniGridEnv {
 public:
  static constexpr const char* kName = "MiniGridDistShift";
  static constexpr int kWidth = 9, kHeight = 7;  // minigrid's defaults, used by both registered ids
  static std::vector<ConfigKey> ConfigKeys() {
    return MiniGridKeys(
        {{"max_episode_steps", int64_t{252}, "truncate after this many steps (minigrid's max_steps)", {}},
         {"strip2_row", int64_t{2}, "row of the second lava strip", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "strip2_row", 1, kHeight - 2);
    MiniGridSpec(c, b);
  }
  DistShiftEnv(const Config& c, int env_id, uint64_t seed)
      : MiniGridEnv(c, env_id, seed, kWidth, kHeight, /*see_through_walls=*/true),
        strip2_row_(c.Get<int>("strip2_row")) {}

 protected:
  void GenGrid() override {
    grid_.WallRect(0, 0, width_, height_);
    grid_.Set(width_ - 2, 1, Goal());
    for (int i = 0; i < width_ - 6; ++i) {
      grid_.Set(3 + i, 1, Lava());
      grid_.Set(3 + i, strip2_row_, Lava());
    }
    agent_x_ = agent_y_ = 1;
    agent_dir_ = 0;
    mission_ = "get to the green goal square";
  }

 private:
  int strip2_row_;
};

}  // namespace pp::minigrid
