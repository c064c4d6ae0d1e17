// MiniGrid-GoToObject (minigrid.envs.GoToObjectEnv): distinct keys, balls and boxes; stand next to the named one
// and say "done". Toggling ends the episode. Sees through walls, as minigrid's env does.
#pragma once

#include <string>
#include <vector>

#include "core/envs/minigrid/objects_room.h"

namespace pp::minigrid {

class GoToObjectEnv : public ObjectsRoomEnv {
 public:
  static constexpr const char* kName = "MiniGridGoToObject";
  static std::vector<ConfigKey> ConfigKeys() { return RoomKeys(180, 6, 2, "number of distinct objects (at most 18)"); }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    const int size = RoomSpec(c, b, 4);
    IntInRange(c, "num_objs", 1, std::min(18, (size - 2) * (size - 2) - 1));
  }
  GoToObjectEnv(const Config& c, int env_id, uint64_t seed) : ObjectsRoomEnv(c, env_id, seed) {
    objs_.reserve(static_cast<size_t>(num_objs_));
  }

 protected:
  void GenGrid() override {
    grid_.WallRect(0, 0, width_, height_);
    PlaceDistinctObjects(num_objs_, objs_, [](int, int) { return false; });
    PlaceAgent();
    const Placed& t = objs_[RandInt(0, static_cast<int64_t>(objs_.size()))];
    target_x_ = t.x;
    target_y_ = t.y;
    mission_ = std::string("go to the ") + ColorName(t.obj.color) + " " + TypeName(t.obj.type);
    mission_id_ = t.obj.color * 3 + KindIndex(t.obj.type);
  }
  void Act(int action, double& reward, bool& terminated) override {
    GoToAct(action, reward, terminated, target_x_, target_y_);
  }
  // the cell to stand next to
  void SaveMission(StateWriter& w) const override { w.Cells({target_x_, target_y_}); }
  void LoadMission(StateReader& r) override { r.Cells(grid_, {&target_x_, &target_y_}); }

 private:
  std::vector<Placed> objs_;
  int target_x_ = 0, target_y_ = 0;
};

}  // namespace pp::minigrid
