// BabyAI's GoTo levels (minigrid.envs.babyai.goto): "go to the/a <colour> <type>" succeeds when the agent faces a
// matching object.
#pragma once

#include <string>
#include <vector>

#include "core/envs/minigrid/babyai_level.h"

namespace pp::minigrid {

// A GoTo level: GoToInstr(ObjDesc(type, colour)) of the target the level picks; num_dists distractors.
class BabyAIGoToLevel : public BabyAILevel {
 public:
  static std::vector<ConfigKey> GoToKeys(int room_size, int num_dists, int rooms = 1, std::vector<ConfigKey> own = {}) {
    own.push_back({"num_dists", int64_t{num_dists}, "number of distractor objects", {}});
    return LevelKeys(room_size, room_size * room_size * rooms, 0, std::move(own));
  }
  static void GoToSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "num_dists", 0, 64);
    LevelSpec(c, b);
  }

 protected:
  BabyAIGoToLevel(const Config& c, int env_id, uint64_t seed, int rows, int cols)
      : BabyAILevel(c, env_id, seed, rows, cols), num_dists_(c.Get<int>("num_dists")) {}

  void Target(const Obj& o) { root_ = Action(kGoToInstr, Desc(o.type, o.color)); }

  int num_dists_;
};

// GoToRedBall (grey_dists: GoToRedBallGrey, whose distractors are all grey; NoDists: num_dists 0).
template <bool kGreyDists>
class BabyAIGoToRedBallEnvT : public BabyAIGoToLevel {
 public:
  static constexpr const char* kName = kGreyDists ? "BabyAIGoToRedBallGrey" : "BabyAIGoToRedBall";
  static std::vector<ConfigKey> ConfigKeys() { return GoToKeys(8, 7); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { GoToSpec(c, b); }
  BabyAIGoToRedBallEnvT(const Config& c, int env_id, uint64_t seed) : BabyAIGoToLevel(c, env_id, seed, 1, 1) {}

 protected:
  bool GenMission() override {
    PlaceAgentInRoom();
    Target(AddObject(0, 0, kBall, kRed).first);
    for (const auto& d : AddDistractors(-1, -1, num_dists_, false)) {
      if (kGreyDists) grid_.At(d.x, d.y).color = kGrey;
    }
    return ObjsReachable();
  }
};
using BabyAIGoToRedBallEnv = BabyAIGoToRedBallEnvT<false>;
using BabyAIGoToRedBallGreyEnv = BabyAIGoToRedBallEnvT<true>;

// GoToRedBlueBall: the red or the blue ball, no other red or blue ball among the distractors.
class BabyAIGoToRedBlueBallEnv : public BabyAIGoToLevel {
 public:
  static constexpr const char* kName = "BabyAIGoToRedBlueBall";
  static std::vector<ConfigKey> ConfigKeys() { return GoToKeys(8, 7); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { GoToSpec(c, b); }
  BabyAIGoToRedBlueBallEnv(const Config& c, int env_id, uint64_t seed) : BabyAIGoToLevel(c, env_id, seed, 1, 1) {}

 protected:
  bool GenMission() override {
    PlaceAgentInRoom();
    for (const auto& d : AddDistractors(-1, -1, num_dists_, false)) {
      if (d.obj.type == kBall && (d.obj.color == kBlue || d.obj.color == kRed)) return false;
    }
    const uint8_t color = RandInt(0, 2) == 0 ? kRed : kBlue;
    Target(AddObject(0, 0, kBall, color).first);
    return ObjsReachable();
  }
};

// GoToObj (one object, num_dists unused) and GoToLocal (a random one of num_dists objects), one room.
template <bool kLocal>
class BabyAIGoToObjEnvT : public BabyAIGoToLevel {
 public:
  static constexpr const char* kName = kLocal ? "BabyAIGoToLocal" : "BabyAIGoToObj";
  static std::vector<ConfigKey> ConfigKeys() { return GoToKeys(8, kLocal ? 8 : 1); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { GoToSpec(c, b); }
  BabyAIGoToObjEnvT(const Config& c, int env_id, uint64_t seed) : BabyAIGoToLevel(c, env_id, seed, 1, 1) {}

 protected:
  bool GenMission() override {
    PlaceAgentInRoom();
    if (!kLocal) {
      Target(AddDistractors(-1, -1, 1, true)[0].obj);
      return true;
    }
    const auto& objs = AddDistractors(-1, -1, num_dists_, false);
    if (!ObjsReachable()) return false;
    Target(objs[RandInt(0, static_cast<int64_t>(objs.size()))].obj);
    return true;
  }
};
using BabyAIGoToObjEnv = BabyAIGoToObjEnvT<false>;
using BabyAIGoToLocalEnv = BabyAIGoToObjEnvT<true>;

// GoTo (and GoToOpen, GoToObjMaze*): a 3x3 (num_rows x num_cols) maze connected by doors, num_dists objects.
class BabyAIGoToEnv : public BabyAIGoToLevel {
 public:
  static constexpr const char* kName = "BabyAIGoTo";
  static std::vector<ConfigKey> ConfigKeys() {
    return GoToKeys(8, 18, 9,
                    {{"num_rows", int64_t{3}, "rows of rooms", {}},
                     {"num_cols", int64_t{3}, "columns of rooms", {}},
                     {"doors_open", false, "open every door after generation", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "num_rows", 1, 16);
    IntInRange(c, "num_cols", 1, 16);
    GoToSpec(c, b);
  }
  BabyAIGoToEnv(const Config& c, int env_id, uint64_t seed)
      : BabyAIGoToLevel(c, env_id, seed, c.Get<int>("num_rows"), c.Get<int>("num_cols")),
        doors_open_(c.Get<bool>("doors_open")) {}

 protected:
  bool GenMission() override {
    PlaceAgentInRoom();
    ConnectAll();
    const auto& objs = AddDistractors(-1, -1, num_dists_, false);
    if (!ObjsReachable()) return false;
    Target(objs[RandInt(0, static_cast<int64_t>(objs.size()))].obj);
    if (doors_open_) OpenAllDoors();
    return true;
  }

 private:
  bool doors_open_;
};

// GoToDoor: four doors (random walls, colours, locks) of the middle room of a 3x3 grid of 7-cell rooms.
class BabyAIGoToDoorEnv : public BabyAIGoToLevel {
 public:
  static constexpr const char* kName = "BabyAIGoToDoor";
  static std::vector<ConfigKey> ConfigKeys() { return GoToKeys(7, 0, 9); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { GoToSpec(c, b); }
  BabyAIGoToDoorEnv(const Config& c, int env_id, uint64_t seed) : BabyAIGoToLevel(c, env_id, seed, 3, 3) {}

 protected:
  bool GenMission() override {
    Obj doors[4];
    for (auto& d : doors) d = AddDoor(1, 1).first;
    PlaceAgentInRoom(1, 1);
    Target(doors[RandInt(0, 4)]);
    return true;
  }
};

}  // namespace pp::minigrid
