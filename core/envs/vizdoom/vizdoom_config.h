// Parsing and validation of the ViZDoom family's table-valued config keys, and EnvPool's combined action set.
//
// EnvPool takes reward_config, selected_weapon_reward_config and delta_button_config as dicts. Config values here
// are scalars or strings, so each table travels as text "NAME=v1,v2;NAME=v1" (the Python side turns a dict into
// that form, see parallel_pool/registry.py); every name and value count is checked here with an error naming the key.
#pragma once

#include <cstdlib>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ViZDoom.h"

namespace pp::vizdoom {

namespace vzd = ::vizdoom;

// ViZDoom's game variable names, in its enum's order (vizdoom::gameVariableToString lacks HITCOUNT, HITS_TAKEN,
// DAMAGECOUNT and DAMAGE_TAKEN in 1.3.2).
inline constexpr const char* kGameVariableNames[] = {"KILLCOUNT",
                                                     "ITEMCOUNT",
                                                     "SECRETCOUNT",
                                                     "FRAGCOUNT",
                                                     "DEATHCOUNT",
                                                     "HITCOUNT",
                                                     "HITS_TAKEN",
                                                     "DAMAGECOUNT",
                                                     "DAMAGE_TAKEN",
                                                     "HEALTH",
                                                     "ARMOR",
                                                     "DEAD",
                                                     "ON_GROUND",
                                                     "ATTACK_READY",
                                                     "ALTATTACK_READY",
                                                     "SELECTED_WEAPON",
                                                     "SELECTED_WEAPON_AMMO",
                                                     "AMMO0",
                                                     "AMMO1",
                                                     "AMMO2",
                                                     "AMMO3",
                                                     "AMMO4",
                                                     "AMMO5",
                                                     "AMMO6",
                                                     "AMMO7",
                                                     "AMMO8",
                                                     "AMMO9",
                                                     "WEAPON0",
                                                     "WEAPON1",
                                                     "WEAPON2",
                                                     "WEAPON3",
                                                     "WEAPON4",
                                                     "WEAPON5",
                                                     "WEAPON6",
                                                     "WEAPON7",
                                                     "WEAPON8",
                                                     "WEAPON9",
                                                     "POSITION_X",
                                                     "POSITION_Y",
                                                     "POSITION_Z",
                                                     "ANGLE",
                                                     "PITCH",
                                                     "ROLL",
                                                     "VIEW_HEIGHT",
                                                     "VELOCITY_X",
                                                     "VELOCITY_Y",
                                                     "VELOCITY_Z",
                                                     "CAMERA_POSITION_X",
                                                     "CAMERA_POSITION_Y",
                                                     "CAMERA_POSITION_Z",
                                                     "CAMERA_ANGLE",
                                                     "CAMERA_PITCH",
                                                     "CAMERA_ROLL",
                                                     "CAMERA_FOV",
                                                     "PLAYER_NUMBER",
                                                     "PLAYER_COUNT",
                                                     "PLAYER1_FRAGCOUNT",
                                                     "PLAYER2_FRAGCOUNT",
                                                     "PLAYER3_FRAGCOUNT",
                                                     "PLAYER4_FRAGCOUNT",
                                                     "PLAYER5_FRAGCOUNT",
                                                     "PLAYER6_FRAGCOUNT",
                                                     "PLAYER7_FRAGCOUNT",
                                                     "PLAYER8_FRAGCOUNT",
                                                     "PLAYER9_FRAGCOUNT",
                                                     "PLAYER10_FRAGCOUNT",
                                                     "PLAYER11_FRAGCOUNT",
                                                     "PLAYER12_FRAGCOUNT",
                                                     "PLAYER13_FRAGCOUNT",
                                                     "PLAYER14_FRAGCOUNT",
                                                     "PLAYER15_FRAGCOUNT",
                                                     "PLAYER16_FRAGCOUNT",
                                                     "USER1",
                                                     "USER2",
                                                     "USER3",
                                                     "USER4",
                                                     "USER5",
                                                     "USER6",
                                                     "USER7",
                                                     "USER8",
                                                     "USER9",
                                                     "USER10",
                                                     "USER11",
                                                     "USER12",
                                                     "USER13",
                                                     "USER14",
                                                     "USER15",
                                                     "USER16",
                                                     "USER17",
                                                     "USER18",
                                                     "USER19",
                                                     "USER20",
                                                     "USER21",
                                                     "USER22",
                                                     "USER23",
                                                     "USER24",
                                                     "USER25",
                                                     "USER26",
                                                     "USER27",
                                                     "USER28",
                                                     "USER29",
                                                     "USER30",
                                                     "USER31",
                                                     "USER32",
                                                     "USER33",
                                                     "USER34",
                                                     "USER35",
                                                     "USER36",
                                                     "USER37",
                                                     "USER38",
                                                     "USER39",
                                                     "USER40",
                                                     "USER41",
                                                     "USER42",
                                                     "USER43",
                                                     "USER44",
                                                     "USER45",
                                                     "USER46",
                                                     "USER47",
                                                     "USER48",
                                                     "USER49",
                                                     "USER50",
                                                     "USER51",
                                                     "USER52",
                                                     "USER53",
                                                     "USER54",
                                                     "USER55",
                                                     "USER56",
                                                     "USER57",
                                                     "USER58",
                                                     "USER59",
                                                     "USER60"};
static_assert(std::size(kGameVariableNames) == static_cast<size_t>(vzd::USER60) + 1,
              "ViZDoom's GameVariable enum changed");

// "NAME=1,2;OTHER=3" -> {("NAME", {1, 2}), ("OTHER", {3})}; each entry must have `arity` numbers.
inline std::vector<std::pair<std::string, std::vector<double>>> ParseTable(const std::string& key,
                                                                           const std::string& text, size_t arity) {
  std::vector<std::pair<std::string, std::vector<double>>> table;
  std::stringstream entries(text);
  std::string entry;
  while (std::getline(entries, entry, ';')) {
    if (entry.find_first_not_of(" \t") == std::string::npos) continue;
    const size_t eq = entry.find('=');
    auto bad = [&](const std::string& why) {
      return std::invalid_argument("config key '" + key + "': entry '" + entry + "' " + why +
                                   " (expected NAME=v1,...,v" + std::to_string(arity) + " entries separated by ';')");
    };
    if (eq == std::string::npos) throw bad("has no '='");
    std::string name = entry.substr(0, eq);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    std::vector<double> values;
    std::stringstream nums(entry.substr(eq + 1));
    std::string num;
    while (std::getline(nums, num, ',')) {
      char* end = nullptr;
      const double v = std::strtod(num.c_str(), &end);
      if (end == num.c_str() || std::string(end).find_first_not_of(" \t") != std::string::npos) {
        throw bad("has a value that is not a number: '" + num + "'");
      }
      values.push_back(v);
    }
    if (values.size() != arity) throw bad("has " + std::to_string(values.size()) + " values");
    table.emplace_back(std::move(name), std::move(values));
  }
  return table;
}

inline int GameVariableByName(const std::string& key, const std::string& name) {
  for (size_t i = 0; i < std::size(kGameVariableNames); ++i) {
    if (name == kGameVariableNames[i]) return static_cast<int>(i);
  }
  throw std::invalid_argument("config key '" + key + "': '" + name +
                              "' is not a ViZDoom game variable (e.g. KILLCOUNT, HEALTH, AMMO2)");
}

inline int ButtonByName(const std::string& key, const std::string& name) {
  for (unsigned i = 0; i < vzd::BUTTON_COUNT; ++i) {
    if (vzd::buttonToString(static_cast<vzd::Button>(i)) == name) return static_cast<int>(i);
  }
  throw std::invalid_argument("config key '" + key + "': '" + name +
                              "' is not a ViZDoom button (e.g. ATTACK, TURN_LEFT_RIGHT_DELTA)");
}

// A delta button's discretization for the combined action set: `num` values evenly spaced over [lo, hi].
struct DeltaSteps {
  int num = 0;
  float lo = 0.f, hi = 0.f;
};

// EnvPool's combined action set: every combination of the available buttons, enumerated button by button in
// ViZDoom's button order (the first button varies slowest), where
//  * opposite pairs (MOVE_RIGHT/LEFT, MOVE_BACKWARD/FORWARD, TURN_RIGHT/LEFT, LOOK_UP/DOWN, MOVE_UP/DOWN,
//    SELECT_NEXT/PREV_WEAPON, SELECT_NEXT/PREV_ITEM) with both buttons available give none, first, second;
//  * the SELECT_WEAPON1..0 buttons give none, then one of them;
//  * SPEED is always pressed with force_speed;
//  * a delta button with num > 1 steps takes num values from lo to hi (float steps, as EnvPool adds them), and
//    stays 0 otherwise;
//  * any other available button is off, then on.
class ActionSetBuilder {
 public:
  ActionSetBuilder(const std::vector<vzd::Button>& buttons, bool force_speed, std::map<int, DeltaSteps> deltas)
      : force_speed_(force_speed), deltas_(std::move(deltas)), current_(buttons.size(), 0.0) {
    index_.assign(vzd::BUTTON_COUNT, -1);
    for (size_t i = 0; i < buttons.size(); ++i) index_[buttons[i]] = static_cast<int>(i);
  }

