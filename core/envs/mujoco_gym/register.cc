// MuJoCo (gymnasium suite) family: one registration line per env type (-v4 and -v5 are separate types because
// their defaults, info fields and a few rules differ; see each header). The old gym ids (-v2/-v3) are tasks of the
// -v4 types, as EnvPool 1.2.5 registers them: the same XML files, rules and defaults as -v4, except that Ant-v3
// and Humanoid-v3 observe (Ant: and pay for) the contact forces, EnvPool's use_contact_force=True. All of them have
// EnvPool's post_constraint=False: EnvPool runs mj_rnePostConstraint for -v5 only, so there the contact forces
// (cfrc_ext) are not recomputed after a step, as with gym's mujoco-py envs on MuJoCo 2.
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

PP_REGISTER_ENV(AntEnv<4>, {"Ant-v4", {}}, {"Ant-v3", {{"use_contact_force", true}, {"post_constraint", false}}});
PP_REGISTER_ENV(AntEnv<5>, {"Ant-v5", {}});
PP_REGISTER_ENV(HalfCheetahEnv<4>, {"HalfCheetah-v4", {}}, {"HalfCheetah-v3", {{"post_constraint", false}}});
PP_REGISTER_ENV(HalfCheetahEnv<5>, {"HalfCheetah-v5", {}});
PP_REGISTER_ENV(HopperEnv<4>, {"Hopper-v4", {}}, {"Hopper-v3", {{"post_constraint", false}}});
PP_REGISTER_ENV(HopperEnv<5>, {"Hopper-v5", {}});
PP_REGISTER_ENV(HumanoidEnv<4>, {"Humanoid-v4", {}},
                {"Humanoid-v3", {{"use_contact_force", true}, {"post_constraint", false}}});
PP_REGISTER_ENV(HumanoidEnv<5>, {"Humanoid-v5", {}});
PP_REGISTER_ENV(HumanoidStandupEnv<4>, {"HumanoidStandup-v4", {}},
                {"HumanoidStandup-v2", {{"post_constraint", false}}});
PP_REGISTER_ENV(HumanoidStandupEnv<5>, {"HumanoidStandup-v5", {}});
PP_REGISTER_ENV(InvertedPendulumEnv<4>, {"InvertedPendulum-v4", {}},
                {"InvertedPendulum-v2", {{"post_constraint", false}}});
PP_REGISTER_ENV(InvertedPendulumEnv<5>, {"InvertedPendulum-v5", {}});
PP_REGISTER_ENV(InvertedDoublePendulumEnv<4>, {"InvertedDoublePendulum-v4", {}},
                {"InvertedDoublePendulum-v2", {{"post_constraint", false}}});
PP_REGISTER_ENV(InvertedDoublePendulumEnv<5>, {"InvertedDoublePendulum-v5", {}});
PP_REGISTER_ENV(PusherEnv<4>, {"Pusher-v4", {}}, {"Pusher-v2", {{"post_constraint", false}}});
PP_REGISTER_ENV(PusherEnv<5>, {"Pusher-v5", {}});
PP_REGISTER_ENV(ReacherEnv<4>, {"Reacher-v4", {}}, {"Reacher-v2", {{"post_constraint", false}}});
PP_REGISTER_ENV(ReacherEnv<5>, {"Reacher-v5", {}});
PP_REGISTER_ENV(SwimmerEnv<4>, {"Swimmer-v4", {}}, {"Swimmer-v3", {{"post_constraint", false}}});
PP_REGISTER_ENV(SwimmerEnv<5>, {"Swimmer-v5", {}});
PP_REGISTER_ENV(Walker2dEnv<4>, {"Walker2d-v4", {}}, {"Walker2d-v3", {{"post_constraint", false}}});
PP_REGISTER_ENV(Walker2dEnv<5>, {"Walker2d-v5", {}});

}  // namespace pp::mujoco_gym
