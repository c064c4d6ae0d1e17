// The Box2D envs' state is the generator state an episode started from plus the actions stepped since (restoring
// replays them: docs/box2d.md). ActionLog is that record, kept once for the three envs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine/spec.h"
#include "core/envs/common/numpy_random.h"

namespace pp::box2d {

// Steps of action log to allocate up front: the episode limit, capped, so that a huge max_episode_steps does not
// allocate gigabytes per env; a longer episode grows its log as it goes.
inline size_t ReservedSteps(const Config& c) {
  return static_cast<size_t>(std::clamp(c.Get<int>("max_episode_steps"), 0, 1 << 14)) + 1;
}

// An episode as GetState/SetState hold it: the generator state it started from (NumpyGenerator::kStateWords values),
// then `width` values per action stepped since. Box2D is deterministic, so rebuilding the episode from that generator
// state and replaying the actions restores the world exactly (contacts and solver warm starts included).
class ActionLog {
 public:
  static constexpr size_t kMaxWidth = 4;  // BipedalWalker's 4 torques; the others use fewer

  // `name` starts SetState's error messages; `max_action` >= 0: actions are the integers 0..max_action (a discrete
  // env), -1: any finite values (a continuous env).
  ActionLog(const Config& c, const char* name, size_t width, int max_action)
      : name_(name), width_(width), max_action_(max_action), max_steps_(c.Get<int>("max_episode_steps")) {
    if (width < 1 || width > kMaxWidth) throw std::logic_error("ActionLog: width must be 1 to 4");
    actions_.reserve(ReservedSteps(c) * width);
  }

  size_t width() const { return width_; }

  // An episode starts from `rng`'s current state.
  void Start(const NumpyGenerator& rng) {
    start_ = rng;
    actions_.clear();
  }
  void Add(const float* a) { actions_.insert(actions_.end(), a, a + width_); }

  std::vector<double> State() const {
    std::vector<double> s = start_.StateWords();
    s.insert(s.end(), actions_.begin(), actions_.end());
    return s;
  }

  // SetState: checks all of `s` first (a bad state throws std::invalid_argument and changes nothing), then puts `rng`
  // in the episode's starting generator state, calls restart() (the env rebuilds its episode from rng, which calls
  // Start) and advance(a) for each action in order (a: kMaxWidth values, zero past width()), logging each again.
  template <class Restart, class Advance>
  void Replay(const std::vector<double>& s, NumpyGenerator& rng, Restart&& restart, Advance&& advance) {
    constexpr size_t kWords = NumpyGenerator::kStateWords;
    if (s.size() < kWords || (s.size() - kWords) % width_ != 0) {
      throw std::invalid_argument(std::string(name_) + " state: 10 generator values, then " + std::to_string(width_) +
                                  " value(s) per action stepped");
    }
    // an episode ends at max_episode_steps: a longer log is no state of this env (and its replay would take time
    // in proportion to whatever length a snapshot claims)
    if ((s.size() - kWords) / width_ > static_cast<size_t>(max_steps_)) {
      throw std::invalid_argument(std::string(name_) + " state: " + std::to_string((s.size() - kWords) / width_) +
                                  " actions, more than max_episode_steps (" + std::to_string(max_steps_) + ")");
    }
    for (size_t i = kWords; i < s.size(); ++i) {
      const bool discrete_ok = max_action_ < 0 || (s[i] == std::floor(s[i]) && s[i] >= 0 && s[i] <= max_action_);
      if (!std::isfinite(s[i]) || !discrete_ok) {
        throw std::invalid_argument(std::string(name_) + " state: bad action value " + std::to_string(s[i]));
      }
    }
    NumpyGenerator start;
    start.SetStateWords(s, 0);  // validates before anything changes
    rng = start;
    restart();
    for (size_t i = kWords; i < s.size(); i += width_) {
      float a[kMaxWidth] = {};
      for (size_t j = 0; j < width_; ++j) a[j] = static_cast<float>(s[i + j]);
      advance(a);
      Add(a);
    }
  }

 private:
  const char* name_;
  size_t width_;
  int max_action_;
  int max_steps_;  // the episode limit: a log holds at most this many actions
  NumpyGenerator start_;
  std::vector<float> actions_;
};

}  // namespace pp::box2d
