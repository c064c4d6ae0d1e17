#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "core/engine/engine.h"
#include "core/engine/env.h"

namespace pp {
namespace {

std::vector<uint32_t> Draws(uint64_t seed, int n = 4) {
  std::mt19937 g;
  SeedGenerator(g, seed);
  std::vector<uint32_t> out;
  for (int i = 0; i < n; ++i) out.push_back(g());
  return out;
}

TEST(Seeding, Below2To32IsPlainMt19937) {
  for (uint64_t s : {0ull, 1ull, 42ull, 0xffffffffull}) {
    std::mt19937 ref(static_cast<uint32_t>(s));
    std::vector<uint32_t> want;
    for (int i = 0; i < 4; ++i) want.push_back(ref());
    EXPECT_EQ(Draws(s), want) << s;
  }
}

TEST(Seeding, NoAliasingModulo2To32) {
  for (uint64_t s : {0ull, 1ull, 12345ull}) {
    EXPECT_NE(Draws(s), Draws(s + (1ull << 32))) << s;
    EXPECT_NE(Draws(s + (1ull << 32)), Draws(s + (2ull << 32))) << s;
  }
}

TEST(Seeding, EnvSeedIsSeedPlusIdIn64Bits) {
  const int64_t top = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(EnvSeed(5, 3), 8u);
  EXPECT_EQ(EnvSeed(top, 7), static_cast<uint64_t>(top) + 7u);  // no signed overflow
  EXPECT_NE(Draws(EnvSeed(top, 0)), Draws(EnvSeed(top, 1)));
}

}  // namespace
}  // namespace pp
