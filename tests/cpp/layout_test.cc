#include "core/engine/layout.h"

#include <gtest/gtest.h>

namespace pp {
namespace {

Spec TwoObsSpec() {
  Spec s;
  SpecBuilder b(&s);
  b.Obs("pos", DType::kFloat32, {3});
  b.Obs("img", DType::kUInt8, {5, 7});
  b.Info("lives", DType::kInt32);
  b.DiscreteAction(4);
  b.MaxPlayers(2);
  return s;
}

TEST(Layout, OrderNamesAndRowBytes) {
  Layout L(TwoObsSpec(), 3, 2, AutoReset::kNextStep);
  std::vector<std::string> names;
  for (const auto& e : L.entries) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"obs:pos", "obs:img", "info:lives", "reward", "terminated", "truncated",
                                             "env_id", "elapsed_step", "players.env_id"}));
  EXPECT_EQ(L.entries[0].row_bytes, 12u);
  EXPECT_EQ(L.entries[1].row_bytes, 35u);
  EXPECT_EQ(L.player_rows, 6);
  EXPECT_EQ(L.final_begin, -1);
}

TEST(Layout, EntriesAre64ByteAlignedAndDisjoint) {
  Layout L(TwoObsSpec(), 5, 2, AutoReset::kSameStep);
  size_t end = 0;
  for (const auto& e : L.entries) {
    EXPECT_EQ(e.offset % 64, 0u) << e.name;
    EXPECT_GE(e.offset, end) << e.name;
    end = e.offset + e.row_bytes * static_cast<size_t>(e.per_player ? L.player_rows : L.env_rows);
  }
  EXPECT_LE(end, L.block_bytes);
  EXPECT_EQ(L.block_bytes % 64, 0u);
}

TEST(Layout, SameStepAddsFinalCopies) {
  Layout L(TwoObsSpec(), 2, 2, AutoReset::kSameStep);
  ASSERT_GE(L.final_begin, 0);
  std::vector<std::string> finals;
  for (size_t i = static_cast<size_t>(L.final_begin); i < L.entries.size(); ++i) finals.push_back(L.entries[i].name);
  EXPECT_EQ(finals,
            (std::vector<std::string>{"final:obs:pos", "final:obs:img", "final:info:lives", "final:elapsed_step"}));
}

TEST(BlockPool, RecyclesBlocksAndAlignsThem) {
  BlockPool pool(100);
  uint8_t* a = pool.Acquire();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  pool.Release(a);
  EXPECT_EQ(pool.Acquire(), a);
  pool.Release(a);
}

}  // namespace
}  // namespace pp
