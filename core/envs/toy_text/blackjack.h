// Blackjack-v1, aligned with gymnasium.envs.toy_text.BlackjackEnv (infinite deck: each card is 1..10 with
// 10 four times as likely as the others). Actions: 0 stick (the dealer draws to 17 or more, then the hands are
// compared: +1 win, 0 draw, -1 loss; terminates), 1 hit (draw a card; -1 and termination on a bust).
// Observation: int32 (player sum, dealer's showing card, usable ace), EnvPool's Box(0, 31, (3,)).
// natural: a winning natural blackjack pays 1.5 (ignored when sab is set). sab (Sutton & Barto): a natural
// blackjack wins (+1) unless the dealer also has one.
// The cards are drawn as EnvPool draws them (player's two, then dealer's two, then in play order), so seeds give
// EnvPool's hands. The third observation is gymnasium's "usable ace" (an ace counted as 11 without busting);
// EnvPool 1.2.5 reports "holds an ace" there instead, which differs once such an ace no longer fits.
#pragma once

#include <algorithm>
#include <random>
#include <stdexcept>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"
#include "core/envs/toy_text/state_index.h"

namespace pp::toy_text {

class BlackjackEnv : public Env {
 public:
  static constexpr const char* kName = "Blackjack";
  // Hands never exceed this many cards: a player can hold at most 21 aces before busting, and the dealer stops
  // once a usable ace reaches 17 (an illegal state given through SetState is rejected instead).
  static constexpr int kMaxCards = 32;
  static std::vector<ConfigKey> ConfigKeys() {
    return {{"max_episode_steps", int64_t{2147483647}, "truncate after this many steps", {}},
            {"natural", false, "a winning natural blackjack pays 1.5 (when sab is false)", {}},
            {"sab", true, "Sutton & Barto rules: a natural wins unless the dealer has one too", {}}};
  }
  static void DefineSpec(const Config&, SpecBuilder& b) {
    b.Obs("obs", DType::kInt32, {3}, {0.0}, {31.0});
    b.DiscreteAction(2);
  }

  BlackjackEnv(const Config& c, int env_id, uint64_t seed)
      : Env(c, env_id, seed), natural_(c.Get<bool>("natural")), sab_(c.Get<bool>("sab")) {}

  void Reset(Output& out) override {
    player_.n = dealer_.n = 0;
    player_.Add(Draw());
    player_.Add(Draw());
    dealer_.Add(Draw());
    dealer_.Add(Draw());
    Write(out);
  }

  void Step(const ActionView& action, Output& out) override {
    if (action.Discrete() != 0) {  // hit
      player_.Add(Draw());
      if (player_.Sum() > 21) {
        out.SetTerminated(true);
        out.SetReward(-1.0);
      }
    } else {  // stick: the dealer plays out its hand
      while (dealer_.Sum() < 17) dealer_.Add(Draw());
      const int p = player_.Score(), d = dealer_.Score();
      double reward = double(p > d) - double(p < d);
      if (sab_ && player_.Natural() && !dealer_.Natural()) {
        reward = 1.0;
      } else if (!sab_ && natural_ && player_.Natural() && reward == 1.0) {
        reward = 1.5;
      }
      out.SetTerminated(true);
      out.SetReward(reward);
    }
    Write(out);
  }

  // (number of player cards, the player's cards..., number of dealer cards, the dealer's cards...); card values
  // are 1 (ace) to 10, as gymnasium's env.unwrapped.player / dealer lists.
  std::vector<double> GetState() const override {
    std::vector<double> s{double(player_.n)};
    s.insert(s.end(), player_.cards, player_.cards + player_.n);
    s.push_back(double(dealer_.n));
    s.insert(s.end(), dealer_.cards, dealer_.cards + dealer_.n);
    return s;
  }
  void SetState(const std::vector<double>& s) override {
    Hand p, d;
    size_t i = 0;
    auto read = [&](Hand& h) {
      if (i >= s.size() || !IsIntIn(s[i], 1, kMaxCards + 1)) return false;
      const int n = static_cast<int>(s[i++]);
      if (i + n > s.size()) return false;
      for (int k = 0; k < n; ++k) {
        if (!IsIntIn(s[i], 1, 11)) return false;
        h.Add(static_cast<int>(s[i++]));
      }
      return true;
    };
    if (!read(p) || !read(d) || i != s.size() || p.Sum() > 31) {
      throw std::invalid_argument(
          "Blackjack state is (n, n player cards, m, m dealer cards), cards 1..10, n, m >= 1, player sum <= 31");
    }
    player_ = p;
    dealer_ = d;
  }

 private:
  struct Hand {
    int cards[kMaxCards] = {};
    int n = 0;
    void Add(int c) {
      if (n == kMaxCards) throw std::logic_error("Blackjack: hand overflow");
      cards[n++] = c;
    }
    int Raw() const {
      int s = 0;
      for (int k = 0; k < n; ++k) s += cards[k];
      return s;
    }
    bool UsableAce() const { return std::find(cards, cards + n, 1) != cards + n && Raw() + 10 <= 21; }
    int Sum() const { return UsableAce() ? Raw() + 10 : Raw(); }
    int Score() const { return Sum() > 21 ? 0 : Sum(); }
    bool Natural() const { return n == 2 && std::min(cards[0], cards[1]) == 1 && std::max(cards[0], cards[1]) == 10; }
  };

  int Draw() { return std::min(10, std::uniform_int_distribution<int>(1, 13)(gen_)); }
  void Write(Output& out) {
    int32_t* o = out.Obs<int32_t>(0);
    o[0] = player_.Sum();
    o[1] = dealer_.cards[0];
    o[2] = player_.UsableAce() ? 1 : 0;
  }

  bool natural_, sab_;
  Hand player_, dealer_;
};

}  // namespace pp::toy_text
