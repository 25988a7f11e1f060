#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "meters/adjustment.h"
#include "meters/hidden_trigger.h"
#include "meters/ledger.h"
#include "meters/link_config.h"
#include "meters/random.h"
#include "meters/result.h"

namespace jackpot {

// Why a link operation was refused. A refused operation changes nothing.
enum class LinkError : std::uint8_t {
  unknown_level,
  units_not_positive,    // A contribution of zero or fewer wager units.
  percent_out_of_range,  // Not 1..100.
  level_is_must_hit_by,  // Must-Hit-By levels are won by their draw, not by a paytable row.
  no_winners,            // A split among zero winners.
  amount_not_positive,   // A tray pay or payout of zero or less.
  zero_adjustment,
  reason_missing,
  above_ceiling,         // An adjustment would lift the meter above its ceiling, a
                         // Must-Hit-By meter within a cent of its amount, or a hidden-trigger
                         // meter above the value its point was drawn above.
  insufficient_balance,  // A meter, reserve or payable amount would go below zero.
  overflow,              // An amount or balance would leave the int64 range.
  not_a_round_transfer,  // reverse_round got something other than a contribution/overflow.
  mixed_rounds,          // reverse_round got transfers of several rounds.
  not_an_award,          // reverse_award/pay_award got something other than an award.
  foreign_transfer,      // The transfer names an account this link does not have.
  must_hit_by_overrun,   // A contribution larger than a Must-Hit-By level has room for.
  not_reversible,        // reverse_round: the round's overflows do not add up as posted.
};

std::string_view to_string(LinkError error);

// A Must-Hit-By level whose trigger point a contribution reached.
struct MustHitByHit {
  std::uint32_t level = 0;
  Money amount;                           // Awarded: exactly the trigger point.
  TransferId award;                       // The award transfer.
  std::optional<HiddenTrigger> revealed;  // The hidden point that was hit, with its salt.
  std::optional<HiddenTrigger> next;      // The point committed for the reset level.
};

struct ContributionResult {
  Money meters;                    // Total added to meters (before any Must-Hit-By award).
  Money reserves;                  // Total added to reserves.
  std::vector<MustHitByHit> hits;  // Empty unless a Must-Hit-By level reached its trigger.
};

struct ResetResult {
  Money seed;  // The seed funded: less than the configured seed only at the ceiling.
  Money reserve_released;
  std::optional<HiddenTrigger> next_trigger;  // For hidden-trigger levels.
};

struct AwardResult {
  Money amount;                      // Whole cents; the sub-cent residue stays on the meter.
  TransferId transfer;               // 0 when the amount is zero (a meter below one cent).
  std::optional<ResetResult> reset;  // For a 100% award.
};

// One compensating transfer of a void, as plan_round_reversal() decides it.
struct PlannedReversal {
  AccountRef debit;
  AccountRef credit;
  Money amount;
  TransferKind kind = TransferKind::contribution_reversal;
  TransferId corrects;  // The round's transfer it compensates or refunds.
  friend bool operator==(const PlannedReversal&, const PlannedReversal&) = default;
};

// Where a void's refund of one round's contributions on one link comes from (the rule an
// auditor checks; docs/architecture.md §5). `round` holds the round's contributions and
// overflows as the lock posted them, in order; `awarded[level]` says whether that level's meter
// has paid an award (a percent award, a split, a Must-Hit-By hit; a 100% award also resets)
// since the lock. The round's transfers are taken back newest first:
//  - A level with no award since holds the round's money where the round put it (only a reset
//    moves money between a meter and its reserve, and a reset comes with an award): each
//    contribution into it comes back by a contribution_reversal, each overflow out of it by an
//    overflow_reversal, both of exactly the amount.
//  - A level whose meter paid an award since keeps what the round left in it: the meter shows
//    what the rules guaranteed it after that award (seed plus reserve after a reset), and a
//    void never takes it back down. What the round would have taken from it the house refunds
//    instead: a house_funded_refund from seed_funding to the wagers, naming the contribution or
//    overflow it stands for. Money another level gives back to it (an overflow of the round out
//    of it) passes on through it, so every level's terms stay exact.
// The wagers get back exactly what the round contributed; the rest of the ledger is untouched
// but for what the round left in levels without an award since. Refused (not_reversible) only
// when the overflows do not add up (a meter that was above its cap when the round locked);
// foreign_transfer when a level is not 1..levels.
Result<std::vector<PlannedReversal>, LinkError> plan_round_reversal(
    std::span<const Transfer> round, const std::vector<bool>& awarded, std::uint32_t levels);

struct SplitResult {
  Money share;  // Each winner's equal share, whole cents.
  std::vector<TransferId> transfers;
  ResetResult reset;
};

// The state of one link: its rules, its ledger and, for hidden-trigger Must-Hit-By levels, the
// committed points. Each operation validates first, then posts its transfers to the ledger and
// appends them to `out`; if it is refused, nothing changes and `out` is as it was.
class Link {
 public:
  // A link at its seeds: each level's meter funded with its seed, hidden triggers drawn. The
  // opening transfers go to `out`.
  static Result<Link, std::vector<std::string>> open(LinkConfig config, RandomSource& random,
                                                     std::vector<Transfer>& out);

