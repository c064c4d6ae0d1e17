// Classic control family: one registration line per env.
#include "core/envs/classic_control/acrobot.h"
#include "core/envs/classic_control/cartpole.h"
#include "core/envs/classic_control/mountain_car.h"
#include "core/envs/classic_control/mountain_car_continuous.h"
#include "core/envs/classic_control/pendulum.h"

namespace pp::classic_control {

PP_REGISTER_ENV(CartPoleEnv<false>, {"CartPole-v0", {{"max_episode_steps", 200}, {"reward_threshold", 195.0}}},
                {"CartPole-v1", {{"max_episode_steps", 500}, {"reward_threshold", 475.0}}});
PP_REGISTER_ENV(CartPoleEnv<true>, {"phys2d/CartPole-v0", {{"max_episode_steps", 200}, {"reward_threshold", 195.0}}},
                {"phys2d/CartPole-v1", {{"max_episode_steps", 500}, {"reward_threshold", 475.0}}});
PP_REGISTER_ENV(MountainCarEnv, {"MountainCar-v0", {}});
PP_REGISTER_ENV(MountainCarContinuousEnv, {"MountainCarContinuous-v0", {}});
PP_REGISTER_ENV(PendulumEnv<false>, {"Pendulum-v0", {{"version", 0}}}, {"Pendulum-v1", {{"version", 1}}});
PP_REGISTER_ENV(PendulumEnv<true>, {"phys2d/Pendulum-v0", {}});
PP_REGISTER_ENV(AcrobotEnv, {"Acrobot-v1", {}});

}  // namespace pp::classic_control
