// MiniGrid-Fetch (minigrid.envs.FetchEnv): keys and balls of random colours; pick up the one the mission names
// (picking up any other ends the episode with reward 0). Sees through walls, as minigrid's env does.
#pragma once

#include <string>
#include <vector>

#include "core/envs/minigrid/objects_room.h"

namespace pp::minigrid {

class FetchEnv : public ObjectsRoomEnv {
 public:
  static constexpr const char* kName = "MiniGridFetch";
  static std::vector<ConfigKey> ConfigKeys() { return RoomKeys(320, 8, 3, "number of objects"); }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    const int size = RoomSpec(c, b, 4);
    IntInRange(c, "num_objs", 1, (size - 2) * (size - 2) - 1);
  }
  FetchEnv(const Config& c, int env_id, uint64_t seed) : ObjectsRoomEnv(c, env_id, seed) {
    objs_.reserve(static_cast<size_t>(num_objs_));
  }

 protected:
  void GenGrid() override {
    grid_.WallRect(0, 0, width_, height_);
    objs_.clear();
    while (static_cast<int>(objs_.size()) < num_objs_) {
      const uint8_t type = RandInt(0, 2) == 0 ? kKey : kBall;  // obj_types = ["key", "ball"]
      const Obj obj = Obj::Make(type, kColorNames[RandInt(0, 6)]);
      PlaceObj(obj);
      objs_.push_back(obj);
    }
    PlaceAgent();
    target_ = objs_[RandInt(0, static_cast<int64_t>(objs_.size()))];
    static constexpr const char* kSyntax[5] = {"get a", "go get a", "fetch a", "go fetch a", "you must fetch a"};
    const int idx = RandInt(0, 5);
    mission_ = std::string(kSyntax[idx]) + " " + ColorName(target_.color) + " " + TypeName(target_.type);
    // EnvPool's mission id: syntax, colour, type (key, ball) in that order of significance
    mission_id_ = idx * 12 + target_.color * 2 + (target_.type == kBall ? 1 : 0);
  }
  void Act(int action, double& reward, bool& terminated) override {
    BaseAct(action, reward, terminated);
    if (!carrying_.none()) {
      reward = carrying_.color == target_.color && carrying_.type == target_.type ? Reward() : 0.0;
      terminated = true;
    }
  }
  void SaveMission(StateWriter& w) const override { w.Object(target_); }
  void LoadMission(StateReader& r) override { target_ = r.Object(); }

 private:
  std::vector<Obj> objs_;
  Obj target_;
};

}  // namespace pp::minigrid
