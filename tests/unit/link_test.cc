// Table-driven tests of the meter rules with exact micro amounts. Every test checks the ledger
// invariants after every operation (through Fixture::run) and reconciles every level at the end.
#include "meters/link.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "meters/reconcile.h"

namespace jackpot {
namespace {

Money dollars(const char* text) { return *Money::parse(text); }

LevelConfig level_config(std::uint32_t number, const char* seed, std::int64_t meter_ppm,
                         std::int64_t reserve_ppm) {
  LevelConfig level;
  level.level = number;
  level.name = "Level " + std::to_string(number);
  level.seed = dollars(seed);
  level.meter_rate_ppm = meter_ppm;
  level.reserve_rate_ppm = reserve_ppm;
  return level;
}

// A link, the random source it draws from, and every transfer it made since it opened.
class Fixture {
 public:
  explicit Fixture(std::vector<LevelConfig> levels, const char* base = "1.00")
      : random_(7), link_(open(std::move(levels), base)) {}

  Link& link() { return link_; }
  std::vector<Transfer>& transfers() { return transfers_; }

  // Runs one operation, then checks the invariants and that a refusal changed nothing.
  template <typename Operation>
  auto run(Operation operation) {
    const auto before = link_.ledger().balances();
    const std::size_t count = transfers_.size();
    auto result = operation(link_, transfers_);
    if (!result.ok()) {
      EXPECT_EQ(transfers_.size(), count) << "a refused operation appended transfers";
      EXPECT_EQ(link_.ledger().balances(), before) << "a refused operation changed balances";
    }
    const auto broken = link_.check_invariants();
    EXPECT_FALSE(broken.has_value()) << *broken;
    return result;
  }

  ContributionResult contribute(std::int64_t units, std::uint64_t round = 1) {
    auto result = run([&](Link& link, auto& out) {
      return link.contribute(units, {round, 0}, out);
    });
    EXPECT_TRUE(result.ok()) << to_string(result.error());
    return result.ok() ? std::move(result).value() : ContributionResult{};
  }

  void set_meter(std::uint32_t level, const char* amount) {
    const Money delta = *dollars(amount).minus(link_.meter(level));
    auto result = run([&](Link& link, auto& out) {
      return link.adjust_meter(level, delta, "test setup", {}, out);
    });
    ASSERT_TRUE(result.ok()) << to_string(result.error());
  }

  // Every level reconciles from zero (before the opening seeds) to its holdings now.
  void expect_reconciled() {
    for (std::uint32_t level = 1; level <= link_.level_count(); ++level) {
      const Money end = *link_.meter(level).plus(link_.reserve(level));
      const auto report = reconcile_level(level, Money(), end, transfers_);
      EXPECT_TRUE(report.balanced) << "level " << level << " does not reconcile";
    }
  }

 private:
  Link open(std::vector<LevelConfig> levels, const char* base) {
    LinkConfig config;
    config.id = LinkId("test-link");
    config.base_wager = dollars(base);
    config.levels = std::move(levels);
    auto opened = Link::open(std::move(config), random_, transfers_);
    JACKPOT_INVARIANT(opened.ok(), "test configuration must be valid");
    return std::move(opened).value();
  }

