#include "meters/invariant.h"

#include <gtest/gtest.h>

namespace jackpot {
namespace {

TEST(InvariantDeathTest, AbortsWithTheConditionAndMessage) {
  const int balance = -1;
  EXPECT_DEATH(
      JACKPOT_INVARIANT(balance >= 0, "meter below zero"),
      "invariant broken at .*invariant_test.cc:[0-9]+: balance >= 0 \\(meter below zero\\)");
}

TEST(Invariant, PassesSilentlyWhenTrue) {
  const int balance = 0;
  JACKPOT_INVARIANT(balance >= 0, "meter below zero");
  SUCCEED();
}

}  // namespace
}  // namespace jackpot
