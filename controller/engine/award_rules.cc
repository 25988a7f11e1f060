#include "controller/engine/award_rules.h"

#include <map>
#include <set>

namespace jackpot {

namespace {

// A FIXED or DYNAMIC row's pay for the seat: the printed amount (the round's selected option
// for a selected DYNAMIC row) per $1 of the seat's stake.
std::optional<Money> row_pay(const LinkRound& round, const SeatRow& seat, const PaytableRow& row) {
  Money printed = row.amount;
  if (row.kind == PayKind::dynamic) {
    for (const auto& [selected, option] : round.dynamic) {
      if (selected == *seat.row) printed = row.options[option - 1];
    }
  }
  const auto stake = round.base_wager.times(seat.units);
  if (!stake) return std::nullopt;
  return scaled_to_cent(printed, *stake, Money::from_micros(Money::kMicrosPerUnit));
}

}  // namespace

std::uint32_t approvals_required(const LinkSettings& link, Money amount) {
  if (amount < link.approval_threshold) return 0;
  if (link.dual_approval_threshold && amount > *link.dual_approval_threshold) return 2;
  return 1;
}

std::optional<Money> scaled_to_cent(Money amount, Money numerator, Money denominator) {
  const auto scaled = amount.times_fraction_floor(numerator.micros(), denominator.micros());
  if (!scaled) return std::nullopt;
  return scaled->floor_to_cent();
}

Result<std::vector<AwardDecision>, LinkError> decide_awards(const LinkRound& round) {
  const Paytable& paytable = *round.paytable;
  // Highest seat first.
  std::vector<const SeatRow*> winners;
  winners.reserve(round.seats.size());
  for (auto seat = round.seats.rbegin(); seat != round.seats.rend(); ++seat) {
    if (seat->row) winners.push_back(&*seat);
  }
  const auto row_of = [&paytable](const SeatRow* seat) -> const PaytableRow& {
    return paytable.rows[*seat->row];
  };

  // Under SPLIT, the seats whose rows take 100% of a level, by level.
  std::map<std::uint32_t, std::vector<const SeatRow*>> sharing;
  if (round.simultaneous_hits == HitPolicy::split) {
    for (const SeatRow* seat : winners) {
      const PaytableRow& row = row_of(seat);
      if (row.kind == PayKind::percent && row.percent == 100) sharing[row.level].push_back(seat);
    }
    std::erase_if(sharing, [](const auto& level) { return level.second.size() < 2; });
  }

  std::vector<AwardDecision> awards;
  std::set<std::uint32_t> shared_out;  // Levels whose split is decided.
  for (const SeatRow* seat : winners) {
    const PaytableRow& row = row_of(seat);
    if (row.kind == PayKind::percent) {
      const auto group = sharing.find(row.level);
      if (group == sharing.end() || row.percent != 100) {
        awards.push_back({.kind = AwardKind::percent,
                          .seat = seat->seat,
                          .hand = row.label,
                          .level = row.level,
                          .percent = row.percent,
                          .amount = Money()});           // Taken from the meter when applied.
      } else if (shared_out.insert(row.level).second) {  // At the highest of the seats sharing.
        const auto shared_by = static_cast<std::uint32_t>(group->second.size());
        for (const SeatRow* share : group->second) {
          awards.push_back({.kind = AwardKind::percent,
                            .seat = share->seat,
                            .hand = row_of(share).label,  // Each seat's own hand.
                            .level = row.level,
                            .percent = 100,
                            .shared_by = shared_by,
                            .amount = Money()});
        }
      }
    } else if (row.kind == PayKind::fixed || row.kind == PayKind::dynamic) {
      const auto amount = row_pay(round, *seat, row);
      if (!amount) return LinkError::overflow;
      const AwardKind kind = row.kind == PayKind::fixed ? AwardKind::fixed : AwardKind::dynamic;
      if (*amount > Money()) {
        awards.push_back({.kind = kind, .seat = seat->seat, .hand = row.label, .amount = *amount});
      }
    }
    // A LOSS row pays nothing; a MUST_HIT_BY row is won by the draw at the lock, never by a hand.
  }

  for (const SeatRow* winner : winners) {
    const PaytableRow& row = row_of(winner);
    if (!row.envy || row.kind == PayKind::loss || round.seats.size() < 2) continue;
    const auto envy = scaled_to_cent(*row.envy, round.base_wager, paytable.base_wager);
    if (!envy) return LinkError::overflow;
    if (*envy == Money()) continue;
    for (auto other = round.seats.rbegin(); other != round.seats.rend(); ++other) {
      if (other->seat == winner->seat) continue;
      awards.push_back({.kind = AwardKind::envy,
                        .seat = other->seat,
                        .hand = row.label,
                        .amount = *envy,
                        .from_seat = winner->seat});
    }
  }

  for (const MustHitByWin& win : round.must_hit_by) {
    awards.push_back({.kind = AwardKind::must_hit_by,
                      .seat = win.seat,
                      .hand = kMustHitByLabel,
                      .level = win.level,
                      .amount = win.amount,
                      .payout = win.payout.value()});
  }
  return awards;
}

DynamicCarry dynamic_pays_carry(RoundPhase last_phase, bool last_round_wagered_on_link) {
  if (last_phase == RoundPhase::voided) return DynamicCarry::after_void;
  if (last_phase == RoundPhase::settled && !last_round_wagered_on_link) {
    return DynamicCarry::after_unwagered_round;
  }
  return DynamicCarry::draw;
}

}  // namespace jackpot
