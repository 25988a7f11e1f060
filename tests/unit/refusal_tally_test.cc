// Refused calls gathered for the audit trail (controller/daemon/refusal_tally.h): counted by kind,
// bounded in kinds and in what a caller can make it keep.
#include "controller/daemon/refusal_tally.h"

#include <gtest/gtest.h>

#include <string>

namespace jackpot {
namespace {

TEST(RefusalTally, CountsEachKindWithItsFirstAndLastTime) {
  RefusalTally tally;
  tally.add("role_not_allowed", "'table/T1' may not call X", 10);
  tally.add("certificate_expired", "expired", 11);
  tally.add("role_not_allowed", "'table/T1' may not call X", 12);
  tally.add("role_not_allowed", "'table/T2' may not call X", 13);
  const auto drained = tally.drain();
  ASSERT_EQ(drained.size(), 3u);
  EXPECT_EQ(drained[0], (RefusalTally::Kind{"certificate_expired", "expired", 1, 11, 11}));
  EXPECT_EQ(drained[1],
            (RefusalTally::Kind{"role_not_allowed", "'table/T1' may not call X", 2, 10, 12}));
  EXPECT_EQ(drained[2],
            (RefusalTally::Kind{"role_not_allowed", "'table/T2' may not call X", 1, 13, 13}));
  EXPECT_TRUE(tally.drain().empty());
}

TEST(RefusalTally, KindsPastTheBoundAreCountedTogether) {
  RefusalTally tally;
  const std::size_t callers = RefusalTally::kMaxKinds + 10;
  for (std::size_t i = 0; i < callers; ++i) {
    tally.add("role_not_allowed", "caller " + std::to_string(1000 + i),
              static_cast<std::int64_t>(i));
  }
  tally.add("role_not_allowed", "caller 1000", 99);  // Kept apart: it came first.
  const auto drained = tally.drain();
  ASSERT_EQ(drained.size(), RefusalTally::kMaxKinds + 1);
  EXPECT_EQ(drained.front().count, 2u);
  EXPECT_EQ(drained.back(), (RefusalTally::Kind{"other", "", 10, RefusalTally::kMaxKinds,
                                                static_cast<std::int64_t>(callers - 1)}));
  std::uint64_t total = 0;
  for (const auto& kind : drained) total += kind.count;
  EXPECT_EQ(total, callers + 1);
}

TEST(RefusalTally, WhatCouldNotBeRecordedGoesBackMergedWithWhatCameSince) {
  RefusalTally tally;
  tally.add("role_not_allowed", "a", 10);
  tally.add("certificate_expired", "b", 11);
  const auto failed = tally.drain();
  tally.add("role_not_allowed", "a", 20);
  tally.restore(failed);
  const auto drained = tally.drain();
  ASSERT_EQ(drained.size(), 2u);
  EXPECT_EQ(drained[0], (RefusalTally::Kind{"certificate_expired", "b", 1, 11, 11}));
  EXPECT_EQ(drained[1], (RefusalTally::Kind{"role_not_allowed", "a", 2, 10, 20}));
  // Restored past the bound: counted as other, never lost.
  RefusalTally full;
  for (std::size_t i = 0; i < RefusalTally::kMaxKinds; ++i) {
    full.add("role_not_allowed", "c" + std::to_string(100 + i), 1);
  }
  full.restore({{"certificate_expired", "late", 3, 5, 6}, {"other", "", 4, 2, 9}});
  const auto kept = full.drain();
  ASSERT_EQ(kept.size(), RefusalTally::kMaxKinds + 1);
  EXPECT_EQ(kept.back(), (RefusalTally::Kind{"other", "", 7, 2, 9}));
}

TEST(RefusalTally, KeepsOnlyPrintableAsciiOfABoundedDetail) {
  EXPECT_EQ(RefusalTally::kept_detail(std::string("a\0b\n\x7f\xc3\xa9z", 8)), "a?b\?\?\?\?z");
  EXPECT_EQ(RefusalTally::kept_detail(std::string(5000, 'x')).size(),
            RefusalTally::kMaxDetailBytes);
}

}  // namespace
}  // namespace jackpot
