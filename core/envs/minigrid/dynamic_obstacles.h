// MiniGrid-Dynamic-Obstacles (minigrid.envs.DynamicObstaclesEnv): balls that each move to a random neighbouring
// free cell every step; walking into one (or into any object but the goal) ends the episode with reward -1.
// Three actions (left, right, forward); sees through walls, as minigrid's env does.
#pragma once

#include <vector>

#include "core/envs/minigrid/minigrid_env.h"

namespace pp::minigrid {

class DynamicObstaclesEnv : public MiniGridEnv {
 public:
  static constexpr const char* kName = "MiniGridDynamicObstacles";
  static std::vector<ConfigKey> ConfigKeys() {
    return MiniGridKeys(AgentStartKeys(
        {{"max_episode_steps", int64_t{100}, "truncate after this many steps (minigrid's max_steps)", {}},
         {"size", int64_t{5}, "side of the square room, walls included", {}},
         {"n_obstacles", int64_t{2}, "number of moving balls (at most size / 2 + 1)", {}}}));
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    const int size = IntInRange(c, "size", 4, 1024);
    IntInRange(c, "n_obstacles", 0, 1 << 20);
    IntInRange(c, "agent_start_x", -1, size - 2);
    IntInRange(c, "agent_start_y", -1, size - 2);
    IntInRange(c, "agent_start_dir", 0, 3);
    MiniGridSpec(c, b, /*num_actions=*/3);
  }
  DynamicObstaclesEnv(const Config& c, int env_id, uint64_t seed)
      : MiniGridEnv(c, env_id, seed, c.Get<int>("size"), c.Get<int>("size"), /*see_through_walls=*/true),
        start_(ReadAgentStart(c)) {
    // minigrid: n_obstacles if n_obstacles <= size / 2 + 1, else int(size / 2).
    const int n = c.Get<int>("n_obstacles");
    n_obstacles_ = 2 * n <= width_ + 2 ? n : width_ / 2;
    obstacles_.resize(static_cast<size_t>(n_obstacles_));
  }

 protected:
  void GenGrid() override {
    grid_.WallRect(0, 0, width_, height_);
    grid_.Set(width_ - 2, height_ - 2, Goal());
    PlaceAgentAtStart(start_);
    for (auto& [x, y] : obstacles_) {
      if (!TryPlaceObj(Ball(), 0, 0, width_, height_, 100, NoReject, x, y)) {
        throw std::runtime_error("MiniGrid-Dynamic-Obstacles: rejection sampling failed in place_obj");
      }
    }
    mission_ = "get to the green goal square";
  }

  void Act(int action, double& reward, bool& terminated) override {
    const int fx = agent_x_ + kDirX[agent_dir_], fy = agent_y_ + kDirY[agent_dir_];
    const Obj& front = grid_.Get(fx, fy);
    const bool not_clear = !front.none() && front.type != kGoal;
    for (auto& [x, y] : obstacles_) {
      int nx, ny;
      // A ball that finds no free cell around it in 100 tries stays (minigrid catches the exception).
      if (TryPlaceObj(grid_.Get(x, y), x - 1, y - 1, 3, 3, 100, NoReject, nx, ny)) {
        grid_.Set(x, y, Obj{});
        x = nx;
        y = ny;
      }
    }
    BaseAct(action, reward, terminated);
    if (action == kForward && not_clear) {
      reward = -1.0;
      terminated = true;
    }
  }

  // The balls' positions in minigrid's order (the order they move in): n, then x, y each.
  std::vector<double> ExtraState() const override {
    std::vector<double> s = {double(obstacles_.size())};
    for (auto [x, y] : obstacles_) s.insert(s.end(), {double(x), double(y)});
    return s;
  }
  void SetExtraState(const std::vector<double>& e) override {
    if (e.size() != 1 + 2 * obstacles_.size() || e[0] != double(obstacles_.size())) {
      throw std::invalid_argument("MiniGrid-Dynamic-Obstacles state: expected " + std::to_string(obstacles_.size()) +
                                  " obstacle positions");
    }
    for (size_t i = 0; i < obstacles_.size(); ++i) {
      const int x = static_cast<int>(e[1 + 2 * i]), y = static_cast<int>(e[2 + 2 * i]);
      if (!grid_.InBounds(x, y)) throw std::invalid_argument("MiniGrid-Dynamic-Obstacles state: obstacle outside");
      obstacles_[i] = {x, y};
    }
  }

 private:
  static bool NoReject(int, int) { return false; }

  AgentStart start_;
  int n_obstacles_;
  std::vector<std::pair<int, int>> obstacles_;
};

}  // namespace pp::minigrid
