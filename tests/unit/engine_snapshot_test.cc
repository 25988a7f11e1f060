// Engine::snapshot() and Engine::restore(): a restored engine is the same engine. Recovery from
// storage rebuilds a snapshot, so this is what makes a restart invisible to the tables.
#include <gtest/gtest.h>

#include <random>

#include "controller/engine/engine.h"
#include "controller/hands/paytable_loader.h"
#include "tests/support/fixed_clock.h"
#include "tests/support/payout_decisions.h"

namespace jackpot {
namespace {

using testing::FixedClock;

Money usd(const char* text) { return *Money::parse(text); }

EngineConfig floor_config() {
  EngineConfig config;
  LinkSettings link;
  link.meters.id = LinkId("L");
  LevelConfig royal{1,  "Royal Flush",         usd("1000.00"), 150'000, 25'000, usd("1200.00"), 0,
                    {}, TriggerMode::at_amount};
  LevelConfig must_hit_by{2,
                          "Must-Hit-By $250",
                          usd("50.00"),
                          50'000,
                          0,
                          {},
                          0,
                          usd("250.00"),
                          TriggerMode::hidden_uniform};
  link.meters.levels = {royal, must_hit_by};
  link.approval_threshold = usd("50.00");
  link.max_wager_units = 10;
  config.links.push_back(link);
  for (const char* id : {"T1", "T2"}) {
    config.tables.push_back({TableId(id),
                             GameRule::heads_up_holdem,
                             6,
                             {{LinkId("L"), "PT-BJS-HUH-5CP-12", CommunitySource::board}}});
  }
  return config;
}

std::vector<Paytable> paytables() {
  return std::move(load_paytables(embedded_paytables())).value();
}

// Deals a stream of commands (opens, locks, settles, voids, approvals) from a seed.
class Dealer {
 public:
  explicit Dealer(std::uint64_t seed) : shuffle_(seed) {
    for (const char rank : std::string("23456789TJQKA")) {
      for (const char suit : std::string("shdc")) deck_.push_back({rank, suit});
    }
  }

  // Runs the next round's commands on `engine`; returns every answer and record in order.
  std::vector<std::string> next_round(Engine& engine) {
    std::vector<std::string> log;
    const TableId table(shuffle_() % 2 == 0 ? "T1" : "T2");
    const RoundId round(++next_round_[table.value()]);
    Records records;
    const auto note = [&](const auto& result) {
      log.push_back(result.ok() ? "ok" : result.error().message);
      log.push_back(std::to_string(records.transfers.size()) + " transfers, " +
                    std::to_string(records.payouts.size()) + " payouts, " +
                    std::to_string(records.draws.size()) + " draws");
      records.clear();
    };
    note(engine.open_round({table, round}, records));
    LockWagersRequest lock{table, round, {}};
    for (std::uint32_t seat = 1; seat <= 6; ++seat) {
      if (shuffle_() % 3 != 0) lock.wagers.push_back({seat, LinkId("L"), 100 * (1 + seat % 4)});
    }
    const auto locked = engine.lock_wagers(lock, records);
    note(locked);
    if (locked.ok()) log.push_back(locked->meters.front().meter.to_string());
    if (shuffle_() % 7 == 0 && locked.ok() && locked->must_hit_by_hits.empty()) {
      note(engine.void_round({table, round, "misdeal"}, records));
      return log;
    }
    std::shuffle(deck_.begin(), deck_.end(), shuffle_);
    SettleRoundRequest settle{table, round, {}, {}, {}};
    for (const auto& wager : lock.wagers) {
      if (shuffle_() % 40 == 0) {
        settle.seats.push_back({wager.seat, {}, std::string("ROYAL_FLUSH")});
      } else {
        settle.seats.push_back(
            {wager.seat, {deck_[2 * wager.seat], deck_[2 * wager.seat + 1]}, std::nullopt});
      }
    }
    settle.board.assign(deck_.begin() + 20, deck_.begin() + 25);
    const auto settled = engine.settle_round(settle, records);
    note(settled);
    for (const Payout& pending : engine.pending_payouts()) {
      if (shuffle_() % 2 == 0)
        note(testing::approve_payout(engine, pending.id, "supervisor/A", records));
    }
    return log;
  }

