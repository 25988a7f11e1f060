#include "meters/hidden_trigger.h"

#include <algorithm>

#include "meters/invariant.h"

namespace jackpot {

Sha256Digest trigger_commitment(Money point, const TriggerSalt& salt) {
  std::array<std::uint8_t, 8 + 32> message{};
  const auto bits = static_cast<std::uint64_t>(point.micros());
  for (std::size_t i = 0; i < 8; ++i) {
    message[i] = static_cast<std::uint8_t>(bits >> (56 - 8 * i));
  }
  for (std::size_t i = 0; i < salt.size(); ++i) message[8 + i] = salt[i];
  return sha256(message);
}

bool verify_trigger(Money point, const TriggerSalt& salt, const Sha256Digest& commitment) {
  return trigger_commitment(point, salt) == commitment;
}

Money hidden_reset_limit(Money seed, Money must_hit_by) {
  JACKPOT_INVARIANT(must_hit_by > seed, "a Must-Hit-By amount is above its level's seed");
  const Money half = Money::from_micros((must_hit_by.micros() - seed.micros()) / 2);
  return Money::from_micros(seed.micros() + half.floor_to_cent().micros());
}

Money hidden_return_limit(const HiddenTrigger& trigger, Money meter_before) {
  return std::max(trigger.range_above, meter_before);
}

HiddenTrigger draw_hidden_trigger(RandomSource& random, Money reset_value, Money must_hit_by) {
  JACKPOT_INVARIANT(must_hit_by.is_whole_cents(), "Must-Hit-By amounts are whole cents");
  HiddenTrigger trigger;
  trigger.range_above = reset_value;
  trigger.range_up_to = must_hit_by;
  const std::int64_t first_cent = reset_value.cents_floor() + 1;
  const std::int64_t last_cent = must_hit_by.cents_floor();
  if (first_cent > last_cent) {
    trigger.point = must_hit_by;
  } else {
    const auto count = static_cast<std::uint64_t>(last_cent - first_cent) + 1;
    const auto offset = static_cast<std::int64_t>(uniform_below(random, count));
    trigger.point = Money::from_micros((first_cent + offset) * Money::kMicrosPerCent);
  }
  fill_random(random, trigger.salt);
  trigger.commitment = trigger_commitment(trigger.point, trigger.salt);
  return trigger;
}

}  // namespace jackpot
