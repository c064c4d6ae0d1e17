// MiniGrid-PutNear (minigrid.envs.PutNearEnv): distinct objects apart from each other; pick up the named one and
// drop it next to the other named one. Picking up a wrong object, or any drop, ends the episode. Sees through
// walls, as minigrid's env does.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "core/envs/minigrid/objects_room.h"

namespace pp::minigrid {

class PutNearEnv : public ObjectsRoomEnv {
 public:
  static constexpr const char* kName = "MiniGridPutNear";
  static std::vector<ConfigKey> ConfigKeys() { return RoomKeys(40, 8, 3, "number of distinct objects (2 to 18)"); }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    const int size = RoomSpec(c, b, 5);
    // objects keep one free cell between each other: more than ((size - 1) / 2)^2 cannot be placed
    const int most = std::min(18, ((size - 1) / 2) * ((size - 1) / 2));
    IntInRange(c, "num_objs", 2, std::max(2, most));
  }
  PutNearEnv(const Config& c, int env_id, uint64_t seed) : ObjectsRoomEnv(c, env_id, seed) {
    objs_.reserve(static_cast<size_t>(num_objs_));
  }

 protected:
  void GenGrid() override {
    grid_.WallRect(0, 0, width_, height_);
    auto near_obj = [this](int x, int y) {
      for (const auto& o : objs_) {
        if (std::abs(x - o.x) <= 1 && std::abs(y - o.y) <= 1) return true;
      }
      return false;
    };
    PlaceDistinctObjects(num_objs_, objs_, near_obj);
    PlaceAgent();
    const int n = static_cast<int>(objs_.size());
    const int move = RandInt(0, n);
    int target;
    do {
      target = RandInt(0, n);
    } while (target == move);
    move_ = objs_[move].obj;
    target_x_ = objs_[target].x;
    target_y_ = objs_[target].y;
    const Obj& t = objs_[target].obj;
    mission_ = std::string("put the ") + ColorName(move_.color) + " " + TypeName(move_.type) + " near the " +
               ColorName(t.color) + " " + TypeName(t.type);
    mission_id_ = (move_.color * 3 + KindIndex(move_.type)) * 18 + t.color * 3 + KindIndex(t.type);
  }
  void Act(int action, double& reward, bool& terminated) override {
    const bool was_carrying = !carrying_.none();
    BaseAct(action, reward, terminated);
    if (action == kPickup && !carrying_.none() && (carrying_.type != move_.type || carrying_.color != move_.color)) {
      terminated = true;
    }
    if (action == kDrop && was_carrying) {
      // minigrid checks that the cell in front now holds the dropped object: the drop succeeded
      if (carrying_.none()) {
        const int ox = agent_x_ + kDirX[agent_dir_], oy = agent_y_ + kDirY[agent_dir_];
        if (std::abs(ox - target_x_) <= 1 && std::abs(oy - target_y_) <= 1) reward = Reward();
      }
      terminated = true;
    }
  }
  // the object to move and the cell of the one to put it near
  void SaveMission(StateWriter& w) const override {
    w.Object(move_);
    w.Cells({target_x_, target_y_});
  }
  void LoadMission(StateReader& r) override {
    move_ = r.Object();
    r.Cells(grid_, {&target_x_, &target_y_});
  }

 private:
  std::vector<Placed> objs_;
  Obj move_;
  int target_x_ = 0, target_y_ = 0;
};

}  // namespace pp::minigrid
