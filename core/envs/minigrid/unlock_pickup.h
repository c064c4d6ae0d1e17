// MiniGrid-UnlockPickup and MiniGrid-BlockedUnlockPickup (minigrid.envs.UnlockPickupEnv /
// BlockedUnlockPickupEnv): pick up the box behind a locked door; in the blocked variant a ball stands in front
// of the door on the agent's side.
#pragma once

#include <string>

#include "core/envs/minigrid/room_grid.h"

namespace pp::minigrid {

template <bool kBlocked>
class UnlockPickupEnvT : public RoomGridEnv {
 public:
  static constexpr const char* kName = kBlocked ? "MiniGridBlockedUnlockPickup" : "MiniGridUnlockPickup";
  static constexpr int kRoomSize = 6;  // fixed in minigrid
  static std::vector<ConfigKey> ConfigKeys() {
    return MiniGridKeys({{"max_episode_steps",
                          int64_t{kBlocked ? 576 : 288},
                          "truncate after this many steps (minigrid's max_steps)",
                          {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) { MiniGridSpec(c, b); }
  UnlockPickupEnvT(const Config& c, int env_id, uint64_t seed) : RoomGridEnv(c, env_id, seed, kRoomSize, 1, 2) {}

 protected:
  void GenGrid() override {
    GenRooms();
    target_ = AddObject(1, 0, kBox).first;
    const auto [door, pos] = AddDoor(0, 0, 0, -1, 1);
    if (kBlocked) grid_.Set(pos.first - 1, pos.second, Ball(RandColor()));
    AddObject(0, 0, kKey, door.color);
    PlaceAgentInRoom(0, 0);
    mission_ = std::string("pick up the ") + ColorName(target_.color) + " box";
    mission_id_ = kBlocked ? 0 : target_.color;  // EnvPool's mission ids (the blocked variant's are all 0)
  }
  void Act(int action, double& reward, bool& terminated) override { PickUpAct(action, reward, terminated, target_); }
  void SaveMission(StateWriter& w) const override { w.Object(target_); }
  void LoadMission(StateReader& r) override { target_ = r.Object(); }

 private:
  Obj target_;
};

using UnlockPickupEnv = UnlockPickupEnvT<false>;
using BlockedUnlockPickupEnv = UnlockPickupEnvT<true>;

}  // namespace pp::minigrid
