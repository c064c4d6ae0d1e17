// The state of the grid envs (FrozenLake, CliffWalking, Taxi) as get_state/set_state see it: one integer index
// in [0, n), gymnasium's env.unwrapped.s.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace pp::toy_text {

// The index held by a set_state argument; throws std::invalid_argument unless it is one integer in [0, n)
// (checked on the double, so 3.5, NaN or 2**40 are rejected instead of being truncated or wrapped).
inline int StateIndex(const std::vector<double>& s, int n, const char* env) {
  if (s.size() != 1 || !(s[0] >= 0.0 && s[0] < n) || s[0] != std::floor(s[0])) {
    throw std::invalid_argument(std::string(env) + " state is one integer index in [0, " + std::to_string(n) + ")");
  }
  return static_cast<int>(s[0]);
}

}  // namespace pp::toy_text
