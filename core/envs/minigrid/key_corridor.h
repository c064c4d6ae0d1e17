// MiniGrid-KeyCorridor (minigrid.envs.KeyCorridorEnv): a corridor of rooms (the middle column, walls removed);
// the object to pick up is behind a locked door on the right, its key in a room on the left.
#pragma once

#include <string>

#include "core/envs/minigrid/room_grid.h"

namespace pp::minigrid {

class KeyCorridorEnv : public RoomGridEnv {
 public:
  static constexpr const char* kName = "MiniGridKeyCorridor";
  static std::vector<ConfigKey> ConfigKeys() {
    return MiniGridKeys(
        {{"max_episode_steps", int64_t{1080}, "truncate after this many steps (minigrid's max_steps)", {}},
         {"room_size", int64_t{6}, "side of each room, walls included", {}},
         {"num_rows", int64_t{3}, "rooms per column", {}},
         {"obj_type", std::string("ball"), "the object to pick up", {"key", "ball", "box"}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "room_size", 3, 64);
    IntInRange(c, "num_rows", 1, 64);
    MiniGridSpec(c, b);
  }
  KeyCorridorEnv(const Config& c, int env_id, uint64_t seed)
      : RoomGridEnv(c, env_id, seed, c.Get<int>("room_size"), c.Get<int>("num_rows"), 3),
        obj_type_(TypeOf(c.Get<std::string>("obj_type"))) {}

 protected:
  void GenGrid() override {
    GenRooms();
    for (int j = 1; j < num_rows_; ++j) RemoveWall(1, j, 3);
    const int room = RandInt(0, num_rows_);
    const Obj door = AddDoor(2, room, 2, -1, 1).first;
    target_ = AddObject(2, room, obj_type_).first;
    AddObject(0, RandInt(0, num_rows_), kKey, door.color);
    PlaceAgentInRoom(1, num_rows_ / 2);
    ConnectAll();
    mission_ = std::string("pick up the ") + ColorName(target_.color) + " " + TypeName(target_.type);
  }
  void Act(int action, double& reward, bool& terminated) override { PickUpAct(action, reward, terminated, target_); }

 private:
  static uint8_t TypeOf(const std::string& s) { return s == "key" ? kKey : (s == "ball" ? kBall : kBox); }
  uint8_t obj_type_;
  Obj target_;
};

}  // namespace pp::minigrid
