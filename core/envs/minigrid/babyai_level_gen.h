// BabyAI's LevelGen levels (minigrid.envs.babyai.core.levelgen): random instructions from the whole language
// (go to / pick up / open / put next, joined by "and", ", then", "after you"), objects described by colour, type
// and location, an optional locked room. Synth, SynthLoc, SynthSeq, MiniBossLevel, BossLevel, BossLevelNoUnlock,
// PickupLoc and GoToSeq are this generator with different keys (EnvPool's names).
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "core/envs/minigrid/babyai_level.h"

namespace pp::minigrid {

class BabyAILevelGenEnv : public BabyAILevel {
 public:
  static constexpr const char* kName = "BabyAILevelGen";
  static std::vector<ConfigKey> ConfigKeys() {
    return LevelKeys(8, 8 * 64 * 9, 0,
                     {{"num_rows", int64_t{3}, "rows of rooms", {}},
                      {"num_cols", int64_t{3}, "columns of rooms", {}},
                      {"num_dists", int64_t{18}, "number of distractor objects", {}},
                      {"locked_room_prob", 0.5, "probability of a locked room (its key elsewhere)", {}},
                      {"locations", true, "descriptions may name a location relative to the agent", {}},
                      {"unblocking", true, "objects may block the way (no reachability check)", {}},
                      {"implicit_unlock", true, "objects may lie only in the locked room", {}},
                      {"action_kinds", std::string("goto,pickup,open,putnext"), "comma list of instructions", {}},
                      {"instr_kinds", std::string("action,and,seq"), "comma list of instruction forms", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "num_rows", 1, 16);
    IntInRange(c, "num_cols", 1, 16);
    IntInRange(c, "num_dists", 0, 200);
    const double p = c.Get<double>("locked_room_prob");
    if (!(p >= 0.0 && p <= 1.0)) throw std::invalid_argument("BabyAI: locked_room_prob must be in [0, 1]");
    Kinds(c.Get<std::string>("action_kinds"), {"goto", "pickup", "open", "putnext"}, "action_kinds");
    Kinds(c.Get<std::string>("instr_kinds"), {"action", "and", "seq"}, "instr_kinds");
    LevelSpec(c, b);
  }
  BabyAILevelGenEnv(const Config& c, int env_id, uint64_t seed)
      : BabyAILevel(c, env_id, seed, c.Get<int>("num_rows"), c.Get<int>("num_cols")),
        num_dists_(c.Get<int>("num_dists")),
        locked_room_prob_(c.Get<double>("locked_room_prob")),
        locations_(c.Get<bool>("locations")),
        implicit_unlock_(c.Get<bool>("implicit_unlock")),
        action_kinds_(Kinds(c.Get<std::string>("action_kinds"), {"goto", "pickup", "open", "putnext"}, "")),
        instr_kinds_(Kinds(c.Get<std::string>("instr_kinds"), {"action", "and", "seq"}, "")) {
    unblocking_ = c.Get<bool>("unblocking");
  }

 protected:
  enum : int { kGoto = 0, kPickupKind = 1, kOpenKind = 2, kPutNext = 3 };
  enum : int { kActionForm = 0, kAndForm = 1, kSeqForm = 2 };

  bool GenMission() override {
    locked_room_ = -1;
    if (rng_.Uniform(0.0, 1.0) < locked_room_prob_) AddLockedRoom();
    ConnectAll();
    AddDistractors(-1, -1, num_dists_, false);
    do {
      PlaceAgentInRoom();
    } while (RoomIndexFromPos(agent_x_, agent_y_) == locked_room_);
    if (!unblocking_ && !ObjsReachable()) return false;
    failed_ = false;
    root_ = RandInstr(instr_kinds_);
    return !failed_;  // rand_obj's RecursionError: minigrid redraws the level
  }

 private:
  // Comma list -> indices into `names`; an unknown name raises (named after `key`).
  static std::vector<int> Kinds(const std::string& list, const std::vector<std::string>& names, const char* key) {
    std::vector<int> out;
    std::stringstream ss(list);
    std::string item;
    while (std::getline(ss, item, ',')) {
      int k = -1;
      for (size_t i = 0; i < names.size(); ++i) {
        if (names[i] == item) k = static_cast<int>(i);
      }
      if (k < 0) throw std::invalid_argument(std::string("BabyAI: unknown entry '") + item + "' in " + key);
      out.push_back(k);
    }
    if (out.empty()) throw std::invalid_argument(std::string("BabyAI: ") + key + " is empty");
    return out;
  }

  void AddLockedRoom() {
    Obj door;
    while (true) {
      const int i = RandInt(0, num_cols_), j = RandInt(0, num_rows_), door_idx = RandInt(0, 4);
      locked_room_ = j * num_cols_ + i;
      if (rooms_[locked_room_].neighbor[door_idx] < 0) continue;
      door = AddDoor(i, j, door_idx, -1, 1).first;
      break;
    }
    while (true) {
      const int i = RandInt(0, num_cols_), j = RandInt(0, num_rows_);
      if (j * num_cols_ + i == locked_room_) continue;
      AddObject(i, j, kKey, door.color);
      break;
    }
  }

  // rand_obj: a description matching at least one object (not only in the locked room unless implicit_unlock).
  ObjDesc RandObj(const std::vector<uint8_t>& types) {
    for (int tries = 0; tries <= 100; ++tries) {
      const int c = RandInt(0, 7);  // _rand_elem([None, *COLOR_NAMES])
      const uint8_t type = types[RandInt(0, static_cast<int64_t>(types.size()))];
      int loc = kNoLoc;
      if (locations_ && RandBool()) loc = RandInt(0, 4);
      ObjDesc d = Desc(type, c == 0 ? -1 : kColorNames[c - 1], loc);
      FindMatching(d, true);
      if (d.set.empty()) continue;
      if (!implicit_unlock_ && locked_room_ >= 0) {
        const Room& r = rooms_[locked_room_];
        bool outside = false;
        for (const auto& [x, y] : d.poss) {
          outside |= x < r.top_x || y < r.top_y || x >= r.top_x + r.size || y >= r.top_y + r.size;
        }
        if (!outside) continue;
      }
      return d;
    }
    failed_ = true;
    return Desc(kBall);
  }

  int RandAction() {
    static const std::vector<uint8_t> kAll = {kBox, kBall, kKey, kDoor}, kNotDoor = {kBox, kBall, kKey},
                                      kDoorOnly = {kDoor};
    const int action = action_kinds_[RandInt(0, static_cast<int64_t>(action_kinds_.size()))];
    if (action == kGoto) return Action(kGoToInstr, RandObj(kAll));
    if (action == kPickupKind) return Action(kPickupInstr, RandObj(kNotDoor));
    if (action == kOpenKind) return Action(kOpenInstr, RandObj(kDoorOnly));
    ObjDesc move = RandObj(kNotDoor);
    if (failed_) return -1;
    ObjDesc fixed = RandObj(kAll);
    return Action(kPutNextInstr, std::move(move), false, std::move(fixed));
  }

  int RandInstr(const std::vector<int>& kinds) {
    if (failed_) return -1;
    const int kind = kinds[RandInt(0, static_cast<int64_t>(kinds.size()))];
    if (kind == kActionForm) return RandAction();
    if (kind == kAndForm) {
      const int a = RandInstr({kActionForm});
      const int b = RandInstr({kActionForm});
      return failed_ ? -1 : Seq(kAndInstr, a, b);
    }
    const int a = RandInstr({kActionForm, kAndForm});
    const int b = RandInstr({kActionForm, kAndForm});
    if (failed_) return -1;
    const bool before = RandInt(0, 2) == 0;  // _rand_elem(["before", "after"])
    return Seq(before ? kBeforeInstr : kAfterInstr, a, b);
  }

  int num_dists_;
  double locked_room_prob_;
  bool locations_, implicit_unlock_;
  std::vector<int> action_kinds_, instr_kinds_;
  int locked_room_ = -1;
  bool failed_ = false;
};

}  // namespace pp::minigrid