  std::vector<std::vector<double>> Build() {
    Visit(0);
    return std::move(result_);
  }

 private:
  static constexpr int kFirstWeapon = vzd::SELECT_WEAPON1, kLastWeapon = vzd::SELECT_WEAPON0;

  static bool IsPairStart(int b) {
    return b == vzd::MOVE_RIGHT || b == vzd::MOVE_BACKWARD || b == vzd::TURN_RIGHT || b == vzd::LOOK_UP ||
           b == vzd::MOVE_UP || b == vzd::SELECT_NEXT_WEAPON || b == vzd::SELECT_NEXT_ITEM;
  }

  void Visit(int b) {
    if (b == static_cast<int>(vzd::BUTTON_COUNT)) {
      result_.push_back(current_);
    } else if (vzd::isDeltaButton(static_cast<vzd::Button>(b))) {
      VisitDelta(b);
    } else if (b == kFirstWeapon) {
      Visit(kLastWeapon + 1);  // no weapon selected
      for (int w = kFirstWeapon; w <= kLastWeapon; ++w) {
        if (index_[w] >= 0) Press(w, kLastWeapon + 1);
      }
    } else if (IsPairStart(b) && index_[b] >= 0 && index_[b + 1] >= 0) {
      Visit(b + 2);
      Press(b, b + 2);
      Press(b + 1, b + 2);
    } else if (index_[b] >= 0) {
      if (b == vzd::SPEED && force_speed_) {
        current_[index_[b]] = 1;
        Visit(b + 1);
        return;  // stays pressed in every later combination, as EnvPool's set has it
      }
      Visit(b + 1);
      Press(b, b + 1);
    } else {
      Visit(b + 1);
    }
  }

  // Button b pressed for every combination of the buttons from `next` on.
  void Press(int b, int next) {
    current_[index_[b]] = 1;
    Visit(next);
    current_[index_[b]] = 0;
  }

  void VisitDelta(int b) {
    auto it = deltas_.find(b);
    if (it == deltas_.end() || it->second.num <= 1 || index_[b] < 0) {
      Visit(b + 1);
      return;
    }
    const DeltaSteps& d = it->second;
    const float step = (d.hi - d.lo) / static_cast<float>(d.num - 1);
    float a = d.lo;
    for (int i = 0; i < d.num; ++i, a += step) {
      current_[index_[b]] = a;
      Visit(b + 1);
    }
  }

  bool force_speed_;
  std::map<int, DeltaSteps> deltas_;
  std::vector<int> index_;
  std::vector<double> current_;
  std::vector<std::vector<double>> result_;
};

}  // namespace pp::vizdoom
