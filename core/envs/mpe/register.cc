// MPE family (Farama's mpe2 1.1.1): one registration line per scenario, ids after mpe2's modules.
#include "core/envs/mpe/simple.h"
#include "core/envs/mpe/simple_adversary.h"
#include "core/envs/mpe/simple_crypto.h"
#include "core/envs/mpe/simple_push.h"
#include "core/envs/mpe/simple_reference.h"
#include "core/envs/mpe/simple_speaker_listener.h"
#include "core/envs/mpe/simple_spread.h"
#include "core/envs/mpe/simple_tag.h"
#include "core/envs/mpe/simple_world_comm.h"

namespace pp::mpe {

PP_REGISTER_ENV(SimpleEnv, {"MPE/simple-v3", {}});
PP_REGISTER_ENV(SimpleSpreadEnv, {"MPE/simple_spread-v3", {}});
PP_REGISTER_ENV(SimpleReferenceEnv, {"MPE/simple_reference-v3", {}});
PP_REGISTER_ENV(SimpleAdversaryEnv, {"MPE/simple_adversary-v3", {}});
PP_REGISTER_ENV(SimplePushEnv, {"MPE/simple_push-v3", {}});
PP_REGISTER_ENV(SimpleTagEnv, {"MPE/simple_tag-v3", {}});
PP_REGISTER_ENV(SimpleSpeakerListenerEnv, {"MPE/simple_speaker_listener-v4", {}});
PP_REGISTER_ENV(SimpleCryptoEnv, {"MPE/simple_crypto-v3", {}});
PP_REGISTER_ENV(SimpleWorldCommEnv, {"MPE/simple_world_comm-v3", {}});

}  // namespace pp::mpe
