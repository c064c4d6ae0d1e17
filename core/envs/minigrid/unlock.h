// MiniGrid-Unlock (minigrid.envs.UnlockEnv): two rooms; open the locked door with the key lying by the agent.
#pragma once

#include "core/envs/minigrid/room_grid.h"

namespace pp::minigrid {

class UnlockEnv : public RoomGridEnv {
 public:
  static constexpr const char* kName = "MiniGridUnlock";
  static constexpr int kRoomSize = 6;  // fixed in minigrid
  static std::vector<ConfigKey> ConfigKeys() {
    return MiniGridKeys(
        {{"max_episode_steps", int64_t{288}, "truncate after this many steps (minigrid's max_steps)", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) { MiniGridSpec(c, b); }
  UnlockEnv(const Config& c, int env_id, uint64_t seed) : RoomGridEnv(c, env_id, seed, kRoomSize, 1, 2) {}

 protected:
  void GenGrid() override {
    GenRooms();
    const auto [door, pos] = AddDoor(0, 0, 0, -1, 1);
    door_x_ = pos.first;
    door_y_ = pos.second;
    AddObject(0, 0, kKey, door.color);
    PlaceAgentInRoom(0, 0);
    mission_ = "open the door";
  }
  void Act(int action, double& reward, bool& terminated) override {
    BaseAct(action, reward, terminated);
    if (action == kToggle && grid_.Get(door_x_, door_y_).state == kOpen) {
      reward = Reward();
      terminated = true;
    }
  }
  void SaveMission(StateWriter& w) const override { w.Cells({door_x_, door_y_}); }
  void LoadMission(StateReader& r) override { r.Cells(grid_, {&door_x_, &door_y_}); }

 private:
  int door_x_ = 0, door_y_ = 0;
};

}  // namespace pp::minigrid
