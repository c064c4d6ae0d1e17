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
// CliffWalking-v1 adds gymnasium's slippery option; tabular/CliffWalking-v0 is gymnasium's functional (jax) version
// of the same rules. EnvPool 1.2.5 registers all four on its one CliffWalking spec, and so does this.
PP_REGISTER_ENV(CliffWalkingEnv, {"CliffWalking-v0", {}}, {"CliffWalking-v1", {}},
                {"CliffWalkingSlippery-v1", {{"is_slippery", true}}}, {"tabular/CliffWalking-v0", {}});
// tabular/Blackjack-v0: gymnasium's functional (jax) Blackjack, whose defaults are Sutton & Barto's rules.
PP_REGISTER_ENV(BlackjackEnv, {"Blackjack-v1", {}}, {"tabular/Blackjack-v0", {{"sab", true}, {"natural", false}}});

}  // namespace pp::toy_text
