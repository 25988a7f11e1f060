#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "controller/engine/engine_config.h"
#include "controller/hands/paytable.h"
#include "journal/name.h"
#include "journal/records.h"
#include "meters/ids.h"
#include "meters/link.h"
#include "meters/money.h"
#include "meters/result.h"

namespace jackpot {

// The award rules of a settlement, for one link: which seat wins what, in the order the awards
// are applied to the link's meters (docs/architecture.md §5 and §5a). A pure function of
// the seats' rows and the link's policy: it reads no meter and posts nothing. A PERCENT award
// names its level and percent; its amount is taken from the meter when the award is applied, in
// this order, because a second 100% hit on a level wins the meter its first hit's reset left.

// One wagering seat on the link: the base wagers it locked and the paytable row its hand is.
struct SeatRow {
  std::uint32_t seat = 0;
  std::int64_t units = 0;
  std::optional<std::size_t> row;  // Into the paytable's rows; none when the hand is no row.
};

// The label of a Must-Hit-By win, in answers and payouts.
inline const Name kMustHitByLabel{"Must-Hit-By"};

// A Must-Hit-By level won by the draw at the lock: awarded then, shown with the seat's awards.
struct MustHitByWin {
  std::uint32_t seat = 0;
  std::uint32_t level = 0;
  Money amount;
  PayoutId payout;  // Created by the lock.
};

// One link's part of a settlement.
struct LinkRound {
  const Paytable* paytable = nullptr;
  Money base_wager;  // The link's: a FIXED or DYNAMIC pay is printed "for 1" base wager.
  HitPolicy simultaneous_hits = HitPolicy::sequential;
  std::span<const SeatRow> seats;  // Every wagering seat on the link, lowest seat first.
  // The round's Dynamic Pay selection on the link: (row, option 1..10).
  std::span<const std::pair<std::size_t, std::uint32_t>> dynamic;
  std::span<const MustHitByWin> must_hit_by;  // The lock's hits on the link.
};

struct AwardDecision {
  AwardKind kind = AwardKind::fixed;
  std::uint32_t seat = 0;
  Name hand;  // The winning row's label ("Must-Hit-By" for a Must-Hit-By win).
  // PERCENT: the level whose meter pays, and how much of it. MUST_HIT_BY: the level won.
  std::uint32_t level = 0;
  std::uint32_t percent = 0;
  // PERCENT 100% under SPLIT: how many seats share the meter. Those seats' decisions follow one
  // another, each with the same `shared_by`; 1 otherwise.
  std::uint32_t shared_by = 1;
  Money amount;                 // FIXED, DYNAMIC, ENVY and MUST_HIT_BY: the amount, above zero.
  std::uint32_t from_seat = 0;  // ENVY: the seat whose hand pays it.
  // MUST_HIT_BY: the id of the payout the lock created (a plain number: gcc 12 warns about a
  // class-type member left to its default in the designated initializers above).
  std::uint64_t payout = 0;
};

// The link's awards in the order they apply:
//  1. Each seat's row, highest seat first ("starting with the player farthest to the dealer's
//     right"): PERCENT of its level's meter; FIXED as printed, or DYNAMIC as the round's
//     selection chose (the printed default when the row was not selected), times the seat's
//     stake (units × the link's base wager) per $1, floored to the cent. Under SPLIT, the seats
//     whose rows take 100% of one level share it, as one group at the highest of them. LOSS and
//     zero pays award nothing. A Community Royal row is the row of every seat that has it.
//  2. Envy, for each winning row that carries it (highest winning seat first): every other
//     wagering seat on the link, its Envy × the link's base wager / the paytable's printed base,
//     floored to the cent (nothing when that is zero).
//  3. The lock's Must-Hit-By wins, in the order drawn.
// Refused with LinkError::overflow when a pay leaves the money range.
Result<std::vector<AwardDecision>, LinkError> decide_awards(const LinkRound& round);

// How many supervisors must approve a payout of `amount` on `link` (docs/architecture.md §5a):
// 0 below the link's approval threshold (paid at once), 2 above its dual-approval threshold,
// 1 otherwise. The same for every award, Must-Hit-By wins included.
std::uint32_t approvals_required(const LinkSettings& link, Money amount);

// Whether a table's next round keeps the last round's Dynamic Pay selection on a link instead of
// drawing anew (docs/architecture.md §5a): a selection stands until a round with a progressive
// wager on that link settles. A voided round (a misdeal) and a round settled with no wager on
// the link paid nothing from the selection; drawing again after them would let a table redraw
// as often as it likes (open, settle empty, open) until it shows the boosts it wants.
enum class DynamicCarry : std::uint8_t {
  draw,                   // The last round settled with a wager on the link: draw anew.
  after_void,             // The last round was voided.
  after_unwagered_round,  // The last round settled with no progressive wager on the link.
};
DynamicCarry dynamic_pays_carry(RoundPhase last_phase, bool last_round_wagered_on_link);

// amount × numerator / denominator, floored to the cent (the tray pays whole cents); nothing
// when it leaves the money range.
std::optional<Money> scaled_to_cent(Money amount, Money numerator, Money denominator);

}  // namespace jackpot
