// MPE family (Farama's mpe2 1.1.1): one registration line per scenario, ids after mpe2's modules.
#include "core/envs/mpe/simple.h"
#include "core/envs/mpe/simple_reference.h"
#include "core/envs/mpe/simple_spread.h"

namespace pp::mpe {

PP_REGISTER_ENV(SimpleEnv, {"MPE/simple-v3", {}});
PP_REGISTER_ENV(SimpleSpreadEnv, {"MPE/simple_spread-v3", {}});
PP_REGISTER_ENV(SimpleReferenceEnv, {"MPE/simple_reference-v3", {}});

}  // namespace pp::mpe
