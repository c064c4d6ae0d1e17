// The base of Fetch, GoToObject and PutNear (minigrid's FetchEnv, GoToObjectEnv, PutNearEnv): `num_objs` objects in
// one walled square room of side `size`, seen through walls. The three differ in their objects and their step.
#pragma once

#include <vector>

#include "core/envs/minigrid/minigrid_env.h"

namespace pp::minigrid {

class ObjectsRoomEnv : public MiniGridEnv {
 public:
  // The keys, with the env's defaults; `objs` says which objects num_objs counts.
  static std::vector<ConfigKey> RoomKeys(int64_t max_steps, int64_t size, int64_t num_objs, const char* objs) {
    return MiniGridKeys({{"max_episode_steps", max_steps, "truncate after this many steps (minigrid's max_steps)", {}},
                         {"size", size, "side of the square room, walls included", {}},
                         {"num_objs", num_objs, objs, {}}});
  }
  // Checks `size` (from min_size on) and declares the spec; returns the size (num_objs' range depends on it).
  static int RoomSpec(const Config& c, SpecBuilder& b, int min_size) {
    const int size = IntInRange(c, "size", min_size, 1024);
    MiniGridSpec(c, b);
    return size;
  }

 protected:
  ObjectsRoomEnv(const Config& c, int env_id, uint64_t seed)
      : MiniGridEnv(c, env_id, seed, c.Get<int>("size"), c.Get<int>("size"), /*see_through_walls=*/true),
        num_objs_(c.Get<int>("num_objs")) {}

  int num_objs_;
};

}  // namespace pp::minigrid
