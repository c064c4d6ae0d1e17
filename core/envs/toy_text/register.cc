// Toy text family: one registration line per env (ids, defaults and episode limits as EnvPool 1.2.5 has them).
#include "core/envs/toy_text/blackjack.h"
#include "core/envs/toy_text/catch.h"
#include "core/envs/toy_text/cliff_walking.h"
#include "core/envs/toy_text/frozen_lake.h"
#include "core/envs/toy_text/nchain.h"
#include "core/envs/toy_text/taxi.h"

namespace pp::toy_text {

PP_REGISTER_ENV(CatchEnv, {"Catch-v0", {}});
PP_REGISTER_ENV(FrozenLakeEnv, {"FrozenLake-v1", {}},
                {"FrozenLake8x8-v1",
                 {{"size", int64_t{8}}, {"max_episode_steps", int64_t{200}}, {"reward_threshold", 0.85}}});
PP_REGISTER_ENV(TaxiEnv, {"Taxi-v3", {}});
PP_REGISTER_ENV(NChainEnv, {"NChain-v0", {}});
PP_REGISTER_ENV(CliffWalkingEnv, {"CliffWalking-v0", {}});
PP_REGISTER_ENV(BlackjackEnv, {"Blackjack-v1", {}});

}  // namespace pp::toy_text
