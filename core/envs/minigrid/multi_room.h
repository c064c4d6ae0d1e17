// MiniGrid-MultiRoom (minigrid.envs.MultiRoomEnv): a chain of rooms joined by closed doors of changing colours,
// laid out by minigrid's recursive room placement on a 25x25 grid; the agent in the first room, the goal in the
// last.
#pragma once

#include <vector>

#include "core/envs/minigrid/minigrid_env.h"

namespace pp::minigrid {

class MultiRoomEnv : public MiniGridEnv {
 public:
  static constexpr const char* kName = "MiniGridMultiRoom";
  static constexpr int kSize = 25;  // minigrid's width and height
  static std::vector<ConfigKey> ConfigKeys() {
    return MiniGridKeys(
        {{"max_episode_steps", int64_t{120}, "truncate after this many steps (minigrid's max_steps)", {}},
         {"min_num_rooms", int64_t{6}, "fewest rooms", {}},
         {"max_num_rooms", int64_t{6}, "most rooms", {}},
         {"max_room_size", int64_t{10}, "largest room side, walls included", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    const int lo = IntInRange(c, "min_num_rooms", 1, 64);
    IntInRange(c, "max_num_rooms", lo, 64);
    IntInRange(c, "max_room_size", 4, kSize);
    MiniGridSpec(c, b);
  }
  MultiRoomEnv(const Config& c, int env_id, uint64_t seed)
      : MiniGridEnv(c, env_id, seed, kSize, kSize, /*see_through_walls=*/false),
        min_rooms_(c.Get<int>("min_num_rooms")),
        max_rooms_(c.Get<int>("max_num_rooms")),
        max_room_size_(c.Get<int>("max_room_size")) {}

 protected:
  void GenGrid() override {
    const int num_rooms = RandInt(min_rooms_, max_rooms_ + 1);
    rooms_.clear();
    while (static_cast<int>(rooms_.size()) < num_rooms) {
      cur_.clear();
      const int ex = RandInt(0, width_ - 2), ey = RandInt(0, width_ - 2);  // minigrid draws both from width
      PlaceRoom(num_rooms, cur_, 4, max_room_size_, 2, ex, ey);
      if (cur_.size() > rooms_.size()) rooms_ = cur_;
    }
    int prev_color = -1;
    for (size_t idx = 0; idx < rooms_.size(); ++idx) {
      const Room& r = rooms_[idx];
      for (int i = 0; i < r.w; ++i) {
        grid_.Set(r.x + i, r.y, Wall());
        grid_.Set(r.x + i, r.y + r.h - 1, Wall());
      }
      for (int j = 0; j < r.h; ++j) {
        grid_.Set(r.x, r.y + j, Wall());
        grid_.Set(r.x + r.w - 1, r.y + j, Wall());
      }
      if (idx > 0) {
        // _rand_elem(sorted(COLOR_NAMES - {previous door's colour}))
        uint8_t colors[6];
        int n = 0;
        for (uint8_t col : kColorNames) {
          if (col != prev_color) colors[n++] = col;
        }
        const uint8_t color = colors[RandInt(0, n)];
        grid_.Set(r.door_x, r.door_y, Door(color));
        prev_color = color;
      }
    }
    const Room& first = rooms_.front();
    const Room& last = rooms_.back();
    PlaceAgent(first.x, first.y, first.w, first.h);
    PlaceObj(Goal(), last.x, last.y, last.w, last.h);
    mission_ = "traverse the rooms to get to the goal";
  }

 private:
  struct Room {
    int x, y, w, h, door_x, door_y;  // top-left, size, entry door
  };

  // _placeRoom: one room entered through (ex, ey) in wall `entry_wall`, then up to 8 tries for the next.
  bool PlaceRoom(int num_left, std::vector<Room>& rooms, int min_sz, int max_sz, int entry_wall, int ex, int ey) {
    const int sx = RandInt(min_sz, max_sz + 1), sy = RandInt(min_sz, max_sz + 1);
    int tx, ty;
    if (rooms.empty()) {
      tx = ex;
      ty = ey;
    } else if (entry_wall == 0) {
      tx = ex - sx + 1;
      ty = RandInt(ey - sy + 2, ey);
    } else if (entry_wall == 1) {
      tx = RandInt(ex - sx + 2, ex);
      ty = ey - sy + 1;
    } else if (entry_wall == 2) {
      tx = ex;
      ty = RandInt(ey - sy + 2, ey);
    } else {
      tx = RandInt(ex - sx + 2, ex);
      ty = ey;
    }
    if (tx < 0 || ty < 0) return false;
    if (tx + sx > width_ || ty + sy >= height_) return false;
    for (size_t k = 0; k + 1 < rooms.size(); ++k) {
      const Room& r = rooms[k];
      const bool non_overlap = tx + sx < r.x || r.x + r.w <= tx || ty + sy < r.y || r.y + r.h <= ty;
      if (!non_overlap) return false;
    }
    rooms.push_back({tx, ty, sx, sy, ex, ey});
    if (num_left == 1) return true;
    for (int i = 0; i < 8; ++i) {
      int walls[3], n = 0;
      for (int w = 0; w < 4; ++w) {
        if (w != entry_wall) walls[n++] = w;
      }
      const int exit_wall = walls[RandInt(0, 3)];
      const int next_entry = (exit_wall + 2) % 4;
      int dx, dy;
      if (exit_wall == 0) {
        dx = tx + sx - 1;
        dy = ty + RandInt(1, sy - 1);
      } else if (exit_wall == 1) {
        dx = tx + RandInt(1, sx - 1);
        dy = ty + sy - 1;
      } else if (exit_wall == 2) {
        dx = tx;
        dy = ty + RandInt(1, sy - 1);
      } else {
        dx = tx + RandInt(1, sx - 1);
        dy = ty;
      }
      if (PlaceRoom(num_left - 1, rooms, min_sz, max_sz, next_entry, dx, dy)) break;
    }
    return true;
  }

  int min_rooms_, max_rooms_, max_room_size_;
  std::vector<Room> rooms_, cur_;
};

}  // namespace pp::minigrid