  // A link as storage recorded it: balances, the next transfer id and each level's hidden
  // trigger (index level - 1), under a configuration that may have changed since
  // (docs/architecture.md §7b). Refused, naming the level and why, when the configuration is
  // invalid, a trigger is given for a level without a hidden trigger (or missing for one that
  // has it), a meter is above its ceiling or at its Must-Hit-By amount, a hidden point was
  // committed for a higher amount than the level now has (decided from the committed range, not
  // the secret point) or does not match its commitment, or the state breaks an invariant.
  static Result<Link, std::vector<std::string>> restore(
      LinkConfig config, RandomSource& random,
      const std::vector<std::pair<AccountRef, Money>>& balances, TransferId next_transfer,
      const std::vector<std::optional<HiddenTrigger>>& hidden);
  // Each level's hidden trigger in force (index level - 1), for snapshots.
  std::vector<std::optional<HiddenTrigger>> hidden_triggers() const;

  const LinkConfig& config() const { return config_; }
  const LevelRules& rules(std::uint32_t level) const { return levels_[level - 1].rules; }
  std::uint32_t level_count() const { return ledger_.levels(); }
  const Ledger& ledger() const { return ledger_; }
  Money meter(std::uint32_t level) const { return ledger_.balance(AccountRef::meter(level)); }
  Money reserve(std::uint32_t level) const { return ledger_.balance(AccountRef::reserve(level)); }
  // The point at which a Must-Hit-By level hits (the amount, or the hidden point).
  std::optional<Money> trigger_point(std::uint32_t level) const;
  const std::optional<HiddenTrigger>& hidden_trigger(std::uint32_t level) const {
    return levels_[level - 1].hidden;
  }

  // Contributions of `units` locked wager units to every level: meter and reserve shares, the
  // excess over a ceiling to its overflow target; then every Must-Hit-By level whose meter
  // reached its trigger awards exactly the trigger point and resets (the rest of the
  // contribution stays on the reset meter).
  Result<ContributionResult, LinkError> contribute(std::int64_t units, Origin origin,
                                                   std::vector<Transfer>& out);

  // floor_to_cent(meter × percent / 100) from the meter to awards_payable; 100 also resets.
  Result<AwardResult, LinkError> award_percent(std::uint32_t level, std::int64_t percent,
                                               Origin origin, std::vector<Transfer>& out);

  // Several 100% hits on one level in one round under the SPLIT policy: each winner gets
  // floor_to_cent(meter / winners); the remainder stays; one reset. `origins` has one entry
  // (round and payout) per winner.
  Result<SplitResult, LinkError> award_split(std::uint32_t level, std::span<const Origin> origins,
                                             std::vector<Transfer>& out);

  // Voids one round on this link: posts plan_round_reversal() for the round's contributions and
  // overflows, where `awarded_levels` lists the levels whose meter paid an award since the
  // round locked. Returns the total contribution refunded to the wagers (from the levels and
  // from the house together).
  Result<Money, LinkError> reverse_round(std::span<const Transfer> round_transfers,
                                         std::span<const std::uint32_t> awarded_levels,
                                         Origin origin, std::vector<Transfer>& out);

