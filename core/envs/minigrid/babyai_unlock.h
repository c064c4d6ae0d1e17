// BabyAI's Unlock levels (minigrid.envs.babyai.unlock): open locked doors, pick up what is behind them.
#pragma once

#include <vector>

#include "core/envs/minigrid/babyai_level.h"

namespace pp::minigrid {

// Unlock: a locked door somewhere in a 3x3 maze and its key.
class BabyAIUnlockEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAIUnlock";
  static std::vector<ConfigKey> ConfigKeys() { return LevelKeys(8, 576); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
  BabyAIUnlockEnv(const Config& c, int env_id, uint64_t seed) : BabyAILevel(c, env_id, seed, 3, 3) {}

 protected:
  bool GenMission() override {
    const Obj door = LockedDoorLayout(3, /*coin_for_colors=*/true).door;
    if (!ObjsReachable()) return false;
    root_ = Action(kOpenInstr, Desc(kDoor, door.color));
    return true;
  }
};

// UnlockLocal (distractors: UnlockLocalDist) and KeyInBox (the key hidden in a box): open the middle room's
// locked door with the key in that room.
template <bool kKeyInBox>
class BabyAIUnlockLocalEnvT : public BabyAILevel {
 public:
  static constexpr const char* kName = kKeyInBox ? "BabyAIKeyInBox" : "BabyAIUnlockLocal";
  static std::vector<ConfigKey> ConfigKeys() {
    return LevelKeys(8, 576, 0, {{"distractors", false, "three distinct distractors in the room", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
  BabyAIUnlockLocalEnvT(const Config& c, int env_id, uint64_t seed)
      : BabyAILevel(c, env_id, seed, 3, 3), distractors_(c.Get<bool>("distractors")) {}

 protected:
  bool GenMission() override {
    const Obj door = AddDoor(1, 1, -1, -1, 1).first;
    if (kKeyInBox) {
      const uint8_t box_color = RandColor();
      PlaceInRoom(1, 1, Box(box_color, Key(door.color)));
    } else {
      AddObject(1, 1, kKey, door.color);
      if (distractors_) AddDistractors(1, 1, 3, true);
    }
    PlaceAgentInRoom(1, 1);
    root_ = Action(kOpenInstr, Desc(kDoor));
    return true;
  }

 private:
  bool distractors_;
};
using BabyAIUnlockLocalEnv = BabyAIUnlockLocalEnvT<false>;
using BabyAIKeyInBoxEnv = BabyAIUnlockLocalEnvT<true>;

// UnlockPickup (distractors: UnlockPickupDist) and BlockedUnlockPickup: pick up the box behind a locked door.
template <bool kBlocked>
class BabyAIUnlockPickupEnvT : public BabyAILevel {
 public:
  static constexpr const char* kName = kBlocked ? "BabyAIBlockedUnlockPickup" : "BabyAIUnlockPickup";
  static std::vector<ConfigKey> ConfigKeys() {
    // minigrid's UnlockPickup means to fix max_steps at 8 x 36 but tests `max is None`: its limit is computed
    return LevelKeys(6, kBlocked ? 576 : 72, kBlocked ? 576 : 0,
                     {{"distractors", false, "four distinct distractors", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
  BabyAIUnlockPickupEnvT(const Config& c, int env_id, uint64_t seed)
      : BabyAILevel(c, env_id, seed, 1, 2), distractors_(c.Get<bool>("distractors")) {}

 protected:
  bool GenMission() override {
    const Obj box = AddObject(1, 0, kBox).first;
    const auto [door, pos] = AddDoor(0, 0, 0, -1, 1);
    if (kBlocked) grid_.Set(pos.first - 1, pos.second, Ball(RandColor()));
    AddObject(0, 0, kKey, door.color);
    if (!kBlocked && distractors_) AddDistractors(-1, -1, 4, true);
    PlaceAgentInRoom(0, 0);
    root_ = Action(kPickupInstr, kBlocked ? Desc(kBox) : Desc(kBox, box.color));
    return true;
  }

 private:
  bool distractors_;
};
using BabyAIUnlockPickupEnv = BabyAIUnlockPickupEnvT<false>;
using BabyAIBlockedUnlockPickupEnv = BabyAIUnlockPickupEnvT<true>;

// UnlockToUnlock: three rooms; unlock the middle one's door to get the key of the last door, then pick up the ball.
class BabyAIUnlockToUnlockEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAIUnlockToUnlock";
  static std::vector<ConfigKey> ConfigKeys() { return LevelKeys(6, 1080, 1080); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
  BabyAIUnlockToUnlockEnv(const Config& c, int env_id, uint64_t seed) : BabyAILevel(c, env_id, seed, 1, 3) {}

 protected:
  bool GenMission() override {
    const std::vector<uint8_t> colors = RandSubset(AllColors(), 2);
    AddDoor(0, 0, 0, colors[0], 1);
    AddObject(2, 0, kKey, colors[0]);
    AddDoor(1, 0, 0, colors[1], 1);
    AddObject(1, 0, kKey, colors[1]);
    AddObject(0, 0, kBall);
    PlaceAgentInRoom(1, 0);
    root_ = Action(kPickupInstr, Desc(kBall));
    return true;
  }
};

}  // namespace pp::minigrid
