// The Box2D envs' state is the generator state an episode started from plus the actions stepped since (restoring
// replays them: docs/box2d.md). What they share about that action log.
#pragma once

#include <algorithm>
#include <cstddef>

#include "core/engine/spec.h"

namespace pp::box2d {

// Steps of action log to allocate up front: the episode limit, capped, so that a huge max_episode_steps does not
// allocate gigabytes per env; a longer episode grows its log as it goes.
inline size_t ReservedSteps(const Config& c) {
  return static_cast<size_t>(std::clamp(c.Get<int>("max_episode_steps"), 0, 1 << 14)) + 1;
}

}  // namespace pp::box2d
