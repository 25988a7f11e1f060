// The round-id rules (controller/engine/round_counter.h), row by row: which ids exist, which round
// a command names, and what an OpenRound means at each state of the table's counter.
#include "controller/engine/round_counter.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace jackpot {
namespace {

constexpr std::uint64_t kTop = kMaxRoundId;

TEST(RoundCounter, RoundIdsAreOneToTwoToTheSixtyThreeMinusOne) {
  static_assert(kMaxRoundId == 9'223'372'036'854'775'807ULL);
  const std::vector<std::pair<std::uint64_t, bool>> rows = {
      {0, false},   {1, true},         {2, true},           {kTop - 1, true},
      {kTop, true}, {kTop + 1, false}, {1ULL << 63, false}, {~0ULL, false},
  };
  for (const auto& [id, valid] : rows) EXPECT_EQ(round_id_in_range(id), valid) << id;
}

TEST(RoundCounter, OpenRoundRuleForEveryStateOfTheCounter) {
  using R = OpenRoundRule;
  using P = RoundPhase;
  struct Row {
    const char* what;
    RoundCounter counter;
    std::uint64_t id;
    R expected;
  };
  const std::vector<Row> rows = {
      {"a table that never played opens round 1", {0, std::nullopt}, 1, R::open_new},
      {"... or any id up to the jump", {0, std::nullopt}, kMaxRoundIdJump, R::open_new},
      {"... but not one past it", {0, std::nullopt}, kMaxRoundIdJump + 1, R::jump_too_far},
      {"... nor 2^63-1", {0, std::nullopt}, kTop, R::jump_too_far},
      {"the next id after a settled round", {10, P::settled}, 11, R::open_new},
      {"the next id after a voided round", {10, P::voided}, 11, R::open_new},
      {"a jump of exactly the limit", {10, P::settled}, 10 + kMaxRoundIdJump, R::open_new},
      {"a jump one past the limit", {10, P::settled}, 11 + kMaxRoundIdJump, R::jump_too_far},
      {"2^63-1 after round 10", {10, P::voided}, kTop, R::jump_too_far},
      {"the latest round again while OPEN", {10, P::open}, 10, R::replay},
      {"the latest round again once LOCKED", {10, P::locked}, 10, R::not_latest_open},
      {"the latest round again once SETTLED", {10, P::settled}, 10, R::not_latest_open},
      {"the latest round again once VOIDED", {10, P::voided}, 10, R::not_latest_open},
      {"an id below the latest", {10, P::settled}, 9, R::not_increasing},
      {"an id far below the latest", {10, P::open}, 1, R::not_increasing},
      {"a new id while the latest is OPEN", {10, P::open}, 11, R::previous_open},
      {"a new id while the latest is LOCKED", {10, P::locked}, 11, R::previous_open},
      {"a far id while the latest is LOCKED", {10, P::locked}, kTop, R::previous_open},
      {"after a re-base to next id 1: round 1", {0, std::nullopt}, 1, R::open_new},
      {"after a re-base to next id 500: round 500", {499, std::nullopt}, 500, R::open_new},
      {"after a re-base to next id 500: round 499", {499, std::nullopt}, 499, R::not_increasing},
      {"after a re-base to next id 500: a jump past the limit",
       {499, std::nullopt},
       500 + kMaxRoundIdJump,
       R::jump_too_far},
      {"near the top, the next id", {kTop - 1, P::settled}, kTop, R::open_new},
  };
  for (const Row& row : rows)
    EXPECT_EQ(open_round_rule(row.counter, row.id), row.expected) << row.what;
}

TEST(RoundCounter, ARebaseWaitsForTheLatestRoundToFinish) {
  using P = RoundPhase;
  const std::vector<std::pair<RoundCounter, bool>> rows = {
      {{0, std::nullopt}, true}, {{10, P::open}, false},  {{10, P::locked}, false},
      {{10, P::settled}, true},  {{10, P::voided}, true}, {{499, std::nullopt}, true},
  };
  for (const auto& [counter, allowed] : rows) {
    EXPECT_EQ(rebase_allowed(counter), allowed) << counter.base;
  }
  // After a re-base to next id n, round n opens, n - 1 does not, and the jump counts from n - 1.
  for (const std::uint64_t next : {std::uint64_t{1}, std::uint64_t{500}, kTop}) {
    const RoundCounter counter = rebased_counter(next);
    EXPECT_EQ(counter.base, next - 1);
    EXPECT_FALSE(counter.latest_phase);
    EXPECT_EQ(open_round_rule(counter, next), OpenRoundRule::open_new) << next;
    if (next > 1) {
      EXPECT_EQ(open_round_rule(counter, next - 1), OpenRoundRule::not_increasing);
    }
  }
}

TEST(RoundCounter, CommandRoundRuleNamesTheLatestTwoRoundsOnly) {
  using C = CommandRoundRule;
  struct Row {
    const char* what;
    std::uint64_t base;
    std::optional<std::uint64_t> latest;
    std::optional<std::uint64_t> previous;
    std::uint64_t id;
    C expected;
  };
  const std::vector<Row> rows = {
      {"the latest round", 10, 10, 7, 10, C::latest},
      {"the round before it", 10, 10, 7, 7, C::previous},
      {"between the two (never opened, but behind)", 10, 10, 7, 8, C::superseded},
      {"two or more behind", 10, 10, 7, 6, C::superseded},
      {"far behind", 10, 10, 9, 1, C::superseded},
      {"above the latest", 10, 10, 9, 11, C::never_opened},
      {"far above the latest", 10, 10, 9, kTop, C::never_opened},
      {"a table that never played", 0, std::nullopt, std::nullopt, 1, C::never_opened},
      {"after a re-base, below the next id", 499, std::nullopt, std::nullopt, 12, C::superseded},
      {"after a re-base, at the next id", 499, std::nullopt, std::nullopt, 500, C::never_opened},
      {"the first round after a re-base", 500, 500, std::nullopt, 500, C::latest},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(command_round_rule(row.base, row.latest, row.previous, row.id), row.expected)
        << row.what;
  }
}

}  // namespace
}  // namespace jackpot
