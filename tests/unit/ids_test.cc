#include "meters/ids.h"

#include <gtest/gtest.h>

#include <type_traits>
#include <unordered_set>

namespace jackpot {
namespace {

TEST(StrongId, ComparesAndHashesByValue) {
  EXPECT_EQ(TableId("T1"), TableId("T1"));
  EXPECT_NE(TableId("T1"), TableId("T2"));
  EXPECT_LT(RoundId(7), RoundId(8));
  const std::unordered_set<LinkId> links{LinkId("huh"), LinkId("huh"), LinkId("5cl")};
  EXPECT_EQ(links.size(), 2u);
}

TEST(StrongId, DistinctKindsDoNotMix) {
  static_assert(!std::is_convertible_v<TableId, LinkId>);
  static_assert(!std::is_convertible_v<std::string, TableId>);
  static_assert(!std::is_convertible_v<RoundId, PayoutId>);
  SUCCEED();
}

}  // namespace
}  // namespace jackpot
