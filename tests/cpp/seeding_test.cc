#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <sstream>

#include "core/engine/engine.h"
#include "core/engine/env.h"

namespace pp {
namespace {

std::vector<uint32_t> Draws(uint64_t seed, int n = 4) {
  Generator g;
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

// pp::Generator stores mt19937's state in 32-bit words: its draws, every distribution's values (across several
// refills of the 624 words), its text form (the snapshots' generator words) and seed_seq seeding are std::mt19937's.
TEST(Seeding, GeneratorIsMt19937DrawForDraw) {
  std::seed_seq seq_a{7u, 9u}, seq_b{7u, 9u};
  for (int variant = 0; variant < 2; ++variant) {
    std::mt19937 ref(12345u);
    Generator g(12345u);
    if (variant == 1) {
      ref.seed(seq_a);
      g.seed(seq_b);
    }
    for (int i = 0; i < 3000; ++i) {
      ASSERT_EQ(g(), ref()) << i;
      ASSERT_EQ(std::uniform_int_distribution<int>(-1, 1)(g), std::uniform_int_distribution<int>(-1, 1)(ref)) << i;
      ASSERT_EQ(std::uniform_int_distribution<int64_t>(0, int64_t{1} << 40)(g),
                std::uniform_int_distribution<int64_t>(0, int64_t{1} << 40)(ref))
          << i;
      ASSERT_EQ(std::uniform_real_distribution<double>(-0.05, 0.05)(g),
                std::uniform_real_distribution<double>(-0.05, 0.05)(ref))
          << i;
      ASSERT_EQ(std::normal_distribution<double>(0.0, 1.0)(g), std::normal_distribution<double>(0.0, 1.0)(ref)) << i;
    }
    std::ostringstream a, b;
    a << g;
    b << ref;
    EXPECT_EQ(a.str(), b.str());
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
