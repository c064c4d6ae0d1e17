#include "core/envs/mujoco_dmc/manipulator.h"

namespace pp::mujoco_dmc {

PP_REGISTER_ENV(ManipulatorEnv, {"ManipulatorBringBall-v1", {{"task_name", std::string("bring_ball")}}},
                {"ManipulatorBringPeg-v1", {{"task_name", std::string("bring_peg")}}},
                {"ManipulatorInsertBall-v1", {{"task_name", std::string("insert_ball")}}},
                {"ManipulatorInsertPeg-v1", {{"task_name", std::string("insert_peg")}}});

}  // namespace pp::mujoco_dmc
