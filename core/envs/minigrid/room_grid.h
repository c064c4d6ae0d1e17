// minigrid's RoomGrid (core/roomgrid.py): a num_rows x num_cols grid of square rooms sharing walls, with the
// helpers its envs (Unlock*, KeyCorridor, ObstructedMaze, BabyAI) build their layouts with: doors between
// neighbours, objects placed in a room not next to the agent, walls removed, connect_all.
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/envs/minigrid/minigrid_env.h"

namespace pp::minigrid {

// minigrid's RecursionError from place_obj / connect_all: an error for most envs, a reason to redraw the layout
// for BabyAI's levels (RoomGridLevel._gen_grid catches it).
struct GenerationFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class RoomGridEnv : public MiniGridEnv {
 protected:
  // The key naming KeyCorridor's object (MiniGrid's and BabyAI's), and the type it names.
  static ConfigKey ObjTypeKey() {
    return {"obj_type", std::string("ball"), "the object to pick up", {"key", "ball", "box"}};
  }
  static uint8_t ObjType(const Config& c) {
    const std::string t = c.Get<std::string>("obj_type");
    return t == "key" ? kKey : (t == "ball" ? kBall : kBox);
  }

  RoomGridEnv(const Config& c, int env_id, uint64_t seed, int room_size, int num_rows, int num_cols)
      : MiniGridEnv(c, env_id, seed, (room_size - 1) * num_cols + 1, (room_size - 1) * num_rows + 1,
                    /*see_through_walls=*/false),
        room_size_(room_size),
        num_rows_(num_rows),
        num_cols_(num_cols),
        rooms_(static_cast<size_t>(num_rows) * num_cols) {}

  struct Room {
    int top_x, top_y, size;
    // doors[k]: kNoDoor, kHasDoor (a Door object) or kOpening (a removed wall: minigrid's True)
    int doors[4];
    int door_x[4], door_y[4];  // valid where neighbor[k] >= 0
    int neighbor[4];           // index into rooms_, -1 at the edge
    bool locked;
  };
  enum : int { kNoDoor = 0, kHasDoor = 1, kOpening = 2 };

  Room& GetRoom(int i, int j) { return rooms_[static_cast<size_t>(j) * num_cols_ + i]; }
  int RoomIndexFromPos(int x, int y) const { return (y / (room_size_ - 1)) * num_cols_ + x / (room_size_ - 1); }

  // RoomGrid._gen_grid: walls of every room, one door position per shared wall, the agent in the middle room.
  void GenRooms() {
    placed_.clear();
    next_uid_ = 0;
    for (int j = 0; j < num_rows_; ++j) {
      for (int i = 0; i < num_cols_; ++i) {
        Room& r = GetRoom(i, j);
        r = Room{i * (room_size_ - 1), j * (room_size_ - 1), room_size_, {}, {}, {}, {-1, -1, -1, -1}, false};
        grid_.WallRect(r.top_x, r.top_y, r.size, r.size);
      }
    }
    for (int j = 0; j < num_rows_; ++j) {
      for (int i = 0; i < num_cols_; ++i) {
        Room& r = GetRoom(i, j);
        const int xl = r.top_x + 1, yl = r.top_y + 1, xm = r.top_x + r.size - 1, ym = r.top_y + r.size - 1;
        if (i < num_cols_ - 1) {
          r.neighbor[0] = j * num_cols_ + i + 1;
          r.door_x[0] = xm;
          r.door_y[0] = RandInt(yl, ym);
        }
        if (j < num_rows_ - 1) {
          r.neighbor[1] = (j + 1) * num_cols_ + i;
          r.door_x[1] = RandInt(xl, xm);
          r.door_y[1] = ym;
        }
        if (i > 0) {
          r.neighbor[2] = j * num_cols_ + i - 1;
          r.door_x[2] = rooms_[r.neighbor[2]].door_x[0];
          r.door_y[2] = rooms_[r.neighbor[2]].door_y[0];
        }
        if (j > 0) {
          r.neighbor[3] = (j - 1) * num_cols_ + i;
          r.door_x[3] = rooms_[r.neighbor[3]].door_x[1];
          r.door_y[3] = rooms_[r.neighbor[3]].door_y[1];
        }
      }
    }
    agent_x_ = (num_cols_ / 2) * (room_size_ - 1) + room_size_ / 2;
    agent_y_ = (num_rows_ / 2) * (room_size_ - 1) + room_size_ / 2;
    agent_dir_ = 0;
  }

