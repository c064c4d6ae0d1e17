// BabyAI's RoomGridLevel and instruction verifier (minigrid.envs.babyai.core): object descriptions (type, colour,
// location relative to the agent), the instructions open / go to / pick up / put next to and their sequences
// (before, after, and), checked after every step as minigrid's verifier does. Objects carry an identity (uid)
// because the verifier compares objects with `is`. A level's layout is redrawn (continuing the generator) when
// minigrid rejects it, as RoomGridLevel._gen_grid does.
#pragma once

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "core/envs/minigrid/room_grid.h"

namespace pp::minigrid {

enum Loc : int { kNoLoc = -1, kLeftLoc = 0, kRightLoc = 1, kFrontLoc = 2, kBehindLoc = 3 };  // LOC_NAMES order

// ObjDesc: type kNone / colour -1 mean "any".
struct ObjDesc {
  uint8_t type = kNone;
  int color = -1;
  int loc = kNoLoc;
  std::vector<uint8_t> set;               // uids of the matching objects (obj_set)
  std::vector<std::pair<int, int>> poss;  // their positions (obj_poss)
};

enum Status : int { kContinue = 0, kSuccess = 1, kFailure = 2 };
enum InstrKind : int { kOpenInstr, kGoToInstr, kPickupInstr, kPutNextInstr, kBeforeInstr, kAfterInstr, kAndInstr };

struct Instr {
  InstrKind kind;
  bool strict = false;
  ObjDesc desc, fixed;  // desc (desc_move for PutNext), fixed (desc_fixed)
  int a = -1, b = -1;   // sub-instructions of sequences (indices into the level's instruction list)
  int a_done = kContinue, b_done = kContinue;
  int pre_carrying = -1;  // uid of what was carried at the previous verify (-1: nothing)
};

class BabyAILevel : public RoomGridEnv {
 public:
  // Keys of every level: room_size, and max_steps as minigrid's kwarg (0: minigrid's per-episode value,
  // num_navs x room_size**2 x rooms; levels with a fixed value default to it). The env ends an episode there
  // itself (and scales the reward by it); max_episode_steps, the pool's limit, defaults to the largest it can be.
  static std::vector<ConfigKey> LevelKeys(int room_size, int max_episode_steps, int max_steps = 0,
                                          std::vector<ConfigKey> own = {}) {
    own.push_back({"max_episode_steps", int64_t{max_episode_steps}, "truncate after this many steps", {}});
    own.push_back({"max_steps", int64_t{max_steps}, "minigrid's max_steps: 0 = per episode from the mission", {}});
    own.push_back({"room_size", int64_t{room_size}, "side of each room, walls included", {}});
    std::vector<ConfigKey> keys = MiniGridKeys(std::move(own));
    for (auto& k : keys) {
      if (k.name == "mission_bytes") k.default_value = int64_t{512};  // EnvPool's BabyAI width
    }
    return keys;
  }
  static void LevelSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "room_size", 3, 64);  // RoomGrid's minimum; the levels' own layouts may need more
    IntInRange(c, "max_steps", 0, 1 << 30);
    MiniGridSpec(c, b);
  }

 protected:
  BabyAILevel(const Config& c, int env_id, uint64_t seed, int rows, int cols)
      : RoomGridEnv(c, env_id, seed, c.Get<int>("room_size"), rows, cols), fixed_max_steps_(c.Get<int>("max_steps")) {
    track_uids_ = true;
    if (fixed_max_steps_ > 0) max_steps_ = fixed_max_steps_;
    reach_.reserve(static_cast<size_t>(width_) * height_);
    instrs_.reserve(16);
  }

  // gen_mission: builds the level after GenRooms and its instruction (root_); false = RejectSampling.
  virtual bool GenMission() = 0;
  bool unblocking_ = false;  // LevelGen's unblocking: no instruction about a key of a locked door

  void GenGrid() override {
    // minigrid redraws until a layout passes; a config that can never pass (tiny rooms, many objects) would
    // loop forever there: here it raises after many redraws.
    for (int attempt = 0;; ++attempt) {
      if (attempt == 10000) throw std::runtime_error("BabyAI: no valid layout in 10000 draws; check the config");
      grid_.Clear();
      instrs_.clear();
      GenRooms();
      try {
        if (GenMission() && Validate(root_)) break;
      } catch (const GenerationFailed&) {  // minigrid prints "Timeout during mission generation" and redraws
      }
    }
    mission_ = Surface(root_);
    mission_id_ = -1;  // EnvPool's BabyAI missions have no id
    ResetVerifier(root_);
    if (fixed_max_steps_ == 0) max_steps_ = NumNavs(root_) * room_size_ * room_size_ * num_rows_ * num_cols_;
  }

  void Act(int action, double& reward, bool& terminated) override {
    BaseAct(action, reward, terminated);
    if (action == kDrop) UpdatePoss(root_);
    const int status = Verify(root_, action);
    if (status == kSuccess) {
      terminated = true;
      reward = Reward();
    } else if (status == kFailure) {
      terminated = true;
      reward = 0.0;
    }
  }

  // The mission's state in a snapshot: this episode's step limit, then the instruction tree as built (each
  // instruction's kind, strictness, parts, object descriptions) with the verifier's progress (parts done, what was
  // carried, the described objects' uids and positions).
  void SaveMission(StateWriter& w) const override {
    w.Int(max_steps_);
    w.Int(static_cast<int64_t>(instrs_.size()));
    w.Int(root_);
    for (const Instr& in : instrs_) {
      w.Int(in.kind);
      w.Int(in.strict ? 1 : 0);
      w.Int(in.a);
      w.Int(in.b);
      w.Int(in.a_done);
      w.Int(in.b_done);
      w.Int(in.pre_carrying);
      for (const ObjDesc* d : {&in.desc, &in.fixed}) {
        w.Int(d->type);
        w.Int(d->color);
        w.Int(d->loc);
        w.Int(static_cast<int64_t>(d->set.size()));
        for (uint8_t uid : d->set) w.Int(uid);
        w.Int(static_cast<int64_t>(d->poss.size()));
        for (const auto& [x, y] : d->poss) w.Cells({x, y});
      }
    }
  }
  void LoadMission(StateReader& r) override {
    const int max_steps = r.Int(1, std::numeric_limits<int>::max());
    std::vector<Instr> instrs(static_cast<size_t>(r.Int(1, kMaxInstrs)));
    const int root = r.Int(0, static_cast<int>(instrs.size()) - 1);
    const int cells = width_ * height_;
    for (int k = 0; k < static_cast<int>(instrs.size()); ++k) {
      Instr& in = instrs[k];
      in.kind = static_cast<InstrKind>(r.Int(kOpenInstr, kAndInstr));
      in.strict = r.Int(0, 1) == 1;
      // a sequence's parts are built before it (Seq), so they come earlier in the list: the tree has no cycle
      const bool seq = in.kind >= kBeforeInstr;
      in.a = seq ? r.Int(0, k - 1) : r.Int(-1, -1);
      in.b = seq ? r.Int(0, k - 1) : r.Int(-1, -1);
      in.a_done = r.Int(kContinue, kFailure);
      in.b_done = r.Int(kContinue, kFailure);
      in.pre_carrying = r.Int(-1, 255);
      for (ObjDesc* d : {&in.desc, &in.fixed}) {
        d->type = static_cast<uint8_t>(r.Int(kNone, kLava));
        d->color = r.Int(-1, kGrey);
        d->loc = r.Int(kNoLoc, kBehindLoc);
        d->set.resize(static_cast<size_t>(r.Int(0, 255)));
        for (uint8_t& uid : d->set) uid = static_cast<uint8_t>(r.Int(1, 255));
        d->poss.resize(static_cast<size_t>(r.Int(0, cells)));
        for (auto& p : d->poss) p = r.Pos(grid_);
      }
    }
    max_steps_ = max_steps;
    root_ = root;
    instrs_ = std::move(instrs);
  }

  // Instruction builders.
  static ObjDesc Desc(uint8_t type, int color = -1, int loc = kNoLoc) {
    ObjDesc d;
    d.type = type;
    d.color = color;
    d.loc = loc;
    return d;
  }
  int Action(InstrKind kind, ObjDesc desc, bool strict = false, ObjDesc fixed = {}) {
    Instr in;
    in.kind = kind;
    in.desc = std::move(desc);
    in.fixed = std::move(fixed);
    in.strict = strict;
    instrs_.push_back(std::move(in));
    return static_cast<int>(instrs_.size()) - 1;
  }
  int Seq(InstrKind kind, int a, int b, bool strict = false) {
    Instr in;
    in.kind = kind;
    in.a = a;
    in.b = b;
    in.strict = strict;
    instrs_.push_back(std::move(in));
    return static_cast<int>(instrs_.size()) - 1;
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

  // open_all_doors
  void OpenAllDoors() {
    for (const Room& r : rooms_) {
      for (int k = 0; k < 4; ++k) {
        if (r.doors[k] == kHasDoor) grid_.At(r.door_x[k], r.door_y[k]).state = kOpen;
      }
    }
  }

  // The doors of every room, in minigrid's order (rooms column-major, each room's four walls), doubles included.
  std::vector<Obj> AllDoors() {
    std::vector<Obj> doors;
    for (int i = 0; i < num_cols_; ++i) {
      for (int j = 0; j < num_rows_; ++j) {
        const Room& r = GetRoom(i, j);
        for (int k = 0; k < 4; ++k) {
          if (r.doors[k] == kHasDoor) doors.push_back(grid_.Get(r.door_x[k], r.door_y[k]));
        }
      }
    }
    return doors;
  }

  // The layout BabyAI's Unlock and GoToImpUnlock share: a locked door of a random room, its key in a random room,
  // doors connecting every room (connect_all: any colour, or, where `coin_for_colors` and a coin says so, any but
  // the locked door's), `dists` distractors in every room, the agent in any room but the locked one. minigrid
  // compares the numpy ints it drew with `is`, which never holds: the key's room is the first drawn (possibly the
  // locked one) and every room gets distractors. Returns the door and its room.
  struct LockedDoor {
    Obj door;
    int i, j;
  };
  LockedDoor LockedDoorLayout(int dists, bool coin_for_colors) {
    const int i = RandInt(0, num_cols_), j = RandInt(0, num_rows_);
    const Obj door = AddDoor(i, j, -1, -1, 1).first;
    const int ik = RandInt(0, num_cols_), jk = RandInt(0, num_rows_);
    AddObject(ik, jk, kKey, door.color);
    if (coin_for_colors && RandBool()) {
      uint8_t colors[5];
      int n = 0;
      for (uint8_t c : kColorNames) {
        if (c != door.color) colors[n++] = c;
      }
      ConnectAll(colors, n);
    } else {
      ConnectAll();
    }
    for (int ci = 0; ci < num_cols_; ++ci) {
      for (int rj = 0; rj < num_rows_; ++rj) AddDistractors(ci, rj, dists, false);
    }
    const int locked_room = j * num_cols_ + i;
    do {
      PlaceAgentInRoom();
    } while (RoomIndexFromPos(agent_x_, agent_y_) == locked_room);
    return {door, i, j};
  }

  // _rand_subset of n elements.
  template <typename T>
  std::vector<T> RandSubset(std::vector<T> lst, int n) {
    std::vector<T> out;
    while (static_cast<int>(out.size()) < n) {
      const int idx = RandInt(0, static_cast<int64_t>(lst.size()));
      out.push_back(lst[idx]);
      lst.erase(lst.begin() + idx);
    }
    return out;
  }
  static std::vector<uint8_t> AllColors() { return {std::begin(kColorNames), std::end(kColorNames)}; }

  static constexpr int kMaxInstrs = 1024;  // far more than any level builds (BossLevel: at most 7)
  std::vector<Instr> instrs_;
  int root_ = -1;
  int fixed_max_steps_;

  // ObjDesc.find_matching_objs (use_location: rebuild the set; else only the positions of the set's objects).
  void FindMatching(ObjDesc& d, bool use_location) {
    if (use_location) d.set.clear();
    d.poss.clear();
    const int room = RoomIndexFromPos(agent_x_, agent_y_);
    const Room& ar = rooms_[room];
    for (int i = 0; i < width_; ++i) {
      for (int j = 0; j < height_; ++j) {
        const Obj& cell = grid_.Get(i, j);
        if (cell.none()) continue;
        if (!use_location && (cell.uid == 0 || std::find(d.set.begin(), d.set.end(), cell.uid) == d.set.end())) {
          continue;
        }
        if (d.type != kNone && cell.type != d.type) continue;
        if (d.color >= 0 && cell.color != d.color) continue;
        if (use_location && d.loc != kNoLoc) {
          if (i < ar.top_x || j < ar.top_y || i >= ar.top_x + ar.size || j >= ar.top_y + ar.size) continue;
          const int vx = i - agent_x_, vy = j - agent_y_;
          const int d1x = kDirX[agent_dir_], d1y = kDirY[agent_dir_];
          const int d2x = -d1y, d2y = d1x;
          const int side = vx * d2x + vy * d2y, ahead = vx * d1x + vy * d1y;
          const bool ok = d.loc == kLeftLoc    ? side < 0
                          : d.loc == kRightLoc ? side > 0
                          : d.loc == kFrontLoc ? ahead > 0
                                               : ahead < 0;
          if (!ok) continue;
        }
        if (use_location) d.set.push_back(cell.uid);
        d.poss.push_back({i, j});
      }
    }
  }

 private:
  std::string DescSurface(ObjDesc& d) {
    FindMatching(d, true);
    std::string s = d.type != kNone ? TypeName(d.type) : "object";
    if (d.color >= 0) s = std::string(ColorName(static_cast<uint8_t>(d.color))) + " " + s;
    if (d.loc == kFrontLoc) s += " in front of you";
    if (d.loc == kBehindLoc) s += " behind you";
    if (d.loc == kLeftLoc) s += " on your left";
    if (d.loc == kRightLoc) s += " on your right";
    return (d.set.size() > 1 ? "a " : "the ") + s;
  }

  std::string Surface(int k) {
    Instr& in = instrs_[k];
    switch (in.kind) {
      case kOpenInstr: return "open " + DescSurface(in.desc);
      case kGoToInstr: return "go to " + DescSurface(in.desc);
      case kPickupInstr: return "pick up " + DescSurface(in.desc);
      case kPutNextInstr: {
        std::string s = "put " + DescSurface(in.desc);
        return s + " next to " + DescSurface(instrs_[k].fixed);
      }
      case kBeforeInstr: {
        std::string s = Surface(in.a);
        return s + ", then " + Surface(instrs_[k].b);
      }
      case kAfterInstr: {
        std::string s = Surface(in.a);
        return s + " after you " + Surface(instrs_[k].b);
      }
      default: {
        std::string s = Surface(in.a);
        return s + " and " + Surface(instrs_[k].b);
      }
    }
  }

  void ResetVerifier(int k) {
    Instr& in = instrs_[k];
    in.a_done = in.b_done = kContinue;
    in.pre_carrying = -1;
    if (in.kind >= kBeforeInstr) {
      ResetVerifier(in.a);
      ResetVerifier(in.b);
      return;
    }
    FindMatching(in.desc, true);
    if (in.kind == kPutNextInstr) FindMatching(in.fixed, true);
  }

  void UpdatePoss(int k) {
    Instr& in = instrs_[k];
    if (in.kind >= kBeforeInstr) {
      UpdatePoss(in.a);
      UpdatePoss(in.b);
      return;
    }
    FindMatching(in.desc, false);
    if (in.kind == kPutNextInstr) FindMatching(in.fixed, false);
  }

  int NumNavs(int k) const {
    const Instr& in = instrs_[k];
    if (in.kind == kPutNextInstr) return 2;
    if (in.kind < kBeforeInstr) return 1;
    return NumNavs(in.a) + NumNavs(in.b);
  }

  // The current position of a tracked object: its cell, or (-1, -1) when carried (minigrid's cur_pos).
  std::pair<int, int> PosOf(uint8_t uid) const {
    for (int x = 0; x < width_; ++x) {
      for (int y = 0; y < height_; ++y) {
        if (grid_.Get(x, y).uid == uid) return {x, y};
      }
    }
    return {-1, -1};
  }
  static bool NextTo(std::pair<int, int> a, std::pair<int, int> b) {
    return std::abs(a.first - b.first) + std::abs(a.second - b.second) == 1;
  }
  static bool In(const std::vector<uint8_t>& set, int uid) {
    return uid > 0 && std::find(set.begin(), set.end(), static_cast<uint8_t>(uid)) != set.end();
  }
  int CarriedUid() const { return carrying_.none() ? -1 : carrying_.uid; }

  int Verify(int k, int action) {
    Instr& in = instrs_[k];
    const int fx = agent_x_ + kDirX[agent_dir_], fy = agent_y_ + kDirY[agent_dir_];
    switch (in.kind) {
      case kOpenInstr: {
        if (action != kToggle) return kContinue;
        const Obj& front = grid_.Get(fx, fy);
        if (!front.none() && front.type == kDoor && front.state == kOpen && In(in.desc.set, front.uid)) return kSuccess;
        if (in.strict && !front.none() && front.type == kDoor) return kFailure;
        return kContinue;
      }
      case kGoToInstr:
        for (const auto& [x, y] : in.desc.poss) {
          if (x == fx && y == fy) return kSuccess;
        }
        return kContinue;
      case kPickupInstr: {
        const int pre = in.pre_carrying;
        in.pre_carrying = CarriedUid();
        if (action != kPickup) return kContinue;
        if (pre == -1 && In(in.desc.set, CarriedUid())) return kSuccess;
        if (in.strict && !carrying_.none()) return kFailure;
        in.pre_carrying = CarriedUid();
        return kContinue;
      }
      case kPutNextInstr: {
        const int pre = in.pre_carrying;
        in.pre_carrying = CarriedUid();
        if (in.strict && action == kPickup && !carrying_.none()) return kFailure;
        if (action != kDrop) return kContinue;
        if (In(in.desc.set, pre)) {
          const auto pos_a = PosOf(static_cast<uint8_t>(pre));
          for (const auto& pos_b : in.fixed.poss) {
            if (NextTo(pos_a, pos_b)) return kSuccess;
          }
        }
        return kContinue;
      }
      case kBeforeInstr:
        if (in.a_done == kSuccess) {
          in.b_done = Verify(in.b, action);
          if (in.b_done == kFailure) return kFailure;
          if (in.b_done == kSuccess) return kSuccess;
        } else {
          in.a_done = Verify(in.a, action);
          if (in.a_done == kFailure) return kFailure;
          if (in.a_done == kSuccess) return Verify(k, action);
          if (in.strict && Verify(in.b, action) == kSuccess) return kFailure;
        }
        return kContinue;
      case kAfterInstr:
        if (in.b_done == kSuccess) {
          in.a_done = Verify(in.a, action);
          if (in.a_done == kSuccess) return kSuccess;
          if (in.a_done == kFailure) return kFailure;
        } else {
          in.b_done = Verify(in.b, action);
          if (in.b_done == kFailure) return kFailure;
          if (in.b_done == kSuccess) return Verify(k, action);
          if (in.strict && Verify(in.a, action) == kSuccess) return kFailure;
        }
        return kContinue;
      default:  // kAndInstr
        if (in.a_done != kSuccess) in.a_done = Verify(in.a, action);
        if (in.b_done != kSuccess) in.b_done = Verify(in.b, action);
        return in.a_done == kSuccess && in.b_done == kSuccess ? kSuccess : kContinue;
    }
  }

  // validate_instrs: PutNext's objects must differ and not already be next to each other; with unblocking, no
  // instruction may be about a key of a locked door.
  bool Validate(int k) {
    Instr& in = instrs_[k];
    if (in.kind >= kBeforeInstr) return Validate(in.a) && Validate(in.b);
    if (in.kind == kPutNextInstr) {
      ResetVerifier(k);
      for (uint8_t u : in.desc.set) {
        if (In(in.fixed.set, u)) return false;
      }
      for (uint8_t u : in.desc.set) {
        const auto pos_a = PosOf(u);
        for (const auto& pos_b : in.fixed.poss) {
          if (NextTo(pos_a, pos_b)) return false;
        }
      }
    }
    if (!unblocking_) return true;
    std::vector<uint8_t> locked_colors;
    for (int i = 0; i < num_cols_; ++i) {
      for (int j = 0; j < num_rows_; ++j) {
        const Room& r = GetRoom(i, j);
        for (int d = 0; d < 4; ++d) {
          if (r.doors[d] != kHasDoor) continue;
          const Obj& door = grid_.Get(r.door_x[d], r.door_y[d]);
          if (door.type == kDoor && door.state == kLocked) locked_colors.push_back(door.color);
        }
      }
    }
    for (const ObjDesc* d : {&in.desc, &in.fixed}) {
      if (d->type == kKey && std::find(locked_colors.begin(), locked_colors.end(), static_cast<uint8_t>(d->color)) !=
                                 locked_colors.end()) {
        return false;
      }
    }
    return true;
  }

  std::vector<uint8_t> reach_;
  std::vector<std::pair<int, int>> stack_;
};

}  // namespace pp::minigrid
