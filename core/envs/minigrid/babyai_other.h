// BabyAI's other levels (minigrid.envs.babyai.other) and the GoTo levels with doors (GoToObjDoor, GoToImpUnlock).
#pragma once

#include <vector>

#include "core/envs/minigrid/babyai_level.h"

namespace pp::minigrid {

// ActionObjDoor: five distinct objects and four doors in the middle room; go to / pick up an object, go to / open
// a door.
class BabyAIActionObjDoorEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAIActionObjDoor";
  static std::vector<ConfigKey> ConfigKeys() { return LevelKeys(7, 441); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
  BabyAIActionObjDoorEnv(const Config& c, int env_id, uint64_t seed) : BabyAILevel(c, env_id, seed, 3, 3) {}

 protected:
  bool GenMission() override {
    std::vector<Obj> objs;
    for (const auto& p : AddDistractors(1, 1, 5, true)) objs.push_back(p.obj);
    for (int k = 0; k < 4; ++k) objs.push_back(AddDoor(1, 1, -1, -1, 0).first);
    PlaceAgentInRoom(1, 1);
    const Obj& o = objs[RandInt(0, static_cast<int64_t>(objs.size()))];
    const bool go = RandBool();
    root_ = Action(go ? kGoToInstr : (o.type == kDoor ? kOpenInstr : kPickupInstr), Desc(o.type, o.color));
    return true;
  }
};

// FindObj: an object somewhere in a 3x3 maze; pick up an object of its type.
class BabyAIFindObjEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAIFindObj";
  static std::vector<ConfigKey> ConfigKeys() { return LevelKeys(5, 500, 500); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
  BabyAIFindObjEnv(const Config& c, int env_id, uint64_t seed) : BabyAILevel(c, env_id, seed, 3, 3) {}

 protected:
  bool GenMission() override {
    const int i = RandInt(0, num_rows_), j = RandInt(0, num_cols_);
    const Obj o = AddObject(i, j).first;
    PlaceAgentInRoom(1, 1);
    ConnectAll();
    root_ = Action(kPickupInstr, Desc(o.type));
    return true;
  }
};

// KeyCorridor (BabyAI's): as MiniGrid-KeyCorridor, with BabyAI's mission "pick up the/a <type>".
class BabyAIKeyCorridorEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAIKeyCorridor";
  static std::vector<ConfigKey> ConfigKeys() {
    return LevelKeys(6, 1080, 1080, {{"num_rows", int64_t{3}, "rooms per column", {}}, ObjTypeKey()});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "num_rows", 1, 16);
    LevelSpec(c, b);
  }
  BabyAIKeyCorridorEnv(const Config& c, int env_id, uint64_t seed)
      : BabyAILevel(c, env_id, seed, c.Get<int>("num_rows"), 3), obj_type_(ObjType(c)) {}

 protected:
  bool GenMission() override {
    root_ = Action(kPickupInstr, Desc(KeyCorridorLayout(obj_type_).type));
    return true;
  }

 private:
  uint8_t obj_type_;
};

// OneRoom: pick up the ball in an empty room.
class BabyAIOneRoomEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAIOneRoom";
  static std::vector<ConfigKey> ConfigKeys() { return LevelKeys(8, 64); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
  BabyAIOneRoomEnv(const Config& c, int env_id, uint64_t seed) : BabyAILevel(c, env_id, seed, 1, 1) {}

 protected:
  bool GenMission() override {
    const Obj o = AddObject(0, 0, kBall).first;
    PlaceAgentInRoom();
    root_ = Action(kPickupInstr, Desc(o.type));
    return true;
  }
};

// MoveTwoAcross: two rooms joined; put an object next to one across, then one from there next to one back.
class BabyAIMoveTwoAcrossEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAIMoveTwoAcross";
  static std::vector<ConfigKey> ConfigKeys() {
    return LevelKeys(8, 1024, 1024, {{"objs_per_room", int64_t{9}, "distinct objects per room", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "objs_per_room", 2, 9);
    LevelSpec(c, b);
  }
  BabyAIMoveTwoAcrossEnv(const Config& c, int env_id, uint64_t seed)
      : BabyAILevel(c, env_id, seed, 1, 2), objs_per_room_(c.Get<int>("objs_per_room")) {}

 protected:
  bool GenMission() override {
    PlaceAgentInRoom(0, 0);
    std::vector<Obj> left, right;
    for (const auto& p : AddDistractors(0, 0, objs_per_room_, true)) left.push_back(p.obj);
    for (const auto& p : AddDistractors(1, 0, objs_per_room_, true)) right.push_back(p.obj);
    RemoveWall(0, 0, 0);
    left = RandSubset(left, 2);
    right = RandSubset(right, 2);
    const Obj &a = left[0], &b = right[0], &c = right[1], &d = left[1];
    const int first = Action(kPutNextInstr, Desc(a.type, a.color), false, Desc(b.type, b.color));
    const int second = Action(kPutNextInstr, Desc(c.type, c.color), false, Desc(d.type, d.color));
    root_ = Seq(kBeforeInstr, first, second);
    return true;
  }

 private:
  int objs_per_room_;
};

// GoToObjDoor: eight objects and four doors in the middle room; go to one of them.
class BabyAIGoToObjDoorEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAIGoToObjDoor";
  static std::vector<ConfigKey> ConfigKeys() { return LevelKeys(8, 576); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
  BabyAIGoToObjDoorEnv(const Config& c, int env_id, uint64_t seed) : BabyAILevel(c, env_id, seed, 3, 3) {}

 protected:
  bool GenMission() override {
    PlaceAgentInRoom(1, 1);
    std::vector<Obj> objs;
    for (const auto& p : AddDistractors(1, 1, 8, false)) objs.push_back(p.obj);
    for (int k = 0; k < 4; ++k) objs.push_back(AddDoor(1, 1).first);
    if (!ObjsReachable()) return false;
    const Obj& o = objs[RandInt(0, static_cast<int64_t>(objs.size()))];
    root_ = Action(kGoToInstr, Desc(o.type, o.color));
    return true;
  }
};

// GoToImpUnlock: go to an object in a locked room whose key lies elsewhere.
class BabyAIGoToImpUnlockEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAIGoToImpUnlock";
  static std::vector<ConfigKey> ConfigKeys() { return LevelKeys(8, 576); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
  BabyAIGoToImpUnlockEnv(const Config& c, int env_id, uint64_t seed) : BabyAILevel(c, env_id, seed, 3, 3) {}

 protected:
  bool GenMission() override {
    const LockedDoor locked = LockedDoorLayout(2, /*coin_for_colors=*/false);
    if (!ObjsReachable()) return false;
    const Obj o = AddDistractors(locked.i, locked.j, 1, false)[0].obj;
    root_ = Action(kGoToInstr, Desc(o.type, o.color));
    return true;
  }
};

}  // namespace pp::minigrid
