// DeepMind Control Suite family: one env type per dm_control domain, one task id per line (EnvPool's ids; each
// sets the domain's task_name and, where dm_control edits the model in Python, the model builder's arguments).
#include "core/envs/mujoco_dmc/acrobot.h"
#include "core/envs/mujoco_dmc/ball_in_cup.h"
#include "core/envs/mujoco_dmc/cartpole.h"
#include "core/envs/mujoco_dmc/finger.h"
#include "core/envs/mujoco_dmc/pendulum.h"
#include "core/envs/mujoco_dmc/point_mass.h"
#include "core/envs/mujoco_dmc/reacher.h"

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

}  // namespace pp::mujoco_dmc
