// MiniGrid-LavaCrossing / SimpleCrossing (minigrid.envs.CrossingEnv): rivers of lava (or walls) cross the room;
// one opening per river lets the agent, top-left facing right, reach the goal, bottom-right.
#pragma once

#include <algorithm>
#include <vector>

#include "core/envs/minigrid/minigrid_env.h"

namespace pp::minigrid {

class CrossingEnv : public MiniGridEnv {
 public:
  static constexpr const char* kName = "MiniGridCrossing";
  static std::vector<ConfigKey> ConfigKeys() {
    return MiniGridKeys(
        {{"max_episode_steps", int64_t{324}, "truncate after this many steps (minigrid's max_steps)", {}},
         {"size", int64_t{9}, "side of the square room, walls included (odd)", {}},
         {"num_crossings", int64_t{1}, "number of rivers", {}},
         {"obstacle_type", std::string("lava"), "what the rivers are made of", {"lava", "wall"}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    const int size = IntInRange(c, "size", 5, 1023);
    if (size % 2 == 0) throw std::invalid_argument("MiniGrid crossing: size must be odd, got " + std::to_string(size));
    IntInRange(c, "num_crossings", 0, 1024);
    MiniGridSpec(c, b);
  }
  CrossingEnv(const Config& c, int env_id, uint64_t seed)
      : MiniGridEnv(c, env_id, seed, c.Get<int>("size"), c.Get<int>("size"), /*see_through_walls=*/false),
        num_crossings_(c.Get<int>("num_crossings")),
        lava_(c.Get<std::string>("obstacle_type") == "lava") {
    rivers_.reserve(static_cast<size_t>(width_) + height_);
    path_.reserve(rivers_.capacity());
  }

 protected:
  void GenGrid() override {
    WalledSquareWithGoal();
    // Rivers as (direction, position): vertical ones first, as minigrid lists them, then shuffled.
    rivers_.clear();
    for (int i = 2; i < height_ - 2; i += 2) rivers_.push_back({kVertical, i});
    for (int j = 2; j < width_ - 2; j += 2) rivers_.push_back({kHorizontal, j});
    rng_.Shuffle(rivers_.data(), static_cast<int64_t>(rivers_.size()));
    rivers_.resize(std::min(rivers_.size(), static_cast<size_t>(num_crossings_)));
    std::vector<int> rv, rh;  // at most size / 2 each: small
    for (auto [d, p] : rivers_) (d == kVertical ? rv : rh).push_back(p);
    std::sort(rv.begin(), rv.end());
    std::sort(rh.begin(), rh.end());
    const Obj obstacle = lava_ ? Lava() : Wall();
    for (int i = 1; i < width_ - 1; ++i) {
      for (int j : rh) grid_.Set(i, j, obstacle);
    }
    for (int i : rv) {
      for (int j = 1; j < height_ - 1; ++j) grid_.Set(i, j, obstacle);
    }
    // One opening per river, along a random monotone path of rooms.
    path_.assign(rv.size(), kHorizontal);
    path_.insert(path_.end(), rh.size(), kVertical);
    rng_.Shuffle(path_.data(), static_cast<int64_t>(path_.size()));
    std::vector<int> limits_v{0}, limits_h{0};
    limits_v.insert(limits_v.end(), rv.begin(), rv.end());
    limits_v.push_back(height_ - 1);
    limits_h.insert(limits_h.end(), rh.begin(), rh.end());
    limits_h.push_back(width_ - 1);
    size_t room_i = 0, room_j = 0;
    for (int d : path_) {
      int i, j;
      if (d == kHorizontal) {
        i = limits_v[room_i + 1];
        j = Choice(limits_h[room_j] + 1, limits_h[room_j + 1]);
        ++room_i;
      } else {
        i = Choice(limits_v[room_i] + 1, limits_v[room_i + 1]);
        j = limits_h[room_j + 1];
        ++room_j;
      }
      grid_.Set(i, j, Obj{});
    }
    mission_ =
        lava_ ? "avoid the lava and get to the green goal square" : "find the opening and get to the green goal square";
  }

 private:
  enum : int { kVertical = 0, kHorizontal = 1 };
  // np_random.choice(range(lo, hi)) draws integers(0, hi - lo).
  int Choice(int lo, int hi) { return lo + RandInt(0, hi - lo); }

  int num_crossings_;
  bool lava_;
  std::vector<std::pair<int, int>> rivers_;
  std::vector<int> path_;
};

}  // namespace pp::minigrid
