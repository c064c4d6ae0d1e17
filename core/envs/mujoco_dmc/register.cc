// DeepMind Control Suite family: one env type per dm_control domain, one task id per line (EnvPool's ids; each
// sets the domain's task_name and, where dm_control edits the model in Python, the model builder's arguments).
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

PP_REGISTER_ENV(CartpoleEnv, {"CartpoleBalance-v1", {{"task_name", std::string("balance")}}},
                {"CartpoleBalanceSparse-v1", {{"task_name", std::string("balance_sparse")}}},
                {"CartpoleSwingup-v1", {{"task_name", std::string("swingup")}}},
                {"CartpoleSwingupSparse-v1", {{"task_name", std::string("swingup_sparse")}}},
                {"CartpoleTwoPoles-v1",
                 {{"task_name", std::string("two_poles")},
                  {"xml_file", std::string("dm_control:suite.cartpole.get_model_and_assets(num_poles=2)")}}},
                {"CartpoleThreePoles-v1",
                 {{"task_name", std::string("three_poles")},
                  {"xml_file", std::string("dm_control:suite.cartpole.get_model_and_assets(num_poles=3)")}}});
PP_REGISTER_ENV(CheetahEnv, {"CheetahRun-v1", {{"task_name", std::string("run")}}});
PP_REGISTER_ENV(HopperEnv, {"HopperStand-v1", {{"task_name", std::string("stand")}}},
                {"HopperHop-v1", {{"task_name", std::string("hop")}}});
PP_REGISTER_ENV(WalkerEnv, {"WalkerStand-v1", {{"task_name", std::string("stand")}}},
                {"WalkerWalk-v1", {{"task_name", std::string("walk")}}},
                {"WalkerRun-v1", {{"task_name", std::string("run")}}});
PP_REGISTER_ENV(HumanoidEnv<SuiteHumanoid>, {"HumanoidStand-v1", {{"task_name", std::string("stand")}}},
                {"HumanoidWalk-v1", {{"task_name", std::string("walk")}}},
                {"HumanoidRun-v1", {{"task_name", std::string("run")}}},
                {"HumanoidRunPureState-v1", {{"task_name", std::string("run_pure_state")}}});
PP_REGISTER_ENV(HumanoidEnv<CmuHumanoid>, {"HumanoidCMUStand-v1", {{"task_name", std::string("stand")}}},
                {"HumanoidCMUWalk-v1", {{"task_name", std::string("walk")}}},
                {"HumanoidCMURun-v1", {{"task_name", std::string("run")}}});
PP_REGISTER_ENV(SwimmerEnv, {"SwimmerSwimmer6-v1", {{"task_name", std::string("swimmer6")}}},
                {"SwimmerSwimmer15-v1",
                 {{"task_name", std::string("swimmer15")},
                  {"xml_file", std::string("dm_control:suite.swimmer.get_model_and_assets(n_joints=15)")}}});
PP_REGISTER_ENV(FishEnv, {"FishUpright-v1", {{"task_name", std::string("upright")}}},
                {"FishSwim-v1", {{"task_name", std::string("swim")}}});

PP_REGISTER_ENV(AcrobotEnv, {"AcrobotSwingup-v1", {{"task_name", std::string("swingup")}}},
                {"AcrobotSwingupSparse-v1", {{"task_name", std::string("swingup_sparse")}}});
PP_REGISTER_ENV(BallInCupEnv, {"BallInCupCatch-v1", {{"task_name", std::string("catch")}}});
PP_REGISTER_ENV(FingerEnv, {"FingerSpin-v1", {{"task_name", std::string("spin")}}},
                {"FingerTurnEasy-v1", {{"task_name", std::string("turn_easy")}}},
                {"FingerTurnHard-v1", {{"task_name", std::string("turn_hard")}}});
PP_REGISTER_ENV(PendulumEnv, {"PendulumSwingup-v1", {{"task_name", std::string("swingup")}}});
PP_REGISTER_ENV(PointMassEnv, {"PointMassEasy-v1", {{"task_name", std::string("easy")}}},
                {"PointMassHard-v1", {{"task_name", std::string("hard")}}});
