// Dummy-v0: a deterministic env for engine tests and overhead benchmarks.
// obs (float32, 4): [env_id, steps taken this episode, last action, a draw from the env's generator at reset]
// Discrete(10) action (or, with continuous=True, a float32 Box(-1, 1, (2,))); reward = the action (sum);
// terminates after `episode_len` steps; spins `step_cost_us` microseconds per step; throws when the action
// equals `error_action` (for exception-propagation tests). With float64=True the obs, reward and continuous action
// are float64 (the draw is a double), for 64-bit dtype tests.
#pragma once

#include <chrono>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"

namespace pp::testing {

class DummyEnv : public Env {
 public:
  static constexpr const char* kName = "_Dummy";  // leading "_": makeable, but not listed by list_all_envs()
  static std::vector<ConfigKey> ConfigKeys() {
    return {{"max_episode_steps", int64_t{1000}, "truncate after this many steps", {}},
            {"episode_len", int64_t{10}, "terminate after this many steps", {}},
            {"step_cost_us", 0.0, "busy-wait this long per step (simulated env cost)", {}},
            {"slow_env", int64_t{-1}, "this env id spins slow_env_cost_us per step instead (-1: none)", {}},
            {"slow_env_cost_us", 100000.0, "per-step cost of slow_env", {}},
            {"error_action", int64_t{-1}, "throw a C++ exception when the action equals this (-1: never)", {}},
            {"continuous", false, "use a float32 Box(-1, 1, (2,)) action instead of Discrete(10)", {}},
            {"float64", false, "float64 obs, reward and continuous action (instead of float32)", {}}};
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    const DType t = c.Get<bool>("float64") ? DType::kFloat64 : DType::kFloat32;
    b.Obs("obs", t, {4}, {-kInf}, {kInf});
    b.Info("score", DType::kFloat32);
    if (t == DType::kFloat64) b.Reward(t);
    if (c.Get<bool>("continuous")) {
      b.Action("action", t, {2}, {-1.0}, {1.0});
    } else {
      b.DiscreteAction(10);
    }
  }

  DummyEnv(const Config& c, int env_id, uint64_t seed)
      : Env(c, env_id, seed),
        episode_len_(c.Get<int>("episode_len")),
        cost_us_(env_id == c.Get<int>("slow_env") ? c.Get<double>("slow_env_cost_us") : c.Get<double>("step_cost_us")),
        error_action_(c.Get<int>("error_action")),
        continuous_(c.Get<bool>("continuous")),
        f64_(c.Get<bool>("float64")) {}

  void Reset(Output& out) override {
    step_ = 0;
    last_action_ = 0;
    score_ = 0;
    if (f64_) {
      draw_ = std::uniform_real_distribution<double>(0.0, 1.0)(gen_);
    } else {
      draw_ = std::uniform_real_distribution<float>(0.f, 1.f)(gen_);
    }
    Write(out);
  }

  void Step(const ActionView& action, Output& out) override {
    if (cost_us_ > 0) {
      auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(cost_us_ * 1000));
      while (std::chrono::steady_clock::now() < until) {
      }
    }
    double a;
    if (continuous_ && f64_) {
      a = action.Get<double>(0)[0] + action.Get<double>(0)[1];
    } else if (continuous_) {
      a = action.Get<float>(0)[0] + action.Get<float>(0)[1];
    } else {
      int d = action.Discrete();
      if (d == error_action_) throw std::runtime_error("Dummy env " + std::to_string(env_id_) + " was told to fail");
      a = d;
    }
    ++step_;
    last_action_ = a;
    score_ += static_cast<float>(a);
    out.SetReward(a);
    out.SetTerminated(step_ >= episode_len_);
    Write(out);
  }

 private:
  void Write(Output& out) {
    if (f64_) {
      double* o = out.Obs<double>(0);
      o[0] = env_id_;
      o[1] = step_;
      o[2] = last_action_;
      o[3] = draw_;
    } else {
      float* o = out.Obs<float>(0);
      o[0] = static_cast<float>(env_id_);
      o[1] = static_cast<float>(step_);
      o[2] = static_cast<float>(last_action_);
      o[3] = static_cast<float>(draw_);
    }
    *out.Info<float>(0) = score_;
  }
  int episode_len_;
  double cost_us_;
  int error_action_;
  bool continuous_, f64_;
  int step_ = 0;
  double last_action_ = 0, draw_ = 0;
  float score_ = 0;
};

// TwoPlayer-v0: max_num_players players per env (default 2); per-player obs [env_id, player, step],
// per-player Discrete(3) action, per-player reward = that player's action; terminates after episode_len steps.
class TwoPlayerEnv : public Env {
 public:
  static constexpr const char* kName = "_TwoPlayer";
  static std::vector<ConfigKey> ConfigKeys() {
    return {{"max_num_players", int64_t{2}, "players per env", {}},
            {"episode_len", int64_t{5}, "terminate after this many steps", {}},
            {"vary_players", false, "env i has 1 + i % max_num_players players instead of max_num_players", {}}};
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    b.Obs("obs", DType::kFloat32, {3}, {-kInf}, {kInf});
    b.DiscreteAction(3);
    b.MaxPlayers(c.Get<int>("max_num_players"));
  }
  TwoPlayerEnv(const Config& c, int env_id, uint64_t seed)
      : Env(c, env_id, seed),
        players_(c.Get<bool>("vary_players") ? 1 + env_id % c.Get<int>("max_num_players")
                                             : c.Get<int>("max_num_players")),
        episode_len_(c.Get<int>("episode_len")) {}
  int NumPlayers() const override { return players_; }
  void Reset(Output& out) override {
    step_ = 0;
    Write(out);
  }
  void Step(const ActionView& action, Output& out) override {
    ++step_;
    for (int p = 0; p < players_; ++p) out.SetReward(action.Discrete(p), p);
    out.SetTerminated(step_ >= episode_len_);
    Write(out);
  }

 private:
  void Write(Output& out) {
    for (int p = 0; p < players_; ++p) {
      float* o = out.Obs<float>(0, p);
      o[0] = static_cast<float>(env_id_);
      o[1] = static_cast<float>(p);
      o[2] = static_cast<float>(step_);
    }
  }
  int players_, episode_len_;
  int step_ = 0;
};

}  // namespace pp::testing
