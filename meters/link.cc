#include "meters/link.h"

#include <algorithm>
#include <tuple>

#include "meters/adjustment.h"
#include "meters/invariant.h"

namespace jackpot {
namespace {

const Money kZero;
const Money kOneCent = Money::from_micros(Money::kMicrosPerCent);

LinkError from_post_error(PostError error) {
  return error == PostError::overflow ? LinkError::overflow : LinkError::insufficient_balance;
}

// "level 2 (Must-Hit-By $250)", for messages.
std::string level_name(const LinkConfig& config, std::uint32_t level) {
  const std::string& label = config.levels[level - 1].name;
  return "level " + std::to_string(level) + (label.empty() ? "" : " (" + label + ")");
}

// Why a restored level's meter and kept hidden point do not fit its rules now, or nothing.
std::optional<std::string> restored_level_problem(const LevelRules& rules, Money shown,
                                                  const std::optional<HiddenTrigger>& kept) {
  const bool wants = rules.trigger == TriggerMode::hidden_uniform;
  if (wants && !kept) {
    return std::string(
        "hidden trigger missing (a level cannot switch to a hidden trigger between restarts: "
        "its point is drawn and committed only at a reset)");
  }
  if (!wants && kept) {
    return std::string(
        "hidden trigger unexpected (a level with a committed hidden point cannot switch it off "
        "between restarts: the point would be thrown away before it was revealed)");
  }
  if (rules.ceiling && shown > *rules.ceiling) {
    return "the meter " + shown.to_string() + " is above the ceiling " +
           rules.ceiling->to_string() +
           " the floor now gives it; a ceiling may not be lowered below the meter";
  }
  if (rules.must_hit_by && shown >= *rules.must_hit_by) {
    return "the meter " + shown.to_string() + " has reached the Must-Hit-By amount " +
           rules.must_hit_by->to_string() +
           " the floor now gives it (amount x base wager) without a hit; the amount may not be "
           "lowered to the meter or below";
  }
  if (kept) {
    // Whether the committed range still fits is decided from the range alone, never from the
    // secret point, so that a refusal tells nobody where the point lies.
    if (kept->range_up_to > *rules.must_hit_by) {
      return "its hidden trigger was committed for a Must-Hit-By amount of " +
             kept->range_up_to.to_string() + ", above the amount " +
             rules.must_hit_by->to_string() +
             " the floor now gives it (amount x base wager); a hidden level's amount may not be "
             "lowered while a point is committed: restore the amount, or let the level hit first";
    }
    if (!verify_trigger(kept->point, kept->salt, kept->commitment) ||
        kept->point <= kept->range_above || kept->point > kept->range_up_to ||
        !kept->point.is_whole_cents()) {
      return std::string(
          "its hidden trigger does not match its commitment and recorded range: the recorded "
          "draw has been altered");
    }
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(LinkError error) {
  switch (error) {
    case LinkError::unknown_level:
      return "unknown level";
    case LinkError::units_not_positive:
      return "wager units must be positive";
    case LinkError::percent_out_of_range:
      return "percent must be 1..100";
    case LinkError::level_is_must_hit_by:
      return "a Must-Hit-By level is won by its draw only";
    case LinkError::no_winners:
      return "a split needs at least one winner";
    case LinkError::amount_not_positive:
      return "amount must be positive";
    case LinkError::zero_adjustment:
      return "an adjustment of zero changes nothing";
    case LinkError::reason_missing:
      return "a reason is required";
    case LinkError::above_ceiling:
      return "the meter would exceed its ceiling, come within a cent of its Must-Hit-By amount "
             "or pass its hidden trigger's lower bound";
    case LinkError::insufficient_balance:
      return "a meter, reserve or payable would go below zero";
    case LinkError::overflow:
      return "amount overflows";
    case LinkError::not_a_round_transfer:
      return "only contributions and overflows are reversed";
    case LinkError::mixed_rounds:
      return "transfers of several rounds";
    case LinkError::not_an_award:
      return "not an award or tray pay";
    case LinkError::must_hit_by_overrun:
      return "the contribution would leave a Must-Hit-By meter past its trigger";
    case LinkError::foreign_transfer:
      return "the transfer is not of this link";
    case LinkError::not_reversible:
      return "the round's overflows do not add up as posted";
  }
  return "unknown link error";
}

Link::Link(LinkConfig config, RandomSource& random)
    : config_(std::move(config)),
      random_(&random),
      ledger_(static_cast<std::uint32_t>(config_.levels.size())) {
  for (const LevelRules& rules : derive_rules(config_)) levels_.push_back({rules, std::nullopt});
}

Result<Link, std::vector<std::string>> Link::open(LinkConfig config, RandomSource& random,
                                                  std::vector<Transfer>& out) {
  if (auto problems = validate(config); !problems.empty()) return problems;
  Link link(std::move(config), random);
  for (std::uint32_t level = 1; level <= link.level_count(); ++level) {
    const auto funded = link.reset(level, Origin{}, out);
    JACKPOT_INVARIANT(funded.ok(), "seeding a new link cannot fail");
  }
  return link;
}

Result<Link, std::vector<std::string>> Link::restore(
    LinkConfig config, RandomSource& random,
    const std::vector<std::pair<AccountRef, Money>>& balances, TransferId next_transfer,
    const std::vector<std::optional<HiddenTrigger>>& hidden) {
  if (auto problems = validate(config); !problems.empty()) return problems;
  Link link(std::move(config), random);
  const std::string name = "link '" + link.config_.id.value() + "'";
  if (hidden.size() != link.level_count()) {
    return std::vector<std::string>{name + ": one hidden trigger entry per level expected"};
  }
  for (const auto& [account, amount] : balances) {
    if (!link.ledger_.has(account)) {
      return std::vector<std::string>{name + ": no account " + to_string(account)};
    }
  }
  link.ledger_.restore(balances, next_transfer);
  // The floor may have changed since the state was recorded (docs/architecture.md §7b): each
  // level's kept meter and committed point must still fit its rules, or the link is refused.
  std::vector<std::string> problems;
  for (std::uint32_t level = 1; level <= link.level_count(); ++level) {
    if (auto problem = restored_level_problem(link.levels_[level - 1].rules, link.meter(level),
                                              hidden[level - 1])) {
      problems.push_back(name + " " + level_name(link.config_, level) + ": " + *problem);
    }
    link.levels_[level - 1].hidden = hidden[level - 1];
  }
  if (!problems.empty()) return problems;
  if (auto broken = link.check_invariants()) return std::vector<std::string>{name + ": " + *broken};
  return link;
}

std::vector<std::optional<HiddenTrigger>> Link::hidden_triggers() const {
  std::vector<std::optional<HiddenTrigger>> all;
  for (const LevelState& state : levels_) all.push_back(state.hidden);
  return all;
}

std::optional<Money> Link::meter_cap(std::uint32_t level) const {
  const LevelRules& rules = levels_[level - 1].rules;
  if (rules.must_hit_by) return Money::from_micros(rules.must_hit_by->micros() - kOneCent.micros());
  return rules.ceiling;
}

std::optional<Money> Link::live_cap(std::uint32_t level) const {
  const auto trigger = trigger_point(level);
  if (!trigger) return levels_[level - 1].rules.ceiling;
  return Money::from_micros(trigger->micros() - kOneCent.micros());
}

std::optional<Money> Link::trigger_point(std::uint32_t level) const {
  const LevelState& state = levels_[level - 1];
  if (state.hidden) return state.hidden->point;
  return state.rules.must_hit_by;
}

std::optional<LinkError> Link::post(AccountRef debit, AccountRef credit, Money amount,
                                    TransferKind kind, Origin origin, std::vector<Transfer>& out,
                                    TransferId corrects) {
  if (const auto error = ledger_.post(debit, credit, amount, kind, origin, corrects, out)) {
    return from_post_error(*error);
  }
  return std::nullopt;
}

std::optional<LinkError> Link::overflow_above_ceiling(std::uint32_t level, Origin origin,
                                                      std::vector<Transfer>& out) {
  const LevelRules& rules = levels_[level - 1].rules;
  if (!rules.ceiling || meter(level) <= *rules.ceiling) return std::nullopt;
  const Money excess = Money::from_micros(meter(level).micros() - rules.ceiling->micros());
  const AccountRef target = rules.overflow_level == 0 ? AccountRef::reserve(level)
                                                      : AccountRef::meter(rules.overflow_level);
  if (auto error =
          post(AccountRef::meter(level), target, excess, TransferKind::overflow, origin, out)) {
    return error;
  }
  // Validation guarantees the chain of targets ends.
  return target.kind == AccountKind::meter ? overflow_above_ceiling(target.level, origin, out)
                                           : std::nullopt;
}

Result<ContributionResult, LinkError> Link::contribute(std::int64_t units, Origin origin,
                                                       std::vector<Transfer>& out) {
  if (units <= 0) return LinkError::units_not_positive;
  const std::size_t mark = out.size();
  const auto fail = [&](LinkError error) {
    ledger_.undo_since(out, mark);
    return error;
  };
  ContributionResult result;
  std::int64_t meters_total = 0;
  std::int64_t reserves_total = 0;
  bool any_must_hit_by = false;
  for (std::uint32_t level = 1; level <= level_count(); ++level) {
    const LevelRules& rules = levels_[level - 1].rules;
    any_must_hit_by |= rules.must_hit_by.has_value();
    std::int64_t to_meter = 0;
    std::int64_t to_reserve = 0;
    if (__builtin_mul_overflow(rules.meter_per_unit.micros(), units, &to_meter) ||
        __builtin_mul_overflow(rules.reserve_per_unit.micros(), units, &to_reserve) ||
        __builtin_add_overflow(meters_total, to_meter, &meters_total) ||
        __builtin_add_overflow(reserves_total, to_reserve, &reserves_total)) {
      return fail(LinkError::overflow);
    }
    if (to_meter > 0) {
      if (auto error =
              post(AccountRef::link(AccountKind::wagers), AccountRef::meter(level),
                   Money::from_micros(to_meter), TransferKind::contribution, origin, out)) {
        return fail(*error);
      }
      if (auto error = overflow_above_ceiling(level, origin, out)) return fail(*error);
    }
    if (to_reserve > 0) {
      if (auto error =
              post(AccountRef::link(AccountKind::wagers), AccountRef::reserve(level),
                   Money::from_micros(to_reserve), TransferKind::contribution, origin, out)) {
        return fail(*error);
      }
    }
  }
  result.meters = Money::from_micros(meters_total);
  result.reserves = Money::from_micros(reserves_total);
  if (!any_must_hit_by) return result;

  // Hidden triggers replaced by a reset below, restored if a later step fails.
  std::vector<std::pair<std::uint32_t, std::optional<HiddenTrigger>>> replaced;
  for (std::uint32_t level = 1; level <= level_count(); ++level) {
    const auto trigger = trigger_point(level);
    if (!trigger || meter(level) < *trigger) continue;
    replaced.emplace_back(level, levels_[level - 1].hidden);
    auto hit = hit_must_hit_by(level, *trigger, origin, out);
    if (!hit) {
      for (auto& [replaced_level, hidden] : replaced) levels_[replaced_level - 1].hidden = hidden;
      return fail(hit.error());
    }
    result.hits.push_back(std::move(hit).value());
  }
  // A round's contribution is bounded by configuration so that a reset level starts below its
  // trigger; should it not be, refuse rather than leave a meter past its Must-Hit-By point.
  for (std::uint32_t level = 1; level <= level_count(); ++level) {
    const auto trigger = trigger_point(level);
    if (trigger && meter(level) >= *trigger) {
      for (auto& [replaced_level, hidden] : replaced) levels_[replaced_level - 1].hidden = hidden;
      return fail(LinkError::must_hit_by_overrun);
    }
  }
  return result;
}

Result<MustHitByHit, LinkError> Link::hit_must_hit_by(std::uint32_t level, Money trigger,
                                                      Origin origin, std::vector<Transfer>& out) {
  MustHitByHit hit;
  hit.level = level;
  hit.amount = trigger;
  hit.revealed = levels_[level - 1].hidden;
  if (auto error = post(AccountRef::meter(level), AccountRef::link(AccountKind::awards_payable),
                        trigger, TransferKind::award, origin, out)) {
    return *error;
  }
  hit.award = out.back().id;
  auto refilled = reset(level, origin, out);
  if (!refilled) return refilled.error();
  hit.next = refilled->next_trigger;
  return hit;
}

Result<ResetResult, LinkError> Link::reset(std::uint32_t level, Origin origin,
                                           std::vector<Transfer>& out) {
  JACKPOT_INVARIANT(has_level(level), "reset() names one of the link's levels");
  LevelState& state = levels_[level - 1];
  ResetResult result;
  // Seed and reserve fill the meter only up to its cap: what a split or a percent award leaves
  // (a few cents) plus the seed may not carry the meter past a ceiling, and a reset never
  // carries a Must-Hit-By meter to its amount (the rest waits in the reserve).
  const std::optional<Money> cap = meter_cap(level);
  const auto room = [&] {
    return Money::from_micros(std::max<std::int64_t>(cap->micros() - meter(level).micros(), 0));
  };
  result.seed = state.rules.seed;
  if (cap) result.seed = std::min(result.seed, room());
  if (result.seed > kZero) {
    if (auto error = post(AccountRef::link(AccountKind::seed_funding), AccountRef::meter(level),
                          result.seed, TransferKind::seed, origin, out)) {
      return *error;
    }
  }
  Money release = reserve(level);
  if (cap) release = std::min(release, room());
  if (state.rules.trigger == TriggerMode::hidden_uniform) {
    // The next point keeps a range wide enough not to be known (hidden_reset_limit).
    const Money limit = hidden_reset_limit(state.rules.seed, *state.rules.must_hit_by);
    release = std::min(release, Money::from_micros(std::max<std::int64_t>(
                                    limit.micros() - meter(level).micros(), 0)));
  }
  if (release > kZero) {
    if (auto error = post(AccountRef::reserve(level), AccountRef::meter(level), release,
                          TransferKind::reserve_release, origin, out)) {
      return *error;
    }
  }
  result.reserve_released = release;
  if (state.rules.trigger == TriggerMode::hidden_uniform) {
    state.hidden = draw_hidden_trigger(*random_, meter(level), *state.rules.must_hit_by);
    result.next_trigger = state.hidden;
  }
  return result;
}

Result<AwardResult, LinkError> Link::award_percent(std::uint32_t level, std::int64_t percent,
                                                   Origin origin, std::vector<Transfer>& out) {
  if (!has_level(level)) return LinkError::unknown_level;
  if (percent < 1 || percent > 100) return LinkError::percent_out_of_range;
  if (levels_[level - 1].rules.must_hit_by) return LinkError::level_is_must_hit_by;
  const std::size_t mark = out.size();
  AwardResult result;
  result.amount = meter(level).times_fraction_floor(percent, 100)->floor_to_cent();
  if (result.amount > kZero) {
    if (auto error = post(AccountRef::meter(level), AccountRef::link(AccountKind::awards_payable),
                          result.amount, TransferKind::award, origin, out)) {
      ledger_.undo_since(out, mark);
      return *error;
    }
    result.transfer = out.back().id;
  }
  if (percent == 100) {
    // The reset names the award's payout only when there is an award: a meter below one cent
    // pays nothing and makes no payout, and its id goes to the next award (#32: an id named by
    // two awards' transfers).
    auto refilled = reset(level, result.amount > kZero ? origin : Origin{origin.round, 0}, out);
    if (!refilled) {
      ledger_.undo_since(out, mark);
      return refilled.error();
    }
    result.reset = std::move(refilled).value();
  }
  return result;
}

Result<SplitResult, LinkError> Link::award_split(std::uint32_t level,
                                                 std::span<const Origin> origins,
                                                 std::vector<Transfer>& out) {
  if (!has_level(level)) return LinkError::unknown_level;
  if (origins.empty()) return LinkError::no_winners;
  if (levels_[level - 1].rules.must_hit_by) return LinkError::level_is_must_hit_by;
  const std::size_t mark = out.size();
  SplitResult result;
  result.share = meter(level)
                     .times_fraction_floor(1, static_cast<std::int64_t>(origins.size()))
                     ->floor_to_cent();
  if (result.share > kZero) {
    for (const Origin& origin : origins) {
      if (auto error = post(AccountRef::meter(level), AccountRef::link(AccountKind::awards_payable),
                            result.share, TransferKind::award, origin, out)) {
        ledger_.undo_since(out, mark);
        return *error;
      }
      result.transfers.push_back(out.back().id);
    }
  }
  auto refilled = reset(level, Origin{origins.front().round, 0}, out);
  if (!refilled) {
    ledger_.undo_since(out, mark);
    return refilled.error();
  }
  result.reset = std::move(refilled).value();
  return result;
}

Result<std::vector<PlannedReversal>, LinkError> plan_round_reversal(
    std::span<const Transfer> round, const std::vector<bool>& awarded, std::uint32_t levels) {
  const auto in_range = [&](AccountRef account) {
    const bool per_level =
        account.kind == AccountKind::meter || account.kind == AccountKind::reserve;
    return !per_level || (account.level >= 1 && account.level <= levels);
  };
  for (const Transfer& transfer : round) {
    if (!in_range(transfer.debit) || !in_range(transfer.credit)) {
      return LinkError::foreign_transfer;
    }
  }
  const auto was_awarded = [&](std::uint32_t level) {
    return level < awarded.size() && awarded[level];
  };
  const auto wagers = AccountRef::link(AccountKind::wagers);
  const auto house = AccountRef::link(AccountKind::seed_funding);
  // Per level: `excused`, what the level no longer has to give back because the house already
  // refunded it (the round's overflow out of it was paid out on another level); `passing`,
  // money given back to an awarded level that it passes on.
  std::vector<std::int64_t> excused(levels + 1, 0);
  std::vector<std::int64_t> passing(levels + 1, 0);
  std::vector<PlannedReversal> plan;
  const auto add = [&plan](AccountRef debit, AccountRef credit, std::int64_t amount,
                           TransferKind kind, TransferId corrects) {
    if (amount > 0) plan.push_back({debit, credit, Money::from_micros(amount), kind, corrects});
  };
  // What `level` owes back of `amount`, less what the house already refunded for it.
  const auto owed = [&excused](std::uint32_t level, std::int64_t amount) {
    const std::int64_t covered = std::min(excused[level], amount);
    excused[level] -= covered;
    return amount - covered;
  };
  // Of `amount` an awarded level owes, what it passes on from what came back to it.
  const auto pass_on = [&passing](std::uint32_t level, std::int64_t amount) {
    const std::int64_t passed = std::min(passing[level], amount);
    passing[level] -= passed;
    return passed;
  };
  for (auto it = round.rbegin(); it != round.rend(); ++it) {
    const Transfer& transfer = *it;
    const std::int64_t amount = transfer.amount.micros();
    if (transfer.kind == TransferKind::contribution) {
      const std::uint32_t level = transfer.credit.level;
      const std::int64_t give = owed(level, amount);
      if (!was_awarded(level)) {
        add(transfer.credit, wagers, give, TransferKind::contribution_reversal, transfer.id);
        continue;
      }
      // Whatever came back to the level arrived on its meter.
      const std::int64_t passed = pass_on(level, give);
      add(AccountRef::meter(level), wagers, passed, TransferKind::contribution_reversal,
          transfer.id);
      add(house, wagers, give - passed, TransferKind::house_funded_refund, transfer.id);
      continue;
    }
    const std::uint32_t source = transfer.debit.level;
    if (transfer.credit.kind == AccountKind::reserve) {
      // Within one level: back to the meter, unless an award since keeps the level as it is.
      if (!was_awarded(source)) {
        add(transfer.credit, transfer.debit, amount, TransferKind::overflow_reversal, transfer.id);
      }
      continue;
    }
    const std::uint32_t target = transfer.credit.level;
    const std::int64_t give = owed(target, amount);
    std::int64_t returned = give;
    if (was_awarded(target)) {
      returned = pass_on(target, give);
      add(house, wagers, give - returned, TransferKind::house_funded_refund, transfer.id);
    }
    add(transfer.credit, transfer.debit, returned, TransferKind::overflow_reversal, transfer.id);
    if (was_awarded(source)) passing[source] += returned;
    excused[source] += amount - returned;
  }
  for (std::uint32_t level = 1; level <= levels; ++level) {
    if (excused[level] != 0 || passing[level] != 0) return LinkError::not_reversible;
  }
  return plan;
}

Result<Money, LinkError> Link::reverse_round(std::span<const Transfer> round_transfers,
                                             std::span<const std::uint32_t> awarded_levels,
                                             Origin origin, std::vector<Transfer>& out) {
  std::int64_t reversed = 0;
  for (const Transfer& transfer : round_transfers) {
    if (transfer.kind != TransferKind::contribution && transfer.kind != TransferKind::overflow) {
      return LinkError::not_a_round_transfer;
    }
    if (transfer.origin.round != round_transfers.front().origin.round) {
      return LinkError::mixed_rounds;
    }
    if (!ledger_.has(transfer.debit) || !ledger_.has(transfer.credit)) {
      return LinkError::foreign_transfer;
    }
    if (transfer.kind == TransferKind::contribution &&
        __builtin_add_overflow(reversed, transfer.amount.micros(), &reversed)) {
      return LinkError::overflow;
    }
  }
  std::vector<bool> awarded(level_count() + 1, false);
  for (const std::uint32_t level : awarded_levels) {
    if (!has_level(level)) return LinkError::unknown_level;
    awarded[level] = true;
  }
  auto planned = plan_round_reversal(round_transfers, awarded, level_count());
  if (!planned) return planned.error();
  std::vector<PlannedReversal> plan = std::move(planned).value();
  // Posted so that every level receives what comes back to it before it gives anything: the
  // overflow reversals first, from the end of each overflow chain towards its start (and, within
  // a level, from its reserve back to its meter first), then the refunds to the wagers. So a void
  // is refused only when a level lacks what it gives in the end, never on the way.
  const auto depth = [this](std::uint32_t level) {
    std::uint32_t hops = 0;
    while (levels_[level - 1].rules.overflow_level != 0) {
      level = levels_[level - 1].rules.overflow_level;
      ++hops;
    }
    return hops;
  };
  const auto order = [&](const PlannedReversal& step) {
    if (step.kind != TransferKind::overflow_reversal) return std::tuple{1U, 0U, 0U};
    return std::tuple{0U, depth(step.debit.level),
                      step.debit.kind == AccountKind::reserve ? 0U : 1U};
  };
  std::stable_sort(plan.begin(), plan.end(),
                   [&](const auto& a, const auto& b) { return order(a) < order(b); });
  const std::size_t mark = out.size();
  for (const PlannedReversal& step : plan) {
    if (auto error =
            post(step.debit, step.credit, step.amount, step.kind, origin, out, step.corrects)) {
      ledger_.undo_since(out, mark);
      return *error;
    }
  }
  return Money::from_micros(reversed);
}

Result<Money, LinkError> Link::reverse_award(const Transfer& award, Origin origin,
                                             std::vector<Transfer>& out) {
  const bool meter_award =
      award.kind == TransferKind::award && award.debit.kind == AccountKind::meter;
  const bool tray_pay = award.kind == TransferKind::tray_pay;
  if (!meter_award && !tray_pay) return LinkError::not_an_award;
  if (!ledger_.has(award.debit) || !ledger_.has(award.credit)) return LinkError::foreign_transfer;
  const std::size_t mark = out.size();
  const Money meter_before = meter_award ? meter(award.debit.level) : Money();
  const TransferKind kind =
      meter_award ? TransferKind::award_reversal : TransferKind::tray_pay_reversal;
  if (auto error = post(AccountRef::link(AccountKind::awards_payable), award.debit, award.amount,
                        kind, origin, out, award.id)) {
    return *error;
  }
  if (meter_award) {
    const std::uint32_t level = award.debit.level;
    std::optional<LinkError> error;
    if (levels_[level - 1].rules.must_hit_by) {
      // A returned Must-Hit-By award may not lift the meter to its trigger, nor a hidden one
      // past what its committed range says (hidden_return_limit): the excess waits in the
      // reserve for the next reset.
      const std::optional<HiddenTrigger>& hidden = levels_[level - 1].hidden;
      const Money cap = hidden ? hidden_return_limit(*hidden, meter_before) : *live_cap(level);
      if (meter(level) > cap) {
        error = post(AccountRef::meter(level), AccountRef::reserve(level),
                     Money::from_micros(meter(level).micros() - cap.micros()),
                     TransferKind::overflow, origin, out);
      }
    } else {
      error = overflow_above_ceiling(level, origin, out);
    }
    if (error) {
      ledger_.undo_since(out, mark);
      return *error;
    }
  }
  return award.amount;
}

Result<TransferId, LinkError> Link::pay_award(const Transfer& award, Origin origin,
                                              std::vector<Transfer>& out) {
  if (award.kind != TransferKind::award && award.kind != TransferKind::tray_pay) {
    return LinkError::not_an_award;
  }
  if (!ledger_.has(award.debit) || !ledger_.has(award.credit)) return LinkError::foreign_transfer;
  if (auto error =
          post(AccountRef::link(AccountKind::awards_payable), AccountRef::link(AccountKind::paid),
               award.amount, TransferKind::payout, origin, out)) {
    return *error;
  }
  return out.back().id;
}

Result<TransferId, LinkError> Link::record_tray_pay(Money amount, Origin origin,
                                                    std::vector<Transfer>& out) {
  if (amount <= kZero) return LinkError::amount_not_positive;
  if (auto error = post(AccountRef::link(AccountKind::tray_paid),
                        AccountRef::link(AccountKind::awards_payable), amount,
                        TransferKind::tray_pay, origin, out)) {
    return *error;
  }
  return out.back().id;
}

AdjustmentFacts Link::adjustment_facts(std::uint32_t level) const {
  const LevelState& state = levels_[level - 1];
  AdjustmentFacts facts;
  facts.meter = meter(level);
  facts.seed_funding = ledger_.balance(AccountRef::link(AccountKind::seed_funding));
  facts.ceiling = state.rules.ceiling;
  facts.must_hit_by = state.rules.must_hit_by;
  if (state.hidden) facts.hidden_range_above = state.hidden->range_above;
  facts.seed = state.rules.seed;
  return facts;
}

Result<TransferId, LinkError> Link::adjust_meter(std::uint32_t level, Money delta,
                                                 std::string_view reason, Origin origin,
                                                 std::vector<Transfer>& out) {
  if (!has_level(level)) return LinkError::unknown_level;
  if (delta == kZero) return LinkError::zero_adjustment;
  if (reason.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return LinkError::reason_missing;
  }
  if (const auto refusal = adjustment_refusal(delta, adjustment_facts(level))) {
    switch (*refusal) {
      case AdjustmentRefusal::zero_amount:
        return LinkError::zero_adjustment;
      case AdjustmentRefusal::overflow:
        return LinkError::overflow;
      case AdjustmentRefusal::below_zero:
      case AdjustmentRefusal::below_seed:
      case AdjustmentRefusal::locked_round:  // The link knows no rounds: never here.
        return LinkError::insufficient_balance;
      case AdjustmentRefusal::above_ceiling:
      case AdjustmentRefusal::must_hit_by:
      case AdjustmentRefusal::hidden_trigger:
        return LinkError::above_ceiling;
    }
  }
  const auto seed_funding = AccountRef::link(AccountKind::seed_funding);
  const auto meter_account = AccountRef::meter(level);
  const bool raise = delta > kZero;
  const Money amount = raise ? delta : Money::from_micros(-delta.micros());
  const auto posted =
      post(raise ? seed_funding : meter_account, raise ? meter_account : seed_funding, amount,
           TransferKind::adjustment, origin, out);
  JACKPOT_INVARIANT(!posted, "an adjustment the rule admits posts");
  return out.back().id;
}

Link::Checkpoint Link::checkpoint(const std::vector<Transfer>& out) const {
  Checkpoint checkpoint{out.size(), {}};
  for (const LevelState& state : levels_) {
    if (state.hidden) {
      checkpoint.hidden.reserve(levels_.size());
      for (const LevelState& each : levels_) checkpoint.hidden.push_back(each.hidden);
      break;
    }
  }
  return checkpoint;
}

void Link::rollback(const Checkpoint& checkpoint, std::vector<Transfer>& out) {
  ledger_.undo_since(out, checkpoint.mark);
  for (std::size_t i = 0; i < checkpoint.hidden.size(); ++i) {
    levels_[i].hidden = checkpoint.hidden[i];
  }
}

std::optional<std::string> Link::check_invariants() const {
  if (auto broken = ledger_.check()) return broken;
  for (std::uint32_t level = 1; level <= level_count(); ++level) {
    const auto& ceiling = levels_[level - 1].rules.ceiling;
    if (ceiling && meter(level) > *ceiling) {
      return "meter[" + std::to_string(level) + "] " + meter(level).to_string() +
             " is above its ceiling " + ceiling->to_string();
    }
    const LevelState& state = levels_[level - 1];
    if (state.rules.must_hit_by && meter(level) >= *state.rules.must_hit_by) {
      return "meter[" + std::to_string(level) + "] " + meter(level).to_string() +
             " reached its Must-Hit-By amount " + state.rules.must_hit_by->to_string() +
             " without a hit";
    }
    // A hidden point lies in (the reset value it was drawn above, the amount].
    if (state.hidden && state.rules.must_hit_by &&
        (state.hidden->point > *state.rules.must_hit_by ||
         state.hidden->point <= state.hidden->range_above)) {
      return "meter[" + std::to_string(level) + "]'s hidden point " +
             state.hidden->point.to_string() + " is outside (" +
             state.hidden->range_above.to_string() + ", " + state.rules.must_hit_by->to_string() +
             "]";
    }
    if (const auto trigger = trigger_point(level); trigger && meter(level) >= *trigger) {
      return "meter[" + std::to_string(level) + "] " + meter(level).to_string() +
             " reached its Must-Hit-By point " + trigger->to_string() + " without a hit";
    }
  }
  return std::nullopt;
}

}  // namespace jackpot
