#pragma once

#include <array>
#include <cstdint>

#include "meters/digest.h"
#include "meters/money.h"
#include "meters/random.h"

namespace jackpot {

using TriggerSalt = std::array<std::uint8_t, 32>;

// A hidden Must-Hit-By trigger point, drawn at a reset and committed before any contribution
// can reach it. The commitment is published at once; point and salt are revealed at the hit, so
// anyone can check that the point was fixed in advance:
//   commitment = SHA-256(point || salt)
// where `point` is the amount in micros as 8 bytes, big-endian two's complement, and `salt` is
// 32 random bytes.
struct HiddenTrigger {
  Money point;
  TriggerSalt salt{};
  Sha256Digest commitment{};
  // The draw's inputs, for the draw record: the point is uniform among the whole-cent amounts
  // in (range_above, range_up_to].
  Money range_above;
  Money range_up_to;
  friend bool operator==(const HiddenTrigger&, const HiddenTrigger&) = default;
};

// Draws the point uniformly among the whole-cent amounts strictly above `reset_value` and at
// most `must_hit_by` (a whole-cent amount), by rejection sampling, and commits to it. When no
// such amount exists (the reset value already reached the Must-Hit-By amount) the point is
// `must_hit_by` itself, so the next contribution hits.
HiddenTrigger draw_hidden_trigger(RandomSource& random, Money reset_value, Money must_hit_by);

// The hidden point stays unknowable until its hit: nothing but contributions may carry the
// meter, which everyone sees, past what the committed range (range_above, range_up_to] already
// says. Two rules follow; each is the one place it is decided.
//
// 1. A reset fills a hidden-trigger level from its reserve no higher than the midpoint of the
//    range the floor gives it, seed + floor_to_cent((must_hit_by - seed) / 2): the next point is
//    drawn from at least half that range, whatever the reserve holds (the rest stays in the
//    reserve). Without it a large reserve would fill the meter to a cent below the amount and
//    leave one possible point. The seed is unaffected; a meter already above the midpoint (the
//    rest of a hit's contribution on the seed) gets no reserve at all.
Money hidden_reset_limit(Money seed, Money must_hit_by);

// 2. Returned money (a rejected award, reversed) lifts a hidden-trigger level's meter no
//    further than an adjustment may (adjustment_raise_cap): to the value the point was drawn
//    above, or not at all when contributions have already carried the meter past it. The rest
//    goes to the reserve. Lifting it to a cent below the point, as a non-hidden Must-Hit-By
//    level may, would tell the point.
Money hidden_return_limit(const HiddenTrigger& trigger, Money meter_before);

Sha256Digest trigger_commitment(Money point, const TriggerSalt& salt);

// True when point and salt are the ones committed to.
bool verify_trigger(Money point, const TriggerSalt& salt, const Sha256Digest& commitment);

}  // namespace jackpot