 private:
  std::mt19937_64 shuffle_;
  std::vector<std::string> deck_;
  std::map<std::string, std::uint64_t> next_round_;
};

TEST(EngineSnapshot, ARestoredEngineBehavesExactlyLikeTheOriginal) {
  FixedClock clock;
  SplitMix64 random_a(11);
  Records created;
  auto a = std::move(Engine::create(floor_config(), paytables(), clock, random_a, created)).value();
  Dealer dealer_a(5);
  for (int round = 0; round < 150; ++round) dealer_a.next_round(*a);

  const EngineSnapshot saved = a->snapshot();
  SplitMix64 random_b = random_a;  // The same random state from here on.
  auto restored = Engine::restore(floor_config(), paytables(), clock, random_b, saved);
  ASSERT_TRUE(restored.ok()) << restored.error().front();
  auto b = std::move(restored).value();
  EXPECT_EQ(b->snapshot(), saved);

  Dealer dealer_b = dealer_a;
  for (int round = 0; round < 150; ++round) {
    ASSERT_EQ(dealer_b.next_round(*b), dealer_a.next_round(*a)) << "round " << round;
  }
  EXPECT_EQ(b->snapshot(), a->snapshot());
  EXPECT_FALSE(b->check_invariants());
}

TEST(EngineSnapshot, ReplaysAnswerTheSameAfterARestore) {
  FixedClock clock;
  SplitMix64 random_a(3);
  Records records;
  auto a = std::move(Engine::create(floor_config(), paytables(), clock, random_a, records)).value();
  const OpenRoundRequest open{TableId("T1"), RoundId(7)};
  const LockWagersRequest lock{TableId("T1"), RoundId(7), {{2, LinkId("L"), 300}}};
  const auto opened = a->open_round(open, records);
  const auto locked = a->lock_wagers(lock, records);
  ASSERT_TRUE(locked.ok());
  SplitMix64 random_b = random_a;
  auto b = std::move(Engine::restore(floor_config(), paytables(), clock, random_b, a->snapshot()))
               .value();
  Records replay;
  EXPECT_EQ(*b->lock_wagers(lock, replay), *locked);
  // An OpenRound repeat answers only while its round is the latest and OPEN: restored, the same.
  const auto reopened = b->open_round(open, replay);
  ASSERT_FALSE(reopened.ok());
  EXPECT_EQ(reopened.error().code, EngineError::round_id_not_increasing);
  EXPECT_TRUE(replay.empty());
  // Restored while the round is OPEN, the open repeat answers its first answer.
  SplitMix64 random_c(3);
  auto c = std::move(Engine::create(floor_config(), paytables(), clock, random_c, records)).value();
  const auto first = c->open_round(open, records);
  ASSERT_TRUE(first.ok());
  auto d = std::move(Engine::restore(floor_config(), paytables(), clock, random_c, c->snapshot()))
               .value();
  EXPECT_EQ(*d->open_round(open, replay), *first);
  EXPECT_TRUE(replay.empty());
}

// A table restored with a previous round and no current one keeps that round for replays while
// its next round opens (the next round only reuses storage of a round that leaves memory).
TEST(EngineSnapshot, APreviousRoundWithoutACurrentOneStillAnswersReplays) {
  FixedClock clock;
  SplitMix64 random_a(4);
  Records records;
  auto a = std::move(Engine::create(floor_config(), paytables(), clock, random_a, records)).value();
  const OpenRoundRequest open{TableId("T1"), RoundId(1)};
  const LockWagersRequest lock{TableId("T1"), RoundId(1), {{2, LinkId("L"), 300}}};
  const VoidRoundRequest void_round{TableId("T1"), RoundId(1), "misdeal"};
  ASSERT_TRUE(a->open_round(open, records).ok());
  ASSERT_TRUE(a->lock_wagers(lock, records).ok());
  const auto voided = a->void_round(void_round, records);
  ASSERT_TRUE(voided.ok());

  EngineSnapshot saved = a->snapshot();
  TableSnapshot& table = saved.tables.front();
  ASSERT_EQ(table.id, TableId("T1"));
  table.previous = std::move(table.current);
  table.current.reset();
  SplitMix64 random_b = random_a;
  auto restored = Engine::restore(floor_config(), paytables(), clock, random_b, saved);
  ASSERT_TRUE(restored.ok()) << restored.error().front();
  auto b = std::move(restored).value();

  Records next;
  ASSERT_TRUE(b->open_round({TableId("T1"), RoundId(2)}, next).ok());
  Records replay;
  EXPECT_EQ(*b->void_round(void_round, replay), *voided);
  EXPECT_TRUE(replay.empty());
  const EngineSnapshot after = b->snapshot();
  ASSERT_TRUE(after.tables.front().previous.has_value());
  EXPECT_EQ(*after.tables.front().previous, *saved.tables.front().previous);
}

TEST(EngineSnapshot, ASnapshotThatDoesNotFitIsRefused) {
  FixedClock clock;
  SplitMix64 random(1);
  Records records;
  auto engine =
      std::move(Engine::create(floor_config(), paytables(), clock, random, records)).value();
  EngineSnapshot broken = engine->snapshot();
  broken.links[0].balances[0].second = usd("1.00");  // The ledger no longer sums to zero.
  const auto unbalanced = Engine::restore(floor_config(), paytables(), clock, random, broken);
  ASSERT_FALSE(unbalanced.ok());
  EXPECT_NE(unbalanced.error().front().find("do not sum to zero"), std::string::npos)
      << unbalanced.error().front();

  EngineSnapshot renamed = engine->snapshot();
  renamed.links[0].id = LinkId("M");
  EXPECT_FALSE(Engine::restore(floor_config(), paytables(), clock, random, renamed).ok());

  EngineSnapshot no_trigger = engine->snapshot();
  no_trigger.links[0].hidden[1].reset();
  const auto missing = Engine::restore(floor_config(), paytables(), clock, random, no_trigger);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().front().rfind("link 'L' level 2 (Must-Hit-By $250): hidden trigger "
                                          "missing",
                                          0),
            0u)
      << missing.error().front();
}

}  // namespace
}  // namespace jackpot