  SplitMix64 random_;
  std::vector<Transfer> transfers_;
  Link link_;
};

TEST(Link, OpensWithEveryLevelAtItsSeed) {
  Fixture fixture(
      {level_config(1, "1000.00", 150'000, 25'000), level_config(2, "0.00", 10'000, 0)});
  EXPECT_EQ(fixture.link().meter(1), dollars("1000.00"));
  EXPECT_EQ(fixture.link().meter(2), Money());
  ASSERT_EQ(fixture.transfers().size(), 1u);
  const Transfer& seed = fixture.transfers()[0];
  EXPECT_EQ(seed.id, TransferId(1));
  EXPECT_EQ(seed.kind, TransferKind::seed);
  EXPECT_EQ(seed.debit, AccountRef::link(AccountKind::seed_funding));
  EXPECT_EQ(seed.credit, AccountRef::meter(1));
  fixture.expect_reconciled();
}

TEST(Link, TwoMillionDollarWagersAtFifteenPercentAndTwoAndAHalf) {
  Fixture fixture({level_config(1, "1000.00", 150'000, 25'000)});
  for (std::uint64_t round = 1; round <= 2'000'000; ++round) {
    const auto result = fixture.link().contribute(1, {round, 0}, fixture.transfers());
    ASSERT_TRUE(result.ok());
  }
  EXPECT_EQ(fixture.link().meter(1), dollars("301000.00"));
  EXPECT_EQ(fixture.link().reserve(1), dollars("50000.00"));
  EXPECT_EQ(fixture.link().ledger().balance(AccountRef::link(AccountKind::wagers)),
            dollars("-350000.00"));
  EXPECT_EQ(fixture.transfers().size(), 1u + 2 * 2'000'000u);
  EXPECT_FALSE(fixture.link().check_invariants());
  fixture.expect_reconciled();
}

TEST(Link, ThreeLevelContributionSplitsExactly) {
  Fixture fixture({level_config(1, "1000.00", 150'000, 25'000),
                   level_config(2, "100.00", 40'000, 5'000), level_config(3, "10.00", 13'337, 1)});
  const auto result = fixture.contribute(7);
  EXPECT_EQ(result.meters, dollars("1.423359"));  // 7 × (0.15 + 0.04 + 0.013337)
  EXPECT_EQ(result.reserves, dollars("0.210007"));
  EXPECT_EQ(fixture.link().meter(3), dollars("10.093359"));
  EXPECT_EQ(fixture.link().reserve(3), dollars("0.000007"));
  EXPECT_TRUE(result.hits.empty());
  fixture.expect_reconciled();
}

TEST(Link, TenPercentAwardIsFlooredToTheCentAndLeavesTheResidue) {
  Fixture fixture({level_config(1, "1000.00", 150'000, 25'000)});
  fixture.set_meter(1, "12345.678901");
  const auto award = fixture.run([](Link& link, auto& out) {
    return link.award_percent(1, 10, {5, 77}, out);
  });
  ASSERT_TRUE(award.ok());
  EXPECT_EQ(award->amount, dollars("1234.56"));
  EXPECT_FALSE(award->reset.has_value());
  EXPECT_EQ(fixture.link().meter(1), dollars("11111.118901"));
  EXPECT_EQ(fixture.link().ledger().balance(AccountRef::link(AccountKind::awards_payable)),
            dollars("1234.56"));
  const Transfer& transfer = fixture.transfers().back();
  EXPECT_EQ(transfer.id, award->transfer);
  EXPECT_EQ(transfer.kind, TransferKind::award);
  EXPECT_EQ(transfer.origin, (Origin{5, 77}));
  fixture.expect_reconciled();
}

TEST(Link, HundredPercentHitResetsToSeedPlusReserveAndKeepsTheResidue) {
  Fixture fixture({level_config(1, "1000.00", 150'000, 25'000)});
  fixture.contribute(1'001);  // Meter 1150.15, reserve 25.025.
  fixture.set_meter(1, "1150.156789");
  const auto award = fixture.run([](Link& link, auto& out) {
    return link.award_percent(1, 100, {2, 1}, out);
  });
  ASSERT_TRUE(award.ok());
  EXPECT_EQ(award->amount, dollars("1150.15"));
  ASSERT_TRUE(award->reset.has_value());
  EXPECT_EQ(award->reset->seed, dollars("1000.00"));
  EXPECT_EQ(award->reset->reserve_released, dollars("25.025"));
  EXPECT_EQ(fixture.link().meter(1), dollars("1025.031789"));  // 0.006789 + 1000 + 25.025
  EXPECT_EQ(fixture.link().reserve(1), Money());
  fixture.expect_reconciled();
}

TEST(Link, CeilingStopsTheMeterAndTheExcessLandsInTheReserve) {
  LevelConfig capped = level_config(1, "1000.00", 150'000, 0);
  capped.ceiling = dollars("1000.50");
  Fixture fixture({capped});
  fixture.contribute(4);  // 0.60 on the meter: 0.50 fits, 0.10 overflows.
  EXPECT_EQ(fixture.link().meter(1), dollars("1000.50"));
  EXPECT_EQ(fixture.link().reserve(1), dollars("0.10"));
  fixture.contribute(10);
  EXPECT_EQ(fixture.link().meter(1), dollars("1000.50"));
  EXPECT_EQ(fixture.link().reserve(1), dollars("1.60"));
  EXPECT_EQ(fixture.transfers().back().kind, TransferKind::overflow);

  // At the reset the reserve fills the meter only up to the ceiling.
  ASSERT_TRUE(
      fixture.run([](Link& link, auto& out) { return link.award_percent(1, 100, {}, out); }).ok());
  EXPECT_EQ(fixture.link().meter(1), dollars("1000.50"));
  EXPECT_EQ(fixture.link().reserve(1), dollars("1.10"));
  fixture.expect_reconciled();
}

TEST(Link, CeilingCanOverflowIntoAnotherLevelWhichOverflowsInTurn) {
  LevelConfig first = level_config(1, "100.00", 100'000, 0);
  first.ceiling = dollars("100.20");
  first.overflow_level = 2;
  LevelConfig second = level_config(2, "50.00", 0, 0);
  second.ceiling = dollars("50.05");
  second.overflow_level = 3;
  Fixture fixture({first, second, level_config(3, "10.00", 0, 0)});
  fixture.contribute(3);  // Level 1 gets 0.30: 0.20 fits, 0.10 to level 2 (0.05 fits, 0.05 on).
  EXPECT_EQ(fixture.link().meter(1), dollars("100.20"));
  EXPECT_EQ(fixture.link().meter(2), dollars("50.05"));
  EXPECT_EQ(fixture.link().meter(3), dollars("10.05"));
  const auto report = reconcile_level(2, Money(), fixture.link().meter(2), fixture.transfers());
  EXPECT_EQ(report.overflow_in, dollars("0.10"));
  EXPECT_EQ(report.overflow_out, dollars("0.05"));
  EXPECT_TRUE(report.balanced);
  fixture.expect_reconciled();
}

LevelConfig must_hit_by_level(std::uint32_t number, TriggerMode trigger) {
  LevelConfig level = level_config(number, "50.00", 100'000, 20'000);
  level.must_hit_by = dollars("250.00");
  level.trigger = trigger;
  return level;
}

TEST(Link, MustHitByCrossedMidContributionPaysExactlyTheAmount) {
  Fixture fixture({must_hit_by_level(1, TriggerMode::at_amount)});
  fixture.set_meter(1, "249.95");
  const auto result = fixture.contribute(3, 9);  // +0.30 crosses 250.00 by 0.25.
  ASSERT_EQ(result.hits.size(), 1u);
  EXPECT_EQ(result.hits[0].level, 1u);
  EXPECT_EQ(result.hits[0].amount, dollars("250.00"));
  EXPECT_FALSE(result.hits[0].revealed.has_value());
  // The rest of the contribution (0.25) and the reserve (0.06) carry into the reset meter.
  EXPECT_EQ(fixture.link().meter(1), dollars("50.31"));
  EXPECT_EQ(fixture.link().reserve(1), Money());
  EXPECT_EQ(fixture.link().ledger().balance(AccountRef::link(AccountKind::awards_payable)),
            dollars("250.00"));
  fixture.expect_reconciled();
}

TEST(Link, MustHitByReachedExactlyCountsAndOneCentShortDoesNot) {
  Fixture fixture({must_hit_by_level(1, TriggerMode::at_amount)});
  fixture.set_meter(1, "249.89");
  EXPECT_TRUE(fixture.contribute(1).hits.empty());  // 249.99
  fixture.set_meter(1, "249.90");
  const auto result = fixture.contribute(1);  // Exactly 250.00.
  ASSERT_EQ(result.hits.size(), 1u);
  EXPECT_EQ(result.hits[0].amount, dollars("250.00"));
  EXPECT_EQ(fixture.link().meter(1), dollars("50.04"));  // Seed + the reserve of two wagers.
  fixture.expect_reconciled();
}

TEST(Link, MustHitByResetReleasesTheReserveOnlyToOneCentBelowTheAmount) {
  LevelConfig level = must_hit_by_level(1, TriggerMode::at_amount);
  level.meter_rate_ppm = 10'000;     // 0.01 a unit.
  level.reserve_rate_ppm = 500'000;  // 0.50 a unit.
  Fixture fixture({level});
  fixture.set_meter(1, "249.99");
  const auto result = fixture.contribute(1'000);  // Meter +10.00, reserve +500.00.
  ASSERT_EQ(result.hits.size(), 1u);
  EXPECT_EQ(result.hits[0].amount, dollars("250.00"));
  // Rest 9.99 + seed 50.00 = 59.99; the reserve tops it up to 249.99 and keeps the rest.
  EXPECT_EQ(fixture.link().meter(1), dollars("249.99"));
  EXPECT_EQ(fixture.link().reserve(1), dollars("310.00"));
  EXPECT_EQ(fixture.contribute(1).hits.size(), 1u);  // The next wager reaches 250.00.
  fixture.expect_reconciled();
}

TEST(Link, HiddenMustHitByPointIsCommittedAtResetAndRevealedAtTheHit) {
  Fixture fixture({must_hit_by_level(1, TriggerMode::hidden_uniform)});
  const auto committed = fixture.link().hidden_trigger(1);
  ASSERT_TRUE(committed.has_value());
  EXPECT_EQ(committed->range_above, dollars("50.00"));
  EXPECT_EQ(committed->range_up_to, dollars("250.00"));
  EXPECT_GT(committed->point, dollars("50.00"));
  EXPECT_LE(committed->point, dollars("250.00"));
  EXPECT_EQ(fixture.link().trigger_point(1), committed->point);

  ContributionResult result;
  std::uint64_t rounds = 0;
  while (result.hits.empty() && rounds < 10'000) result = fixture.contribute(1, ++rounds);
  ASSERT_EQ(result.hits.size(), 1u);
  const MustHitByHit& hit = result.hits[0];
  EXPECT_EQ(hit.amount, committed->point);
  ASSERT_TRUE(hit.revealed.has_value());
  EXPECT_TRUE(verify_trigger(hit.revealed->point, hit.revealed->salt, committed->commitment));
  ASSERT_TRUE(hit.next.has_value());
  EXPECT_NE(hit.next->commitment, committed->commitment);
  EXPECT_EQ(fixture.link().hidden_trigger(1)->commitment, hit.next->commitment);
  EXPECT_GT(hit.next->point, fixture.link().meter(1));
  fixture.expect_reconciled();
}

// A large reserve fills a hidden-trigger level only to the midpoint of its range: the next
// point is drawn from (150.00, 250.00], never from a range a cent wide (#32).
TEST(Link, HiddenMustHitByResetKeepsHalfTheRangeForTheNextPoint) {
  LevelConfig level = must_hit_by_level(1, TriggerMode::hidden_uniform);
  level.meter_rate_ppm = 10'000;     // 0.01 a unit.
  level.reserve_rate_ppm = 500'000;  // 0.50 a unit.
  Fixture fixture({level});
  ContributionResult result;
  std::uint64_t round = 0;
  while (result.hits.empty() && round < 100'000) result = fixture.contribute(1'000, ++round);
  ASSERT_EQ(result.hits.size(), 1u);
  ASSERT_TRUE(result.hits[0].next.has_value());
  const HiddenTrigger& next = *result.hits[0].next;
  EXPECT_EQ(fixture.link().meter(1), dollars("150.00"));
  EXPECT_EQ(next.range_above, dollars("150.00"));
  EXPECT_EQ(next.range_up_to, dollars("250.00"));
  EXPECT_GT(fixture.link().reserve(1), dollars("100.00"));  // The rest waits for later resets.
  fixture.expect_reconciled();
}

// A rejected Must-Hit-By award on a hidden-trigger level lifts the reset meter no further than
// the value the new point was drawn above; the rest goes to the reserve. Before #32 it went back
// up to a cent below the new secret point, which the meter then showed.
TEST(Link, RejectedHiddenMustHitByAwardDoesNotShowTheNextPoint) {
  Fixture fixture({must_hit_by_level(1, TriggerMode::hidden_uniform)});
  ContributionResult result;
  std::uint64_t round = 0;
  while (result.hits.empty() && round < 100'000) result = fixture.contribute(1, ++round);
  ASSERT_EQ(result.hits.size(), 1u);
  const HiddenTrigger next = *fixture.link().hidden_trigger(1);
  const Money meter_after_reset = fixture.link().meter(1);
  const Money reserve_after_reset = fixture.link().reserve(1);
  const auto& transfers = fixture.transfers();
  const auto found = std::find_if(transfers.begin(), transfers.end(),
                                  [&](const Transfer& t) { return t.id == result.hits[0].award; });
  ASSERT_NE(found, transfers.end());
  const Transfer award = *found;
  ASSERT_TRUE(
      fixture.run([&](Link& link, auto& out) {
               return link.reverse_award(award, {round, 9}, out);
             })
          .ok());
  EXPECT_EQ(fixture.link().meter(1), std::max(next.range_above, meter_after_reset));
  EXPECT_LT(fixture.link().meter(1), next.point);
  EXPECT_EQ(*fixture.link().reserve(1).minus(reserve_after_reset),
            *award.amount.minus(*fixture.link().meter(1).minus(meter_after_reset)));
  EXPECT_EQ(fixture.link().hidden_trigger(1), next);  // The point in force is kept.
  fixture.expect_reconciled();
}

TEST(Link, FiveDollarBaseWagerMultipliesSeedContributionsAndMustHitBy) {
  Fixture fixture(
      {level_config(1, "1000.00", 150'000, 25'000), must_hit_by_level(2, TriggerMode::at_amount)},
      "5.00");
  EXPECT_EQ(fixture.link().meter(1), dollars("5000.00"));
  EXPECT_EQ(fixture.link().meter(2), dollars("250.00"));
  EXPECT_EQ(fixture.link().trigger_point(2), dollars("1250.00"));
  fixture.contribute(2);  // Two $5 wagers.
  EXPECT_EQ(fixture.link().meter(1), dollars("5001.50"));
  EXPECT_EQ(fixture.link().reserve(1), dollars("0.25"));
  fixture.set_meter(2, "1249.50");
  const auto result = fixture.contribute(1);  // +0.50 reaches 1250.00.
  ASSERT_EQ(result.hits.size(), 1u);
  EXPECT_EQ(result.hits[0].amount, dollars("1250.00"));
  // Seed 250.00 + the reserve of three $5 wagers at 2% (0.30); the rest of the contribution
  // after reaching the amount is zero.
  EXPECT_EQ(fixture.link().meter(2), dollars("250.30"));
  fixture.expect_reconciled();
}

TEST(Link, SplitSharesTheMeterEquallyAndResetsOnce) {
  Fixture fixture({level_config(1, "1000.00", 150'000, 25'000)});
  fixture.set_meter(1, "1000.05");
  const Origin winners[] = {{3, 11}, {3, 12}};
  const auto split =
      fixture.run([&](Link& link, auto& out) { return link.award_split(1, winners, out); });
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->share, dollars("500.02"));
  EXPECT_EQ(split->transfers.size(), 2u);
  EXPECT_EQ(fixture.link().meter(1), dollars("1000.01"));  // 0.01 remainder + seed.
  EXPECT_EQ(fixture.link().ledger().balance(AccountRef::link(AccountKind::awards_payable)),
            dollars("1000.04"));
  fixture.expect_reconciled();
}

TEST(Link, VoidReversesTheRoundExactly) {
  LevelConfig capped = level_config(1, "1000.00", 150'000, 25'000);
  capped.ceiling = dollars("1000.40");
  Fixture fixture({capped, level_config(2, "10.00", 10'000, 0)});
  fixture.contribute(2, 1);
  const auto before = fixture.link().ledger().balances();
  const std::size_t first = fixture.transfers().size();
  fixture.contribute(3, 2);  // Crosses the ceiling: contributions and an overflow.
  const std::vector<Transfer> round(fixture.transfers().begin() + static_cast<long>(first),
                                    fixture.transfers().end());
  const auto reversed = fixture.run([&](Link& link, auto& out) {
    return link.reverse_round(round, {}, {2, 0}, out);
  });
  ASSERT_TRUE(reversed.ok()) << to_string(reversed.error());
  EXPECT_EQ(*reversed, dollars("0.555"));  // 3 × (0.15 + 0.025 + 0.01)
  EXPECT_EQ(fixture.link().ledger().balances(), before);
  // One compensating transfer per transfer of the round, each naming it and mirroring it: the
  // overflow by an overflow_reversal, the contributions back to the wagers.
  const std::vector<Transfer> undone(fixture.transfers().end() - static_cast<long>(round.size()),
                                     fixture.transfers().end());
  for (const Transfer& original : round) {
    const auto it = std::find_if(undone.begin(), undone.end(),
                                 [&](const Transfer& t) { return t.corrects == original.id; });
    ASSERT_NE(it, undone.end()) << "nothing corrects transfer " << original.id.value();
    EXPECT_EQ(it->amount, original.amount);
    EXPECT_EQ(it->debit, original.credit);
    if (original.kind == TransferKind::overflow) {
      EXPECT_EQ(it->kind, TransferKind::overflow_reversal);
      EXPECT_EQ(it->credit, original.debit);
    } else {
      EXPECT_EQ(it->kind, TransferKind::contribution_reversal);
      EXPECT_EQ(it->credit, AccountRef::link(AccountKind::wagers));
    }
  }
  fixture.expect_reconciled();
}

// Table A locks, table B hits the 100% level (the meter resets to seed + reserve), A voids a
// misdeal. A's contribution was paid to B's winner: the refund may not come out of the reset
// meter (it fell to 999.85 on a $1,000 seed, or the void was refused on a seed smaller than the
// refund); the house refunds it, naming what it refunds. Both seed sizes (issue #13, item 3).
TEST(Link, VoidAfterAnotherTablesResetIsRefundedByTheHouseWhateverTheSeed) {
  struct Case {
    const char* seed;
    std::int64_t units;
    const char* reset_meter;  // Seed + the reserve released, which A's void leaves as it is.
  };
  for (const Case& c : {Case{"1000.00", 1, "1000.025"}, Case{"0.10", 10, "0.35"}}) {
    SCOPED_TRACE(std::string("seed ") + c.seed);
    Fixture fixture({level_config(1, c.seed, 150'000, 25'000)});
    const std::size_t first = fixture.transfers().size();
    fixture.contribute(c.units, 1);  // Table A's lock.
    const std::vector<Transfer> round(fixture.transfers().begin() + static_cast<long>(first),
                                      fixture.transfers().end());
    ASSERT_TRUE(fixture
                    .run([](Link& link, auto& out) {
                      return link.award_percent(1, 100, {2, 1}, out);  // Table B's royal.
                    })
                    .ok());
    ASSERT_EQ(fixture.link().meter(1), dollars(c.reset_meter));
    const Money house_before =
        fixture.link().ledger().balance(AccountRef::link(AccountKind::seed_funding));
    const Money wagers_before =
        fixture.link().ledger().balance(AccountRef::link(AccountKind::wagers));
    const std::uint32_t awarded[] = {1};
    const auto reversed = fixture.run([&](Link& link, auto& out) {
      return link.reverse_round(round, awarded, {1, 0}, out);
    });
    ASSERT_TRUE(reversed.ok()) << to_string(reversed.error());
    const Money contributed = *dollars("0.175").times(c.units);
    EXPECT_EQ(*reversed, contributed);
    EXPECT_EQ(fixture.link().meter(1), dollars(c.reset_meter));
    EXPECT_EQ(fixture.link().reserve(1), Money());
    EXPECT_EQ(fixture.link().ledger().balance(AccountRef::link(AccountKind::wagers)),
              *wagers_before.plus(contributed));
    EXPECT_EQ(fixture.link().ledger().balance(AccountRef::link(AccountKind::seed_funding)),
              *house_before.minus(contributed));
    // One refund per contribution of the round, each naming it.
    for (const Transfer& original : round) {
      const auto refund = std::find_if(
          fixture.transfers().end() - static_cast<long>(round.size()), fixture.transfers().end(),
          [&](const Transfer& t) { return t.corrects == original.id; });
      ASSERT_NE(refund, fixture.transfers().end());
      EXPECT_EQ(refund->kind, TransferKind::house_funded_refund);
      EXPECT_EQ(refund->debit, AccountRef::link(AccountKind::seed_funding));
      EXPECT_EQ(refund->credit, AccountRef::link(AccountKind::wagers));
      EXPECT_EQ(refund->amount, original.amount);
    }
    fixture.expect_reconciled();
  }
}

// A 10% award in between also paid part of the round out: the meter keeps what it showed after
// the award, and the void takes nothing from the level.
TEST(Link, VoidAfterAPartialAwardLeavesTheLevelAsTheAwardLeftIt) {
  Fixture fixture({level_config(1, "1000.00", 150'000, 25'000)});
  const std::size_t first = fixture.transfers().size();
  fixture.contribute(10, 1);
  const std::vector<Transfer> round(fixture.transfers().begin() + static_cast<long>(first),
                                    fixture.transfers().end());
  ASSERT_TRUE(
      fixture.run([](Link& link, auto& out) {
               return link.award_percent(1, 10, {2, 1}, out);
             })
          .ok());
  const Money meter = fixture.link().meter(1);
  const Money reserve = fixture.link().reserve(1);
  const std::uint32_t awarded[] = {1};
  const auto reversed = fixture.run([&](Link& link, auto& out) {
    return link.reverse_round(round, awarded, {1, 0}, out);
  });
  ASSERT_TRUE(reversed.ok()) << to_string(reversed.error());
  EXPECT_EQ(*reversed, dollars("1.75"));
  EXPECT_EQ(fixture.link().meter(1), meter);
  EXPECT_EQ(fixture.link().reserve(1), reserve);
  fixture.expect_reconciled();
}

// A round whose contribution overflowed level 1's ceiling into level 2's meter, voided with no
// award in between: every level's reconciliation terms are as they were before the round
// (issue #13, item 6: the overflow came back as a plain contribution reversal, so level 2 showed
// contributions too low and overflow-in too high, and level 1 the mirror).
TEST(Link, VoidOfAnOverflowToAnotherLevelReconcilesEachLevelExactly) {
  LevelConfig capped = level_config(1, "1000.00", 150'000, 25'000);
  capped.ceiling = dollars("1000.20");
  capped.overflow_level = 2;
  Fixture fixture({capped, level_config(2, "10.00", 10'000, 0)});
  fixture.contribute(1, 1);
  const auto terms = [&](std::uint32_t level) {
    const Money end = *fixture.link().meter(level).plus(fixture.link().reserve(level));
    return reconcile_level(level, Money(), end, fixture.transfers());
  };
  const LevelReconciliation before[] = {terms(1), terms(2)};
  const std::size_t first = fixture.transfers().size();
  fixture.contribute(2, 2);  // Level 1: 0.05 fits under the ceiling, 0.25 overflows to level 2.
  const std::vector<Transfer> round(fixture.transfers().begin() + static_cast<long>(first),
                                    fixture.transfers().end());
  ASSERT_TRUE(std::any_of(round.begin(), round.end(), [](const Transfer& t) {
    return t.kind == TransferKind::overflow && t.credit == AccountRef::meter(2);
  }));
  const auto reversed = fixture.run([&](Link& link, auto& out) {
    return link.reverse_round(round, {}, {2, 0}, out);
  });
  ASSERT_TRUE(reversed.ok()) << to_string(reversed.error());
  for (std::uint32_t level = 1; level <= 2; ++level) {
    SCOPED_TRACE("level " + std::to_string(level));
    const LevelReconciliation after = terms(level);
    EXPECT_TRUE(after.balanced);
    EXPECT_EQ(after.contributions, before[level - 1].contributions);
    EXPECT_EQ(after.overflow_in, before[level - 1].overflow_in);
    EXPECT_EQ(after.overflow_out, before[level - 1].overflow_out);
    EXPECT_EQ(after.end, before[level - 1].end);
  }
  fixture.expect_reconciled();
}

// The rule of plan_round_reversal, case by case: a round that put 0.15 on level 1's meter,
// overflowed 0.05 of it to level 2's meter, 0.025 on level 1's reserve and 0.01 on level 2's
// meter, voided after awards on none, either or both levels; and a round whose overflow went to
// level 1's own reserve.
TEST(PlanRoundReversal, TakesBackWhatNoAwardPaidOutAndTheHouseRefundsTheRest) {
  const auto money = [](const char* text) { return dollars(text); };
  const auto transfer = [&](std::uint64_t id, AccountRef debit, AccountRef credit,
                            const char* amount, TransferKind kind) {
    return Transfer{TransferId(id), debit, credit, money(amount), kind, {7, 0}, TransferId()};
  };
  const auto wagers = AccountRef::link(AccountKind::wagers);
  const auto house = AccountRef::link(AccountKind::seed_funding);
  const auto meter = AccountRef::meter;
  const auto reserve = AccountRef::reserve;
  const std::vector<Transfer> to_level_2 = {
      transfer(10, wagers, meter(1), "0.15", TransferKind::contribution),
      transfer(11, meter(1), meter(2), "0.05", TransferKind::overflow),
      transfer(12, wagers, reserve(1), "0.025", TransferKind::contribution),
      transfer(13, wagers, meter(2), "0.01", TransferKind::contribution)};
  const std::vector<Transfer> to_own_reserve = {
      transfer(20, wagers, meter(1), "0.15", TransferKind::contribution),
      transfer(21, meter(1), reserve(1), "0.05", TransferKind::overflow),
      transfer(22, wagers, reserve(1), "0.025", TransferKind::contribution)};
  using K = TransferKind;
  struct Case {
    const char* what;
    const std::vector<Transfer>* round;
    std::vector<bool> awarded;  // By level, index 0 unused.
    std::vector<PlannedReversal> expected;
  };
  const auto step = [&](AccountRef debit, AccountRef credit, const char* amount, K kind,
                        std::uint64_t corrects) {
    return PlannedReversal{debit, credit, money(amount), kind, TransferId(corrects)};
  };
  const std::vector<Case> cases = {
      {"no award since: every transfer mirrored, newest first",
       &to_level_2,
       {false, false, false},
       {step(meter(2), wagers, "0.01", K::contribution_reversal, 13),
        step(reserve(1), wagers, "0.025", K::contribution_reversal, 12),
        step(meter(2), meter(1), "0.05", K::overflow_reversal, 11),
        step(meter(1), wagers, "0.15", K::contribution_reversal, 10)}},
      {"level 1 awarded: level 2 gives its part back through level 1, the house the rest",
       &to_level_2,
       {false, true, false},
       {step(meter(2), wagers, "0.01", K::contribution_reversal, 13),
        step(house, wagers, "0.025", K::house_funded_refund, 12),
        step(meter(2), meter(1), "0.05", K::overflow_reversal, 11),
        step(meter(1), wagers, "0.05", K::contribution_reversal, 10),
        step(house, wagers, "0.10", K::house_funded_refund, 10)}},
      {"level 2 awarded: the house refunds what reached level 2, level 1 gives the rest",
       &to_level_2,
       {false, false, true},
       {step(house, wagers, "0.01", K::house_funded_refund, 13),
        step(reserve(1), wagers, "0.025", K::contribution_reversal, 12),
        step(house, wagers, "0.05", K::house_funded_refund, 11),
        step(meter(1), wagers, "0.10", K::contribution_reversal, 10)}},
      {"both awarded: the house refunds everything, no level changes",
       &to_level_2,
       {false, true, true},
       {step(house, wagers, "0.01", K::house_funded_refund, 13),
        step(house, wagers, "0.025", K::house_funded_refund, 12),
        step(house, wagers, "0.05", K::house_funded_refund, 11),
        step(house, wagers, "0.10", K::house_funded_refund, 10)}},
      {"overflow to its own reserve, no award: back to the meter, then to the wagers",
       &to_own_reserve,
       {false, false},
       {step(reserve(1), wagers, "0.025", K::contribution_reversal, 22),
        step(reserve(1), meter(1), "0.05", K::overflow_reversal, 21),
        step(meter(1), wagers, "0.15", K::contribution_reversal, 20)}},
      {"overflow to its own reserve, awarded (a reset released that reserve into the meter)",
       &to_own_reserve,
       {false, true},
       {step(house, wagers, "0.025", K::house_funded_refund, 22),
        step(house, wagers, "0.15", K::house_funded_refund, 20)}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const auto levels = static_cast<std::uint32_t>(c.awarded.size() - 1);
    const auto plan = plan_round_reversal(*c.round, c.awarded, levels);
    ASSERT_TRUE(plan.ok()) << to_string(plan.error());
    EXPECT_EQ(*plan, c.expected);
    // The wagers get back exactly what the round contributed.
    std::int64_t contributed = 0;
    std::int64_t refunded = 0;
    for (const Transfer& t : *c.round) {
      if (t.kind == K::contribution) contributed += t.amount.micros();
    }
    for (const PlannedReversal& s : *plan) {
      if (s.credit == wagers) refunded += s.amount.micros();
    }
    EXPECT_EQ(refunded, contributed);
  }
  // Refusals: a level out of range, and an overflow larger than what reached its meter in the
  // round (a meter that was above its cap at the lock), which cannot be taken back as posted.
  EXPECT_EQ(plan_round_reversal(to_level_2, {false, false}, 1).error(),
            LinkError::foreign_transfer);
  const std::vector<Transfer> overflow_only = {
      transfer(30, meter(1), meter(2), "0.05", TransferKind::overflow)};
  EXPECT_EQ(plan_round_reversal(overflow_only, {false, true, false}, 2).error(),
            LinkError::not_reversible);
}

TEST(Link, RejectedAwardReturnsToTheMeter) {
  Fixture fixture({level_config(1, "1000.00", 150'000, 25'000)});
  ASSERT_TRUE(
      fixture.run([](Link& link, auto& out) {
               return link.award_percent(1, 10, {1, 5}, out);
             })
          .ok());
  const Transfer award = fixture.transfers().back();
  const auto returned = fixture.run([&](Link& link, auto& out) {
    return link.reverse_award(award, {1, 5}, out);
  });
  ASSERT_TRUE(returned.ok());
  EXPECT_EQ(fixture.link().meter(1), dollars("1000.00"));
  EXPECT_EQ(fixture.link().ledger().balance(AccountRef::link(AccountKind::awards_payable)),
            Money());
  // Once returned, the payable is gone: a second reversal or a payment is refused.
  EXPECT_EQ(fixture.run([&](Link& link, auto& out) { return link.reverse_award(award, {}, out); })
                .error(),
            LinkError::insufficient_balance);
  EXPECT_EQ(
      fixture.run([&](Link& link, auto& out) { return link.pay_award(award, {}, out); }).error(),
      LinkError::insufficient_balance);
  fixture.expect_reconciled();
}

TEST(Link, TrayPaysAreRecordedPaidOrReturned) {
  Fixture fixture({level_config(1, "1000.00", 150'000, 25'000)});
  ASSERT_TRUE(fixture
                  .run([](Link& link, auto& out) {
                    return link.record_tray_pay(dollars("50.00"), {1, 1}, out);
                  })
                  .ok());
  const Transfer tray_pay = fixture.transfers().back();
  ASSERT_TRUE(
      fixture.run([&](Link& link, auto& out) {
               return link.pay_award(tray_pay, {1, 1}, out);
             })
          .ok());
  EXPECT_EQ(fixture.link().ledger().balance(AccountRef::link(AccountKind::paid)), dollars("50.00"));
  EXPECT_EQ(fixture.link().ledger().balance(AccountRef::link(AccountKind::tray_paid)),
            dollars("-50.00"));
  EXPECT_EQ(fixture.link().meter(1), dollars("1000.00"));
  fixture.expect_reconciled();
}

TEST(Link, AdjustmentsNeedAReasonAndKeepTheBounds) {
  LevelConfig capped = level_config(1, "1000.00", 150'000, 25'000);
  capped.ceiling = dollars("2000.00");
  Fixture fixture({capped});
  const auto adjust = [&](const char* delta, const char* reason) {
    return fixture.run([&](Link& link, auto& out) {
      return link.adjust_meter(1, dollars(delta), reason, {}, out);
    });
  };
  EXPECT_EQ(adjust("5.00", "").error(), LinkError::reason_missing);
  EXPECT_EQ(adjust("5.00", "  \n").error(), LinkError::reason_missing);
  EXPECT_EQ(adjust("0", "nothing").error(), LinkError::zero_adjustment);
  EXPECT_EQ(adjust("1000.01", "over the cap").error(), LinkError::above_ceiling);
  EXPECT_EQ(adjust("-1000.01", "below zero").error(), LinkError::insufficient_balance);
  EXPECT_EQ(adjust("-0.01", "below the seed").error(), LinkError::insufficient_balance);
  EXPECT_TRUE(adjust("0.02", "keyed short").ok());
  EXPECT_TRUE(adjust("-0.01", "keyed twice").ok());
  EXPECT_EQ(fixture.link().meter(1), dollars("1000.01"));
  EXPECT_EQ(fixture.transfers().back().kind, TransferKind::adjustment);
  fixture.expect_reconciled();
}

TEST(Link, RefusesBadOperationsAndChangesNothing) {
  Fixture fixture(
      {level_config(1, "1000.00", 150'000, 25'000), must_hit_by_level(2, TriggerMode::at_amount)});
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  const struct {
    const char* what;
    std::function<std::optional<LinkError>(Link&, std::vector<Transfer>&)> operation;
    LinkError expected;
  } cases[] = {
      {"zero units", [](Link& l, auto& o) { return l.contribute(0, {}, o).error(); },
       LinkError::units_not_positive},
      {"negative units", [](Link& l, auto& o) { return l.contribute(-3, {}, o).error(); },
       LinkError::units_not_positive},
      {"units overflow", [](Link& l, auto& o) { return l.contribute(kMax, {}, o).error(); },
       LinkError::overflow},
      {"balance overflow",
       [](Link& l, auto& o) { return l.contribute(kMax / 200'000, {}, o).error(); },
       LinkError::overflow},
      {"level 0", [](Link& l, auto& o) { return l.award_percent(0, 10, {}, o).error(); },
       LinkError::unknown_level},
      {"level 3", [](Link& l, auto& o) { return l.award_percent(3, 10, {}, o).error(); },
       LinkError::unknown_level},
      {"0%", [](Link& l, auto& o) { return l.award_percent(1, 0, {}, o).error(); },
       LinkError::percent_out_of_range},
      {"101%", [](Link& l, auto& o) { return l.award_percent(1, 101, {}, o).error(); },
       LinkError::percent_out_of_range},
      {"percent of MHB", [](Link& l, auto& o) { return l.award_percent(2, 100, {}, o).error(); },
       LinkError::level_is_must_hit_by},
      {"split of none",
       [](Link& l, auto& o) { return l.award_split(1, std::span<const Origin>(), o).error(); },
       LinkError::no_winners},
      {"zero tray pay", [](Link& l, auto& o) { return l.record_tray_pay(Money(), {}, o).error(); },
       LinkError::amount_not_positive},
      {"adjust overflow",
       [](Link& l, auto& o) {
         return l.adjust_meter(1, Money::from_micros(kMax), "too much", {}, o).error();
       },
       LinkError::overflow},
  };
  for (const auto& c : cases) {
    const auto before = fixture.link().ledger().balances();
    const std::size_t count = fixture.transfers().size();
    EXPECT_EQ(c.operation(fixture.link(), fixture.transfers()), c.expected) << c.what;
    EXPECT_EQ(fixture.link().ledger().balances(), before) << c.what;
    EXPECT_EQ(fixture.transfers().size(), count) << c.what;
    EXPECT_EQ(fixture.link().ledger().next_id().value(), count + 1) << c.what;
  }
  fixture.expect_reconciled();
}

TEST(Link, ReverseRoundRefusesWhatIsNotOneRoundsContributions) {
  Fixture fixture({level_config(1, "1000.00", 150'000, 25'000)});
  fixture.contribute(1, 1);
  fixture.contribute(1, 2);
  const std::vector<Transfer> two_rounds(fixture.transfers().begin() + 1,
                                         fixture.transfers().end());
  EXPECT_EQ(
      fixture.run([&](Link& l, auto& o) { return l.reverse_round(two_rounds, {}, {}, o); }).error(),
      LinkError::mixed_rounds);
  const std::vector<Transfer> seed(fixture.transfers().begin(), fixture.transfers().begin() + 1);
  EXPECT_EQ(fixture.run([&](Link& l, auto& o) { return l.reverse_round(seed, {}, {}, o); }).error(),
            LinkError::not_a_round_transfer);
  Transfer foreign = fixture.transfers().back();
  foreign.credit = AccountRef::reserve(4);
  const std::vector<Transfer> foreign_round{foreign};
  EXPECT_EQ(fixture.run([&](Link& l, auto& o) { return l.reverse_round(foreign_round, {}, {}, o); })
                .error(),
            LinkError::foreign_transfer);
}

TEST(Reconcile, DetectsAMissingOrMisdirectedTransfer) {
  Fixture fixture({level_config(1, "1000.00", 150'000, 25'000)});
  fixture.contribute(10);
  ASSERT_TRUE(
      fixture.run([](Link& link, auto& out) { return link.award_percent(1, 100, {}, out); }).ok());
  const Money end = *fixture.link().meter(1).plus(fixture.link().reserve(1));
  std::vector<Transfer> transfers = fixture.transfers();
  const auto report = reconcile_level(1, Money(), end, transfers);
  EXPECT_TRUE(report.balanced);
  EXPECT_EQ(report.contributions, dollars("1.75"));
  EXPECT_EQ(report.seeds, dollars("2000.00"));
  EXPECT_EQ(report.awards, dollars("1001.50"));
  EXPECT_EQ(report.unexplained, Money());

  std::vector<Transfer> missing = transfers;
  missing.erase(missing.begin() + 1);
  EXPECT_FALSE(reconcile_level(1, Money(), end, missing).balanced);

  std::vector<Transfer> misdirected = transfers;
  misdirected[1].kind = TransferKind::payout;  // A "payout" into a meter explains nothing.
  const auto wrong = reconcile_level(1, Money(), end, misdirected);
  EXPECT_FALSE(wrong.balanced);
  EXPECT_EQ(wrong.unexplained, dollars("1.50"));
}

}  // namespace
}  // namespace jackpot
