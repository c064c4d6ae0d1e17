// DeepMind Control Suite family: one env type per dm_control domain, one task id per line (EnvPool's ids; each
// sets the domain's task_name and, where dm_control edits the model in Python, the model builder's arguments).
#include "core/envs/mujoco_dmc/cartpole.h"

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

}  // namespace pp::mujoco_dmc
