// Integers read from a set_state argument (doubles). The grid envs (FrozenLake, CliffWalking, Taxi) hold one index
// in [0, n), gymnasium's env.unwrapped.s; Catch, NChain and Blackjack hold a few small integers.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace pp::toy_text {

// Whether `v` is an integer in [lo, hi): checked on the double, before any cast (casting NaN, inf or a value
// beyond int's range to int is undefined behaviour).
inline bool IsIntIn(double v, int lo, int hi) { return v >= lo && v < hi && v == std::floor(v); }

// The index held by a set_state argument; throws std::invalid_argument unless it is one integer in [0, n)
// (checked on the double, so 3.5, NaN or 2**40 are rejected instead of being truncated or wrapped).
inline int StateIndex(const std::vector<double>& s, int n, const char* env) {
  if (s.size() != 1 || !IsIntIn(s[0], 0, n)) {
    throw std::invalid_argument(std::string(env) + " state is one integer index in [0, " + std::to_string(n) + ")");
  }
  return static_cast<int>(s[0]);
}

}  // namespace pp::toy_text
