#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "meters/ids.h"
#include "meters/money.h"

namespace jackpot {

// How a Must-Hit-By level decides the point at which it hits.
enum class TriggerMode : std::uint8_t {
  at_amount,       // When the meter reaches the Must-Hit-By amount (the rule as printed).
  hidden_uniform,  // At a point drawn uniformly in (reset value, amount] at each reset,
                   // committed with SHA-256 and revealed at the hit.
};

// One level (meter) of a link, as configured. Amounts marked "per $1" are the printed paytable's
// and are multiplied by the link's base wager; the ceiling is absolute.
struct LevelConfig {
  std::uint32_t level = 0;            // 1..N, in order.
  std::string name;                   // e.g. "Royal Flush", "Must-Hit-By $250".
  Money seed;                         // Reset amount, per $1.
  std::int64_t meter_rate_ppm = 0;    // Share of each wager that goes to the meter.
  std::int64_t reserve_rate_ppm = 0;  // Share of each wager that goes to the reserve.
  std::optional<Money> ceiling;       // The meter never shows more; the excess overflows.
  std::uint32_t overflow_level = 0;   // Where the excess goes: 0 = this level's reserve, else the
                                      // meter of that level.
  std::optional<Money> must_hit_by;   // Per $1; the level must hit before its meter passes it.
  TriggerMode trigger = TriggerMode::at_amount;
};

struct LinkConfig {
  LinkId id;
  Money base_wager = Money::from_micros(Money::kMicrosPerUnit);  // One wager unit; $1 default.
  std::vector<LevelConfig> levels;
};

// The amounts a level works with, derived from its configuration once: base-wager multiplier
// applied, contribution per wager unit precomputed.
struct LevelRules {
  Money seed;              // Scaled by the base wager.
  Money meter_per_unit;    // Contribution of one wager unit to the meter.
  Money reserve_per_unit;  // Contribution of one wager unit to the reserve.
  std::optional<Money> ceiling;
  std::uint32_t overflow_level = 0;
  std::optional<Money> must_hit_by;  // Scaled by the base wager.
  TriggerMode trigger = TriggerMode::at_amount;
};

// Every problem with the configuration, each naming the link, level and field; empty when valid.
// Checks: ids and names; base wager and amounts positive whole cents; rates within 0..1,000,000
// ppm and all rates of the link together at most 1,000,000 ppm; each rate giving a whole number
// of micros per wager unit (so contributions are exact, with no remainder); ceilings above the
// seed, overflow targets that exist, are not Must-Hit-By levels and form no cycle; Must-Hit-By
// amounts above the seed, on levels without a ceiling; hidden triggers only with an amount.
std::vector<std::string> validate(const LinkConfig& config);

// The derived rules of every level; `config` must be valid.
std::vector<LevelRules> derive_rules(const LinkConfig& config);

}  // namespace jackpot
