// DeepMind Control Suite family: one env type per dm_control domain, one registration line per domain. The ids are
// the domain's own task list (its Tasks(): EnvPool's id, dm_control's task_name and, where dm_control edits the
// model in Python, the model builder's arguments).
#include "core/envs/mujoco_dmc/acrobot.h"
#include "core/envs/mujoco_dmc/ball_in_cup.h"
#include "core/envs/mujoco_dmc/cartpole.h"
#include "core/envs/mujoco_dmc/cheetah.h"
#include "core/envs/mujoco_dmc/dog.h"
#include "core/envs/mujoco_dmc/finger.h"
#include "core/envs/mujoco_dmc/fish.h"
#include "core/envs/mujoco_dmc/hopper.h"
#include "core/envs/mujoco_dmc/humanoid.h"
#include "core/envs/mujoco_dmc/lqr.h"
#include "core/envs/mujoco_dmc/manipulator.h"
#include "core/envs/mujoco_dmc/pendulum.h"
#include "core/envs/mujoco_dmc/point_mass.h"
#include "core/envs/mujoco_dmc/quadruped.h"
#include "core/envs/mujoco_dmc/reacher.h"
#include "core/envs/mujoco_dmc/stacker.h"
#include "core/envs/mujoco_dmc/swimmer.h"
#include "core/envs/mujoco_dmc/walker.h"

namespace pp::mujoco_dmc {

PP_REGISTER_DMC_DOMAIN(CartpoleEnv);
PP_REGISTER_DMC_DOMAIN(CheetahEnv);
PP_REGISTER_DMC_DOMAIN(HopperEnv);
PP_REGISTER_DMC_DOMAIN(WalkerEnv);
PP_REGISTER_DMC_DOMAIN(HumanoidEnv<SuiteHumanoid>);
PP_REGISTER_DMC_DOMAIN(HumanoidEnv<CmuHumanoid>);
PP_REGISTER_DMC_DOMAIN(SwimmerEnv);
PP_REGISTER_DMC_DOMAIN(FishEnv);
PP_REGISTER_DMC_DOMAIN(AcrobotEnv);
PP_REGISTER_DMC_DOMAIN(BallInCupEnv);
PP_REGISTER_DMC_DOMAIN(FingerEnv);
PP_REGISTER_DMC_DOMAIN(PendulumEnv);
PP_REGISTER_DMC_DOMAIN(PointMassEnv);
PP_REGISTER_DMC_DOMAIN(ReacherEnv);
PP_REGISTER_DMC_DOMAIN(ManipulatorEnv);
PP_REGISTER_DMC_DOMAIN(QuadrupedEnv);
PP_REGISTER_DMC_DOMAIN(DogEnv);
PP_REGISTER_DMC_DOMAIN(StackerEnv);
PP_REGISTER_DMC_DOMAIN(LqrEnv);

}  // namespace pp::mujoco_dmc
