// BabyAI's PutNext levels (minigrid.envs.babyai.putnext): put one object next to another.
#pragma once

#include <utility>
#include <vector>

#include "core/envs/minigrid/babyai_level.h"

namespace pp::minigrid {

// PutNextLocal: one room, num_objs distinct objects.
class BabyAIPutNextLocalEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAIPutNextLocal";
  static std::vector<ConfigKey> ConfigKeys() {
    return LevelKeys(8, 128, 0, {{"num_objs", int64_t{8}, "number of distinct objects", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "num_objs", 2, 18);
    LevelSpec(c, b);
  }
  BabyAIPutNextLocalEnv(const Config& c, int env_id, uint64_t seed)
      : BabyAILevel(c, env_id, seed, 1, 1), num_objs_(c.Get<int>("num_objs")) {}

 protected:
  bool GenMission() override {
    PlaceAgentInRoom();
    std::vector<Obj> objs;
    for (const auto& p : AddDistractors(-1, -1, num_objs_, true)) objs.push_back(p.obj);
    if (!ObjsReachable()) return false;
    const std::vector<Obj> two = RandSubset(objs, 2);
    root_ = Action(kPutNextInstr, Desc(two[0].type, two[0].color), false, Desc(two[1].type, two[1].color));
    return true;
  }

 private:
  int num_objs_;
};

// PutNext: two rooms joined by removing their wall, objs_per_room distinct objects each; put an object of one
// room next to one of the other (start_carrying: the agent holds the first object from the first step).
class BabyAIPutNextEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAIPutNext";
  static std::vector<ConfigKey> ConfigKeys() {
    return LevelKeys(6, 288, 288,
                     {{"objs_per_room", int64_t{3}, "distinct objects per room", {}},
                      {"start_carrying", false, "the agent starts holding the object to move", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "objs_per_room", 1, 9);
    LevelSpec(c, b);
  }
  BabyAIPutNextEnv(const Config& c, int env_id, uint64_t seed)
      : BabyAILevel(c, env_id, seed, 1, 2),
        objs_per_room_(c.Get<int>("objs_per_room")),
        start_carrying_(c.Get<bool>("start_carrying")) {}

 protected:
  bool GenMission() override {
    PlaceAgentInRoom(0, 0);
    const std::vector<Placed> left = AddDistractors(0, 0, objs_per_room_, true);
    const std::vector<Placed> right = AddDistractors(1, 0, objs_per_room_, true);
    RemoveWall(0, 0, 0);
    Placed a = left[RandInt(0, static_cast<int64_t>(left.size()))];
    Placed b = right[RandInt(0, static_cast<int64_t>(right.size()))];
    if (RandBool()) std::swap(a, b);
    move_ = a;
    root_ = Action(kPutNextInstr, Desc(a.obj.type, a.obj.color), false, Desc(b.obj.type, b.obj.color));
    return true;
  }
  // minigrid's PutNext.reset takes the object into the agent's hands after the first observation is made.
  void AfterReset() override {
    if (!start_carrying_) return;
    grid_.Set(move_.x, move_.y, Obj{});
    carrying_ = move_.obj;
  }

 private:
  int objs_per_room_;
  bool start_carrying_;
  Placed move_{};
};

}  // namespace pp::minigrid
