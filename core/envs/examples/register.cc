// The example family of docs/adding-an-env.md: one registration line per env type; each {id, overrides} pair
// is a task id with its own config defaults.
#include "core/envs/examples/corridor.h"

namespace pp::examples {

PP_REGISTER_ENV(CorridorEnv, {"Corridor-v0", {}},
                {"CorridorLong-v0", {{"length", int64_t{32}}, {"max_episode_steps", int64_t{400}}}});

}  // namespace pp::examples