PP_REGISTER_ENV(ReacherEnv, {"ReacherEasy-v1", {{"task_name", std::string("easy")}}},
                {"ReacherHard-v1", {{"task_name", std::string("hard")}}});
PP_REGISTER_ENV(ManipulatorEnv,
                {"ManipulatorBringBall-v1",
                 {{"task_name", std::string("bring_ball")},
                  {"xml_file", std::string("dm_control:suite.manipulator.make_model(use_peg=False, insert=False)")}}},
                {"ManipulatorBringPeg-v1",
                 {{"task_name", std::string("bring_peg")},
                  {"xml_file", std::string("dm_control:suite.manipulator.make_model(use_peg=True, insert=False)")}}},
                {"ManipulatorInsertBall-v1",
                 {{"task_name", std::string("insert_ball")},
                  {"xml_file", std::string("dm_control:suite.manipulator.make_model(use_peg=False, insert=True)")}}},
                {"ManipulatorInsertPeg-v1",
                 {{"task_name", std::string("insert_peg")},
                  {"xml_file", std::string("dm_control:suite.manipulator.make_model(use_peg=True, insert=True)")}}});
PP_REGISTER_ENV(
    QuadrupedEnv,
    {"QuadrupedWalk-v1",
     {{"task_name", std::string("walk")},
      {"xml_file", std::string("dm_control:suite.quadruped.make_model(floor_size=10)")}}},
    {"QuadrupedRun-v1",
     {{"task_name", std::string("run")},
      {"xml_file", std::string("dm_control:suite.quadruped.make_model(floor_size=100)")}}},
    {"QuadrupedEscape-v1",
     {{"task_name", std::string("escape")},
      {"xml_file",
       std::string("dm_control:suite.quadruped.make_model(floor_size=40, terrain=True, rangefinders=True)")}}},
    {"QuadrupedFetch-v1",
     {{"task_name", std::string("fetch")},
      {"xml_file", std::string("dm_control:suite.quadruped.make_model(walls_and_ball=True)")}}});
PP_REGISTER_ENV(DogEnv,
                {"DogStand-v1",
                 {{"task_name", std::string("stand")},
                  {"xml_file", std::string("dm_control:suite.dog.get_model_and_assets(floor_size=15)")}}},
                {"DogWalk-v1",
                 {{"task_name", std::string("walk")},
                  {"xml_file", std::string("dm_control:suite.dog.get_model_and_assets(floor_size=15)")}}},
                {"DogTrot-v1",
                 {{"task_name", std::string("trot")},
                  {"xml_file", std::string("dm_control:suite.dog.get_model_and_assets(floor_size=45)")}}},
                {"DogRun-v1",
                 {{"task_name", std::string("run")},
                  {"xml_file", std::string("dm_control:suite.dog.get_model_and_assets(floor_size=135)")}}},
                {"DogFetch-v1",
                 {{"task_name", std::string("fetch")},
                  {"xml_file", std::string("dm_control:suite.dog.get_model_and_assets(remove_ball=False)")}}});
PP_REGISTER_ENV(StackerEnv,
                {"StackerStack2-v1",
                 {{"task_name", std::string("stack_2")},
                  {"xml_file", std::string("dm_control:suite.stacker.make_model(n_boxes=2)")}}},
                {"StackerStack4-v1",
                 {{"task_name", std::string("stack_4")},
                  {"xml_file", std::string("dm_control:suite.stacker.make_model(n_boxes=4)")}}});
PP_REGISTER_ENV(
    LqrEnv,
    {"LqrLqr21-v1",
     {{"task_name", std::string("lqr_2_1")},
      {"xml_file", std::string("dm_control:suite.lqr.get_model_and_assets(n_bodies=2, n_actuators=1, random=0)")}}},
    {"LqrLqr62-v1",
     {{"task_name", std::string("lqr_6_2")},
      {"xml_file", std::string("dm_control:suite.lqr.get_model_and_assets(n_bodies=6, n_actuators=2, random=0)")}}});

}  // namespace pp::mujoco_dmc
