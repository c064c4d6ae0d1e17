// MuJoCo (gymnasium suite) family: one registration line per env type (-v4 and -v5 are separate types because
// their defaults, info fields and a few rules differ; see each header).
#include "core/envs/mujoco_gym/ant.h"
#include "core/envs/mujoco_gym/half_cheetah.h"
#include "core/envs/mujoco_gym/humanoid.h"
#include "core/envs/mujoco_gym/humanoid_standup.h"
#include "core/envs/mujoco_gym/inverted_double_pendulum.h"
#include "core/envs/mujoco_gym/inverted_pendulum.h"
#include "core/envs/mujoco_gym/planar_walker.h"
#include "core/envs/mujoco_gym/pusher.h"
#include "core/envs/mujoco_gym/reacher.h"
#include "core/envs/mujoco_gym/swimmer.h"

namespace pp::mujoco_gym {

PP_REGISTER_ENV(AntEnv<4>, {"Ant-v4", {}});
PP_REGISTER_ENV(AntEnv<5>, {"Ant-v5", {}});
PP_REGISTER_ENV(HalfCheetahEnv<4>, {"HalfCheetah-v4", {}});
PP_REGISTER_ENV(HalfCheetahEnv<5>, {"HalfCheetah-v5", {}});
PP_REGISTER_ENV(HopperEnv<4>, {"Hopper-v4", {}});
PP_REGISTER_ENV(HopperEnv<5>, {"Hopper-v5", {}});
PP_REGISTER_ENV(HumanoidEnv<4>, {"Humanoid-v4", {}});
PP_REGISTER_ENV(HumanoidEnv<5>, {"Humanoid-v5", {}});
PP_REGISTER_ENV(HumanoidStandupEnv<4>, {"HumanoidStandup-v4", {}});
PP_REGISTER_ENV(HumanoidStandupEnv<5>, {"HumanoidStandup-v5", {}});
PP_REGISTER_ENV(InvertedPendulumEnv<4>, {"InvertedPendulum-v4", {}});
PP_REGISTER_ENV(InvertedPendulumEnv<5>, {"InvertedPendulum-v5", {}});
PP_REGISTER_ENV(InvertedDoublePendulumEnv<4>, {"InvertedDoublePendulum-v4", {}});
PP_REGISTER_ENV(InvertedDoublePendulumEnv<5>, {"InvertedDoublePendulum-v5", {}});
PP_REGISTER_ENV(PusherEnv<4>, {"Pusher-v4", {}});
PP_REGISTER_ENV(PusherEnv<5>, {"Pusher-v5", {}});
PP_REGISTER_ENV(ReacherEnv<4>, {"Reacher-v4", {}});
PP_REGISTER_ENV(ReacherEnv<5>, {"Reacher-v5", {}});
PP_REGISTER_ENV(SwimmerEnv<4>, {"Swimmer-v4", {}});
PP_REGISTER_ENV(SwimmerEnv<5>, {"Swimmer-v5", {}});
PP_REGISTER_ENV(Walker2dEnv<4>, {"Walker2d-v4", {}});
PP_REGISTER_ENV(Walker2dEnv<5>, {"Walker2d-v5", {}});

}  // namespace pp::mujoco_gym
