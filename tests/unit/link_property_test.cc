// A seeded property test of jackpot::Link against a reference model written from the rules in
// docs/architecture.md §3-4 and the comments of the meters/ headers, not from meters/link.cc.
// Millions of random operations, valid and deliberately invalid, run against several random link
// configurations. After every step the model's balances must equal the link's (and those replayed
// from the emitted transfers), every invariant must hold and each level's reconciliation of the
// step must balance; every 20,000 steps, and at the end, the auditor's reconciliation over every
// transfer since the link opened must balance term by term. A refused call must leave the link
// exactly as it was.
//
// The seed is printed; replay a failure with JACKPOTD_PROPERTY_SEED=<seed> meters_property_tests
// (decimal or 0x-hex). The failure names the configuration, the step, the last operations and the
// link's configuration.
//
// At the end, small fixed tests pin the rules where a reset or an adjustment meets a ceiling or a
// Must-Hit-By amount.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "meters/digest.h"
#include "meters/hidden_trigger.h"
#include "meters/invariant.h"
#include "meters/ledger.h"
#include "meters/link.h"
#include "meters/link_config.h"
#include "meters/money.h"
#include "meters/random.h"
#include "meters/reconcile.h"

namespace jackpot {

// Link::reset() on its own, all or nothing like every public operation. It is private: the
// daemon resets a level only as part of an award of 100% or a Must-Hit-By hit. The model drives
// it alone to check its cap rules on meters that are not empty.
struct LinkTestAccess {
  static Result<ResetResult, LinkError> reset(Link& link, std::uint32_t level, Origin origin,
                                              std::vector<Transfer>& out) {
    if (level < 1 || level > link.level_count()) return LinkError::unknown_level;
    const Link::Checkpoint checkpoint = link.checkpoint(out);
    auto result = link.reset(level, origin, out);
    if (!result) link.rollback(checkpoint, out);
    return result;
  }
};
namespace {

__extension__ typedef __int128 i128;

constexpr std::uint32_t kMaxLevels = 4;
constexpr i128 kMicrosPerUnit = Money::kMicrosPerUnit;
constexpr i128 kCent = Money::kMicrosPerCent;
constexpr i128 kMax64 = std::numeric_limits<std::int64_t>::max();
constexpr i128 kMin64 = std::numeric_limits<std::int64_t>::min();

constexpr std::uint64_t kDefaultSeed = 0x6a61636b706f7464;  // "jackpotd"
constexpr int kConfigs = 40;
constexpr std::uint64_t kStepsPerConfig = 100'000;  // 40 x 100,000 = 4,000,000 operations.
constexpr std::uint64_t kFullReconciliationEvery = 20'000;
constexpr std::size_t kRecentRounds = 8;
constexpr std::size_t kMaxPending = 48;
constexpr std::size_t kHistory = 24;
constexpr std::int64_t kMaxUnits = 50;

// ---------------------------------------------------------------------------------------------
// Arithmetic of the model: 128 bits, so that the model itself can never overflow.

bool fits64(i128 value) { return value >= kMin64 && value <= kMax64; }

// Rounds toward negative infinity, as the rules' floor does.
i128 floor_div(i128 numerator, i128 denominator) {
  i128 quotient = numerator / denominator;
  if (numerator % denominator != 0 && (numerator < 0) != (denominator < 0)) --quotient;
  return quotient;
}

i128 floor_to_cent(i128 micros) { return floor_div(micros, kCent) * kCent; }

i128 round_up(i128 value, i128 step) { return (value + step - 1) / step * step; }

Money money(i128 micros) { return Money::from_micros(static_cast<std::int64_t>(micros)); }

std::string show(i128 micros) {
  return fits64(micros) ? money(micros).to_string() : std::string("<beyond int64>");
}

std::string show(std::optional<LinkError> error) {
  return error ? "refusal '" + std::string(to_string(*error)) + "'" : std::string("success");
}

// ---------------------------------------------------------------------------------------------
// The seed and the test's own dice.

// JACKPOTD_PROPERTY_SEED (decimal, or hex with 0x) when set, so a failure can be replayed; else a
// fixed default, so that a plain run is repeatable.
std::optional<std::uint64_t> property_seed() {
  const char* text = std::getenv("JACKPOTD_PROPERTY_SEED");
  if (text == nullptr || *text == '\0') return kDefaultSeed;
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 0);
  if (errno != 0 || end == nullptr || *end != '\0' || *text == '-') return std::nullopt;
  return static_cast<std::uint64_t>(value);
}

// The operation choices. A slight modulo bias is harmless here: it only shapes the workload.
class Dice {
 public:
  explicit Dice(std::uint64_t seed) : source_(seed) {}
  std::uint64_t below(std::uint64_t bound) { return source_.next_u64() % bound; }
  std::int64_t between(std::int64_t low, std::int64_t high) {
    return low + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(high - low) + 1));
  }
  bool percent(std::uint64_t chance) { return below(100) < chance; }

 private:
  SplitMix64 source_;
};

// ---------------------------------------------------------------------------------------------
// Random valid configurations.

// A per-$1 amount (or a rate in ppm) at the link's base wager: amount x base / $1.
i128 at_base(i128 per_dollar, Money base) { return per_dollar * base.micros() / kMicrosPerUnit; }

// The largest meter contribution of one operation, at the link's base wager.
i128 largest_contribution(const LevelConfig& level, Money base) {
  return kMaxUnits * at_base(level.meter_rate_ppm, base);
}

