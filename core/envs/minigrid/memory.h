// MiniGrid-Memory (minigrid.envs.MemoryEnv): see an object in the start room, walk down the hallway and step next
// to the matching one of the two at its end. Pickup acts as toggle, as in minigrid.
#pragma once

#include "core/envs/minigrid/minigrid_env.h"

namespace pp::minigrid {

class MemoryEnv : public MiniGridEnv {
 public:
  static constexpr const char* kName = "MiniGridMemory";
  static std::vector<ConfigKey> ConfigKeys() {
    return MiniGridKeys(
        {{"max_episode_steps", int64_t{245}, "truncate after this many steps (minigrid's max_steps)", {}},
         {"size", int64_t{7}, "side of the square grid (odd)", {}},
         {"random_length", false, "a hallway of random length", {}}});
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    const int size = IntInRange(c, "size", 7, 1023);
    if (size % 2 == 0) throw std::invalid_argument("MiniGrid-Memory: size must be odd, got " + std::to_string(size));
    MiniGridSpec(c, b);
  }
  MemoryEnv(const Config& c, int env_id, uint64_t seed)
      : MiniGridEnv(c, env_id, seed, c.Get<int>("size"), c.Get<int>("size"), /*see_through_walls=*/false),
        random_length_(c.Get<bool>("random_length")) {}

 protected:
  void GenGrid() override {
    const int w = width_, h = height_;
    grid_.WallRect(0, 0, w, h);
    const int upper = h / 2 - 2, lower = h / 2 + 2;
    const int end = random_length_ ? RandInt(4, w - 2) : w - 3;
    for (int i = 1; i < 5; ++i) {
      grid_.Set(i, upper, Wall());
      grid_.Set(i, lower, Wall());
    }
    grid_.Set(4, upper + 1, Wall());
    grid_.Set(4, lower - 1, Wall());
    for (int i = 5; i < end; ++i) {
      grid_.Set(i, upper + 1, Wall());
      grid_.Set(i, lower - 1, Wall());
    }
    for (int j = 0; j < h; ++j) {
      if (j != h / 2) grid_.Set(end, j, Wall());
      grid_.Set(end + 2, j, Wall());
    }
    agent_x_ = RandInt(1, end + 1);
    agent_y_ = h / 2;
    agent_dir_ = 0;
    const uint8_t start_obj = RandInt(0, 2) == 0 ? kKey : kBall;  // _rand_elem([Key, Ball])
    grid_.Set(1, h / 2 - 1, Obj::Make(start_obj, kGreen));
    const bool ball_first = RandInt(0, 2) == 0;  // _rand_elem([[Ball, Key], [Key, Ball]])
    const uint8_t other0 = ball_first ? kBall : kKey, other1 = ball_first ? kKey : kBall;
    grid_.Set(end + 1, h / 2 - 2, Obj::Make(other0, kGreen));
    grid_.Set(end + 1, h / 2 + 2, Obj::Make(other1, kGreen));
    if (start_obj == other0) {
      success_x_ = end + 1, success_y_ = h / 2 - 1, failure_x_ = end + 1, failure_y_ = h / 2 + 1;
    } else {
      success_x_ = end + 1, success_y_ = h / 2 + 1, failure_x_ = end + 1, failure_y_ = h / 2 - 1;
    }
    mission_ = "go to the matching object at the end of the hallway";
  }
  void Act(int action, double& reward, bool& terminated) override {
    BaseAct(action == kPickup ? kToggle : action, reward, terminated);
    if (agent_x_ == success_x_ && agent_y_ == success_y_) {
      reward = Reward();
      terminated = true;
    }
    if (agent_x_ == failure_x_ && agent_y_ == failure_y_) {
      reward = 0.0;
      terminated = true;
    }
  }
  // the cells next to the matching and the other object
  void SaveMission(StateWriter& w) const override { w.Cells({success_x_, success_y_, failure_x_, failure_y_}); }
  void LoadMission(StateReader& r) override { r.Cells(grid_, {&success_x_, &success_y_, &failure_x_, &failure_y_}); }

 private:
  bool random_length_;
  int success_x_ = 0, success_y_ = 0, failure_x_ = 0, failure_y_ = 0;
};

}  // namespace pp::minigrid
