#include "core/envs/mujoco_dmc/lqr.h"
#include "core/envs/mujoco_dmc/manipulator.h"
#include "core/envs/mujoco_dmc/quadruped.h"
#include "core/envs/mujoco_dmc/stacker.h"

namespace pp::mujoco_dmc {

PP_REGISTER_ENV(LqrEnv, {"LqrLqr21-v1", {{"task_name", std::string("lqr_2_1")}}},
                {"LqrLqr62-v1", {{"task_name", std::string("lqr_6_2")}}});
PP_REGISTER_ENV(ManipulatorEnv, {"ManipulatorBringBall-v1", {{"task_name", std::string("bring_ball")}}},
                {"ManipulatorBringPeg-v1", {{"task_name", std::string("bring_peg")}}},
                {"ManipulatorInsertBall-v1", {{"task_name", std::string("insert_ball")}}},
                {"ManipulatorInsertPeg-v1", {{"task_name", std::string("insert_peg")}}});

PP_REGISTER_ENV(QuadrupedEnv, {"QuadrupedWalk-v1", {{"task_name", std::string("walk")}}},
                {"QuadrupedRun-v1", {{"task_name", std::string("run")}}},
                {"QuadrupedEscape-v1", {{"task_name", std::string("escape")}}},
                {"QuadrupedFetch-v1", {{"task_name", std::string("fetch")}}});
PP_REGISTER_ENV(StackerEnv, {"StackerStack2-v1", {{"task_name", std::string("stack_2")}}},
                {"StackerStack4-v1", {{"task_name", std::string("stack_4")}}});

}  // namespace pp::mujoco_dmc
