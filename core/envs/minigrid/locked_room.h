// MiniGrid-LockedRoom (minigrid.envs.LockedRoomEnv): six rooms off a central hallway, each with a door of its own
// colour; the goal is in the locked one, its key in another.
#pragma once

#include <string>

#include "core/envs/minigrid/minigrid_env.h"

namespace pp::minigrid {

class LockedRoomEnv : public MiniGridEnv {
 public:
  static constexpr const char* kName = "MiniGridLockedRoom";
  static std::vector<ConfigKey> ConfigKeys() {
    return MiniGridKeys(
        {{"max_episode_steps", int64_t{190}, "truncate after this many steps (minigrid's max_steps)", {}},
         {"size", int64_t{19}, "side of the square grid", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "size", 13, 1024);
    MiniGridSpec(c, b);
  }
  LockedRoomEnv(const Config& c, int env_id, uint64_t seed)
      : MiniGridEnv(c, env_id, seed, c.Get<int>("size"), c.Get<int>("size"), /*see_through_walls=*/false) {}

 protected:
  void GenGrid() override {
    const int w = width_, h = height_;
    grid_.WallRect(0, 0, w, h);
    const int lwall = w / 2 - 2, rwall = w / 2 + 2;
    grid_.VertWall(lwall, 0);
    grid_.VertWall(rwall, 0);
    // Rooms in minigrid's order: for each of 3 rows, the left one then the right one.
    const int room_w = lwall + 1, room_h = h / 3 + 1;
    for (int n = 0; n < 3; ++n) {
      const int j = n * (h / 3);
      for (int i = 0; i < lwall; ++i) grid_.Set(i, j, Wall());
      for (int i = rwall; i < w; ++i) grid_.Set(i, j, Wall());
      rooms_[2 * n] = {0, j, lwall, j + 3, 0};
      rooms_[2 * n + 1] = {rwall, j, rwall, j + 3, 0};
    }
    const int locked = RandInt(0, 6);
    auto rand_pos = [&](const Room& r) {
      const int x = RandInt(r.top_x + 1, r.top_x + room_w - 1);
      const int y = RandInt(r.top_y + 1, r.top_y + room_h - 1);
      return std::pair<int, int>{x, y};
    };
    const auto goal = rand_pos(rooms_[locked]);
    grid_.Set(goal.first, goal.second, Goal());
    // Each room a distinct colour: _rand_elem(sorted(remaining colour names)).
    uint8_t left[6];
    std::copy(std::begin(kColorNames), std::end(kColorNames), left);
    int n_left = 6;
    for (int k = 0; k < 6; ++k) {
      const int idx = RandInt(0, n_left);
      rooms_[k].color = left[idx];
      for (int m = idx; m + 1 < n_left; ++m) left[m] = left[m + 1];
      --n_left;
      grid_.Set(rooms_[k].door_x, rooms_[k].door_y, Door(rooms_[k].color, false, /*is_locked=*/k == locked));
    }
    int key_room;
    do {
      key_room = RandInt(0, 6);
    } while (key_room == locked);
    const auto key = rand_pos(rooms_[key_room]);
    grid_.Set(key.first, key.second, Key(rooms_[locked].color));
    PlaceAgent(lwall, 0, rwall - lwall, h);
    const std::string lc = ColorName(rooms_[locked].color);
    mission_ = "get the " + lc + " key from the " + ColorName(rooms_[key_room].color) + " room, unlock the " + lc +
               " door and go to the goal";
  }

 private:
  struct Room {
    int top_x, top_y, door_x, door_y;
    uint8_t color;
  };
  Room rooms_[6];
};

}  // namespace pp::minigrid
