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
         ObjTypeKey()});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "room_size", 3, 64);
    IntInRange(c, "num_rows", 1, 64);
    MiniGridSpec(c, b);
  }
  KeyCorridorEnv(const Config& c, int env_id, uint64_t seed)
      : RoomGridEnv(c, env_id, seed, c.Get<int>("room_size"), c.Get<int>("num_rows"), 3), obj_type_(ObjType(c)) {}

 protected:
  void GenGrid() override {
    GenRooms();
    target_ = KeyCorridorLayout(obj_type_);
    mission_ = std::string("pick up the ") + ColorName(target_.color) + " " + TypeName(target_.type);
  }
  void Act(int action, double& reward, bool& terminated) override { PickUpAct(action, reward, terminated, target_); }
  void SaveMission(StateWriter& w) const override { w.Object(target_); }
  void LoadMission(StateReader& r) override { target_ = r.Object(); }

 private:
  uint8_t obj_type_;
  Obj target_;
};

}  // namespace pp::minigrid
