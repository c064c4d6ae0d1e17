// Catch-v0 (bsuite's Catch, as EnvPool has it): a ball falls from the top row of a height x width board, one row
// per step; the agent moves a paddle on the bottom row left / stay / right (actions 0, 1, 2). When the ball reaches
// the bottom row the episode terminates with reward +1 if the paddle is under it, else -1 (0 on every other step).
// Observation: float32 (height, width) board with 1 at the ball and at the paddle. Aligned with EnvPool: the ball's
// column is drawn with the same generator and distribution, so seeds reproduce EnvPool's episodes.
#pragma once

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"
#include "core/envs/toy_text/state_index.h"

namespace pp::toy_text {

class CatchEnv : public Env {
 public:
  static constexpr const char* kName = "Catch";
  static constexpr int kMaxSide = 4096;
  static std::vector<ConfigKey> ConfigKeys() {
    return {{"max_episode_steps", int64_t{2147483647}, "truncate after this many steps", {}},
            {"height", int64_t{10}, "board rows (the ball falls height - 1 rows)", {}},
            {"width", int64_t{5}, "board columns", {}}};
  }
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    // Bounded so the board (h * w floats per env) stays a sane size and h * w fits in int.
    const int h = IntInRange(c, "height", 2, kMaxSide), w = IntInRange(c, "width", 1, kMaxSide);
    b.Obs("obs", DType::kFloat32, {h, w}, {0.0}, {1.0});
    b.DiscreteAction(3);
  }

  CatchEnv(const Config& c, int env_id, uint64_t seed)
      : Env(c, env_id, seed), height_(c.Get<int>("height")), width_(c.Get<int>("width")) {}

  void Reset(Output& out) override {
    row_ = 0;
    col_ = std::uniform_int_distribution<int>(0, width_ - 1)(gen_);
    paddle_ = width_ / 2;
    Write(out);
  }

  void Step(const ActionView& action, Output& out) override { StepTo(action, out); }
  static void StepBatch(Env* const* envs, int n, const BatchRows& rows) noexcept { StepEach<CatchEnv>(envs, n, rows); }
  // Step's body for Step and StepBatch alike (ActionView/Output or BatchRow); never throws
  template <class A, class O>
  void StepTo(const A& action, O& out) {
    paddle_ = std::clamp(paddle_ + action.Discrete() - 1, 0, width_ - 1);
    if (++row_ >= height_ - 1) {
      row_ = height_ - 1;
      out.SetTerminated(true);
      out.SetReward(col_ == paddle_ ? 1.0 : -1.0);
    }
    Write(out);
  }

  // (ball row, ball column, paddle column)
  std::vector<double> GetState() const override { return {double(row_), double(col_), double(paddle_)}; }
  void SetState(const std::vector<double>& s) override {
    if (s.size() != 3) throw std::invalid_argument("Catch state is (ball_row, ball_col, paddle_col)");
    if (!IsIntIn(s[0], 0, height_ - 1) || !IsIntIn(s[1], 0, width_) || !IsIntIn(s[2], 0, width_)) {
      throw std::invalid_argument("Catch state out of range (integers, ball_row < height - 1, columns < width)");
    }
    row_ = static_cast<int>(s[0]);
    col_ = static_cast<int>(s[1]);
    paddle_ = static_cast<int>(s[2]);
  }

 private:
  template <class O>
  void Write(O& out) {
    float* o = out.template Obs<float>(0);
    std::fill(o, o + height_ * width_, 0.0f);
    o[row_ * width_ + col_] = 1.0f;
    o[(height_ - 1) * width_ + paddle_] = 1.0f;
  }
  int height_, width_;
  int row_ = 0, col_ = 0, paddle_ = 0;
};

}  // namespace pp::toy_text
