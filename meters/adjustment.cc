#include "meters/adjustment.h"

#include <algorithm>

namespace jackpot {

std::string_view to_string(AdjustmentRefusal refusal) {
  switch (refusal) {
    case AdjustmentRefusal::zero_amount:
      return "an adjustment of zero changes nothing";
    case AdjustmentRefusal::overflow:
      return "the meter or the house's account would leave the int64 range";
    case AdjustmentRefusal::below_zero:
      return "the meter would go below zero";
    case AdjustmentRefusal::below_seed:
      return "the meter would go below its seed";
    case AdjustmentRefusal::locked_round:
      return "a LOCKED round holds contributions on the meter; a lowering waits until it is "
             "settled or voided";
    case AdjustmentRefusal::above_ceiling:
      return "the meter would pass its ceiling";
    case AdjustmentRefusal::must_hit_by:
      return "the meter would come within a cent of its Must-Hit-By amount";
    case AdjustmentRefusal::hidden_trigger:
      return "the meter would pass the value its hidden trigger was drawn above";
  }
  return "unknown adjustment refusal";
}

std::optional<Money> adjustment_raise_cap(const AdjustmentFacts& facts) {
  std::optional<Money> cap = facts.ceiling;
  const auto lower = [&cap](Money bound) { cap = cap ? std::min(*cap, bound) : bound; };
  if (facts.must_hit_by) {
    lower(Money::from_micros(facts.must_hit_by->micros() - Money::kMicrosPerCent));
  }
  if (facts.hidden_range_above) lower(*facts.hidden_range_above);
  return cap;
}

std::optional<AdjustmentRefusal> adjustment_refusal(Money amount, const AdjustmentFacts& facts) {
  const std::int64_t delta = amount.micros();
  if (delta == 0) return AdjustmentRefusal::zero_amount;
  std::int64_t meter_after = 0;
  std::int64_t house_after = 0;
  if (__builtin_add_overflow(facts.meter.micros(), delta, &meter_after) ||
      __builtin_sub_overflow(facts.seed_funding.micros(), delta, &house_after)) {
    return AdjustmentRefusal::overflow;
  }
  if (delta < 0) {
    if (meter_after < 0) return AdjustmentRefusal::below_zero;
    if (meter_after < facts.seed.micros()) return AdjustmentRefusal::below_seed;
    if (facts.locked_round_holds_money) return AdjustmentRefusal::locked_round;
    return std::nullopt;
  }
  if (facts.ceiling && meter_after > facts.ceiling->micros()) {
    return AdjustmentRefusal::above_ceiling;
  }
  if (facts.must_hit_by && meter_after > facts.must_hit_by->micros() - Money::kMicrosPerCent) {
    return AdjustmentRefusal::must_hit_by;
  }
  if (facts.hidden_range_above && meter_after > facts.hidden_range_above->micros()) {
    return AdjustmentRefusal::hidden_trigger;
  }
  return std::nullopt;
}

}  // namespace jackpot