  // place_in_room: anywhere in room (i, j) not next to the agent (reject_next_to), at most 1000 tries.
  // The object placed gets its identity (uid) here when the env tracks identities (BabyAI levels).
  std::pair<Obj, std::pair<int, int>> PlaceInRoom(int i, int j, Obj obj) {
    const Room& r = GetRoom(i, j);
    int x, y;
    const int ax = agent_x_, ay = agent_y_;
    placed_.push_back({obj.type, obj.color});
    if (track_uids_) obj.uid = NextUid();
    auto next_to = [ax, ay](int px, int py) { return std::abs(ax - px) + std::abs(ay - py) < 2; };
    if (!TryPlaceObj(obj, r.top_x, r.top_y, r.size, r.size, 1000, next_to, x, y)) {
      throw GenerationFailed("MiniGrid: rejection sampling failed in place_obj");
    }
    return {obj, {x, y}};
  }
  uint8_t NextUid() {
    if (next_uid_ == 255) throw std::runtime_error("MiniGrid: more than 255 tracked objects");
    return ++next_uid_;
  }

  // add_object: kind < 0 draws one of key/ball/box, color < 0 a random colour.
  std::pair<Obj, std::pair<int, int>> AddObject(int i, int j, int kind = -1, int color = -1) {
    const uint8_t type = kind < 0 ? kKinds[RandInt(0, 3)] : static_cast<uint8_t>(kind);
    const uint8_t col = color < 0 ? RandColor() : static_cast<uint8_t>(color);
    return PlaceInRoom(i, j, Obj::Make(type, col));
  }

  // add_door: door_idx < 0 draws a wall with a neighbour and no door yet, color < 0 a colour, locked < 0 a coin.
  std::pair<Obj, std::pair<int, int>> AddDoor(int i, int j, int door_idx = -1, int color = -1, int locked = -1) {
    Room& r = GetRoom(i, j);
    if (door_idx < 0) {
      do {
        door_idx = RandInt(0, 4);
      } while (!(r.neighbor[door_idx] >= 0 && r.doors[door_idx] == kNoDoor));
    }
    const uint8_t col = color < 0 ? RandColor() : static_cast<uint8_t>(color);
    const bool is_locked = locked < 0 ? RandBool() : locked != 0;
    if (r.doors[door_idx] != kNoDoor) throw std::logic_error("MiniGrid RoomGrid: door already exists");
    r.locked = is_locked;
    Obj door = Door(col, false, is_locked);
    if (track_uids_) door.uid = NextUid();
    grid_.Set(r.door_x[door_idx], r.door_y[door_idx], door);
    r.doors[door_idx] = kHasDoor;
    rooms_[r.neighbor[door_idx]].doors[(door_idx + 2) % 4] = kHasDoor;
    return {door, {r.door_x[door_idx], r.door_y[door_idx]}};
  }

  // KeyCorridor's layout after GenRooms (minigrid's KeyCorridorEnv, BabyAI's KeyCorridor): the middle column one
  // corridor, an object of `type` behind a locked door on the right, its key in a room on the left, the agent in
  // the middle, the rest connected. Returns the object.
  Obj KeyCorridorLayout(uint8_t type) {
    for (int j = 1; j < num_rows_; ++j) RemoveWall(1, j, 3);
    const int room = RandInt(0, num_rows_);
    const Obj door = AddDoor(2, room, 2, -1, 1).first;
    const Obj target = AddObject(2, room, type).first;
    AddObject(0, RandInt(0, num_rows_), kKey, door.color);
    PlaceAgentInRoom(1, num_rows_ / 2);
    ConnectAll();
    return target;
  }

  void RemoveWall(int i, int j, int wall) {
    Room& r = GetRoom(i, j);
    const int tx = r.top_x, ty = r.top_y, s = r.size;
    for (int k = 1; k < s - 1; ++k) {
      if (wall == 0) grid_.Set(tx + s - 1, ty + k, Obj{});
      if (wall == 1) grid_.Set(tx + k, ty + s - 1, Obj{});
      if (wall == 2) grid_.Set(tx, ty + k, Obj{});
      if (wall == 3) grid_.Set(tx + k, ty, Obj{});
    }
    r.doors[wall] = kOpening;
    rooms_[r.neighbor[wall]].doors[(wall + 2) % 4] = kOpening;
  }

