// What the round engine answers is what proto/jackpot/v1/table.proto promises (issue #14): each
// award says whether its payout was paid at once or waits for a supervisor; a replay is compared
// by its canonical form; link cards at a table that draws none and a blank void reason are
// refused, changing nothing.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "controller/engine/engine.h"
#include "controller/engine/engine_codec.h"
#include "controller/engine/engine_config.h"
#include "controller/hands/paytable_loader.h"
#include "meters/random.h"

namespace jackpot {
namespace {

const std::vector<Paytable>& shipped() {
  static const std::vector<Paytable> paytables = [] {
    auto loaded = load_paytables(embedded_paytables());
    if (!loaded) throw std::runtime_error("the shipped paytables do not load");
    return std::move(loaded).value();
  }();
  return paytables;
}

class StillClock final : public Clock {
 public:
  std::int64_t now_us() override { return 1'767'225'600'000'000; }
};

Money usd(const char* text) { return *Money::parse(text); }

LevelConfig level(std::uint32_t number, const char* seed, std::int64_t rate_ppm) {
  LevelConfig config;
  config.level = number;
  config.name = Name("Level " + std::to_string(number));
  config.seed = usd(seed);
  config.meter_rate_ppm = rate_ppm;
  return config;
}

// Link "L" on PT-BJS-HUH-5CP-12 (Royal Flush 100% of level 1, Must-Hit-By $250 on level 2;
// Full House pays 10.00 and Four-of-a-Kind 100.00 from the tray) at table "T", 1 seat: every
// payout of `threshold` or more waits for a supervisor. A $1 wager adds $0.50 to the Must-Hit-By
// meter, which starts at $249: the second lock hits it.
EngineConfig floor_with_threshold(const char* threshold) {
  LinkSettings link;
  link.meters.id = LinkId("L");
  link.meters.base_wager = usd("1.00");
  LevelConfig mhb = level(2, "249.00", 500'000);
  mhb.must_hit_by = usd("250.00");
  link.meters.levels = {level(1, "1000.00", 10'000), mhb};
  link.max_wager_units = 1;
  link.approval_threshold = usd(threshold);
  TableSettings table;
  table.id = TableId("T");
  table.game = GameRule::heads_up_holdem;
  table.seats = 1;
  table.links = {{LinkId("L"), "PT-BJS-HUH-5CP-12", CommunitySource::board}};
  EngineConfig config;
  config.links = {link};
  config.tables = {table};
  return config;
}

class Table {
 public:
  explicit Table(EngineConfig config) : random_(11) {
    EXPECT_TRUE(validate(config, shipped()).empty()) << validate(config, shipped()).front();
    auto created = Engine::create(std::move(config), shipped(), clock_, random_, records_);
    if (!created) throw std::runtime_error("the floor is refused");
    engine_ = std::move(created).value();
  }
  Engine& engine() { return *engine_; }
  Records& records() { return records_; }

  template <typename Answer>
  Answer ok(Result<Answer, EngineFailure> result) {
    if (!result) throw std::runtime_error(result.error().message);
    EXPECT_EQ(engine_->check_invariants(), std::nullopt);
    return std::move(result).value();
  }
  OpenRoundAnswer open(std::uint64_t round) {
    return ok(engine_->open_round({TableId("T"), RoundId(round)}, records_));
  }
  LockWagersAnswer lock(std::uint64_t round, std::vector<WagerRequest> wagers) {
    return ok(engine_->lock_wagers({TableId("T"), RoundId(round), std::move(wagers)}, records_));
  }
  Result<SettleRoundAnswer, EngineFailure> settle(const SettleRoundRequest& request) {
    records_.clear();
    return engine_->settle_round(request, records_);
  }
  Result<VoidRoundAnswer, EngineFailure> void_round(std::uint64_t round, const std::string& why) {
    records_.clear();
    return engine_->void_round({TableId("T"), RoundId(round), why}, records_);
  }

 private:
  StillClock clock_;
  SplitMix64 random_;
  Records records_;
  std::unique_ptr<Engine> engine_;
};

SettleRoundRequest keyed_settle(std::uint64_t round, const std::string& hand) {
  return {TableId("T"), RoundId(round), {{1, {}, hand}}, {}, {}};
}

// ---- Award.payout_state -------------------------------------------------------------------

TEST(AwardPayoutState, SaysWhetherThePayoutWasPaidAtOnceOrWaitsForASupervisor) {
  Table table(floor_with_threshold("20.00"));
  table.open(1);
  table.lock(1, {{1, LinkId("L"), 100}});
  const auto paid = table.ok(table.settle(keyed_settle(1, "Full House")));
  ASSERT_EQ(paid.results.size(), 1U);
  ASSERT_EQ(paid.results[0].awards.size(), 1U);
  const AwardView& tray = paid.results[0].awards[0];
  EXPECT_EQ(tray.amount, usd("10.00"));
  EXPECT_EQ(tray.payout_state, PayoutState::paid);
  EXPECT_NE(tray.payout.value(), 0U) << "every award names its payout";
  EXPECT_EQ(table.engine().payout(tray.payout), nullptr) << "paid: not pending";

  table.open(2);
  table.lock(2, {{1, LinkId("L"), 100}});
  const auto waits = table.ok(table.settle(keyed_settle(2, "Four-of-a-Kind")));
  const AwardView& big = waits.results[0].awards.at(0);
  EXPECT_EQ(big.amount, usd("100.00"));
  EXPECT_EQ(big.payout_state, PayoutState::pending);
  ASSERT_NE(table.engine().payout(big.payout), nullptr);
  EXPECT_EQ(table.engine().payout(big.payout)->state, PayoutState::pending);
  // A replay answers the first answer, state and all.
  EXPECT_EQ(table.ok(table.settle(keyed_settle(2, "Four-of-a-Kind"))), waits);
}

// A Must-Hit-By award shows at settlement with its payout as the lock created it.
TEST(AwardPayoutState, AMustHitByAwardShowsItsPayoutAsTheLockCreatedIt) {
  for (const auto& [threshold, expected] :
       {std::pair{"20.00", PayoutState::pending}, std::pair{"1000.00", PayoutState::paid}}) {
    SCOPED_TRACE(threshold);
    Table table(floor_with_threshold(threshold));
    std::uint64_t round = 0;
    LockWagersAnswer locked;
    while (locked.must_hit_by_hits.empty() && round < 5) {
      if (round > 0) table.ok(table.settle(keyed_settle(round, "Two Pair")));
      table.open(++round);
      locked = table.lock(round, {{1, LinkId("L"), 100}});
    }
    ASSERT_EQ(locked.must_hit_by_hits.size(), 1U);
    EXPECT_EQ(locked.must_hit_by_hits[0].payout_state, expected);
    const auto settled = table.ok(table.settle(keyed_settle(round, "Two Pair")));
    bool shown = false;
    for (const AwardView& award : settled.results.at(0).awards) {
      if (award.kind != AwardKind::must_hit_by) continue;
      shown = true;
      EXPECT_EQ(award.payout_state, expected);
      EXPECT_NE(award.payout.value(), 0U);
    }
    EXPECT_TRUE(shown);
  }
}

// ---- Replays by canonical form ------------------------------------------------------------

// Heads Up Hold'em with two seats on 5CP-12: seat 1 As Ks, seat 2 2c 7d, board Qs Js Ts 3h 4c
// (a royal for seat 1).
EngineConfig two_seat_floor() {
  EngineConfig config = floor_with_threshold("1000000.00");
  config.tables[0].seats = 2;
  config.links[0].meters.levels[1].seed = usd("100.00");
  config.links[0].meters.levels[1].meter_rate_ppm = 10'000;
  return config;
}

TEST(CanonicalReplay, TheSameRequestSpeltOtherwiseIsAReplay) {
  Table table(two_seat_floor());
  table.open(1);
  const LockWagersAnswer locked = table.lock(1, {{1, LinkId("L"), 100}, {2, LinkId("L"), 100}});
  // The same wagers in the other order: the first answer, nothing new on the record.
  table.records().clear();
  EXPECT_EQ(table.ok(table.engine().lock_wagers(
                {TableId("T"), RoundId(1), {{2, LinkId("L"), 100}, {1, LinkId("L"), 100}}},
                table.records())),
            locked);
  EXPECT_TRUE(table.records().transfers.empty() && table.records().answers.empty());

  const SettleRoundRequest first{TableId("T"),
                                 RoundId(1),
                                 {{1, {"As", "Ks"}, std::nullopt}, {2, {"2c", "7d"}, std::nullopt}},
                                 {"Qs", "Js", "Ts", "3h", "4c"},
                                 {}};
  const auto settled = table.ok(table.settle(first));
  const SettleRoundRequest respelt{
      TableId("T"),
      RoundId(1),
      {{2, {"7D", "2c"}, std::nullopt}, {1, {"ks", "as"}, std::nullopt}},
      {"qs", "JS", "10s", "3H", "4c"},
      {}};
  const auto replayed = table.settle(respelt);
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  EXPECT_EQ(*replayed, settled);
  EXPECT_TRUE(table.records().empty());

  // A truly different request under the same ids is refused, as before: another seat's cards,
  // or the same cards in another deal order of the board (the flop is its first three).
  SettleRoundRequest other = first;
  other.seats[1].cards = {"2c", "8d"};
  auto refused = table.settle(other);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, EngineError::replay_differs);
  other = first;
  other.board = {"3h", "Js", "Ts", "Qs", "4c"};
  refused = table.settle(other);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, EngineError::replay_differs);
  EXPECT_TRUE(table.records().empty());
}

TEST(CanonicalReplay, AKeyedHandSpeltOtherwiseIsAReplay) {
  Table table(floor_with_threshold("20.00"));
  table.open(1);
  table.lock(1, {{1, LinkId("L"), 100}});
  const auto settled = table.ok(table.settle(keyed_settle(1, "Full House")));
  for (const char* spelling : {"full house", "FULL_HOUSE", "Full-House"}) {
    const auto replayed = table.settle(keyed_settle(1, spelling));
    ASSERT_TRUE(replayed.ok()) << spelling << ": " << replayed.error().message;
    EXPECT_EQ(*replayed, settled);
  }
  const auto refused = table.settle(keyed_settle(1, "Flush"));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, EngineError::replay_differs);
}

// ---- Link cards and void reasons ----------------------------------------------------------

TEST(SettleLinkCards, LinkCardsAtATableWhoseLinksDrawNoneAreRefused) {
  Table table(two_seat_floor());
  table.open(1);
  table.lock(1, {{1, LinkId("L"), 100}, {2, LinkId("L"), 100}});
  SettleRoundRequest request{TableId("T"),
                             RoundId(1),
                             {{1, {"As", "Ks"}, std::nullopt}, {2, {"2c", "7d"}, std::nullopt}},
                             {"Qs", "Js", "Ts", "3h", "4c"},
                             {"9d", "9h", "9c"}};
  const auto refused = table.settle(request);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, EngineError::link_cards_unexpected);
  EXPECT_EQ(refused.error().message, "link cards sent to table T, whose links draw none");
  EXPECT_TRUE(table.records().empty());
  request.link_cards.clear();
  EXPECT_TRUE(table.settle(request).ok());
}

TEST(VoidReason, AnEmptyOrBlankReasonIsRefusedButAReplayIsStillAReplay) {
  Table table(floor_with_threshold("20.00"));
  table.open(1);
  for (const char* blank : {"", " ", "\t\r\n "}) {
    const auto refused = table.void_round(1, blank);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, EngineError::reason_missing);
    EXPECT_EQ(refused.error().message, "a void needs a reason (e.g. \"misdeal\")");
    EXPECT_TRUE(table.records().empty());
  }
  const auto voided = table.ok(table.void_round(1, "misdeal"));
  EXPECT_EQ(table.ok(table.void_round(1, "misdeal")), voided);
  EXPECT_TRUE(table.records().empty());
  EXPECT_EQ(table.void_round(1, "").error().code, EngineError::reason_missing);
  EXPECT_EQ(table.void_round(1, "shuffle").error().code, EngineError::replay_differs);
}

// A journal from before blank reasons were refused may hold a void with an empty reason: its
// replay still answers the first answer.
TEST(VoidReason, AVoidKeptWithAnEmptyReasonStillAnswersItsReplay) {
  Table table(floor_with_threshold("20.00"));
  table.open(1);
  const auto voided = table.ok(table.void_round(1, "misdeal"));
  EngineSnapshot snapshot = table.engine().snapshot();
  ASSERT_TRUE(snapshot.tables.at(0).current.has_value());
  snapshot.tables[0].current->voided =
      encode_command(VoidRoundRequest{TableId("T"), RoundId(1), ""}, voided);
  StillClock clock;
  SplitMix64 random(3);
  auto restored =
      Engine::restore(floor_with_threshold("20.00"), shipped(), clock, random, snapshot);
  ASSERT_TRUE(restored.ok());
  Records records;
  const auto replayed = (*restored)->void_round({TableId("T"), RoundId(1), ""}, records);
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  EXPECT_EQ(*replayed, voided);
  EXPECT_TRUE(records.empty());
}

}  // namespace
}  // namespace jackpot
