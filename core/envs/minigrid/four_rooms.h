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
    grid_.HorzWall(0, 0);
    grid_.HorzWall(0, height_ - 1);
    grid_.VertWall(0, 0);
    grid_.VertWall(width_ - 1, 0);
    const int room_w = width_ / 2, room_h = height_ / 2;
    for (int j = 0; j < 2; ++j) {
      for (int i = 0; i < 2; ++i) {
        const int xl = i * room_w, yt = j * room_h, xr = xl + room_w, yb = yt + room_h;
        if (i + 1 < 2) {
          grid_.VertWall(xr, yt, room_h);
          grid_.Set(xr, RandInt(yt + 1, yb), Obj{});
        }
        if (j + 1 < 2) {
          grid_.HorzWall(xl, yb, room_w);
          grid_.Set(RandInt(xl + 1, xr), yb, Obj{});
        }
      }
    }
    PlaceAgent();
    PlaceObj(Goal());
    mission_ = "reach the goal";
  }
};

}  // namespace pp::minigrid