LevelConfig random_level(Dice& dice, std::uint32_t number) {
  LevelConfig level;
  level.level = number;
  level.name = "Level " + std::to_string(number);
  // Multiples of 4 ppm and of 4 cents keep every amount exact at a $0.25 base; the rates of four
  // levels stay well under the whole wager. Most rates give sub-cent meters; round ones give
  // whole cents, so that meters land exactly on Must-Hit-By amounts and ceilings.
  constexpr std::array<std::int64_t, 4> kRoundRates{10'000, 20'000, 40'000, 60'000};
  level.meter_rate_ppm = dice.percent(35) ? kRoundRates[dice.below(kRoundRates.size())]
                                          : 4 * dice.between(250, 15'000);
  level.reserve_rate_ppm = dice.percent(30) ? 0 : 4 * dice.between(1, 5'000);
  level.seed = Money::from_micros(static_cast<std::int64_t>(4 * kCent * dice.between(25, 5'000)));
  return level;
}

void add_ceiling(Dice& dice, LevelConfig& level, Money base) {
  const i128 seed = at_base(level.seed.micros(), base);
  // Mostly room for 1 to 40 of the largest contributions above the seed; sometimes a cent or
  // three, the tightest ceiling validate() allows.
  const i128 room = dice.percent(10)
                        ? kCent * dice.between(1, 3)
                        : round_up(largest_contribution(level, base) * dice.between(1, 40), kCent);
  level.ceiling = money(seed + room);
}

void add_must_hit_by(Dice& dice, LevelConfig& level, bool hidden) {
  // Per $1: 3 to 40 times the largest contribution (50 units x rate x $1 / 10^6 = 50 x rate
  // micros) above the seed, so that one operation cannot carry a reset meter past the amount.
  const i128 largest_per_dollar = kMaxUnits * i128{level.meter_rate_ppm};
  const i128 margin = round_up(largest_per_dollar * dice.between(3, 40), 4 * kCent);
  level.must_hit_by = money(level.seed.micros() + margin);
  level.trigger = hidden ? TriggerMode::hidden_uniform : TriggerMode::at_amount;
}

// Half of the capped levels overflow into another non-Must-Hit-By level's meter. A random
// ranking orders the levels and a level overflows only into a higher-ranked one: no cycle.
void choose_overflow_targets(Dice& dice, LinkConfig& config) {
  std::vector<std::uint64_t> rank(config.levels.size());
  std::iota(rank.begin(), rank.end(), std::uint64_t{0});
  for (std::size_t i = rank.size(); i > 1; --i) std::swap(rank[i - 1], rank[dice.below(i)]);
  for (std::size_t from = 0; from < config.levels.size(); ++from) {
    if (!config.levels[from].ceiling || dice.percent(50)) continue;
    std::vector<std::uint32_t> targets;
    for (std::size_t to = 0; to < config.levels.size(); ++to) {
      if (to != from && !config.levels[to].must_hit_by && rank[to] > rank[from]) {
        targets.push_back(static_cast<std::uint32_t>(to + 1));
      }
    }
    if (!targets.empty()) config.levels[from].overflow_level = targets[dice.below(targets.size())];
  }
}

LinkConfig random_config(Dice& dice, int index) {
  LinkConfig config;
  config.id = LinkId("property-" + std::to_string(index));
  constexpr std::array<std::int64_t, 3> kBases{1'000'000, 5'000'000, 250'000};
  config.base_wager = Money::from_micros(kBases[dice.below(kBases.size())]);
  const auto count = static_cast<std::uint32_t>(1 + dice.below(kMaxLevels));
  for (std::uint32_t number = 1; number <= count; ++number) {
    LevelConfig level = random_level(dice, number);
    const std::uint64_t shape = dice.below(100);
    if (shape >= 25 && shape < 65) add_ceiling(dice, level, config.base_wager);
    if (shape >= 65) add_must_hit_by(dice, level, shape >= 83);
    config.levels.push_back(level);
  }
  choose_overflow_targets(dice, config);
  return config;
}

std::string describe(const LinkConfig& config) {
  std::string text = "link " + config.id.value() + " base " + config.base_wager.to_string();
  for (const LevelConfig& level : config.levels) {
    text += "\n  level " + std::to_string(level.level) + ": seed " + level.seed.to_string() +
            " per $1 (" + money(at_base(level.seed.micros(), config.base_wager)).to_string() + ")" +
            " meter " + std::to_string(level.meter_rate_ppm) + " ppm, reserve " +
            std::to_string(level.reserve_rate_ppm) + " ppm";
    if (level.ceiling) {
      text += ", ceiling " + level.ceiling->to_string() + " -> " +
              (level.overflow_level == 0 ? std::string("reserve")
                                         : "meter " + std::to_string(level.overflow_level));
    }
    if (level.must_hit_by) {
      text += ", must hit by " + level.must_hit_by->to_string() + " per $1 (" +
              money(at_base(level.must_hit_by->micros(), config.base_wager)).to_string() + ")" +
              (level.trigger == TriggerMode::hidden_uniform ? " (hidden)" : " (at amount)");
    }
  }
  return text;
}

// ---------------------------------------------------------------------------------------------
// The reference model: the rules, the books, and one function per operation.

struct LevelModel {
  i128 seed = 0;  // Scaled by the base wager.
  i128 meter_per_unit = 0;
  i128 reserve_per_unit = 0;
  std::optional<i128> ceiling;
  std::uint32_t overflow_level = 0;
  std::optional<i128> must_hit_by;  // Scaled by the base wager.
  bool hidden = false;
};

// The rules of one link as docs/architecture.md §2-4 and link_config.h state them.
class Rules {
 public:
  explicit Rules(const LinkConfig& config) : base_(config.base_wager.micros()) {
    for (const LevelConfig& level : config.levels) levels_.push_back(derive(level));
  }
  std::uint32_t count() const { return static_cast<std::uint32_t>(levels_.size()); }
  const LevelModel& level(std::uint32_t number) const { return levels_[number - 1]; }
  // Amounts the valid configuration should have made exact but did not.
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  // amount x base / 10^6: a per-$1 amount at the base, or the base times a rate in ppm.
  i128 scaled(i128 amount, const char* what) {
    if (amount * base_ % kMicrosPerUnit != 0) problems_.push_back(std::string(what) + " inexact");
    return amount * base_ / kMicrosPerUnit;
  }
  LevelModel derive(const LevelConfig& config) {
    LevelModel derived;
    derived.seed = scaled(config.seed.micros(), "seed");
    derived.meter_per_unit = scaled(config.meter_rate_ppm, "meter rate");
    derived.reserve_per_unit = scaled(config.reserve_rate_ppm, "reserve rate");
    if (config.ceiling) derived.ceiling = config.ceiling->micros();  // A ceiling is absolute.
    derived.overflow_level = config.overflow_level;
    if (config.must_hit_by) derived.must_hit_by = scaled(config.must_hit_by->micros(), "amount");
    derived.hidden = config.trigger == TriggerMode::hidden_uniform;
    return derived;
  }

  i128 base_;
  std::vector<LevelModel> levels_;
  std::vector<std::string> problems_;
};

struct Balances {
  i128 wagers = 0;
  i128 seed_funding = 0;
  i128 awards_payable = 0;
  i128 paid = 0;
  i128 tray_paid = 0;
  std::array<i128, kMaxLevels + 1> meter{};  // By level number; [0] unused.
  std::array<i128, kMaxLevels + 1> reserve{};

  i128& at(AccountRef account) { return field(*this, account); }
  i128 get(AccountRef account) const { return field(*this, account); }
  i128 sum() const {
    i128 total = wagers + seed_funding + awards_payable + paid + tray_paid;
    for (std::size_t level = 1; level <= kMaxLevels; ++level)
      total += meter[level] + reserve[level];
    return total;
  }
  bool fit() const {
    for (const i128 value : {wagers, seed_funding, awards_payable, paid, tray_paid}) {
      if (!fits64(value)) return false;
    }
    return std::all_of(meter.begin(), meter.end(), fits64) &&
           std::all_of(reserve.begin(), reserve.end(), fits64);
  }
  friend bool operator==(const Balances&, const Balances&) = default;

 private:
  template <typename Self>
  static std::conditional_t<std::is_const_v<Self>, const i128&, i128&> field(Self& self,
                                                                             AccountRef account) {
    switch (account.kind) {
      case AccountKind::wagers:
        return self.wagers;
      case AccountKind::seed_funding:
        return self.seed_funding;
      case AccountKind::awards_payable:
        return self.awards_payable;
      case AccountKind::paid:
        return self.paid;
      case AccountKind::tray_paid:
        return self.tray_paid;
      case AccountKind::meter:
        return self.meter[account.level];
      case AccountKind::reserve:
        return self.reserve[account.level];
    }
    std::abort();  // Every kind is handled above.
  }
};

// A level's reconciliation terms as the model accounts them (reconcile.h), cumulative since the
// link opened; reversals count against the term of what they reverse.
struct Terms {
  i128 contributions = 0;
  i128 seeds = 0;
  i128 overflow_in = 0;
  i128 adjustments = 0;
  i128 awards = 0;
  i128 overflow_out = 0;
};

struct Books {
  Balances balances;
  std::array<Terms, kMaxLevels + 1> terms{};
};

bool is_source(AccountKind kind) {
  return kind == AccountKind::wagers || kind == AccountKind::seed_funding ||
         kind == AccountKind::tray_paid;
}

// One posting: refused when a non-source account would go below zero or a balance would leave
// int64 (ledger.h).
std::optional<LinkError> model_post(Balances& balances, AccountRef from, AccountRef to,
                                    i128 amount) {
  const i128 new_from = balances.get(from) - amount;
  const i128 new_to = balances.get(to) + amount;
  if (!fits64(new_from) || !fits64(new_to)) return LinkError::overflow;
  if (new_from < 0 && !is_source(from.kind)) return LinkError::insufficient_balance;
  balances.at(from) = new_from;
  balances.at(to) = new_to;
  return std::nullopt;
}

// Adds `amount` to a meter: what its ceiling does not admit goes on to the overflow target (its
// reserve, or another level's meter, which may itself be capped).
void fill_meter(const Rules& rules, Books& books, std::uint32_t level, i128 amount) {
  const LevelModel& rule = rules.level(level);
  i128& meter = books.balances.meter[level];
  const i128 admitted = rule.ceiling ? std::clamp(*rule.ceiling - meter, i128{0}, amount) : amount;
  meter += admitted;
  const i128 excess = amount - admitted;
  if (excess == 0) return;
  if (rule.overflow_level == 0) {
    books.balances.reserve[level] += excess;
    return;
  }
  books.terms[level].overflow_out += excess;
  books.terms[rule.overflow_level].overflow_in += excess;
  fill_meter(rules, books, rule.overflow_level, excess);
}

struct ResetAmounts {
  i128 seed = 0;
  i128 released = 0;
};

// The most a meter may show outside a contribution: its ceiling, or a cent below its
// Must-Hit-By amount (link.h).
std::optional<i128> model_cap(const LevelModel& rule) {
  if (rule.must_hit_by) return *rule.must_hit_by - kCent;
  return rule.ceiling;
}

// meter += seed + reserve, both only up to the meter's cap (link.h); on a hidden-trigger level
// the reserve only up to the middle of (seed, amount], to the cent below it, so that the next
// point keeps at least half of that range (hidden_trigger.h, #32).
ResetAmounts model_reset(const Rules& rules, Books& books, std::uint32_t level) {
  const LevelModel& rule = rules.level(level);
  Balances& balances = books.balances;
  const std::optional<i128> limit = model_cap(rule);
  i128 seed = rule.seed;
  if (limit) seed = std::min(seed, std::max(i128{0}, *limit - balances.meter[level]));
  balances.seed_funding -= seed;
  balances.meter[level] += seed;
  books.terms[level].seeds += seed;
  i128 released = balances.reserve[level];
  if (limit) released = std::min(released, std::max(i128{0}, *limit - balances.meter[level]));
  if (rule.hidden) {
    const i128 middle = rule.seed + (*rule.must_hit_by - rule.seed) / 2 / kCent * kCent;
    released = std::min(released, std::max(i128{0}, middle - balances.meter[level]));
  }
  balances.reserve[level] -= released;
  balances.meter[level] += released;
  return {seed, released};
}

void model_award(Books& books, std::uint32_t level, i128 amount) {
  books.balances.meter[level] -= amount;
  books.balances.awards_payable += amount;
  books.terms[level].awards += amount;
}

using Triggers = std::array<std::optional<i128>, kMaxLevels + 1>;

struct ContributionModel {
  i128 meters = 0;
  i128 reserves = 0;
  std::array<std::optional<i128>, kMaxLevels + 1> hit;  // The award of each level that hit.
  std::array<bool, kMaxLevels + 1> exact{};             // The meter was exactly at the trigger.
  std::array<ResetAmounts, kMaxLevels + 1> reset{};
};

// Every level gets units x rate on its meter (through its ceiling) and on its reserve; then each
// Must-Hit-By level at or past its trigger awards exactly the trigger point and resets.
std::optional<LinkError> model_contribute(const Rules& rules, const Triggers& triggers,
                                          Books& books, std::int64_t units,
                                          ContributionModel& result) {
  if (units <= 0) return LinkError::units_not_positive;
  bool fits = true;
  for (std::uint32_t level = 1; level <= rules.count(); ++level) {
    const i128 to_meter = units * rules.level(level).meter_per_unit;
    const i128 to_reserve = units * rules.level(level).reserve_per_unit;
    result.meters += to_meter;
    result.reserves += to_reserve;
    fits = fits && fits64(to_meter) && fits64(to_reserve);
    books.balances.wagers -= to_meter + to_reserve;
    books.terms[level].contributions += to_meter + to_reserve;
    fill_meter(rules, books, level, to_meter);
    books.balances.reserve[level] += to_reserve;
  }
  if (!fits || !fits64(result.meters) || !fits64(result.reserves)) return LinkError::overflow;
  for (std::uint32_t level = 1; level <= rules.count(); ++level) {
    if (!triggers[level] || books.balances.meter[level] < *triggers[level]) continue;
    result.exact[level] = books.balances.meter[level] == *triggers[level];
    result.hit[level] = *triggers[level];
    model_award(books, level, *triggers[level]);
    result.reset[level] = model_reset(rules, books, level);
  }
  if (!books.balances.fit()) return LinkError::overflow;
  return std::nullopt;
}

// A void (link.h plan_round_reversal), modelled money first: the round's money is followed as
// parcels from the wagers through each overflow to the account where it rests (an overflow
// splits off the parcel that the transfer just before it brought into that meter). A parcel that
// rests in a level whose meter paid no award since the lock goes back along its path: its
// holdings drop, and every hop's terms (contribution, overflow out and in) are undone. A parcel
// resting in a level that paid an award since stays there with the terms that carried it, and the
// house refunds it from seed_funding. Refused when a level lacks what is taken back.
std::optional<LinkError> model_reverse_round(const Rules& rules, Books& books,
                                             std::span<const Transfer> round,
                                             const std::array<bool, kMaxLevels + 1>& awarded,
                                             i128& contributed) {
  struct Parcel {
    i128 amount = 0;
    std::vector<const Transfer*> path;
    AccountRef rest;
  };
  std::vector<Parcel> parcels;
  std::array<std::optional<std::size_t>, kMaxLevels + 1> last_into_meter{};
  for (const Transfer& t : round) {
    const i128 amount = t.amount.micros();
    if (t.kind == TransferKind::contribution) {
      contributed += amount;
      parcels.push_back({amount, {&t}, t.credit});
    } else {
      const auto feeding = last_into_meter[t.debit.level];
      if (!feeding || parcels[*feeding].amount < amount) return LinkError::not_reversible;
      parcels[*feeding].amount -= amount;
      Parcel moved{amount, parcels[*feeding].path, t.credit};
      moved.path.push_back(&t);
      parcels.push_back(std::move(moved));
    }
    if (t.credit.kind == AccountKind::meter) last_into_meter[t.credit.level] = parcels.size() - 1;
  }
  Balances& balances = books.balances;
  for (const Parcel& parcel : parcels) {
    if (parcel.amount == 0) continue;
    balances.wagers += parcel.amount;
    if (awarded[parcel.rest.level]) {
      balances.seed_funding -= parcel.amount;
      continue;
    }
    balances.at(parcel.rest) -= parcel.amount;
    for (const Transfer* hop : parcel.path) {
      if (hop->kind == TransferKind::contribution) {
        books.terms[hop->credit.level].contributions -= parcel.amount;
      } else if (hop->credit.kind == AccountKind::meter) {
        books.terms[hop->debit.level].overflow_out -= parcel.amount;
        books.terms[hop->credit.level].overflow_in -= parcel.amount;
      }
    }
  }
  for (std::uint32_t level = 1; level <= rules.count(); ++level) {
    if (balances.meter[level] < 0 || balances.reserve[level] < 0) {
      return LinkError::insufficient_balance;
    }
  }
  return std::nullopt;
}

// A rejected payout: a meter award goes back to its meter (through the ceiling as usual), a tray
// pay back to the tray.
// The most a running level's meter may show outside a contribution: its ceiling, or a cent
// below the trigger point in force (the hidden point or the amount) (link.h live_cap).
std::optional<i128> model_live_cap(const LevelModel& rule, const std::optional<i128>& trigger) {
  if (trigger) return *trigger - kCent;
  return rule.ceiling;
}

void model_reverse_award(const Rules& rules, Books& books, const Transfer& award,
                         const std::optional<i128>& trigger,
                         const std::optional<i128>& hidden_above) {
  const i128 amount = award.amount.micros();
  books.balances.awards_payable -= amount;
  if (award.kind == TransferKind::tray_pay) {
    books.balances.tray_paid += amount;
    return;
  }
  const std::uint32_t level = award.debit.level;
  books.terms[level].awards -= amount;
  const LevelModel& rule = rules.level(level);
  if (!rule.must_hit_by) {
    fill_meter(rules, books, level, amount);
    return;
  }
  // A Must-Hit-By meter takes it back only up to a cent below its amount, a hidden-trigger one
  // only up to the value its point was drawn above (or not at all once contributions carried it
  // past that: #32); the rest waits in its reserve (money stays within the level).
  Balances& balances = books.balances;
  const i128 cap = hidden_above ? std::max(*hidden_above, balances.meter[level])
                                : *model_live_cap(rule, trigger);
  balances.meter[level] += amount;
  const i128 excess = std::max(i128{0}, balances.meter[level] - cap);
  balances.meter[level] -= excess;
  balances.reserve[level] += excess;
}

// An operator's correction: from seed_funding up to the lowest of the ceiling, a cent below the
// Must-Hit-By amount and the value a hidden point was drawn above (`hidden_above`), or back to
// it down to the level's seed (#32), never below zero. Either side leaving the int64 range is
// checked first.
std::optional<LinkError> model_adjust(const Rules& rules, Books& books, std::uint32_t level,
                                      i128 delta, const std::optional<i128>& hidden_above) {
  const LevelModel& rule = rules.level(level);
  const auto meter = AccountRef::meter(level);
  const auto seed_funding = AccountRef::link(AccountKind::seed_funding);
  const i128 raised = books.balances.meter[level] + delta;
  if (!fits64(raised) || !fits64(books.balances.get(seed_funding) - delta)) {
    return LinkError::overflow;
  }
  if (raised < 0) return LinkError::insufficient_balance;
  if (delta < 0 && raised < rule.seed) return LinkError::insufficient_balance;
  if (delta > 0) {
    std::optional<i128> cap = rule.ceiling;
    const auto lower = [&cap](i128 bound) { cap = cap ? std::min(*cap, bound) : bound; };
    if (rule.must_hit_by) lower(*rule.must_hit_by - kCent);
    if (hidden_above) lower(*hidden_above);
    if (cap && raised > *cap) return LinkError::above_ceiling;
  }
  const auto error = delta > 0 ? model_post(books.balances, seed_funding, meter, delta)
                               : model_post(books.balances, meter, seed_funding, -delta);
  if (!error) books.terms[level].adjustments += delta;
  return error;
}

// ---------------------------------------------------------------------------------------------
// The property run: one link, its model, and the checks.

struct Stats {
  std::uint64_t operations = 0;
  std::uint64_t refusals_checked = 0;
  std::uint64_t transfers = 0;
  std::uint64_t hits_at_amount = 0;
  std::uint64_t hits_hidden = 0;
  std::uint64_t exact_hits = 0;
  std::uint64_t overflows_to_reserve = 0;
  std::uint64_t overflows_to_meter = 0;
  std::uint64_t rounds_reversed = 0;
  std::uint64_t round_reversals_refused = 0;
  std::uint64_t round_reversals_after_awards = 0;  // Voids after an award on a level since.
  std::uint64_t awards_reversed = 0;
  std::uint64_t payouts = 0;
  std::uint64_t zero_awards = 0;
  std::uint64_t adjustments_refused = 0;
  std::uint64_t full_reconciliations = 0;
  std::uint64_t seeds_cut = 0;  // Resets whose seed the ceiling cut short.
  std::uint64_t hidden_draws = 0;
  double draw_position_sum = 0;  // Where each hidden point fell in its range, 0..1.
  std::uint64_t draw_positions = 0;
};

struct OpRecord {
  std::uint64_t step = 0;
  std::string_view name;
  std::int64_t first = 0;
  std::int64_t second = 0;
  std::uint64_t round = 0;
  std::optional<LinkError> refusal;  // For a deliberately invalid call.
};

using KindSet = std::uint32_t;
constexpr KindSet kind_bit(TransferKind kind) { return KindSet{1} << static_cast<unsigned>(kind); }
constexpr KindSet kResetKinds =
    kind_bit(TransferKind::seed) | kind_bit(TransferKind::reserve_release);
constexpr KindSet kAwardKinds = kind_bit(TransferKind::award) | kResetKinds;
constexpr KindSet kContributionKinds =
    kind_bit(TransferKind::contribution) | kind_bit(TransferKind::overflow) | kAwardKinds;
constexpr KindSet kRoundReversalKinds = kind_bit(TransferKind::contribution_reversal) |
                                        kind_bit(TransferKind::overflow_reversal) |
                                        kind_bit(TransferKind::house_funded_refund);
constexpr KindSet kAwardReversalKinds = kind_bit(TransferKind::award_reversal) |
                                        kind_bit(TransferKind::tray_pay_reversal) |
                                        kind_bit(TransferKind::overflow);

std::uint32_t level_bit(std::uint32_t level) { return std::uint32_t{1} << level; }

bool same_trigger(const HiddenTrigger& a, const HiddenTrigger& b) {
  return a.point == b.point && a.salt == b.salt && a.commitment == b.commitment &&
         a.range_above == b.range_above && a.range_up_to == b.range_up_to;
}

// hidden_trigger.h: commitment = SHA-256(point || salt), the point in micros as 8 bytes,
// big-endian two's complement. Built here byte by byte rather than through trigger_commitment().
Sha256Digest documented_commitment(Money point, const TriggerSalt& salt) {
  std::array<std::uint8_t, 8 + 32> message{};
  const auto bits = static_cast<std::uint64_t>(point.micros());
  for (std::size_t byte = 0; byte < 8; ++byte) {
    message[byte] = static_cast<std::uint8_t>((bits >> (8 * (7 - byte))) & 0xff);
  }
  std::copy(salt.begin(), salt.end(), message.begin() + 8);
  return sha256(message);
}

bool is_reversal(TransferKind kind) {
  return kind == TransferKind::contribution_reversal || kind == TransferKind::overflow_reversal ||
         kind == TransferKind::award_reversal || kind == TransferKind::tray_pay_reversal ||
         kind == TransferKind::house_funded_refund;
}

bool is_link_account(AccountRef account, AccountKind kind) {
  return account.kind == kind && account.level == 0;
}

// The accounts each transfer kind moves money between (ledger.h).
bool well_formed(const Transfer& t) {
  using K = AccountKind;
  const bool meter_debit = t.debit.kind == K::meter;
  const bool meter_credit = t.credit.kind == K::meter;
  switch (t.kind) {
    case TransferKind::contribution:
      return is_link_account(t.debit, K::wagers) && (meter_credit || t.credit.kind == K::reserve);
    case TransferKind::overflow:
      return meter_debit && ((t.credit.kind == K::reserve && t.credit.level == t.debit.level) ||
                             (meter_credit && t.credit.level != t.debit.level));
    case TransferKind::award:
      return meter_debit && is_link_account(t.credit, K::awards_payable);
    case TransferKind::seed:
      return is_link_account(t.debit, K::seed_funding) && meter_credit;
    case TransferKind::reserve_release:
      return t.debit.kind == K::reserve && meter_credit && t.debit.level == t.credit.level;
    case TransferKind::adjustment:
      return (is_link_account(t.debit, K::seed_funding) && meter_credit) ||
             (meter_debit && is_link_account(t.credit, K::seed_funding));
    case TransferKind::tray_pay:
      return is_link_account(t.debit, K::tray_paid) && is_link_account(t.credit, K::awards_payable);
    case TransferKind::payout:
      return is_link_account(t.debit, K::awards_payable) && is_link_account(t.credit, K::paid);
    default:
      return true;  // Reversals are checked against what they correct.
  }
}

class LinkProperty {
 public:
  LinkProperty(const LinkConfig& config, Dice& dice, SplitMix64& link_random, Stats& stats)
      : config_text_(describe(config)), rules_(config), dice_(dice), stats_(stats) {
    for (const AccountKind kind :
         {AccountKind::wagers, AccountKind::seed_funding, AccountKind::awards_payable,
          AccountKind::paid, AccountKind::tray_paid}) {
      accounts_.push_back(AccountRef::link(kind));
    }
    for (std::uint32_t level = 1; level <= rules_.count(); ++level) {
      accounts_.push_back(AccountRef::meter(level));
      accounts_.push_back(AccountRef::reserve(level));
    }
    open(config, link_random);
  }

  void run(std::uint64_t steps) {
    while (problem_.empty() && step_ < steps) {
      ++step_;
      next_operation();
      ++stats_.operations;
      if (step_ % kFullReconciliationEvery == 0) check_full_reconciliation();
    }
    if (problem_.empty()) check_full_reconciliation();
  }

  const std::string& problem() const { return problem_; }

 private:
  // ----- bookkeeping of the run -----

  void fail(const std::string& message) {
    problem_ = "step " + std::to_string(step_) + ": " + message + "\nlast operations:";
    for (std::size_t i = 0; i < kHistory; ++i) {
      const OpRecord& op = history_[(step_ + 1 + i) % kHistory];
      if (op.name.empty()) continue;
      problem_ += "\n  step " + std::to_string(op.step) + ": " + std::string(op.name) + "(" +
                  std::to_string(op.first) + ", " + std::to_string(op.second) + ") round " +
                  std::to_string(op.round) +
                  (op.refusal ? ", must be refused: " + std::string(to_string(*op.refusal)) : "");
    }
    problem_ += "\n" + config_text_;
  }

  template <typename Describe>
  void require(bool holds, Describe&& describe_problem) {
    if (!holds && problem_.empty()) fail(describe_problem());
  }

  // Records the operation and gives it a fresh round (and payout) number.
  Origin begin(std::string_view name, std::int64_t first, std::int64_t second) {
    ++round_;
    history_[step_ % kHistory] = {step_, name, first, second, round_, std::nullopt};
    return Origin{round_, round_};
  }

  Triggers triggers() const {
    Triggers points;
    for (std::uint32_t level = 1; level <= rules_.count(); ++level) {
      const LevelModel& rule = rules_.level(level);
      if (rule.hidden && hidden_[level]) points[level] = hidden_[level]->point.micros();
      if (!rule.hidden && rule.must_hit_by) points[level] = *rule.must_hit_by;
    }
    return points;
  }

  // An award or tray pay just posted, now waiting to be paid or reversed.
  void add_pending(TransferId id) {
    require(id.value() >= next_id_ && id.value() - 1 < transfers_.size(),
            [&] { return "award id " + std::to_string(id.value()) + " names no new transfer"; });
    if (!problem_.empty()) return;
    const Transfer& transfer = transfers_[id.value() - 1];
    pending_.push_back(transfer);
    pending_total_ += transfer.amount.micros();
  }

  void remove_pending(std::size_t index) {
    pending_total_ -= pending_[index].amount.micros();
    pending_[index] = pending_.back();
    pending_.pop_back();
  }

  std::uint32_t random_level() {
    return static_cast<std::uint32_t>(1 + dice_.below(rules_.count()));
  }

  // A random level matching `must_hit_by`, if the link has one.
  std::optional<std::uint32_t> random_level_where(bool must_hit_by) {
    std::vector<std::uint32_t> levels;
    for (std::uint32_t level = 1; level <= rules_.count(); ++level) {
      if (rules_.level(level).must_hit_by.has_value() == must_hit_by) levels.push_back(level);
    }
    if (levels.empty()) return std::nullopt;
    return levels[dice_.below(levels.size())];
  }

  // ----- the operations -----

  void open(const LinkConfig& config, SplitMix64& link_random) {
    auto opened = Link::open(config, link_random, transfers_);
    require(opened.ok(), [] { return std::string("Link::open refused a valid configuration"); });
    require(rules_.problems().empty(), [] { return std::string("an amount is inexact"); });
    if (!opened.ok()) return;
    link_.emplace(std::move(opened).value());
    Books next = books_;
    std::uint32_t resets = 0;
    for (std::uint32_t level = 1; level <= rules_.count(); ++level) {
      model_reset(rules_, next, level);
      resets |= level_bit(level);
    }
    commit(next, 0, 0, kResetKinds, resets);
  }

  // Contributions dominate, as at a table; every other operation is common enough to meet
  // every state the contributions build. Payouts first when many awards wait, so that the
  // pending list (and the choice of awards to reverse) stays short.
  void next_operation() {
    if (pending_.size() > kMaxPending) return pay_award();
    const std::uint64_t roll = dice_.below(100);
    if (roll < 40) return contribute(dice_.between(1, kMaxUnits));
    if (roll < 48) return award_percent();
    if (roll < 51) return award_split();
    if (roll < 54) return reset();
    if (roll < 60) return reverse_round();
    if (roll < 65) return reverse_award();
    if (roll < 74) return pay_award();
    if (roll < 78) return record_tray_pay();
    if (roll < 86) return adjust_meter();
    return invalid_call();
  }

  void contribute(std::int64_t units) {
    const Origin origin = begin("contribute", units, 0);
    Books next = books_;
    ContributionModel expected;
    const auto refusal = model_contribute(rules_, triggers(), next, units, expected);
    const std::size_t mark = transfers_.size();
    const auto result = link_->contribute(units, Origin{origin.round, 0}, transfers_);
    if (!both_succeeded(result, refusal, mark)) return;
    require(result->meters.micros() == expected.meters &&
                result->reserves.micros() == expected.reserves,
            [&] {
              return "contribute(" + std::to_string(units) + ") reported meters " +
                     result->meters.to_string() + " reserves " + result->reserves.to_string() +
                     ", the rules say " + show(expected.meters) + " and " + show(expected.reserves);
            });
    std::uint32_t resets = 0;
    for (std::uint32_t level = 1; level <= rules_.count(); ++level) {
      if (expected.hit[level]) resets |= level_bit(level);
    }
    check_hits(*result, expected);
    for (const MustHitByHit& hit : result->hits) add_pending(hit.award);
    commit(next, mark, origin.round, kContributionKinds, resets);
    if (result->hits.empty() && transfers_.size() > mark) {
      recent_rounds_.emplace_back(transfers_.begin() + static_cast<std::ptrdiff_t>(mark),
                                  transfers_.end());
      if (recent_rounds_.size() > kRecentRounds) recent_rounds_.pop_front();
    }
  }

  void award_percent() {
    const auto level = random_level_where(false);
    if (!level) return contribute(dice_.between(1, kMaxUnits));
    constexpr std::array<std::int64_t, 6> kPercents{1, 5, 10, 25, 50, 100};
    const std::int64_t percent = kPercents[dice_.below(kPercents.size())];
    const Origin origin = begin("award_percent", *level, percent);
    Books next = books_;
    // floor_to_cent(meter x p / 100); the sub-cent residue stays on the meter.
    const i128 amount = floor_to_cent(floor_div(next.balances.meter[*level] * percent, 100));
    model_award(next, *level, amount);
    std::optional<ResetAmounts> expected_reset;
    if (percent == 100) expected_reset = model_reset(rules_, next, *level);
    const std::size_t mark = transfers_.size();
    const auto result = link_->award_percent(*level, percent, origin, transfers_);
    if (!both_succeeded(result, std::nullopt, mark)) return;
    check_award_transfer(result->amount, result->transfer, amount, *level);
    check_reset_result(result->reset, expected_reset, *level);
    if (amount > 0) add_pending(result->transfer);
    if (amount == 0) ++stats_.zero_awards;
    commit(next, mark, origin.round, kAwardKinds, expected_reset ? level_bit(*level) : 0);
  }

  void award_split() {
    const auto level = random_level_where(false);
    if (!level) return contribute(dice_.between(1, kMaxUnits));
    const auto winners = static_cast<std::int64_t>(1 + dice_.below(4));
    Books next = books_;
    // Each winner gets floor_to_cent(meter / winners); the remainder stays; one reset.
    const i128 share = floor_to_cent(floor_div(next.balances.meter[*level], winners));
    model_award(next, *level, share * winners);
    const ResetAmounts expected_reset = model_reset(rules_, next, *level);
    const Origin origin = begin("award_split", *level, winners);
    std::vector<Origin> origins;
    for (std::int64_t i = 0; i < winners; ++i) {
      origins.push_back({origin.round, origin.round * 8 + static_cast<std::uint64_t>(i)});
    }
    const std::size_t mark = transfers_.size();
    const auto result = link_->award_split(*level, origins, transfers_);
    if (!both_succeeded(result, std::nullopt, mark)) return;
    check_split(*result, share, origins, *level);
    check_reset_result(result->reset, expected_reset, *level);
    for (const TransferId id : result->transfers) add_pending(id);
    commit(next, mark, origin.round, kAwardKinds, level_bit(*level));
  }

  void reset() {
    const std::uint32_t level = random_level();
    Books next = books_;
    const ResetAmounts expected = model_reset(rules_, next, level);
    const Origin origin = begin("reset", level, 0);
    const std::size_t mark = transfers_.size();
    const auto result = LinkTestAccess::reset(*link_, level, origin, transfers_);
    if (!both_succeeded(result, std::nullopt, mark)) return;
    check_reset_result(*result, expected, level);
    commit(next, mark, origin.round, kResetKinds, level_bit(level));
  }

  void reverse_round() {
    if (recent_rounds_.empty()) return contribute(dice_.between(1, kMaxUnits));
    const std::size_t index = dice_.below(recent_rounds_.size());
    const std::vector<Transfer> round = recent_rounds_[index];
    const Origin origin =
        begin("reverse_round", static_cast<std::int64_t>(round.front().id.value()),
              static_cast<std::int64_t>(round.size()));
    // The levels whose meter paid an award since the round's lock.
    std::array<bool, kMaxLevels + 1> awarded{};
    std::vector<std::uint32_t> awarded_levels;
    for (std::size_t i = round.back().id.value(); i < transfers_.size(); ++i) {
      const Transfer& t = transfers_[i];
      if (t.kind == TransferKind::award && t.debit.kind == AccountKind::meter &&
          !awarded[t.debit.level]) {
        awarded[t.debit.level] = true;
        awarded_levels.push_back(t.debit.level);
      }
    }
    Books next = books_;
    i128 contributed = 0;
    const auto refusal = model_reverse_round(rules_, next, round, awarded, contributed);
    const std::size_t mark = transfers_.size();
    const auto result = link_->reverse_round(round, awarded_levels, origin, transfers_);
    if (!awarded_levels.empty()) ++stats_.round_reversals_after_awards;
    if (refusal) ++stats_.round_reversals_refused;
    if (!both_succeeded(result, refusal, mark)) return;
    require(result->micros() == contributed, [&] {
      return "reverse_round returned " + result->to_string() + ", contributed " + show(contributed);
    });
    commit(next, mark, origin.round, kRoundReversalKinds, 0);
    check_round_reversal(round, mark);
    recent_rounds_.erase(recent_rounds_.begin() + static_cast<std::ptrdiff_t>(index));
    ++stats_.rounds_reversed;
  }

  void reverse_award() {
    if (pending_.empty()) return record_tray_pay();
    const std::size_t index = dice_.below(pending_.size());
    const Transfer award = pending_[index];
    const Origin origin = begin("reverse_award", static_cast<std::int64_t>(award.id.value()), 0);
    Books next = books_;
    const bool meter_award = award.kind == TransferKind::award;
    const std::uint32_t level = award.debit.level;
    std::optional<i128> hidden_above;
    if (meter_award && rules_.level(level).hidden && hidden_[level]) {
      hidden_above = hidden_[level]->range_above.micros();
    }
    model_reverse_award(rules_, next, award, meter_award ? triggers()[level] : std::nullopt,
                        hidden_above);
    const std::size_t mark = transfers_.size();
    const auto result = link_->reverse_award(award, origin, transfers_);
    if (!both_succeeded(result, std::nullopt, mark)) return;
    require(*result == award.amount, [&] { return "reverse_award returned another amount"; });
    remove_pending(index);
    commit(next, mark, origin.round, kAwardReversalKinds, 0);
    require(transfers_.size() > mark && transfers_[mark].corrects == award.id,
            [&] { return "reverse_award did not first post the reversal of the award"; });
    ++stats_.awards_reversed;
  }

  void pay_award() {
    if (pending_.empty()) return contribute(dice_.between(1, kMaxUnits));
    const std::size_t index = dice_.below(pending_.size());
    const Transfer award = pending_[index];
    const Origin origin = begin("pay_award", static_cast<std::int64_t>(award.id.value()), 0);
    Books next = books_;
    model_post(next.balances, AccountRef::link(AccountKind::awards_payable),
               AccountRef::link(AccountKind::paid), award.amount.micros());
    const std::size_t mark = transfers_.size();
    const auto result = link_->pay_award(award, origin, transfers_);
    if (!both_succeeded(result, std::nullopt, mark)) return;
    remove_pending(index);
    commit(next, mark, origin.round, kind_bit(TransferKind::payout), 0);
    check_single_transfer(*result, mark, award.amount.micros());
    ++stats_.payouts;
  }

  void record_tray_pay() {
    const i128 amount = kCent * dice_.between(1, 50'000);
    const Origin origin = begin("record_tray_pay", static_cast<std::int64_t>(amount), 0);
    Books next = books_;
    const auto refusal = model_post(next.balances, AccountRef::link(AccountKind::tray_paid),
                                    AccountRef::link(AccountKind::awards_payable), amount);
    const std::size_t mark = transfers_.size();
    const auto result = link_->record_tray_pay(money(amount), origin, transfers_);
    if (!both_succeeded(result, refusal, mark)) return;
    check_single_transfer(*result, mark, amount);
    add_pending(*result);
    commit(next, mark, origin.round, kind_bit(TransferKind::tray_pay), 0);
  }

  void adjust_meter() {
    const std::uint32_t level = random_level();
    const i128 delta = random_adjustment(level);
    const Origin origin = begin("adjust_meter", level, static_cast<std::int64_t>(delta));
    Books next = books_;
    std::optional<i128> hidden_above;
    if (rules_.level(level).hidden && hidden_[level]) {
      hidden_above = hidden_[level]->range_above.micros();
    }
    const auto refusal = model_adjust(rules_, next, level, delta, hidden_above);
    if (refusal) ++stats_.adjustments_refused;
    const std::size_t mark = transfers_.size();
    const auto result =
        link_->adjust_meter(level, money(delta), "count correction", origin, transfers_);
    if (!both_succeeded(result, refusal, mark)) return;
    commit(next, mark, origin.round, kind_bit(TransferKind::adjustment), 0);
    check_single_transfer(*result, mark, delta > 0 ? delta : -delta);
  }

  // Up or down, sometimes exactly to the ceiling or to zero, sometimes a micro too far.
  i128 random_adjustment(std::uint32_t level) {
    const i128 meter = books_.balances.meter[level];
    const std::optional<i128>& ceiling = rules_.level(level).ceiling;
    i128 delta = 0;
    switch (dice_.below(6)) {
      case 0:
        delta = dice_.between(1, 20'000'000);
        break;
      case 1:
        delta = -dice_.between(1, static_cast<std::int64_t>(std::max(meter, i128{1})));
        break;
      case 2:
        delta = ceiling ? *ceiling - meter : kCent;
        break;
      case 3:
        delta = ceiling ? *ceiling - meter + 1 : 1'000 * kMicrosPerUnit;
        break;
      case 4:
        delta = -meter;
        break;
      default:
        delta = -meter - 1;
        break;
    }
    return delta == 0 ? -kCent : delta;
  }

  // ----- deliberately invalid calls: the documented refusal, and nothing changes -----

  template <typename Call>
  void expect_refusal(std::string_view name, std::int64_t first, std::int64_t second,
                      LinkError error, Call&& call) {
    const Origin origin = begin(name, first, second);
    history_[step_ % kHistory].refusal = error;
    const std::size_t mark = transfers_.size();
    const auto result = call(origin);
    both_succeeded(result, error, mark);
    ++stats_.refusals_checked;
  }

  void invalid_call() {
    switch (dice_.below(12)) {
      case 0:
        return invalid_units();
      case 1:
        return huge_units();
      case 2:
        return invalid_level();
      case 3:
        return invalid_percent();
      case 4:
        return award_on_must_hit_by();
      case 5:
        return split_without_winners();
      case 6:
        return invalid_adjustment();
      case 7:
        return huge_adjustment();
      case 8:
        return invalid_tray_pay();
      case 9:
        return invalid_round_reversal();
      case 10:
        return not_an_award();
      default:
        return foreign_award();
    }
  }

  void invalid_units() {
    constexpr std::array<std::int64_t, 4> kUnits{0, -1, -50,
                                                 std::numeric_limits<std::int64_t>::min()};
    const std::int64_t units = kUnits[dice_.below(kUnits.size())];
    expect_refusal("contribute", units, 0, LinkError::units_not_positive,
                   [&](Origin origin) { return link_->contribute(units, origin, transfers_); });
  }

  void huge_units() {
    constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
    constexpr std::array<std::int64_t, 3> kUnits{kMax, kMax / 2 + 1, std::int64_t{1} << 60};
    const std::int64_t units = kUnits[dice_.below(kUnits.size())];
    Books next = books_;
    ContributionModel ignored;
    const auto refusal = model_contribute(rules_, triggers(), next, units, ignored);
    require(refusal == LinkError::overflow, [] { return std::string("model: huge units fit"); });
    expect_refusal("contribute", units, 0, LinkError::overflow,
                   [&](Origin origin) { return link_->contribute(units, origin, transfers_); });
  }

  void invalid_level() {
    const std::uint32_t level = dice_.percent(50) ? 0 : rules_.count() + 1;
    const auto error = LinkError::unknown_level;
    switch (dice_.below(3)) {
      case 0:
        return expect_refusal("award_percent", level, 100, error, [&](Origin origin) {
          return link_->award_percent(level, 100, origin, transfers_);
        });
      case 1: {
        const std::array<Origin, 2> origins{};
        return expect_refusal("award_split", level, 2, error, [&](Origin) {
          return link_->award_split(level, origins, transfers_);
        });
      }
      default:
        return expect_refusal("adjust_meter", level, 10'000, error, [&](Origin origin) {
          return link_->adjust_meter(level, money(kCent), "count correction", origin, transfers_);
        });
    }
  }

  void invalid_percent() {
    const auto level = random_level_where(false);
    if (!level) return invalid_units();
    constexpr std::array<std::int64_t, 4> kPercents{0, 101, -1, 1'000};
    const std::int64_t percent = kPercents[dice_.below(kPercents.size())];
    expect_refusal(
        "award_percent", *level, percent, LinkError::percent_out_of_range,
        [&](Origin origin) { return link_->award_percent(*level, percent, origin, transfers_); });
  }

  void award_on_must_hit_by() {
    const auto level = random_level_where(true);
    if (!level) return invalid_units();
    const auto error = LinkError::level_is_must_hit_by;
    if (dice_.percent(50)) {
      return expect_refusal("award_percent", *level, 100, error, [&](Origin origin) {
        return link_->award_percent(*level, 100, origin, transfers_);
      });
    }
    const std::array<Origin, 2> origins{Origin{round_ + 1, 1}, Origin{round_ + 1, 2}};
    expect_refusal("award_split", *level, 2, error,
                   [&](Origin) { return link_->award_split(*level, origins, transfers_); });
  }

  void split_without_winners() {
    const auto level = random_level_where(false);
    if (!level) return invalid_units();
    expect_refusal("award_split", *level, 0, LinkError::no_winners, [&](Origin) {
      return link_->award_split(*level, std::span<const Origin>(), transfers_);
    });
  }

  void invalid_adjustment() {
    const std::uint32_t level = random_level();
    if (dice_.percent(50)) {
      return expect_refusal(
          "adjust_meter", level, 0, LinkError::zero_adjustment, [&](Origin origin) {
            return link_->adjust_meter(level, Money(), "count correction", origin, transfers_);
          });
    }
    const i128 delta = dice_.percent(50) ? kCent : -1;
    expect_refusal("adjust_meter (no reason)", level, static_cast<std::int64_t>(delta),
                   LinkError::reason_missing, [&](Origin origin) {
                     return link_->adjust_meter(level, money(delta), "", origin, transfers_);
                   });
  }

  // On an uncapped level with money on its meter, only the overflow can refuse it.
  void huge_adjustment() {
    std::optional<std::uint32_t> level;
    for (std::uint32_t candidate = 1; candidate <= rules_.count(); ++candidate) {
      if (!rules_.level(candidate).ceiling && books_.balances.meter[candidate] > 0) {
        level = candidate;
      }
    }
    if (!level) return invalid_units();
    const Money delta = Money::from_micros(std::numeric_limits<std::int64_t>::max());
    expect_refusal("adjust_meter", *level, delta.micros(), LinkError::overflow, [&](Origin origin) {
      return link_->adjust_meter(*level, delta, "count correction", origin, transfers_);
    });
  }

  void invalid_tray_pay() {
    const Money amount = Money::from_micros(dice_.percent(50) ? 0 : -dice_.between(1, 1'000'000));
    expect_refusal(
        "record_tray_pay", amount.micros(), 0, LinkError::amount_not_positive,
        [&](Origin origin) { return link_->record_tray_pay(amount, origin, transfers_); });
  }

  // A round's transfers with one wrong transfer after them: validation comes before any posting.
  void invalid_round_reversal() {
    if (recent_rounds_.size() < 2) return invalid_units();
    std::vector<Transfer> transfers = recent_rounds_[dice_.below(recent_rounds_.size())];
    LinkError error = LinkError::mixed_rounds;
    switch (dice_.below(3)) {
      case 0: {
        const auto& other = recent_rounds_[dice_.below(recent_rounds_.size())];
        if (other.front().origin.round == transfers.front().origin.round) return invalid_units();
        transfers.push_back(other.front());
        break;
      }
      case 1:
        transfers = {transfers_[dice_.below(transfers_.size())]};
        if (transfers.front().kind == TransferKind::contribution ||
            transfers.front().kind == TransferKind::overflow) {
          return invalid_units();
        }
        error = LinkError::not_a_round_transfer;
        break;
      default: {
        Transfer foreign = transfers.front();
        foreign.credit.level = rules_.count() + 1;
        foreign.credit.kind = AccountKind::meter;
        transfers.push_back(foreign);
        error = LinkError::foreign_transfer;
        break;
      }
    }
    expect_refusal("reverse_round", static_cast<std::int64_t>(transfers.front().id.value()),
                   static_cast<std::int64_t>(transfers.size()), error, [&](Origin origin) {
                     return link_->reverse_round(transfers, {}, origin, transfers_);
                   });
  }

  void not_an_award() {
    const Transfer& transfer = transfers_[dice_.below(transfers_.size())];
    if (transfer.kind == TransferKind::award || transfer.kind == TransferKind::tray_pay) {
      return invalid_units();
    }
    const auto id = static_cast<std::int64_t>(transfer.id.value());
    if (dice_.percent(50)) {
      return expect_refusal("reverse_award", id, 0, LinkError::not_an_award, [&](Origin origin) {
        return link_->reverse_award(transfer, origin, transfers_);
      });
    }
    expect_refusal("pay_award", id, 0, LinkError::not_an_award,
                   [&](Origin origin) { return link_->pay_award(transfer, origin, transfers_); });
  }

  // An award naming a level this link does not have.
  void foreign_award() {
    Transfer award{TransferId(1'000'000'000),
                   AccountRef::meter(rules_.count() + 1),
                   AccountRef::link(AccountKind::awards_payable),
                   money(kCent),
                   TransferKind::award,
                   Origin{1, 1},
                   TransferId()};
    if (dice_.percent(50)) {
      return expect_refusal("reverse_award", 0, 0, LinkError::foreign_transfer, [&](Origin origin) {
        return link_->reverse_award(award, origin, transfers_);
      });
    }
    expect_refusal("pay_award", 0, 0, LinkError::foreign_transfer,
                   [&](Origin origin) { return link_->pay_award(award, origin, transfers_); });
  }

  // ----- checks -----

  // Compares the link's answer with the model's. A refusal must leave the link exactly as it
  // was: no transfer appended, no balance, trigger or transfer id changed. True when both
  // succeeded, so that the caller checks the details.
  template <typename T>
  bool both_succeeded(const Result<T, LinkError>& result, std::optional<LinkError> expected,
                      std::size_t mark) {
    const std::optional<LinkError> actual =
        result.ok() ? std::nullopt : std::optional<LinkError>(result.error());
    require(actual == expected, [&] {
      return "the link answered " + show(actual) + ", the rules say " + show(expected);
    });
    if (!problem_.empty() || result.ok()) return problem_.empty();
    require(transfers_.size() == mark,
            [] { return std::string("a refused operation appended transfers"); });
    verify_state();
    return false;
  }

  // Adopts the model's books after a successful operation and checks everything the link did.
  void commit(const Books& next, std::size_t mark, std::uint64_t round, KindSet kinds,
              std::uint32_t resets) {
    const Books previous = books_;
    books_ = next;
    check_posted(mark, round, kinds);
    for (std::uint32_t level = 1; level <= rules_.count(); ++level) {
      if ((resets & level_bit(level)) != 0) adopt_trigger(level);
    }
    verify_state();
    check_step_reconciles(previous, mark);
  }

  // Each new transfer: the next id, a positive amount, the operation's round, a kind the
  // operation may post between the accounts that kind names; replayed into balances of our own.
  void check_posted(std::size_t mark, std::uint64_t round, KindSet kinds) {
    for (std::size_t i = mark; i < transfers_.size() && problem_.empty(); ++i) {
      const Transfer& t = transfers_[i];
      require(t.id.value() == next_id_, [&] {
        return "transfer id " + std::to_string(t.id.value()) + ", expected " +
               std::to_string(next_id_);
      });
      require(t.amount.micros() > 0, [&] { return "transfer of " + t.amount.to_string(); });
      require(t.origin.round == round, [&] { return "transfer of another round"; });
      require((kinds & kind_bit(t.kind)) != 0,
              [&] { return "unexpected " + std::string(to_string(t.kind)) + " transfer"; });
      require(link_->ledger().has(t.debit) && link_->ledger().has(t.credit) &&
                  !(t.debit == t.credit) && well_formed(t),
              [&] { return "ill-formed " + std::string(to_string(t.kind)) + " transfer"; });
      check_correction(t);
      if (!problem_.empty()) return;
      replay_.at(t.debit) -= t.amount.micros();
      replay_.at(t.credit) += t.amount.micros();
      ++next_id_;
      ++stats_.transfers;
      if (t.kind == TransferKind::overflow) {
        ++(t.credit.kind == AccountKind::meter ? stats_.overflows_to_meter
                                               : stats_.overflows_to_reserve);
      }
    }
  }

  // A reversal names an earlier transfer of the kind it reverses and mirrors it exactly.
  void check_correction(const Transfer& t) {
    const std::uint64_t corrected = t.corrects.value();
    require(is_reversal(t.kind) == (corrected != 0),
            [&] { return std::string(to_string(t.kind)) + " with a wrong 'corrects'"; });
    if (corrected == 0 || corrected >= t.id.value()) return;
    const Transfer& original = transfers_[corrected - 1];
    // A void's transfers: check_round_reversal() (an overflow reversal there may return less
    // than its overflow, when the house refunded the rest).
    if (t.kind == TransferKind::contribution_reversal ||
        t.kind == TransferKind::house_funded_refund) {
      return;
    }
    TransferKind expected = TransferKind::contribution;
    if (t.kind == TransferKind::overflow_reversal) expected = TransferKind::overflow;
    if (t.kind == TransferKind::award_reversal) expected = TransferKind::award;
    if (t.kind == TransferKind::tray_pay_reversal) expected = TransferKind::tray_pay;
    const bool award_kind = expected == TransferKind::award || expected == TransferKind::tray_pay;
    const bool mirrored = award_kind ? is_link_account(t.debit, AccountKind::awards_payable) &&
                                           t.credit == original.debit
                                     : t.debit == original.credit && t.credit == original.debit;
    const bool amount_fits = t.kind == TransferKind::overflow_reversal
                                 ? t.amount <= original.amount
                                 : t.amount == original.amount;
    require(original.kind == expected && mirrored && amount_fits,
            [&] { return "transfer " + std::to_string(t.id.value()) + " is no exact reversal"; });
  }

  // The transfers of a void: each names a transfer of the round and mirrors it (an overflow
  // reversal goes back the way its overflow came, at most its amount; a contribution reversal
  // from where its contribution went back to the wagers) or is the house refunding part of it.
  void check_round_reversal(const std::vector<Transfer>& round, std::size_t mark) {
    for (std::size_t i = mark; i < transfers_.size() && problem_.empty(); ++i) {
      const Transfer& t = transfers_[i];
      const auto original = std::find_if(round.begin(), round.end(),
                                         [&](const Transfer& r) { return r.id == t.corrects; });
      bool mirrored = original != round.end() && t.amount <= original->amount;
      if (mirrored && t.kind == TransferKind::contribution_reversal) {
        mirrored = original->kind == TransferKind::contribution &&
                   is_link_account(t.credit, AccountKind::wagers) &&
                   t.debit.level == original->credit.level;
      } else if (mirrored && t.kind == TransferKind::overflow_reversal) {
        mirrored = original->kind == TransferKind::overflow && t.debit == original->credit &&
                   t.credit == original->debit;
      } else if (mirrored) {
        mirrored = t.kind == TransferKind::house_funded_refund &&
                   is_link_account(t.debit, AccountKind::seed_funding) &&
                   is_link_account(t.credit, AccountKind::wagers);
      }
      require(mirrored,
              [&] { return "transfer " + std::to_string(t.id.value()) + " is no round reversal"; });
    }
  }

  void check_single_transfer(TransferId id, std::size_t mark, i128 amount) {
    require(
        transfers_.size() == mark + 1 && transfers_[mark].id == id &&
            transfers_[mark].amount.micros() == amount,
        [] { return std::string("expected exactly one transfer, of the amount, with its id"); });
  }

  void check_award_transfer(Money amount, TransferId id, i128 expected, std::uint32_t level) {
    require(amount.micros() == expected, [&] {
      return "award_percent on level " + std::to_string(level) + " paid " + amount.to_string() +
             ", the rules say " + show(expected);
    });
    if (expected == 0) {
      require(id == TransferId(), [] { return std::string("a zero award has a transfer"); });
      return;
    }
    require(id.value() >= next_id_ && id.value() - 1 < transfers_.size(),
            [] { return std::string("the award names no new transfer"); });
    if (!problem_.empty()) return;
    const Transfer& t = transfers_[id.value() - 1];
    require(t.kind == TransferKind::award && t.debit == AccountRef::meter(level) &&
                t.amount.micros() == expected,
            [] { return std::string("the award transfer is not the award"); });
  }

  void check_split(const SplitResult& result, i128 share, const std::vector<Origin>& origins,
                   std::uint32_t level) {
    require(result.share.micros() == share, [&] {
      return "award_split on level " + std::to_string(level) + " shared " +
             result.share.to_string() + ", the rules say " + show(share);
    });
    require(result.transfers.size() == (share > 0 ? origins.size() : 0),
            [] { return std::string("award_split made the wrong number of awards"); });
    for (std::size_t i = 0; i < result.transfers.size() && problem_.empty(); ++i) {
      const TransferId id = result.transfers[i];
      require(id.value() >= next_id_ && id.value() - 1 < transfers_.size(),
              [] { return std::string("a split award names no new transfer"); });
      if (!problem_.empty()) return;
      const Transfer& t = transfers_[id.value() - 1];
      require(t.kind == TransferKind::award && t.amount.micros() == share &&
                  t.origin == origins[i] && t.debit == AccountRef::meter(level),
              [] { return std::string("a split award is not the winner's share"); });
    }
  }

  void check_reset_result(const std::optional<ResetResult>& actual,
                          const std::optional<ResetAmounts>& expected, std::uint32_t level) {
    require(actual.has_value() == expected.has_value(),
            [] { return std::string("a reset was or was not reported, against the rules"); });
    if (!actual || !expected) return;
    if (expected->seed < rules_.level(level).seed) ++stats_.seeds_cut;
    require(actual->seed.micros() == expected->seed &&
                actual->reserve_released.micros() == expected->released,
            [&] {
              return "reset of level " + std::to_string(level) + " seeded " +
                     actual->seed.to_string() + " and released " +
                     actual->reserve_released.to_string() + ", the rules say " +
                     show(expected->seed) + " and " + show(expected->released);
            });
    const auto& drawn = link_->hidden_trigger(level);
    require(actual->next_trigger.has_value() == rules_.level(level).hidden &&
                (!actual->next_trigger || (drawn && same_trigger(*actual->next_trigger, *drawn))),
            [] { return std::string("the reset reported another next trigger"); });
  }

  void check_hits(const ContributionResult& result, const ContributionModel& expected) {
    const auto count = static_cast<std::size_t>(
        std::count_if(expected.hit.begin(), expected.hit.end(), [](auto hit) { return hit; }));
    require(result.hits.size() == count, [&] {
      return std::to_string(result.hits.size()) + " Must-Hit-By hits, the rules say " +
             std::to_string(count);
    });
    for (const MustHitByHit& hit : result.hits) {
      if (!problem_.empty()) return;
      const bool known = hit.level >= 1 && hit.level <= rules_.count() && expected.hit[hit.level];
      require(known && hit.amount.micros() == *expected.hit[hit.level], [&] {
        return "level " + std::to_string(hit.level) + " hit for " + hit.amount.to_string() +
               ", against the rules";
      });
      require(hit.award.value() >= 1 && hit.award.value() - 1 < transfers_.size(),
              [] { return std::string("the hit names no transfer"); });
      if (!problem_.empty()) return;
      const Transfer& award = transfers_[hit.award.value() - 1];
      require(award.kind == TransferKind::award && award.amount == hit.amount &&
                  award.debit == AccountRef::meter(hit.level),
              [] { return std::string("the hit's transfer is not its award"); });
      check_revealed(hit);
      ++(rules_.level(hit.level).hidden ? stats_.hits_hidden : stats_.hits_at_amount);
      if (expected.exact[hit.level]) ++stats_.exact_hits;
    }
  }

  // The hidden point that was hit is the one committed before (kept by the test since its
  // draw), and the revealed point and salt open the published commitment.
  void check_revealed(const MustHitByHit& hit) {
    if (!rules_.level(hit.level).hidden) {
      require(!hit.revealed && !hit.next,
              [] { return std::string("an at-amount level revealed a hidden trigger"); });
      return;
    }
    const auto& committed = hidden_[hit.level];  // Not yet replaced by the new draw.
    require(hit.revealed && committed && same_trigger(*hit.revealed, *committed) &&
                verify_trigger(hit.revealed->point, hit.revealed->salt, committed->commitment),
            [] { return std::string("the revealed trigger is not the committed one"); });
    const auto& drawn = link_->hidden_trigger(hit.level);
    require(hit.next && drawn && same_trigger(*hit.next, *drawn),
            [] { return std::string("the hit reported another next trigger"); });
  }

  // After a reset, a hidden level has a new point drawn in (reset value, amount], whole cents,
  // committed with SHA-256; other levels have none.
  void adopt_trigger(std::uint32_t level) {
    const LevelModel& rule = rules_.level(level);
    const auto& drawn = link_->hidden_trigger(level);
    if (!rule.hidden) {
      require(!drawn, [] { return std::string("a hidden trigger on an at-amount level"); });
      return;
    }
    require(drawn.has_value(), [] { return std::string("no hidden trigger after a reset"); });
    if (!drawn) return;
    check_draw(*drawn, books_.balances.meter[level], *rule.must_hit_by);
    hidden_[level] = drawn;
  }

  void check_draw(const HiddenTrigger& drawn, i128 reset_value, i128 amount) {
    const i128 point = drawn.point.micros();
    const i128 lowest = floor_to_cent(reset_value) + kCent;  // The first whole cent above.
    const bool in_range = lowest <= amount ? point >= lowest && point <= amount : point == amount;
    require(drawn.range_above.micros() == reset_value && drawn.range_up_to.micros() == amount &&
                drawn.point.is_whole_cents() && in_range,
            [&] {
              return "hidden point " + drawn.point.to_string() + " outside (" + show(reset_value) +
                     ", " + show(amount) + "]";
            });
    require(verify_trigger(drawn.point, drawn.salt, drawn.commitment) &&
                documented_commitment(drawn.point, drawn.salt) == drawn.commitment,
            [] { return std::string("the commitment does not open to the hidden point"); });
    ++stats_.hidden_draws;
    if (amount - lowest >= kCent) {
      stats_.draw_position_sum +=
          static_cast<double>(point - lowest) / static_cast<double>(amount - lowest);
      ++stats_.draw_positions;
    }
  }

  static Money holdings(const Books& books, std::uint32_t level) {
    return money(books.balances.meter[level] + books.balances.reserve[level]);
  }

  // The step alone must reconcile for every level: holdings before + terms = holdings after.
  void check_step_reconciles(const Books& before, std::size_t mark) {
    if (mark == transfers_.size()) return;
    const auto posted = std::span<const Transfer>(transfers_).subspan(mark);
    for (std::uint32_t level = 1; level <= rules_.count() && problem_.empty(); ++level) {
      const LevelReconciliation report =
          reconcile_level(level, holdings(before, level), holdings(books_, level), posted);
      require(report.balanced && !report.overflowed && report.unexplained == Money(), [&] {
        return "the step's transfers do not reconcile level " + std::to_string(level);
      });
    }
  }

  // Every transfer since the link opened, from zero to today's holdings, term by term as the
  // model accounted them.
  void check_full_reconciliation() {
    ++stats_.full_reconciliations;
    for (std::uint32_t level = 1; level <= rules_.count() && problem_.empty(); ++level) {
      const LevelReconciliation r =
          reconcile_level(level, Money(), holdings(books_, level), transfers_);
      const Terms& t = books_.terms[level];
      require(r.balanced && !r.overflowed && r.unexplained == Money(),
              [&] { return "the books do not reconcile level " + std::to_string(level); });
      require(
          r.contributions.micros() == t.contributions && r.seeds.micros() == t.seeds &&
              r.overflow_in.micros() == t.overflow_in && r.adjustments.micros() == t.adjustments &&
              r.awards.micros() == t.awards && r.overflow_out.micros() == t.overflow_out,
          [&] {
            return "level " + std::to_string(level) + " reconciles with terms contributions " +
                   r.contributions.to_string() + " seeds " + r.seeds.to_string() + " overflow in " +
                   r.overflow_in.to_string() + " adjustments " + r.adjustments.to_string() +
                   " awards " + r.awards.to_string() + " overflow out " +
                   r.overflow_out.to_string() + "; the model has " + show(t.contributions) + ", " +
                   show(t.seeds) + ", " + show(t.overflow_in) + ", " + show(t.adjustments) + ", " +
                   show(t.awards) + ", " + show(t.overflow_out);
          });
    }
  }

  // The link's state equals the model's after every step.
  void verify_state() {
    const Ledger& ledger = link_->ledger();
    require(ledger.next_id().value() == next_id_,
            [] { return std::string("the next transfer id moved"); });
    for (const AccountRef account : accounts_) {
      require(ledger.balance(account).micros() == books_.balances.get(account), [&] {
        return to_string(account) + " is " + ledger.balance(account).to_string() +
               ", the rules say " + show(books_.balances.get(account));
      });
    }
    require(replay_ == books_.balances,
            [] { return std::string("the emitted transfers do not add up to the balances"); });
    const auto broken = link_->check_invariants();
    require(!broken, [&] { return "check_invariants: " + *broken; });
    require(books_.balances.sum() == 0, [] { return std::string("balances do not sum to 0"); });
    require(books_.balances.awards_payable == pending_total_,
            [] { return std::string("awards_payable is not the sum of pending awards"); });
    for (std::uint32_t level = 1; level <= rules_.count(); ++level) verify_level(level);
  }

  void verify_level(std::uint32_t level) {
    const LevelModel& rule = rules_.level(level);
    const i128 meter = books_.balances.meter[level];
    require(meter >= 0 && books_.balances.reserve[level] >= 0,
            [&] { return "level " + std::to_string(level) + " went below zero"; });
    require(!rule.ceiling || meter <= *rule.ceiling, [&] {
      return "meter[" + std::to_string(level) + "] " + show(meter) + " above its ceiling " +
             show(*rule.ceiling);
    });
    const std::optional<Money> point = link_->trigger_point(level);
    const auto& drawn = link_->hidden_trigger(level);
    const std::optional<i128> expected = triggers()[level];
    require(
        point.has_value() == expected.has_value() && (!point || point->micros() == *expected) &&
            (!rule.hidden || (drawn && hidden_[level] && same_trigger(*drawn, *hidden_[level]))),
        [&] { return "level " + std::to_string(level) + "'s trigger changed unexpectedly"; });
  }

  std::string config_text_;
  Rules rules_;
  Dice& dice_;
  Stats& stats_;
  std::vector<AccountRef> accounts_;
  std::optional<Link> link_;
  std::vector<Transfer> transfers_;  // Every transfer since the link opened.
  Books books_;
  Balances replay_;  // The balances the emitted transfers add up to.
  std::array<std::optional<HiddenTrigger>, kMaxLevels + 1> hidden_;
  std::deque<std::vector<Transfer>> recent_rounds_;  // Contribute calls without a hit.
  std::vector<Transfer> pending_;                    // Awards and tray pays not paid or reversed.
  i128 pending_total_ = 0;
  std::uint64_t next_id_ = 1;
  std::uint64_t round_ = 0;
  std::uint64_t step_ = 0;
  std::array<OpRecord, kHistory> history_{};
  std::string problem_;
};

void print(const Stats& s) {
  std::cout << "  operations " << s.operations << ", transfers " << s.transfers
            << ", refusals checked " << s.refusals_checked << "\n  Must-Hit-By hits at amount "
            << s.hits_at_amount << ", hidden " << s.hits_hidden << " (exactly at the trigger "
            << s.exact_hits << "), hidden draws " << s.hidden_draws << "\n  overflows to reserve "
            << s.overflows_to_reserve << ", to another meter " << s.overflows_to_meter
            << "\n  rounds reversed " << s.rounds_reversed << " (refused "
            << s.round_reversals_refused << ", after an award since "
            << s.round_reversals_after_awards << "), awards reversed " << s.awards_reversed
            << ", payouts " << s.payouts << ", zero awards " << s.zero_awards
            << ", adjustments refused " << s.adjustments_refused
            << "\n  resets with the seed cut at the ceiling " << s.seeds_cut
            << ", full reconciliations " << s.full_reconciliations
            << "\n  mean position of hidden points in their range "
            << s.draw_position_sum /
                   static_cast<double>(std::max<std::uint64_t>(s.draw_positions, 1))
            << std::endl;
}

TEST(LinkProperty, MatchesTheReferenceModel) {
  const std::optional<std::uint64_t> seed = property_seed();
  ASSERT_TRUE(seed.has_value()) << "JACKPOTD_PROPERTY_SEED must be an unsigned integer";
  std::cout << "JACKPOTD_PROPERTY_SEED=" << *seed << std::endl;
  RecordProperty("seed", std::to_string(*seed));
  SCOPED_TRACE("JACKPOTD_PROPERTY_SEED=" + std::to_string(*seed));

  Dice dice(*seed);
  SplitMix64 link_random(~*seed);  // A separate stream for the link's own draws.
  Stats stats;
  for (int index = 0; index < kConfigs; ++index) {
    const LinkConfig config = random_config(dice, index);
    const std::vector<std::string> problems = validate(config);
    ASSERT_TRUE(problems.empty()) << describe(config) << "\n" << problems.front();
    LinkProperty run(config, dice, link_random, stats);
    run.run(kStepsPerConfig);
    ASSERT_TRUE(run.problem().empty()) << "configuration " << index << ", " << run.problem();
  }
  print(stats);
  // The workload must have reached every feature, or the run proves little.
  EXPECT_GT(stats.hits_at_amount, 0u);
  EXPECT_GT(stats.hits_hidden, 0u);
  EXPECT_GT(stats.exact_hits, 0u);
  EXPECT_GT(stats.overflows_to_reserve, 0u);
  EXPECT_GT(stats.overflows_to_meter, 0u);
  EXPECT_GT(stats.rounds_reversed, 0u);
  EXPECT_GT(stats.round_reversals_refused, 0u);
  EXPECT_GT(stats.round_reversals_after_awards, 0u);
  EXPECT_GT(stats.awards_reversed, 0u);
  EXPECT_GT(stats.zero_awards, 0u);
  // Uniform hidden points sit on average mid-range (a loose check: many sigmas wide).
  ASSERT_GT(stats.draw_positions, 1'000u);
  const double mean = stats.draw_position_sum / static_cast<double>(stats.draw_positions);
  EXPECT_NEAR(mean, 0.5, 0.05) << "hidden trigger points are not spread uniformly";
}

}  // namespace
}  // namespace jackpot

// ---------------------------------------------------------------------------------------------
// Where a reset meets the ceiling. docs/architecture.md §4: "The sign never shows more than the
// cap"; link.h: reset() adds the seed and the reserve "both only up to the ceiling", and
// ResetResult::seed is the seed funded. (An earlier link.cc funded the whole seed and left the
// meter above its ceiling in both cases below.)

namespace jackpot {
namespace {

LinkConfig one_capped_level(Money seed, std::int64_t meter_rate_ppm, Money ceiling) {
  LinkConfig config;
  config.id = LinkId("ceiling");
  LevelConfig level;
  level.level = 1;
  level.name = "Capped";
  level.seed = seed;
  level.meter_rate_ppm = meter_rate_ppm;
  level.ceiling = ceiling;
  config.levels.push_back(level);
  return config;
}

Link open_link(const LinkConfig& config, RandomSource& random, std::vector<Transfer>& out) {
  auto opened = Link::open(config, random, out);
  JACKPOT_INVARIANT(opened.ok(), "the test configuration is valid");
  return std::move(opened).value();
}

// The SPLIT policy leaves up to (winners - 1) cents on the meter; the reset then adds the seed.
// With the ceiling a cent above the seed (validate() accepts it) only part of the seed fits.
TEST(LinkCeilingRules, SplitResetKeepsTheMeterWithinItsCeiling) {
  const LinkConfig config =
      one_capped_level(Money::from_micros(1'000'000), 10'000, Money::from_micros(1'010'000));
  ASSERT_TRUE(validate(config).empty());
  SplitMix64 random(1);
  std::vector<Transfer> out;
  Link link = open_link(config, random, out);
  ASSERT_TRUE(link.contribute(1, Origin{1, 0}, out).ok());  // $1.00 + $0.01: at the ceiling.
  ASSERT_EQ(link.meter(1), Money::from_micros(1'010'000));
  const std::array<Origin, 3> winners{Origin{2, 1}, Origin{2, 2}, Origin{2, 3}};
  const auto split = link.award_split(1, winners, out);  // 3 x $0.33; $0.02 stays.
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->share, Money::from_micros(330'000));
  EXPECT_EQ(split->reset.seed, Money::from_micros(990'000)) << "the seed funded up to the cap";
  EXPECT_LE(link.meter(1), *config.levels[0].ceiling)
      << "award_split left $0.02 on the meter and its reset added the $1.00 seed: the meter shows "
      << link.meter(1).to_string() << ", above its ceiling "
      << config.levels[0].ceiling->to_string();
  const auto broken = link.check_invariants();
  EXPECT_FALSE(broken.has_value()) << "after a successful award_split: " << broken.value_or("");
}

// On a meter already at its ceiling, no seed fits at all.
TEST(LinkCeilingRules, ResetKeepsTheMeterWithinItsCeiling) {
  const LinkConfig config =
      one_capped_level(Money::from_micros(10'000'000), 100'000, Money::from_micros(15'000'000));
  ASSERT_TRUE(validate(config).empty());
  SplitMix64 random(1);
  std::vector<Transfer> out;
  Link link = open_link(config, random, out);
  ASSERT_TRUE(link.contribute(50, Origin{1, 0}, out).ok());  // $10 + 50 x $0.10 = $15.
  ASSERT_EQ(link.meter(1), Money::from_micros(15'000'000));
  const auto reset = LinkTestAccess::reset(link, 1, Origin{2, 0}, out);
  ASSERT_TRUE(reset.ok());
  EXPECT_EQ(reset->seed, Money()) << "the seed funded up to the cap";
  EXPECT_LE(link.meter(1), *config.levels[0].ceiling)
      << "reset of a meter at its $15.00 ceiling added the $10.00 seed: the meter shows "
      << link.meter(1).to_string();
  const auto broken = link.check_invariants();
  EXPECT_FALSE(broken.has_value()) << "after a successful reset: " << broken.value_or("");
}

// docs/architecture.md §4: "the level must award before its meter passes the amount"; the award
// is "never more than the amount". A reset adds the seed to what is on the meter and an
// adjustment is capped only by a ceiling, which a Must-Hit-By level cannot have.
LinkConfig one_must_hit_by_level() {
  LinkConfig config;
  config.id = LinkId("must-hit-by");
  LevelConfig level;
  level.level = 1;
  level.name = "Must-Hit-By $250";
  level.seed = Money::from_micros(100'000'000);
  level.meter_rate_ppm = 100'000;  // $0.10 per $1 unit.
  level.must_hit_by = Money::from_micros(250'000'000);
  config.levels.push_back(level);
  return config;
}

TEST(LinkMustHitByRules, ResetNeverCarriesTheMeterPastTheAmount) {
  const LinkConfig config = one_must_hit_by_level();
  ASSERT_TRUE(validate(config).empty());
  SplitMix64 random(1);
  std::vector<Transfer> out;
  Link link = open_link(config, random, out);
  ASSERT_TRUE(link.contribute(1'400, Origin{1, 0}, out).ok());  // $100 + $140 = $240, no hit.
  ASSERT_EQ(link.meter(1), Money::from_micros(240'000'000));
  ASSERT_TRUE(LinkTestAccess::reset(link, 1, Origin{2, 0}, out).ok());
  EXPECT_LE(link.meter(1), *config.levels[0].must_hit_by)
      << "reset of a $240.00 Must-Hit-By $250.00 meter added the $100.00 seed: the meter shows "
      << link.meter(1).to_string() << " with no hit; the next contribution awards only $250.00";
}

TEST(LinkMustHitByRules, AdjustmentNeverCarriesTheMeterPastTheAmount) {
  const LinkConfig config = one_must_hit_by_level();
  ASSERT_TRUE(validate(config).empty());
  SplitMix64 random(1);
  std::vector<Transfer> out;
  Link link = open_link(config, random, out);
  const auto adjusted =
      link.adjust_meter(1, Money::from_micros(200'000'000), "count correction", Origin{1, 0}, out);
  EXPECT_TRUE(!adjusted.ok() || link.meter(1) <= *config.levels[0].must_hit_by)
      << "adjust_meter(+$200.00) on a $100.00 Must-Hit-By $250.00 meter was accepted: the meter "
         "shows "
      << link.meter(1).to_string() << " with no hit";
}

}  // namespace
}  // namespace jackpot
