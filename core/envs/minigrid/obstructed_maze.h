// MiniGrid-ObstructedMaze (minigrid.envs.obstructedmaze / obstructedmaze_v1): find the blue ball behind locked
// doors whose keys may hide in boxes and whose doors may be blocked by green balls. The 1D ids use two rooms
// (ObstructedMaze_1Dlhb); the others a 3x3 room grid with num_quarters side rooms (ObstructedMaze_Full; v1 places
// each side room's keys after both of its doors, as minigrid's ObstructedMaze_Full_V1 does).
#pragma once

#include "core/envs/minigrid/room_grid.h"

namespace pp::minigrid {

class ObstructedMazeBase : public RoomGridEnv {
 public:
  static constexpr int kRoomSize = 6;  // fixed in minigrid
  static std::vector<ConfigKey> Keys(std::vector<ConfigKey> own) {
    own.push_back({"key_in_box", true, "keys hidden in boxes (the 'h' of the ids)", {}});
    own.push_back({"blocked", true, "locked doors blocked by a ball (the 'b' of the ids)", {}});
    return MiniGridKeys(std::move(own));
  }

 protected:
  ObstructedMazeBase(const Config& c, int env_id, uint64_t seed, int rows, int cols)
      : RoomGridEnv(c, env_id, seed, kRoomSize, rows, cols),
        key_in_box_(c.Get<bool>("key_in_box")),
        blocked_(c.Get<bool>("blocked")) {}

  // ObstructedMazeEnv._gen_grid: the rooms, the door colours (_rand_subset of all six), the mission.
  void GenMaze() {
    GenRooms();
    uint8_t left[6];
    std::copy(std::begin(kColorNames), std::end(kColorNames), left);
    for (int n = 6, k = 0; n > 0; --n, ++k) {
      const int idx = RandInt(0, n);
      door_colors_[k] = left[idx];
      for (int m = idx; m + 1 < n; ++m) left[m] = left[m + 1];
    }
    mission_ = "pick up the blue ball";
  }
  // A door; blocked: a green ball in front of it on room (i, j)'s side; with_key: its key in room (i, j).
  void AddMazeDoor(int i, int j, int door_idx, uint8_t color, bool locked, bool blocked, bool with_key) {
    const auto [door, pos] = AddDoor(i, j, door_idx, color, locked ? 1 : 0);
    if (blocked) grid_.Set(pos.first - kDirX[door_idx], pos.second - kDirY[door_idx], Ball(kGreen));
    if (with_key) AddMazeKey(i, j, door.color);
  }
  void AddMazeKey(int i, int j, uint8_t color) { PlaceInRoom(i, j, key_in_box_ ? Box(kGrey, Key(color)) : Key(color)); }
  void PlaceTarget(int i, int j) { AddObject(i, j, kBall, kBlue); }

  void Act(int action, double& reward, bool& terminated) override {
    BaseAct(action, reward, terminated);
    if (action == kPickup && carrying_ == Ball(kBlue)) {
      reward = Reward();
      terminated = true;
    }
  }

  bool key_in_box_, blocked_;
  uint8_t door_colors_[6] = {};
};

// ObstructedMaze_1Dlhb: two rooms, one locked door.
class ObstructedMaze1DEnv : public ObstructedMazeBase {
 public:
  static constexpr const char* kName = "MiniGridObstructedMaze1D";
  static std::vector<ConfigKey> ConfigKeys() {
    return Keys({{"max_episode_steps", int64_t{288}, "truncate after this many steps (minigrid's max_steps)", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) { MiniGridSpec(c, b); }
  ObstructedMaze1DEnv(const Config& c, int env_id, uint64_t seed) : ObstructedMazeBase(c, env_id, seed, 1, 2) {}

 protected:
  void GenGrid() override {
    GenMaze();
    AddMazeDoor(0, 0, 0, door_colors_[0], /*locked=*/true, blocked_, /*with_key=*/true);
    PlaceTarget(1, 0);
    PlaceAgentInRoom(0, 0);
  }
};

// ObstructedMaze_Full (kV1 = false) and ObstructedMaze_Full_V1.
template <bool kV1>
class ObstructedMazeFullEnvT : public ObstructedMazeBase {
 public:
  static constexpr const char* kName = kV1 ? "MiniGridObstructedMazeFullV1" : "MiniGridObstructedMazeFull";
  static std::vector<ConfigKey> ConfigKeys() {
    return Keys({{"max_episode_steps", int64_t{3600}, "truncate after this many steps (minigrid's max_steps)", {}},
                 {"num_quarters", int64_t{4}, "side rooms (and corners) in use, 1 to 4", {}},
                 {"agent_room_i", int64_t{1}, "column of the agent's start room", {}},
                 {"agent_room_j", int64_t{1}, "row of the agent's start room", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "num_quarters", 1, 4);
    IntInRange(c, "agent_room_i", 0, 2);
    IntInRange(c, "agent_room_j", 0, 2);
    MiniGridSpec(c, b);
  }
  ObstructedMazeFullEnvT(const Config& c, int env_id, uint64_t seed)
      : ObstructedMazeBase(c, env_id, seed, 3, 3),
        num_quarters_(c.Get<int>("num_quarters")),
        agent_i_(c.Get<int>("agent_room_i")),
        agent_j_(c.Get<int>("agent_room_j")) {}

 protected:
  void GenGrid() override {
    static constexpr int kSide[4][2] = {{2, 1}, {1, 2}, {0, 1}, {1, 0}};
    static constexpr int kCorner[4][2] = {{2, 0}, {2, 2}, {0, 2}, {0, 0}};
    GenMaze();
    for (int i = 0; i < num_quarters_; ++i) {
      const int si = kSide[i][0], sj = kSide[i][1];
      AddMazeDoor(1, 1, i, door_colors_[i], /*locked=*/false, /*blocked=*/false, /*with_key=*/false);
      for (int k : {-1, 1}) {
        const int idx = (i + k + 4) % 4;
        AddMazeDoor(si, sj, idx, door_colors_[(i + k + 6) % 6], /*locked=*/true, blocked_, /*with_key=*/!kV1);
      }
      if (kV1) {
        for (int k : {-1, 1}) AddMazeKey(si, sj, door_colors_[(i + k + 6) % 6]);
      }
    }
    const int corner = RandInt(0, num_quarters_);
    PlaceTarget(kCorner[corner][0], kCorner[corner][1]);
    PlaceAgentInRoom(agent_i_, agent_j_);
  }

 private:
  int num_quarters_, agent_i_, agent_j_;
};

using ObstructedMazeFullEnv = ObstructedMazeFullEnvT<false>;
using ObstructedMazeFullV1Env = ObstructedMazeFullEnvT<true>;

}  // namespace pp::minigrid
