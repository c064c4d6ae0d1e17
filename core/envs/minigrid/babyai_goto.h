// BabyAI's GoTo levels (minigrid.envs.babyai.goto) on RoomGridLevel: "go to the/a <colour> <type>" succeeds when
// the agent faces a matching object. A level's layout is redrawn (continuing the generator) when minigrid rejects
// it (an object not reachable, a forbidden distractor), as RoomGridLevel._gen_grid does.
#pragma once

#include <string>
#include <vector>

#include "core/envs/minigrid/room_grid.h"

namespace pp::minigrid {

// RoomGridLevel with a GoToInstr(ObjDesc(type, colour)).
class BabyAIGoToLevel : public RoomGridEnv {
 public:
  static std::vector<ConfigKey> LevelKeys(int room_size, int num_dists, std::vector<ConfigKey> own = {}) {
    own.push_back({"max_episode_steps", int64_t{room_size * room_size},
                   "truncate after this many steps (RoomGridLevel's max_steps: room_size**2 x rooms)",
                   {}});
    own.push_back({"room_size", int64_t{room_size}, "side of each room, walls included", {}});
    own.push_back({"num_dists", int64_t{num_dists}, "number of distractor objects", {}});
    std::vector<ConfigKey> keys = MiniGridKeys(std::move(own));
    for (auto& k : keys) {
      if (k.name == "mission_bytes") k.default_value = int64_t{512};  // EnvPool's BabyAI width
    }
    return keys;
  }
  static void LevelSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "room_size", 4, 64);
    IntInRange(c, "num_dists", 0, 64);
    MiniGridSpec(c, b);
  }

 protected:
  BabyAIGoToLevel(const Config& c, int env_id, uint64_t seed, int rows, int cols)
      : RoomGridEnv(c, env_id, seed, c.Get<int>("room_size"), rows, cols), num_dists_(c.Get<int>("num_dists")) {
    reach_.reserve(static_cast<size_t>(width_) * height_);
  }

  // gen_mission: builds the level after GenRooms and sets target_type_ / target_color_; false = RejectSampling.
  virtual bool GenMission() = 0;

  void GenGrid() override {
    while (true) {
      grid_.Clear();
      GenRooms();
      if (GenMission()) break;
    }
    FindMatching();
    mission_ = std::string("go to ") + (obj_poss_.size() > 1 ? "a " : "the ") + ColorName(target_color_) + " " +
               TypeName(target_type_);
    mission_id_ = -1;  // EnvPool's BabyAI missions have no id
  }

  void Act(int action, double& reward, bool& terminated) override {
    BaseAct(action, reward, terminated);
    if (action == kDrop) FindMatching();  // update_objs_poss: a tracked object may have moved
    const int fx = agent_x_ + kDirX[agent_dir_], fy = agent_y_ + kDirY[agent_dir_];
    for (const auto& [x, y] : obj_poss_) {
      if (x == fx && y == fy) {
        reward = Reward();
        terminated = true;
        return;
      }
    }
  }

  // ObjDesc.find_matching_objs: every cell holding the target's type and colour (no location in these levels).
  void FindMatching() {
    obj_poss_.clear();
    for (int x = 0; x < width_; ++x) {
      for (int y = 0; y < height_; ++y) {
        const Obj& o = grid_.Get(x, y);
        if (!o.none() && o.type == target_type_ && o.color == target_color_) obj_poss_.push_back({x, y});
      }
    }
  }

  // check_objs_reachable: every object (walls aside) reachable from the agent through empty cells and doors.
  bool ObjsReachable() {
    reach_.assign(static_cast<size_t>(width_) * height_, 0);
    stack_.clear();
    stack_.push_back({agent_x_, agent_y_});
    while (!stack_.empty()) {
      const auto [i, j] = stack_.back();
      stack_.pop_back();
      if (!grid_.InBounds(i, j) || reach_[static_cast<size_t>(j) * width_ + i]) continue;
      reach_[static_cast<size_t>(j) * width_ + i] = 1;
      const Obj& cell = grid_.Get(i, j);
      if (!cell.none() && cell.type != kDoor) continue;
      stack_.insert(stack_.end(), {{i + 1, j}, {i - 1, j}, {i, j + 1}, {i, j - 1}});
    }
    for (int i = 0; i < width_; ++i) {
      for (int j = 0; j < height_; ++j) {
        const Obj& cell = grid_.Get(i, j);
        if (cell.none() || cell.type == kWall) continue;
        if (!reach_[static_cast<size_t>(j) * width_ + i]) return false;
      }
    }
    return true;
  }

  void Target(const Obj& o) {
    target_type_ = o.type;
    target_color_ = o.color;
  }

  int num_dists_;
  uint8_t target_type_ = kBall, target_color_ = kRed;
  std::vector<std::pair<int, int>> obj_poss_;

 private:
  std::vector<uint8_t> reach_;
  std::vector<std::pair<int, int>> stack_;
};

// GoToRedBall (grey_dists: GoToRedBallGrey, whose distractors are all grey; NoDists: num_dists 0).
template <bool kGreyDists>
class BabyAIGoToRedBallEnvT : public BabyAIGoToLevel {
 public:
  static constexpr const char* kName = kGreyDists ? "BabyAIGoToRedBallGrey" : "BabyAIGoToRedBall";
  static std::vector<ConfigKey> ConfigKeys() { return LevelKeys(8, 7); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
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
  static std::vector<ConfigKey> ConfigKeys() { return LevelKeys(8, 7); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
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
  static std::vector<ConfigKey> ConfigKeys() { return LevelKeys(8, kLocal ? 8 : 1); }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
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
    auto keys = LevelKeys(8, 18,
                          {{"num_rows", int64_t{3}, "rows of rooms", {}},
                           {"num_cols", int64_t{3}, "columns of rooms", {}},
                           {"doors_open", false, "open every door after generation", {}}});
    for (auto& k : keys) {
      if (k.name == "max_episode_steps") k.default_value = int64_t{8 * 8 * 9};
    }
    return keys;
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "num_rows", 1, 16);
    IntInRange(c, "num_cols", 1, 16);
    LevelSpec(c, b);
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
    if (doors_open_) {
      for (const Room& r : rooms_) {
        for (int k = 0; k < 4; ++k) {
          if (r.doors[k] == kHasDoor) grid_.At(r.door_x[k], r.door_y[k]).state = kOpen;
        }
      }
    }
    return true;
  }

 private:
  bool doors_open_;
};

// GoToDoor: four doors (random walls, colours, locks) of the middle room of a 3x3 grid of 7-cell rooms.
class BabyAIGoToDoorEnv : public BabyAIGoToLevel {
 public:
  static constexpr const char* kName = "BabyAIGoToDoor";
  static std::vector<ConfigKey> ConfigKeys() {
    auto keys = LevelKeys(7, 0);
    for (auto& k : keys) {
      if (k.name == "max_episode_steps") k.default_value = int64_t{7 * 7 * 9};
    }
    return keys;
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) { LevelSpec(c, b); }
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
