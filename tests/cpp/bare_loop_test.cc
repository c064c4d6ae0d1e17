#include "core/bench/bare_loop.h"

#include <gtest/gtest.h>

#include <set>

namespace pp {
namespace {

// The physical limit's loop must not feed an env a short repeating cycle of actions (the CPU learns the env's
// branches from it), nor one fixed action per env when num_envs divides the number of sets.
TEST(BareLoop, EveryEnvGoesThroughEveryActionSet) {
  for (int num_envs : {1, 5, 64, 256}) {
    for (int e : {0, 1, num_envs - 1}) {
      std::set<int> seen;
      for (int64_t visit = 0; visit < bare::kActionSets; ++visit) seen.insert(bare::ActionSetOf(visit, e));
      EXPECT_EQ(static_cast<int>(seen.size()), bare::kActionSets) << "num_envs " << num_envs << ", env " << e;
    }
  }
  EXPECT_GE(bare::kActionSets, 4096);
}

TEST(BareLoop, EnvsAtTheSameVisitTakeDifferentSets) {
  std::set<int> at_visit_3;
  for (int e = 0; e < 256; ++e) at_visit_3.insert(bare::ActionSetOf(3, e));
  EXPECT_EQ(at_visit_3.size(), 256u);
}

}  // namespace
}  // namespace pp
