// The full seven-card census: 133,784,560 hands on every core (label `long`).
#include "tests/support/hand_census.h"

#include <gtest/gtest.h>

#include <thread>

namespace jackpot {
namespace {

TEST(HandEval, SevenCardCensus) {
  const auto counts = testing::seven_card_census(std::max(1U, std::thread::hardware_concurrency()));
  const std::array<std::uint64_t, 10> expected = {23'294'460, 58'627'800, 31'433'400, 6'461'620,
                                                  6'180'020,  4'047'644,  3'473'184,  224'848,
                                                  37'260,     4'324};
  EXPECT_EQ(counts, expected);
}

}  // namespace
}  // namespace jackpot
