// The adjustment rule (meters/adjustment.h), case by case: what an auditor checks.
#include "meters/adjustment.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>

namespace jackpot {
namespace {

Money usd(double dollars) { return Money::from_micros(static_cast<std::int64_t>(dollars * 1e6)); }
Money micros(std::int64_t value) { return Money::from_micros(value); }

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

// A plain level: $120.00 on the meter, the house $-500.00.
AdjustmentFacts plain() { return {usd(120), usd(-500), {}, {}, {}, false, Money()}; }
AdjustmentFacts capped() {
  AdjustmentFacts facts = plain();
  facts.ceiling = usd(150);
  return facts;
}
AdjustmentFacts must_hit_by() {
  AdjustmentFacts facts = plain();
  facts.must_hit_by = usd(250);
  return facts;
}
AdjustmentFacts hidden() {
  AdjustmentFacts facts = must_hit_by();
  facts.hidden_range_above = usd(100);  // Drawn at a reset to $100.00; the point is in (100, 250].
  return facts;
}
AdjustmentFacts locked() {
  AdjustmentFacts facts = plain();
  facts.locked_round_holds_money = true;
  return facts;
}
// A level seeded at $100.00 whose meter shows $120.00 (#32: one person lowers it to the seed at
// most).
AdjustmentFacts seeded() {
  AdjustmentFacts facts = plain();
  facts.seed = usd(100);
  return facts;
}
AdjustmentFacts with_meter(AdjustmentFacts facts, Money meter) {
  facts.meter = meter;
  return facts;
}
AdjustmentFacts with_house(AdjustmentFacts facts, Money house) {
  facts.seed_funding = house;
  return facts;
}

struct Case {
  const char* name;
  AdjustmentFacts facts;
  Money amount;
  std::optional<AdjustmentRefusal> expected;
};

using R = AdjustmentRefusal;

TEST(AdjustmentRule, EveryCase) {
  const Case cases[] = {
      {"zero", plain(), Money(), R::zero_amount},
      {"zero on a locked level", locked(), Money(), R::zero_amount},
      {"raise a plain level", plain(), usd(30), std::nullopt},
      {"lower a plain level", plain(), usd(-30), std::nullopt},
      {"lower to exactly zero", plain(), usd(-120), std::nullopt},
      {"lower a micro below zero", plain(), micros(-120'000'001), R::below_zero},
      {"lower an empty meter", with_meter(plain(), Money()), micros(-1), R::below_zero},
      {"lower while a LOCKED round holds money", locked(), usd(-1), R::locked_round},
      {"below zero is named before the locked round", locked(), usd(-121), R::below_zero},
      {"raise while a LOCKED round holds money", locked(), usd(1), std::nullopt},
      {"raise to exactly the ceiling", capped(), usd(30), std::nullopt},
      {"raise a micro past the ceiling", capped(), micros(30'000'001), R::above_ceiling},
      {"lower a capped level", capped(), usd(-50), std::nullopt},
      {"raise to a cent below the Must-Hit-By amount", must_hit_by(), usd(129.99), std::nullopt},
      {"raise to less than a cent below the amount", must_hit_by(), micros(129'990'001),
       R::must_hit_by},
      {"raise to the Must-Hit-By amount", must_hit_by(), usd(130), R::must_hit_by},
      {"raise past the Must-Hit-By amount", must_hit_by(), usd(500), R::must_hit_by},
      {"lower a Must-Hit-By level", must_hit_by(), usd(-20), std::nullopt},
      {"raise a hidden level to its lower bound", with_meter(hidden(), usd(90)), usd(10),
       std::nullopt},
      {"raise a hidden level a micro past its lower bound", with_meter(hidden(), usd(90)),
       micros(10'000'001), R::hidden_trigger},
      {"raise a hidden level already past its lower bound", hidden(), micros(1), R::hidden_trigger},
      {"the Must-Hit-By amount is named before the hidden bound", hidden(), usd(130),
       R::must_hit_by},
      {"lower a hidden level", hidden(), usd(-100), std::nullopt},
      {"the ceiling is named before the Must-Hit-By amount",
       [] {
         AdjustmentFacts facts = must_hit_by();
         facts.ceiling = usd(200);
         return facts;
       }(),
       usd(200), R::above_ceiling},
      {"the meter leaves int64", plain(), micros(kMax), R::overflow},
      {"the house's account leaves int64", with_house(plain(), micros(kMin + 1)), usd(1),
       R::overflow},
      {"a lowering takes the house's account past int64", with_house(plain(), micros(kMax)),
       usd(-1), R::overflow},
      {"the most negative amount", plain(), micros(kMin), R::below_zero},
      {"lower to exactly the seed", seeded(), usd(-20), std::nullopt},
      {"lower a micro below the seed", seeded(), micros(-20'000'001), R::below_seed},
      {"sweep the meter to zero past its seed", seeded(), usd(-120), R::below_seed},
      {"below zero is named before the seed", seeded(), usd(-121), R::below_zero},
      {"lower a meter already below its seed", with_meter(seeded(), usd(90)), micros(-1),
       R::below_seed},
      {"raise a meter below its seed", with_meter(seeded(), usd(90)), usd(5), std::nullopt},
      {"the seed is named before the locked round",
       [] {
         AdjustmentFacts facts = seeded();
         facts.locked_round_holds_money = true;
         return facts;
       }(),
       usd(-30), R::below_seed},
      {"the most negative amount against a house in credit", with_house(plain(), Money()),
       micros(kMin), R::overflow},
      {"overflow is named before the ceiling", capped(), micros(kMax), R::overflow},
  };
  for (const Case& c : cases) {
    const auto refusal = adjustment_refusal(c.amount, c.facts);
    EXPECT_EQ(refusal, c.expected)
        << c.name << ": " << c.amount.to_string() << " answered "
        << (refusal ? std::string(to_string(*refusal)) : "admitted") << ", expected "
        << (c.expected ? std::string(to_string(*c.expected)) : "admitted");
  }
}

TEST(AdjustmentRule, RaiseCapIsTheLowestBound) {
  EXPECT_EQ(adjustment_raise_cap(plain()), std::nullopt);
  EXPECT_EQ(adjustment_raise_cap(capped()), usd(150));
  EXPECT_EQ(adjustment_raise_cap(must_hit_by()), usd(249.99));
  EXPECT_EQ(adjustment_raise_cap(hidden()), usd(100));
  AdjustmentFacts both = capped();
  both.must_hit_by = usd(120);
  EXPECT_EQ(adjustment_raise_cap(both), usd(119.99));
}

// Every admitted raise ends at or below the cap, every admitted lowering at or above zero, and
// nothing the rule admits can reach a Must-Hit-By amount.
TEST(AdjustmentRule, AdmittedMovesStayWithinTheBounds) {
  for (const AdjustmentFacts& facts : {plain(), capped(), must_hit_by(), hidden(), locked()}) {
    const auto cap = adjustment_raise_cap(facts);
    for (std::int64_t delta = -200'000'000; delta <= 200'000'000; delta += 2'500'001) {
      if (adjustment_refusal(micros(delta), facts)) continue;
      const std::int64_t after = facts.meter.micros() + delta;
      EXPECT_GE(after, 0) << delta;
      if (delta > 0 && cap) {
        EXPECT_LE(after, cap->micros()) << delta;
      }
      if (facts.must_hit_by) {
        EXPECT_LT(after, facts.must_hit_by->micros()) << delta;
      }
      if (delta < 0) {
        EXPECT_FALSE(facts.locked_round_holds_money) << delta;
      }
    }
  }
}

}  // namespace
}  // namespace jackpot
