// Regression tests for defects an independent review found in the round engine.
#include <gtest/gtest.h>

#include "controller/engine/engine.h"
#include "controller/hands/paytable_loader.h"
#include "tests/support/fixed_clock.h"
#include "tests/support/payout_decisions.h"

namespace jackpot {
namespace {

using testing::FixedClock;

Money usd(const char* text) { return *Money::parse(text); }

LevelConfig level(std::uint32_t number, const char* seed, std::int64_t meter_ppm) {
  LevelConfig config;
  config.level = number;
  config.name = Name("Level " + std::to_string(number));
  config.seed = usd(seed);
  config.meter_rate_ppm = meter_ppm;
  return config;
}

EngineConfig one_table(const char* paytable, std::vector<LevelConfig> levels,
                       HitPolicy policy = HitPolicy::sequential) {
  EngineConfig config;
  LinkSettings link;
  link.meters.id = LinkId("L");
  link.meters.levels = std::move(levels);
  link.simultaneous_hits = policy;
  config.links.push_back(link);
  TableSettings table;
  table.id = TableId("T");
  table.seats = 6;
  table.links.push_back({LinkId("L"), paytable, CommunitySource::board});
  config.tables.push_back(table);
  return config;
}

struct EngineRun {
  FixedClock clock;
  SplitMix64 random{5};
  Records records;
  std::unique_ptr<Engine> engine;

  explicit EngineRun(EngineConfig config) {
    auto created =
        Engine::create(std::move(config), std::move(load_paytables(embedded_paytables())).value(),
                       clock, random, records);
    if (!created) throw std::runtime_error(created.error().front());
    engine = std::move(created).value();
  }
};

TEST(EngineReview, AWagerAboveTheLinksMaximumIsRefusedBeforeAnythingChanges) {
  EngineRun run(one_table("PT-BJS-HUH-5CP-01", {level(1, "1000.00", 150'000)}));
  ASSERT_TRUE(run.engine->open_round({TableId("T"), RoundId(1)}, run.records));
  const Money meter = run.engine->link(LinkId("L"))->meter(1);
  Records records;
  // A billion dollars: far beyond the 100 base wagers a seat may lock by default.
  const auto locked = run.engine->lock_wagers(
      {TableId("T"), RoundId(1), {{1, LinkId("L"), 100'000'000'000}}}, records);
  ASSERT_FALSE(locked.ok());
  EXPECT_EQ(locked.error().code, EngineError::wager_above_max);
  EXPECT_EQ(locked.error().message,
            "seat 1: the wager 1000000000.00 is more than the link's 100 "
            "base wagers");
  EXPECT_TRUE(records.empty());
  EXPECT_EQ(run.engine->link(LinkId("L"))->meter(1), meter);
}

TEST(EngineReview, AMustHitByLevelWithoutRoomForOneRoundIsRefusedAtConfiguration) {
  LevelConfig must_hit_by = level(2, "100.00", 10'000);
  must_hit_by.must_hit_by = usd("250.00");
  EngineConfig config = one_table("PT-BJS-HUH-5CP-12", {level(1, "1000.00", 10'000), must_hit_by});
  config.links[0].max_wager_units = 5'000;  // 6 seats x $5000 x 1% = $300 > $149.99 of room.
  const auto problems = validate(config, std::move(load_paytables(embedded_paytables())).value());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0],
            "table 'T' on link 'L': one round (6 seats x 5000 base wagers) can add more to level 2 "
            "than the room below its Must-Hit-By amount; lower max_wager_units or the rate");
}

TEST(EngineReview, SplitSharesCarryEachSeatsOwnHand) {
  // PT-BJS-HUH-5CP-07 pays 100% of level 1 for three different hands.
  EngineRun run(one_table("PT-BJS-HUH-5CP-07", {level(1, "1000.00", 150'000)}, HitPolicy::split));
  ASSERT_TRUE(run.engine->open_round({TableId("T"), RoundId(1)}, run.records));
  ASSERT_TRUE(run.engine->lock_wagers(
      {TableId("T"), RoundId(1), {{2, LinkId("L"), 100}, {5, LinkId("L"), 100}}}, run.records));
  Records records;
  const auto settled = run.engine->settle_round(
      {TableId("T"),
       RoundId(1),
       {{2, {}, std::string("FLOPPED_ROYAL_FLUSH")}, {5, {}, std::string("ROYAL_FLUSH")}},
       {},
       {}},
      records);
  ASSERT_TRUE(settled.ok()) << settled.error().message;
  ASSERT_EQ(records.payouts.size(), 2u);
  for (const Payout& payout : records.payouts) {
    EXPECT_EQ(payout.hand, payout.seat == 2 ? "Flopped Royal Flush" : "Royal Flush");
    EXPECT_EQ(payout.amount, usd("500.15"));  // ($1000 + 2 x $0.15) / 2
  }
  EXPECT_FALSE(run.engine->check_invariants());
}

TEST(EngineReview, ApprovingAPaidPayoutAgainSaysItIsNotPending) {
  EngineConfig config = one_table("PT-BJS-HUH-5CP-01", {level(1, "1000.00", 150'000)});
  EngineRun run(std::move(config));
  ASSERT_TRUE(run.engine->open_round({TableId("T"), RoundId(1)}, run.records));
  ASSERT_TRUE(
      run.engine->lock_wagers({TableId("T"), RoundId(1), {{3, LinkId("L"), 100}}}, run.records));
  Records records;
  ASSERT_TRUE(run.engine->settle_round(
      {TableId("T"), RoundId(1), {{3, {}, std::string("FULL_HOUSE")}}, {}, {}}, records));
  ASSERT_EQ(records.payouts.size(), 1u);
  const PayoutId id = records.payouts[0].id;
  ASSERT_TRUE(testing::approve_payout(*run.engine, id, "supervisor/S1", records));
  const auto again = testing::approve_payout(*run.engine, id, "supervisor/S2", records);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, EngineError::payout_not_pending);
  EXPECT_EQ(
      testing::approve_payout(*run.engine, PayoutId(999), "supervisor/S1", records).error().code,
      EngineError::unknown_payout);
}

}  // namespace
}  // namespace jackpot
