#include "meters/ids.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <thread>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "journal/name.h"

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

TEST(Name, EqualTextsShareOneCopy) {
  const std::string text = "PT-BJS-HUH-5CP-01";  // Longer than a short string's inline room.
  const Name a(text);
  const Name b(std::string("PT-BJS-HUH-5CP-") + "01");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.data(), b.data());
  EXPECT_EQ(a, text);
  EXPECT_EQ(a, "PT-BJS-HUH-5CP-01");
  EXPECT_NE(a, Name("PT-BJS-HUH-5CP-02"));
  EXPECT_NE(a.data(), Name("PT-BJS-HUH-5CP-02").data());
}

TEST(Name, BehavesLikeItsText) {
  const Name empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty, Name(""));
  const Name flush("Flush");
  EXPECT_EQ(flush.size(), 5u);
  EXPECT_EQ(flush.str(), "Flush");
  EXPECT_EQ("a " + flush + " b", "a Flush b");
  const std::string& text = flush;
  EXPECT_EQ(text, "Flush");
  std::ostringstream out;
  out << flush;
  EXPECT_EQ(out.str(), "Flush");
  // Ordered by text, whatever the order they were made in.
  const std::set<Name> sorted{Name("Straight"), Name("Flush"), Name("Full House")};
  EXPECT_EQ(sorted.begin()->str(), "Flush");
  EXPECT_EQ(sorted.rbegin()->str(), "Straight");
  const std::unordered_set<Name> distinct{Name("Flush"), flush, Name("Straight")};
  EXPECT_EQ(distinct.size(), 2u);
}

TEST(Name, RunTimeTextBecomesANameOnlyWhenAskedTo) {
  static_assert(!std::is_convertible_v<std::string, Name>);
  static_assert(!std::is_convertible_v<std::string_view, Name>);
  static_assert(std::is_convertible_v<const char*, Name>);  // Literals.
  SUCCEED();
}

TEST(Name, ThreadsMakingTheSameNamesGetOneCopyEach) {
  std::vector<std::vector<const char*>> seen(4);
  std::vector<std::thread> threads;
  for (auto& mine : seen) {
    threads.emplace_back([&mine] {
      for (int i = 0; i < 500; ++i) mine.push_back(Name("name " + std::to_string(i)).data());
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& other : seen) EXPECT_EQ(other, seen.front());
}

}  // namespace
}  // namespace jackpot