  // Returns an award (payout rejected) to where it came from: a meter award to the meter (the
  // excess over a ceiling overflowing as usual; on a Must-Hit-By level the excess from a cent
  // below its amount goes to the reserve, on a hidden-trigger level the excess over
  // hidden_return_limit()), a tray pay to the tray.
  Result<Money, LinkError> reverse_award(const Transfer& award, Origin origin,
                                         std::vector<Transfer>& out);

  // Pays an approved award or tray pay: awards_payable -> paid.
  Result<TransferId, LinkError> pay_award(const Transfer& award, Origin origin,
                                          std::vector<Transfer>& out);

  // A fixed, dynamic or Envy pay from the table tray: tray_paid -> awards_payable.
  Result<TransferId, LinkError> record_tray_pay(Money amount, Origin origin,
                                                std::vector<Transfer>& out);

  // What adjustment_refusal() (meters/adjustment.h) needs of a level, as far as the link knows
  // it: everything but whether a LOCKED round holds money on the meter, which only the round
  // engine knows (false here).
  AdjustmentFacts adjustment_facts(std::uint32_t level) const;

  // An operator's meter correction: positive from seed_funding, negative back to it; refused as
  // adjustment_refusal() says (with the facts above), or when the reason is blank.
  Result<TransferId, LinkError> adjust_meter(std::uint32_t level, Money delta,
                                             std::string_view reason, Origin origin,
                                             std::vector<Transfer>& out);

  // A point to return to, so that a caller can make several operations (on several links) all
  // or nothing: rollback() undoes every transfer posted to `out` since, and restores the hidden
  // triggers.
  struct Checkpoint {
    std::size_t mark = 0;
    std::vector<std::optional<HiddenTrigger>> hidden;
  };
  Checkpoint checkpoint(const std::vector<Transfer>& out) const;
  void rollback(const Checkpoint& checkpoint, std::vector<Transfer>& out);

  // The first broken invariant (ledger sums to zero, no forbidden negative balance, no meter
  // above its ceiling, no Must-Hit-By meter at its amount or its trigger point, no hidden point
  // outside (the reset value it was drawn above, the amount]), or nothing.
  std::optional<std::string> check_invariants() const;

 private:
  friend struct LinkTestAccess;  // tests/unit: reset() on its own, which no caller needs.

  struct LevelState {
    LevelRules rules;
    std::optional<HiddenTrigger> hidden;
  };

  Link(LinkConfig config, RandomSource& random);
  bool has_level(std::uint32_t level) const { return level >= 1 && level <= level_count(); }
  // The most the meter may show outside a contribution: the ceiling, or a cent below the
  // Must-Hit-By amount (a Must-Hit-By meter reaches its amount only through contributions).
  std::optional<Money> meter_cap(std::uint32_t level) const;
  // The same while the level runs: the ceiling, or a cent below the trigger point in force
  // (the hidden point, or the amount), for adjustments and returned awards.
  std::optional<Money> live_cap(std::uint32_t level) const;
  std::optional<LinkError> post(AccountRef debit, AccountRef credit, Money amount,
                                TransferKind kind, Origin origin, std::vector<Transfer>& out,
                                TransferId corrects = TransferId());
  std::optional<LinkError> overflow_above_ceiling(std::uint32_t level, Origin origin,
                                                  std::vector<Transfer>& out);
  // meter += seed + reserve, both only up to the meter's cap (the ceiling, or a cent below a
  // Must-Hit-By amount), the reserve on a hidden-trigger level only up to hidden_reset_limit();
  // a hidden trigger is drawn and committed anew. Part of every award of
  // 100% and every Must-Hit-By hit, which undo it with the rest of the operation when it fails.
  Result<ResetResult, LinkError> reset(std::uint32_t level, Origin origin,
                                       std::vector<Transfer>& out);
  Result<MustHitByHit, LinkError> hit_must_hit_by(std::uint32_t level, Money trigger, Origin origin,
                                                  std::vector<Transfer>& out);

  LinkConfig config_;
  RandomSource* random_;
  Ledger ledger_;
  std::vector<LevelState> levels_;
};

}  // namespace jackpot
