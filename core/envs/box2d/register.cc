// Box2D family: one registration line per env type (EnvPool 1.2.5's ids; docs/box2d.md).
#include "core/envs/box2d/bipedal_walker.h"
#include "core/envs/box2d/car_racing.h"
#include "core/envs/box2d/lunar_lander.h"

namespace pp::box2d {

PP_REGISTER_ENV(LunarLanderEnv, {"LunarLander-v2", {}}, {"LunarLander-v3", {}},
                {"LunarLanderContinuous-v2", {{"continuous", true}}},
                {"LunarLanderContinuous-v3", {{"continuous", true}}});

PP_REGISTER_ENV(BipedalWalkerEnv, {"BipedalWalker-v3", {}},
                {"BipedalWalkerHardcore-v3", {{"hardcore", true}, {"max_episode_steps", int64_t{2000}}}});

PP_REGISTER_ENV(CarRacingEnv, {"CarRacing-v2", {}}, {"CarRacing-v3", {}});

}  // namespace pp::box2d
