// MiniGrid-Empty (minigrid.envs.EmptyEnv): an empty room, the goal in the bottom-right corner. The agent starts at
// (agent_start_x, agent_start_y) facing agent_start_dir, or anywhere facing anywhere when agent_start_x < 0 (the
// -Random ids). Sees through walls, as minigrid's EmptyEnv does.
#pragma once

#include "core/envs/minigrid/minigrid_env.h"

namespace pp::minigrid {

class EmptyEnv : public MiniGridEnv {
 public:
  static constexpr const char* kName = "MiniGridEmpty";
  static std::vector<ConfigKey> ConfigKeys() {
    return MiniGridKeys(AgentStartKeys(
        {{"max_episode_steps", int64_t{100}, "truncate after this many steps (minigrid's max_steps)", {}},
         {"size", int64_t{5}, "side of the square room, walls included", {}}}));
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    const int size = IntInRange(c, "size", 3, 1024);
    const int x = IntInRange(c, "agent_start_x", -1, size - 2), y = IntInRange(c, "agent_start_y", -1, size - 2);
    IntInRange(c, "agent_start_dir", 0, 3);
    if (x >= 0 && (x < 1 || y < 1 || (x == size - 2 && y == size - 2))) {
      throw std::invalid_argument("MiniGrid-Empty: the agent must start on a free cell inside the walls");
    }
    MiniGridSpec(c, b);
  }
  EmptyEnv(const Config& c, int env_id, uint64_t seed)
      : MiniGridEnv(c, env_id, seed, c.Get<int>("size"), c.Get<int>("size"), /*see_through_walls=*/true),
        start_(ReadAgentStart(c)) {}

 protected:
  void GenGrid() override {
    grid_.WallRect(0, 0, width_, height_);
    grid_.Set(width_ - 2, height_ - 2, Goal());
    PlaceAgentAtStart(start_);
    mission_ = "get to the green goal square";
  }

 private:
  AgentStart start_;
};

}  // namespace pp::minigrid
