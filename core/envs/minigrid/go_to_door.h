// MiniGrid-GoToDoor (minigrid.envs.GoToDoorEnv): a room of random size with four doors of distinct colours; stand
// next to the named one and say "done". Toggling ends the episode. Sees through walls, as minigrid's env does.
#pragma once

#include <string>

#include "core/envs/minigrid/minigrid_env.h"

namespace pp::minigrid {

class GoToDoorEnv : public MiniGridEnv {
 public:
  static constexpr const char* kName = "MiniGridGoToDoor";
  static std::vector<ConfigKey> ConfigKeys() {
    return MiniGridKeys(
        {{"max_episode_steps", int64_t{100}, "truncate after this many steps (minigrid's max_steps)", {}},
         {"size", int64_t{5}, "largest side of the room, walls included", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "size", 5, 1024);
    MiniGridSpec(c, b);
  }
  GoToDoorEnv(const Config& c, int env_id, uint64_t seed)
      : MiniGridEnv(c, env_id, seed, c.Get<int>("size"), c.Get<int>("size"), /*see_through_walls=*/true) {}

 protected:
  void GenGrid() override {
    const int w = RandInt(5, width_ + 1), h = RandInt(5, height_ + 1);
    grid_.WallRect(0, 0, w, h);
    int px[4], py[4];
    px[0] = RandInt(2, w - 2);
    py[0] = 0;
    px[1] = RandInt(2, w - 2);
    py[1] = h - 1;
    px[2] = 0;
    py[2] = RandInt(2, h - 2);
    px[3] = w - 1;
    py[3] = RandInt(2, h - 2);
    uint8_t colors[4];
    int n = 0;
    while (n < 4) {
      const uint8_t col = kColorNames[RandInt(0, 6)];
      bool seen = false;
      for (int k = 0; k < n; ++k) seen |= colors[k] == col;
      if (!seen) colors[n++] = col;
    }
    for (int k = 0; k < 4; ++k) grid_.Set(px[k], py[k], Door(colors[k]));
    PlaceAgent(0, 0, w, h);
    const int idx = RandInt(0, 4);
    target_x_ = px[idx];
    target_y_ = py[idx];
    mission_ = std::string("go to the ") + ColorName(colors[idx]) + " door";
    mission_id_ = colors[idx];
  }
  void Act(int action, double& reward, bool& terminated) override {
    GoToAct(action, reward, terminated, target_x_, target_y_);
  }
  // the cell to stand next to
  void SaveMission(StateWriter& w) const override { w.Cells({target_x_, target_y_}); }
  void LoadMission(StateReader& r) override { r.Cells(grid_, {&target_x_, &target_y_}); }

 private:
  int target_x_ = 0, target_y_ = 0;
};

}  // namespace pp::minigrid
