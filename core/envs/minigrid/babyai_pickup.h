// BabyAI's Pickup levels (minigrid.envs.babyai.pickup, except PickupLoc which is a LevelGen level).
#pragma once

#include <vector>

#include "core/envs/minigrid/babyai_level.h"

namespace pp::minigrid {

// Pickup / UnblockPickup: a 3x3 maze with distractors; pick up one of them (UnblockPickup: 20 distractors and a
// layout where some object is not reachable).
template <bool kUnblock>
class BabyAIPickupEnvT : public BabyAILevel {
 public:
  static constexpr const char* kName = kUnblock ? "BabyAIUnblockPickup" : "BabyAIPickup";
  static std::vector<ConfigKey> ConfigKeys() { return LevelKeys(8, 576); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
  BabyAIPickupEnvT(const Config& c, int env_id, uint64_t seed) : BabyAILevel(c, env_id, seed, 3, 3) {}

 protected:
  bool GenMission() override {
    PlaceAgentInRoom();
    ConnectAll();
    const std::vector<Placed> objs = AddDistractors(-1, -1, kUnblock ? 20 : 18, false);
    if (ObjsReachable() == kUnblock) return false;
    const Obj& o = objs[RandInt(0, static_cast<int64_t>(objs.size()))].obj;
    root_ = Action(kPickupInstr, Desc(o.type, o.color));
    return true;
  }
};
using BabyAIPickupEnv = BabyAIPickupEnvT<false>;
using BabyAIUnblockPickupEnv = BabyAIPickupEnvT<true>;

// PickupDist: one 7-cell room, five distinct objects; pick up the one described by type, colour or both (debug:
// picking up another fails).
class BabyAIPickupDistEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAIPickupDist";
  static std::vector<ConfigKey> ConfigKeys() {
    return LevelKeys(7, 49, 0, {{"debug", false, "strict: picking up another object fails", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
  BabyAIPickupDistEnv(const Config& c, int env_id, uint64_t seed)
      : BabyAILevel(c, env_id, seed, 1, 1), debug_(c.Get<bool>("debug")) {}

 protected:
  bool GenMission() override {
    const std::vector<Placed> objs = AddDistractors(-1, -1, 5, true);
    PlaceAgentInRoom(0, 0);
    const Obj& o = objs[RandInt(0, static_cast<int64_t>(objs.size()))].obj;
    const int select_by = RandInt(0, 3);  // _rand_elem(["type", "color", "both"])
    const uint8_t type = select_by == 1 ? uint8_t{kNone} : o.type;
    const int color = select_by == 0 ? -1 : o.color;
    root_ = Action(kPickupInstr, Desc(type, color), debug_);
    return true;
  }

 private:
  bool debug_;
};

// PickupAbove: pick up the object in the room above the agent's.
class BabyAIPickupAboveEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAIPickupAbove";
  static std::vector<ConfigKey> ConfigKeys() { return LevelKeys(6, 288, 288); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
  BabyAIPickupAboveEnv(const Config& c, int env_id, uint64_t seed) : BabyAILevel(c, env_id, seed, 3, 3) {}

 protected:
  bool GenMission() override {
    const Obj o = AddObject(1, 0).first;
    AddDoor(1, 1, 3, -1, 0);
    PlaceAgentInRoom(1, 1);
    ConnectAll();
    root_ = Action(kPickupInstr, Desc(o.type, o.color));
    return true;
  }
};

}  // namespace pp::minigrid
