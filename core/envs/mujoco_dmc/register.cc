#include "core/envs/mujoco_dmc/lqr.h"
#include "core/envs/mujoco_dmc/manipulator.h"
#include "core/envs/mujoco_dmc/quadruped.h"
#include "core/envs/mujoco_dmc/stacker.h"

namespace pp::mujoco_dmc {

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
