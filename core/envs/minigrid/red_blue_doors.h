// MiniGrid-RedBlueDoors (minigrid.envs.RedBlueDoorEnv): a room with a red door on the left wall and a blue door on
// the right; open the red one first, then the blue one (the blue one first ends the episode with 0).
#pragma once

#include "core/envs/minigrid/minigrid_env.h"

namespace pp::minigrid {

class RedBlueDoorsEnv : public MiniGridEnv {
 public:
  static constexpr const char* kName = "MiniGridRedBlueDoors";
  static std::vector<ConfigKey> ConfigKeys() {
    return MiniGridKeys(
        {{"max_episode_steps", int64_t{1280}, "truncate after this many steps (minigrid's max_steps)", {}},
         {"size", int64_t{8}, "side of the room (the grid is 2 * size wide)", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "size", 3, 1024);
    MiniGridSpec(c, b);
  }
  RedBlueDoorsEnv(const Config& c, int env_id, uint64_t seed)
      : MiniGridEnv(c, env_id, seed, 2 * c.Get<int>("size"), c.Get<int>("size"), /*see_through_walls=*/false),
        size_(c.Get<int>("size")) {}

 protected:
  void GenGrid() override {
    grid_.WallRect(0, 0, 2 * size_, size_);
    grid_.WallRect(size_ / 2, 0, size_, size_);
    PlaceAgent(size_ / 2, 0, size_, size_);
    red_x_ = size_ / 2;
    red_y_ = RandInt(1, size_ - 1);
    grid_.Set(red_x_, red_y_, Door(kRed));
    blue_x_ = size_ / 2 + size_ - 1;
    blue_y_ = RandInt(1, size_ - 1);
    grid_.Set(blue_x_, blue_y_, Door(kBlue));
    mission_ = "open the red door then the blue door";
  }
  void Act(int action, double& reward, bool& terminated) override {
    const bool red_before = grid_.Get(red_x_, red_y_).state == kOpen;
    const bool blue_before = grid_.Get(blue_x_, blue_y_).state == kOpen;
    BaseAct(action, reward, terminated);
    const bool red_after = grid_.Get(red_x_, red_y_).state == kOpen;
    const bool blue_after = grid_.Get(blue_x_, blue_y_).state == kOpen;
    if (blue_after) {
      reward = red_before ? Reward() : 0.0;
      terminated = true;
    } else if (red_after && blue_before) {
      reward = 0.0;
      terminated = true;
    }
  }
  void SaveMission(StateWriter& w) const override { w.Cells({red_x_, red_y_, blue_x_, blue_y_}); }
  void LoadMission(StateReader& r) override { r.Cells(grid_, {&red_x_, &red_y_, &blue_x_, &blue_y_}); }

 private:
  int size_;
  int red_x_ = 0, red_y_ = 0, blue_x_ = 0, blue_y_ = 0;
};

}  // namespace pp::minigrid
