// What the engine's own source files (engine.cc, send.cc, recv.cc, state.cc) share and its users need not see.
#pragma once

#include <cstdint>
#include <string>

#include "core/engine/spec.h"

namespace pp {

// how long a worker spins for work before sleeping (the caller's Python between two calls of a loop is far less)
inline constexpr int64_t kWorkerSpinNs = 100000;

// Throws std::invalid_argument when `c` gives a common key (num_envs, seed, ...) another value than the pool's.
void CheckCommonKeys(const Config& pool, const Config& c, const std::string& what);

}  // namespace pp