  // RoomGrid.place_agent: in room (i, j) (drawn where < 0), redrawn until the agent faces an empty cell or a wall;
  // each placement at most 1000 tries, as minigrid's (a full room raised there, and looped forever here: a
  // BabyAI-SynthS5R2 reset that minigrid redraws). Where no free cell of the room faces an empty cell or a wall,
  // minigrid redraws forever (BabyAI-SynthS5R2, seed 21's third episode: the room full but for its centre); here
  // the layout fails after kMaxPlacements, which no room with one valid cell and direction in 36 reaches by chance
  // (a BabyAI level is then redrawn, any other env raises).
  static constexpr int kMaxPlacements = 10000;
  void PlaceAgentInRoom(int i = -1, int j = -1, bool rand_dir = true) {
    if (i < 0) i = RandInt(0, num_cols_);
    if (j < 0) j = RandInt(0, num_rows_);
    const Room& r = GetRoom(i, j);
    for (int placed = 0;; ++placed) {
      if (placed == kMaxPlacements) {
        throw GenerationFailed("MiniGrid: no free cell of the agent's room faces an empty cell or a wall");
      }
      if (!TryPlaceAgent(r.top_x, r.top_y, r.size, r.size, rand_dir, 1000)) {
        throw GenerationFailed("MiniGrid: rejection sampling failed in place_obj");
      }
      const Obj& front = grid_.Get(agent_x_ + kDirX[agent_dir_], agent_y_ + kDirY[agent_dir_]);
      if (front.none() || front.type == kWall) break;
    }
  }

  // connect_all: doors (unlocked, colours drawn from `colors`) between random neighbours until every room is
  // reachable from the agent's.
  void ConnectAll(const uint8_t* colors = kColorNames, int num_colors = 6, int max_itrs = 5000) {
    const int start = RoomIndexFromPos(agent_x_, agent_y_);
    int itrs = 0;
    while (true) {
      if (itrs > max_itrs) throw GenerationFailed("MiniGrid: connect_all failed");
      ++itrs;
      if (CountReachable(start) == static_cast<int>(rooms_.size())) break;
      const int i = RandInt(0, num_cols_), j = RandInt(0, num_rows_), k = RandInt(0, 4);
      const Room& r = GetRoom(i, j);
      if (r.neighbor[k] < 0 || r.doors[k] != kNoDoor) continue;
      if (r.locked || rooms_[r.neighbor[k]].locked) continue;
      const uint8_t color = colors[RandInt(0, num_colors)];
      AddDoor(i, j, k, color, 0);
    }
  }

  // add_distractors: num objects of random colour and kind (all_unique: none equal to an object already in a
  // room) in room (i, j), or random rooms where i / j < 0. Returns the objects with their positions.
  struct Placed {
    Obj obj;
    int x, y;
  };
  const std::vector<Placed>& AddDistractors(int i, int j, int num, bool all_unique) {
    dists_.clear();
    while (static_cast<int>(dists_.size()) < num) {
      const uint8_t color = kColorNames[RandInt(0, 6)];
      const uint8_t type = kKinds[RandInt(0, 3)];
      if (all_unique) {
        bool seen = false;
        for (const auto& [t, c] : placed_) seen |= t == type && c == color;
        if (seen) continue;
      }
      const int ri = i < 0 ? RandInt(0, num_cols_) : i;
      const int rj = j < 0 ? RandInt(0, num_rows_) : j;
      const auto [obj, pos] = AddObject(ri, rj, type, color);
      dists_.push_back({obj, pos.first, pos.second});
    }
    return dists_;
  }

  int room_size_, num_rows_, num_cols_;
  std::vector<Room> rooms_;
  std::vector<std::pair<uint8_t, uint8_t>> placed_;  // (type, colour) of every object placed in a room
  bool track_uids_ = false;
  uint8_t next_uid_ = 0;
  std::vector<Placed> dists_;

 private:
  int CountReachable(int start) {
    seen_.assign(rooms_.size(), 0);
    stack_.clear();
    stack_.push_back(start);
    int n = 0;
    while (!stack_.empty()) {
      const int r = stack_.back();
      stack_.pop_back();
      if (seen_[r]) continue;
      seen_[r] = 1;
      ++n;
      for (int k = 0; k < 4; ++k) {
        if (rooms_[r].doors[k] != kNoDoor) stack_.push_back(rooms_[r].neighbor[k]);
      }
    }
    return n;
  }
  std::vector<uint8_t> seen_;
  std::vector<int> stack_;
};

}  // namespace pp::minigrid
