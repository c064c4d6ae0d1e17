// BabyAI's Open levels (minigrid.envs.babyai.open): open a described door, two in order, or one of several.
#pragma once

#include <string>
#include <vector>

#include "core/envs/minigrid/babyai_level.h"

namespace pp::minigrid {

// Open: a 3x3 maze with 18 distractors; open one of its doors (by colour).
class BabyAIOpenEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAIOpen";
  static std::vector<ConfigKey> ConfigKeys() { return LevelKeys(8, 576); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
  BabyAIOpenEnv(const Config& c, int env_id, uint64_t seed) : BabyAILevel(c, env_id, seed, 3, 3) {}

 protected:
  bool GenMission() override {
    PlaceAgentInRoom();
    ConnectAll();
    AddDistractors(-1, -1, 18, false);
    if (!ObjsReachable()) return false;
    const std::vector<Obj> doors = AllDoors();
    const Obj& door = doors[RandInt(0, static_cast<int64_t>(doors.size()))];
    root_ = Action(kOpenInstr, Desc(kDoor, door.color));
    return true;
  }
};

// OpenRedDoor: two 5-cell rooms, open the red door between them.
class BabyAIOpenRedDoorEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAIOpenRedDoor";
  static std::vector<ConfigKey> ConfigKeys() { return LevelKeys(5, 50); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
  BabyAIOpenRedDoorEnv(const Config& c, int env_id, uint64_t seed) : BabyAILevel(c, env_id, seed, 1, 2) {}

 protected:
  bool GenMission() override {
    AddDoor(0, 0, 0, kRed, 0);
    PlaceAgentInRoom(0, 0);
    root_ = Action(kOpenInstr, Desc(kDoor, kRed));
    return true;
  }
};

// OpenDoor: four doors of distinct colours around the middle room; the first described by colour or by location
// (select_by "" draws one); debug: opening another door fails.
class BabyAIOpenDoorEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAIOpenDoor";
  static std::vector<ConfigKey> ConfigKeys() {
    return LevelKeys(
        8, 576, 0,
        {{"debug", false, "strict: toggling another door fails", {}},
         {"select_by", std::string(""), "describe the door by colour or location ('': draw)", {"", "color", "loc"}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
  BabyAIOpenDoorEnv(const Config& c, int env_id, uint64_t seed)
      : BabyAILevel(c, env_id, seed, 3, 3), debug_(c.Get<bool>("debug")), select_by_(c.Get<std::string>("select_by")) {}

 protected:
  bool GenMission() override {
    const std::vector<uint8_t> colors = RandSubset(AllColors(), 4);
    Obj first;
    for (int i = 0; i < 4; ++i) {
      const Obj door = AddDoor(1, 1, i, colors[i], 0).first;
      if (i == 0) first = door;
    }
    bool by_color = select_by_ == "color";
    if (select_by_.empty()) by_color = RandInt(0, 2) == 0;  // _rand_elem(["color", "loc"])
    const ObjDesc desc = by_color ? Desc(kDoor, first.color) : Desc(kDoor, -1, RandInt(0, 4));
    PlaceAgentInRoom(1, 1);
    root_ = Action(kOpenInstr, desc, debug_);
    return true;
  }

 private:
  bool debug_;
  std::string select_by_;
};

// OpenTwoDoors: open the door on the left wall, then the one on the right wall (strict: the first door's
// instruction fails on any other door).
class BabyAIOpenTwoDoorsEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAIOpenTwoDoors";
  static std::vector<ConfigKey> ConfigKeys() {
    const std::vector<std::string> colors = {"", "red", "green", "blue", "purple", "yellow", "grey"};
    return LevelKeys(6, 720, 720,
                     {{"first_color", std::string(""), "colour of the first door ('': drawn)", colors},
                      {"second_color", std::string(""), "colour of the second door ('': drawn)", colors},
                      {"strict", false, "toggling a wrong door first fails", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
  BabyAIOpenTwoDoorsEnv(const Config& c, int env_id, uint64_t seed)
      : BabyAILevel(c, env_id, seed, 3, 3),
        first_(ColorIndex(c.Get<std::string>("first_color"))),
        second_(ColorIndex(c.Get<std::string>("second_color"))),
        strict_(c.Get<bool>("strict")) {}

 protected:
  bool GenMission() override {
    const std::vector<uint8_t> colors = RandSubset(AllColors(), 2);
    const Obj d1 = AddDoor(1, 1, 2, first_ >= 0 ? first_ : colors[0], 0).first;
    const Obj d2 = AddDoor(1, 1, 0, second_ >= 0 ? second_ : colors[1], 0).first;
    PlaceAgentInRoom(1, 1);
    const int a = Action(kOpenInstr, Desc(kDoor, d1.color), strict_);
    const int b = Action(kOpenInstr, Desc(kDoor, d2.color));
    root_ = Seq(kBeforeInstr, a, b);
    return true;
  }

 private:
  static int ColorIndex(const std::string& name) {
    for (int c = 0; c < 6; ++c) {
      if (name == ColorName(static_cast<uint8_t>(c))) return c;
    }
    return -1;
  }
  int first_, second_;
  bool strict_;
};

// OpenDoorsOrder: num_doors doors of the middle room; open one, or two in a given order.
class BabyAIOpenDoorsOrderEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAIOpenDoorsOrder";
  static std::vector<ConfigKey> ConfigKeys() {
    return LevelKeys(6, 720, 720,
                     {{"num_doors", int64_t{2}, "doors of the middle room (2 to 4)", {}},
                      {"debug", false, "strict: toggling another door fails", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "num_doors", 2, 4);
    LevelSpec(c, b);
  }
  BabyAIOpenDoorsOrderEnv(const Config& c, int env_id, uint64_t seed)
      : BabyAILevel(c, env_id, seed, 3, 3), num_doors_(c.Get<int>("num_doors")), debug_(c.Get<bool>("debug")) {}

 protected:
  bool GenMission() override {
    const std::vector<uint8_t> colors = RandSubset(AllColors(), num_doors_);
    std::vector<Obj> doors;
    for (int i = 0; i < num_doors_; ++i) doors.push_back(AddDoor(1, 1, -1, colors[i], 0).first);
    PlaceAgentInRoom(1, 1);
    const std::vector<Obj> two = RandSubset(doors, 2);
    const int mode = RandInt(0, 3);
    const int a = Action(kOpenInstr, Desc(kDoor, two[0].color), debug_);
    if (mode == 0) {
      root_ = a;
    } else {
      const int b = Action(kOpenInstr, Desc(kDoor, two[1].color), debug_);
      root_ = Seq(mode == 1 ? kBeforeInstr : kAfterInstr, a, b);
    }
    return true;
  }

 private:
  int num_doors_;
  bool debug_;
};

}  // namespace pp::minigrid
