// Classic control family: one registration line per env.
#include "core/envs/classic_control/cartpole.h"

namespace pp::classic_control {

PP_REGISTER_ENV(CartPoleEnv, {"CartPole-v0", {{"max_episode_steps", 200}, {"reward_threshold", 195.0}}},
                {"CartPole-v1", {{"max_episode_steps", 500}, {"reward_threshold", 475.0}}});

}  // namespace pp::classic_control
