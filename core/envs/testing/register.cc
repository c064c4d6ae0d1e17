// Testing family: engine tests and overhead benchmarks.
#include "core/envs/testing/dummy.h"

namespace pp::testing {

PP_REGISTER_ENV(DummyEnv, {"Dummy-v0", {}});
PP_REGISTER_ENV(TwoPlayerEnv, {"TwoPlayer-v0", {}});

}  // namespace pp::testing
