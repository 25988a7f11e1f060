#pragma once

// The rule for an operator's meter adjustment (AdminService.AdjustMeter), as one pure function
// an auditor can check against its table of cases (tests/unit/adjustment_test.cc).

#include <cstdint>
#include <optional>
#include <string_view>

#include "meters/money.h"

namespace jackpot {

// What the rule needs to know about one level and its link before an adjustment.
struct AdjustmentFacts {
  Money meter;         // The level's meter now.
  Money seed_funding;  // The link's seed_funding balance now: the house's account, the other
                       // side of every adjustment.
  std::optional<Money> ceiling;
  std::optional<Money> must_hit_by;  // Scaled by the base wager.
  // For a level with a hidden trigger: the value the committed point was drawn above (the point
  // lies in (this, must_hit_by]). The rule reads only this bound, never the secret point.
  std::optional<Money> hidden_range_above;
  // A LOCKED round of some table holds money on this meter (a contribution or an overflow into
  // it): its void will take exactly that back from the meter.
  bool locked_round_holds_money = false;
  // The level's seed (scaled by the base wager): the least a reset leaves the meter at.
  Money seed;
  friend bool operator==(const AdjustmentFacts&, const AdjustmentFacts&) = default;
};

// Why an adjustment is refused, in the order the rule checks. A refused adjustment changes
// nothing.
enum class AdjustmentRefusal : std::uint8_t {
  zero_amount,     // Changes nothing: INVALID_ARGUMENT.
  overflow,        // The meter or the house's account would leave the int64 range.
  below_zero,      // A lowering larger than the meter.
  below_seed,      // A lowering that leaves the meter below its seed (#32): one person may
                   // correct a meter, but not sweep the players' money past what a reset
                   // guarantees them into the house's account. A meter already below its seed
                   // (after a 10% award) is not lowered at all.
  locked_round,    // A lowering while a LOCKED round holds money on the meter: its void must
                   // find exactly what the round put there.
  above_ceiling,   // A raise past the level's ceiling (reaching it is allowed).
  must_hit_by,     // A raise to less than a cent below the Must-Hit-By amount: only a
                   // contribution may carry a meter to its amount, and it then hits.
  hidden_trigger,  // A raise past the value a hidden point was drawn above: it could reach the
                   // point without a hit, and a refusal nearer the point would reveal it.
};

std::string_view to_string(AdjustmentRefusal refusal);

// The most a raise may carry the meter to, or nothing when only the int64 range bounds it: the
// ceiling, a cent below the Must-Hit-By amount, and a hidden point's lower bound, whichever is
// lowest.
std::optional<Money> adjustment_raise_cap(const AdjustmentFacts& facts);

// Whether the meter may move by `amount` (signed micros: positive raises it from seed_funding,
// negative lowers it back into seed_funding), and if not, the first reason in the order of
// AdjustmentRefusal. Unknown links and levels are the caller's to refuse (NOT_FOUND) before.
std::optional<AdjustmentRefusal> adjustment_refusal(Money amount, const AdjustmentFacts& facts);

}  // namespace jackpot
