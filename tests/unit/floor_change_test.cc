// The rules of what the floor may change between restarts (docs/architecture.md §7b), one table
// per layer: a link's kept meters and committed points (Link::restore), a table's kept rounds
// and pending payouts (Engine::restore), and what recovery reads back from the journal
// (snapshot_from). Each edit either carries the kept state over or is refused with a message
// naming the link, level, table or round and why.
#include <gtest/gtest.h>

#include <functional>

#include "controller/durability/recovery.h"
#include "controller/engine/engine.h"
#include "controller/hands/paytable_loader.h"
#include "meters/link.h"
#include "tests/support/fixed_clock.h"

namespace jackpot {
namespace {

using testing::FixedClock;

Money usd(const char* text) { return *Money::parse(text); }

// ---- A link's meters and hidden points --------------------------------------------------------

// Royal Flush with a ceiling; a hidden-trigger Must-Hit-By $250; a Must-Hit-By $300 at its amount.
LinkConfig link_config() {
  LinkConfig config;
  config.id = LinkId("L");
  config.levels = {
      {1,
       Name("Royal Flush"),
       usd("1000.00"),
       150'000,
       25'000,
       usd("1200.00"),
       0,
       {},
       TriggerMode::at_amount},
      {2,
       Name("Must-Hit-By $250"),
       usd("50.00"),
       100'000,
       0,
       {},
       0,
       usd("250.00"),
       TriggerMode::hidden_uniform},
      {3,
       Name("Must-Hit-By $300"),
       usd("100.00"),
       100'000,
       0,
       {},
       0,
       usd("300.00"),
       TriggerMode::at_amount},
  };
  return config;
}

// A committed point on level 2, drawn above its seed up to `up_to`.
HiddenTrigger committed(const char* point, const char* up_to = "250.00") {
  HiddenTrigger trigger;
  trigger.point = usd(point);
  trigger.salt.fill(7);
  trigger.commitment = trigger_commitment(trigger.point, trigger.salt);
  trigger.range_above = usd("50.00");
  trigger.range_up_to = usd(up_to);
  return trigger;
}

// The link at its seeds with level 2's point given, after `units` wager units of contributions.
struct KeptLink {
  std::vector<std::pair<AccountRef, Money>> balances;
  TransferId next;
  std::vector<std::optional<HiddenTrigger>> hidden;
};

KeptLink kept_link(const HiddenTrigger& point, std::int64_t units, const char* royal_meter = "") {
  SplitMix64 random(3);
  std::vector<Transfer> out;
  Link link = std::move(Link::open(link_config(), random, out)).value();
  auto hidden = link.hidden_triggers();
  hidden[1] = point;
  // The same ledger, with the point under test in force.
  link = std::move(Link::restore(link_config(), random, link.ledger().balances(),
                                 link.ledger().next_id(), hidden))
             .value();
  EXPECT_TRUE(link.contribute(units, {1, 0}, out).ok());
  if (*royal_meter != '\0') {
    const Money delta = *usd(royal_meter).minus(link.meter(1));
    EXPECT_TRUE(link.adjust_meter(1, delta, "test", {}, out).ok());
  }
  return {link.ledger().balances(), link.ledger().next_id(), link.hidden_triggers()};
}

struct LinkEdit {
  const char* rule;
  std::function<void(LinkConfig&)> edit;
  const char* refusal;  // A part of the message; empty when the state carries over.
};

TEST(FloorChange, ALinksKeptMetersAndPointsCarryOverOrAreRefusedByLevel) {
  const std::vector<LinkEdit> edits = {
      {"nothing changed", [](LinkConfig&) {}, ""},
      {"seeds change from the next reset",
       [](LinkConfig& c) {
         c.levels[0].seed = usd("900.00");
         c.levels[1].seed = usd("40.00");
       },
       ""},
      {"rates change from the next contribution",
       [](LinkConfig& c) {
         c.levels[0].meter_rate_ppm = 100'000;
         c.levels[2].meter_rate_ppm = 50'000;
       },
       ""},
      {"a ceiling may be lowered to the meter",
       [](LinkConfig& c) { c.levels[0].ceiling = usd("1100.00"); }, ""},
      {"a ceiling below the meter is refused",
       [](LinkConfig& c) { c.levels[0].ceiling = usd("1099.99"); },
       "link 'L' level 1 (Royal Flush): the meter 1100.00 is above the ceiling 1099.99 the floor "
       "now gives it"},
      {"a hidden level's amount may be raised: its point stays below it",
       [](LinkConfig& c) { c.levels[1].must_hit_by = usd("400.00"); }, ""},
      {"a hidden level's amount may not be lowered while a point is committed",
       [](LinkConfig& c) { c.levels[1].must_hit_by = usd("240.00"); },
       "link 'L' level 2 (Must-Hit-By $250): its hidden trigger was committed for a Must-Hit-By "
       "amount of 250.00, above the amount 240.00 the floor now gives it"},
      {"nor lowered through the base wager", [](LinkConfig& c) { c.base_wager = usd("0.50"); },
       "its hidden trigger was committed for a Must-Hit-By amount of 250.00, above the amount "
       "125.00"},
      {"an amount at the meter is refused",
       [](LinkConfig& c) { c.levels[2].must_hit_by = usd("101.00"); },
       "link 'L' level 3 (Must-Hit-By $300): the meter 101.00 has reached the Must-Hit-By amount "
       "101.00 the floor now gives it"},
      {"an amount above the meter may be lowered to",
       [](LinkConfig& c) { c.levels[2].must_hit_by = usd("101.01"); }, ""},
      {"a hidden trigger may not be switched off",
       [](LinkConfig& c) { c.levels[1].trigger = TriggerMode::at_amount; },
       "link 'L' level 2 (Must-Hit-By $250): hidden trigger unexpected"},
      {"nor switched on", [](LinkConfig& c) { c.levels[2].trigger = TriggerMode::hidden_uniform; },
       "link 'L' level 3 (Must-Hit-By $300): hidden trigger missing"},
  };
  // Both points: whether the amount may be lowered never depends on where the secret point lies.
  for (const char* point : {"60.00", "245.00"}) {
    // 10 units: level 2 at $51.00, level 3 at $101.00; the Royal Flush meter set to $1,100.
    const KeptLink kept = kept_link(committed(point), 10, "1100.00");
    for (const LinkEdit& edit : edits) {
      SCOPED_TRACE(std::string(edit.rule) + ", point " + point);
      LinkConfig config = link_config();
      edit.edit(config);
      SplitMix64 random(5);
      const auto restored = Link::restore(config, random, kept.balances, kept.next, kept.hidden);
      if (*edit.refusal == '\0') {
        ASSERT_TRUE(restored.ok()) << restored.error().front();
        EXPECT_EQ(restored->ledger().balances(), kept.balances);
        EXPECT_EQ(restored->hidden_triggers(), kept.hidden);
        EXPECT_FALSE(restored->check_invariants().has_value());
      } else {
        ASSERT_FALSE(restored.ok());
        EXPECT_NE(restored.error().front().find(edit.refusal), std::string::npos)
            << restored.error().front();
      }
    }
  }
}

TEST(FloorChange, APointThatDoesNotMatchItsCommitmentIsRefused) {
  HiddenTrigger altered = committed("245.00");
  altered.point = usd("200.00");  // Not the point committed to.
  const KeptLink kept = kept_link(committed("245.00"), 1);
  std::vector<std::optional<HiddenTrigger>> hidden = kept.hidden;
  hidden[1] = altered;
  SplitMix64 random(5);
  const auto restored = Link::restore(link_config(), random, kept.balances, kept.next, hidden);
  ASSERT_FALSE(restored.ok());
  EXPECT_NE(restored.error().front().find("does not match its commitment"), std::string::npos)
      << restored.error().front();
}

TEST(FloorChange, APointAboveTheAmountIsNeverKeptWhateverItsRangeClaims) {
  // The reproduced overpay: a point of $131.11 kept on a level whose amount is now $100.
  SplitMix64 random(3);
  std::vector<Transfer> out;
  Link link = std::move(Link::open(link_config(), random, out)).value();
  EXPECT_FALSE(link.check_invariants().has_value());
  LinkConfig lowered = link_config();
  lowered.levels[1].must_hit_by = usd("100.00");
  auto hidden = link.hidden_triggers();
  hidden[1] = committed("131.11", "100.00");  // Its range claims the new amount.
  const auto restored =
      Link::restore(lowered, random, link.ledger().balances(), link.ledger().next_id(), hidden);
  ASSERT_FALSE(restored.ok());
  EXPECT_NE(restored.error().front().find("link 'L' level 2 (Must-Hit-By $250): its hidden "
                                          "trigger does not match its commitment and recorded "
                                          "range"),
            std::string::npos)
      << restored.error().front();
}

// ---- A table's kept rounds and payouts ------------------------------------------------------

std::vector<Paytable> paytables() {
  return std::move(load_paytables(embedded_paytables())).value();
}

// Link L (Royal Flush, Must-Hit-By $250 hidden), link D (a Dynamic Pays Royal Flush); T1 plays
// both, T2 plays L.
EngineConfig floor_config() {
  EngineConfig config;
  LinkSettings l;
  l.meters.id = LinkId("L");
  l.meters.levels = {link_config().levels[0], link_config().levels[1]};
  l.approval_threshold = usd("50.00");
  l.max_wager_units = 10;
  LinkSettings d;
  d.meters.id = LinkId("D");
  d.meters.levels = {
      {1, Name("Royal Flush"), usd("500.00"), 100'000, 0, {}, 0, {}, TriggerMode::at_amount}};
  d.max_wager_units = 10;
  config.links = {l, d};
  config.tables.push_back({TableId("T1"),
                           GameRule::heads_up_holdem,
                           6,
                           {{LinkId("L"), "PT-BJS-HUH-5CP-12", CommunitySource::board},
                            {LinkId("D"), "PT-PRG-HUH-D01", CommunitySource::board}}});
  config.tables.push_back({TableId("T2"),
                           GameRule::heads_up_holdem,
                           6,
                           {{LinkId("L"), "PT-BJS-HUH-5CP-12", CommunitySource::board}}});
  return config;
}

struct EngineEdit {
  const char* rule;
  std::function<void(EngineConfig&)> edit;
  const char* refusal;
};

TEST(FloorChange, ATablesLiveRoundCarriesOverOrIsRefusedByTableAndRound) {
  // T1's round 1 is OPEN with Dynamic Pays drawn on D; T2's round 1 is LOCKED with wagers at
  // seats 2 and 6.
  FixedClock clock;
  SplitMix64 random(11);
  Records records;
  auto engine =
      std::move(Engine::create(floor_config(), paytables(), clock, random, records)).value();
  ASSERT_TRUE(engine->open_round({TableId("T1"), RoundId(1)}, records).ok());
  ASSERT_TRUE(engine->open_round({TableId("T2"), RoundId(1)}, records).ok());
  LockWagersRequest lock{TableId("T2"), RoundId(1), {{2, LinkId("L"), 100}, {6, LinkId("L"), 300}}};
  ASSERT_TRUE(engine->lock_wagers(lock, records).ok());
  const EngineSnapshot saved = engine->snapshot();

  const auto table = [](EngineConfig& c, const char* id) -> TableSettings& {
    for (TableSettings& t : c.tables) {
      if (t.id == TableId(id)) return t;
    }
    throw std::logic_error("no table");
  };
  const std::vector<EngineEdit> edits = {
      {"nothing changed", [](EngineConfig&) {}, ""},
      {"a seed changes from the next reset",
       [](EngineConfig& c) { c.links[0].meters.levels[0].seed = usd("1100.00"); }, ""},
      {"seats may be added", [&](EngineConfig& c) { table(c, "T2").seats = 8; }, ""},
      {"an OPEN round has no wagers to lose", [&](EngineConfig& c) { table(c, "T1").seats = 2; },
       ""},
      {"a seat that wagered in a LOCKED round may not go",
       [&](EngineConfig& c) { table(c, "T2").seats = 4; },
       "round 1 at table T2 is LOCKED with a wager at seat 6 on link 'L', but the floor gives the "
       "table 4 seats"},
      {"a paytable whose Dynamic Pays were drawn may not be swapped",
       [&](EngineConfig& c) { table(c, "T1").links[1].paytable_id = "PT-PRG-HUH-D02"; },
       "round 1 at table T1 is OPEN with Dynamic Pays drawn on paytable PT-PRG-HUH-D01 for link "
       "'D', but the floor now gives the table paytable PT-PRG-HUH-D02 there"},
      {"a Dynamic Pays link may not join a table whose round was opened without it",
       [&](EngineConfig& c) {
         table(c, "T2").links.push_back({LinkId("D"), "PT-PRG-HUH-D01", CommunitySource::board});
       },
       "round 1 at table T2 is LOCKED without Dynamic Pays drawn for link 'D' at its open"},
      {"a ceiling below the meter is refused",
       [](EngineConfig& c) { c.links[0].meters.levels[0].ceiling = usd("1000.50"); },
       "link 'L' level 1 (Royal Flush): the meter 1000.60 is above the ceiling 1000.50"},
  };
  for (const EngineEdit& edit : edits) {
    SCOPED_TRACE(edit.rule);
    EngineConfig config = floor_config();
    edit.edit(config);
    // Recovery lays a round's data out by the table's links on the floor now (snapshot_from):
    // a link added at the end has none.
    EngineSnapshot fitted = saved;
    for (std::size_t t = 0; t < fitted.tables.size(); ++t) {
      for (auto* round : {&fitted.tables[t].current, &fitted.tables[t].previous}) {
        if (!*round) continue;
        const std::size_t links = config.tables[t].links.size();
        (*round)->dynamic.resize(links);
        (*round)->wagers.resize(links);
        (*round)->contributions.resize(links);
      }
    }
    SplitMix64 restart(13);
    auto restored = Engine::restore(config, paytables(), clock, restart, fitted);
    if (*edit.refusal == '\0') {
      ASSERT_TRUE(restored.ok()) << restored.error().front();
      const EngineSnapshot carried = (*restored)->snapshot();
      EXPECT_EQ(carried.links, saved.links);
      EXPECT_EQ(carried.tables, saved.tables);
      // The LOCKED round settles under the edited floor.
      Records after;
      SettleRoundRequest settle{TableId("T2"), RoundId(1), {}, {}, {}};
      settle.seats.push_back({2, {}, std::string("FULL_HOUSE")});
      settle.seats.push_back({6, {}, std::string("ROYAL_FLUSH")});
      const auto settled = (*restored)->settle_round(settle, after);
      ASSERT_TRUE(settled.ok()) << settled.error().message;
      EXPECT_FALSE((*restored)->check_invariants().has_value());
    } else {
      ASSERT_FALSE(restored.ok());
      EXPECT_NE(restored.error().front().find(edit.refusal), std::string::npos)
          << restored.error().front();
    }
  }
}

// ---- What recovery reads back ---------------------------------------------------------------

// One link A of one $1 level (no ceiling, no Must-Hit-By); T1 plays it.
EngineConfig small_floor() {
  EngineConfig config;
  LinkSettings a;
  a.meters.id = LinkId("A");
  a.meters.levels = {
      {1, Name("Royal Flush"), usd("1000.00"), 100'000, 0, {}, 0, {}, TriggerMode::at_amount}};
  config.links = {a};
  config.tables.push_back({TableId("T1"),
                           GameRule::heads_up_holdem,
                           6,
                           {{LinkId("A"), "PT-BJS-HUH-5CP-01", CommunitySource::board}}});
  return config;
}

storage::StoredRound stored_round(const char* table, RoundPhase phase, const char* link,
                                  const char* amount, std::int64_t units) {
  storage::StoredRound round;
  round.table = TableId(table);
  round.round = RoundId(4);
  round.round_key = 9;
  round.phase = phase;
  round.wagers.push_back({9, 3, Name(link), usd(amount), units});
  return round;
}

struct StoredEdit {
  const char* rule;
  std::function<void(storage::StoredState&, EngineConfig&)> edit;
  const char* refusal;
};

TEST(FloorChange, RecoveryRefusesAJournalTheEditedFloorCannotCarry) {
  const std::vector<StoredEdit> edits = {
      {"nothing changed", [](auto&, auto&) {}, ""},
      {"levels may not be added to a link",
       [](auto&, EngineConfig& c) {
         c.links[0].meters.levels.push_back(
             {2, Name("Mini"), usd("10.00"), 10'000, 0, {}, 0, {}, TriggerMode::at_amount});
       },
       "link 'A' has 1 levels in the database but 2 on the floor: a link's levels cannot be added "
       "or removed between restarts"},
      {"a link may leave the floor with its ledger parked",
       [](storage::StoredState& s, auto&) {
         s.links.push_back({LinkId("GONE"), 1, {}, {}, {}, {}});
       },
       ""},
      {"a base wager may change with no live round",
       [](storage::StoredState& s, EngineConfig& c) {
         s.rounds.push_back(stored_round("T1", RoundPhase::settled, "A", "1.00", 1));
         c.links[0].meters.base_wager = usd("5.00");
       },
       ""},
      {"a base wager may not change under a LOCKED round",
       [](storage::StoredState& s, EngineConfig& c) {
         s.rounds.push_back(stored_round("T1", RoundPhase::locked, "A", "1.00", 1));
         c.links[0].meters.base_wager = usd("5.00");
       },
       "round 4 of table 'T1' is LOCKED with seat 3's wager of 1.00 (1 base wagers) on link 'A', "
       "whose base wager the floor now makes 5.00"},
      {"a table may leave the floor once its round is finished",
       [](storage::StoredState& s, auto&) {
         s.rounds.push_back(stored_round("T9", RoundPhase::voided, "A", "1.00", 1));
       },
       ""},
      {"but not while its round is LOCKED",
       [](storage::StoredState& s, auto&) {
         s.rounds.push_back(stored_round("T9", RoundPhase::locked, "A", "1.00", 1));
       },
       "table 'T9' is not on the floor but its round 4 is LOCKED"},
      {"a table may leave a link once its round is finished",
       [](storage::StoredState& s, auto&) {
         s.rounds.push_back(stored_round("T1", RoundPhase::settled, "GONE", "1.00", 1));
       },
       ""},
      {"but not while its round is LOCKED",
       [](storage::StoredState& s, auto&) {
         s.rounds.push_back(stored_round("T1", RoundPhase::locked, "GONE", "1.00", 1));
       },
       "round 4 of table 'T1' is LOCKED with wagers, contributions, Dynamic Pays or a hit on a "
       "link the floor no longer gives the table"},
  };
  for (const StoredEdit& edit : edits) {
    SCOPED_TRACE(edit.rule);
    storage::StoredState state;
    state.links.push_back({LinkId("A"), 1, {}, TransferId(1), {}, LinkStatus::open});
    EngineConfig config = small_floor();
    edit.edit(state, config);
    const auto snapshot = snapshot_from(state, config);
    if (*edit.refusal == '\0') {
      ASSERT_TRUE(snapshot.ok()) << snapshot.error().front();
    } else {
      ASSERT_FALSE(snapshot.ok());
      EXPECT_NE(snapshot.error().front().find(edit.refusal), std::string::npos)
          << snapshot.error().front();
    }
  }
}

TEST(FloorChange, ALiveRoundKeepsTheGamePaytablesAndCommunityItWasOpenedUnder) {
  // The floor of the last start against this one, for T1's round 4 in each phase.
  struct Case {
    const char* rule;
    std::function<void(EngineConfig&)> edit;
    const char* refusal;  // For an OPEN or LOCKED round; a finished one always carries over.
  };
  const std::vector<Case> cases = {
      {"nothing changed", [](EngineConfig&) {}, ""},
      {"a paytable swapped",
       [](EngineConfig& c) { c.tables[0].links[0].paytable_id = "PT-BJS-HUH-5CP-02"; },
       "under paytable PT-BJS-HUH-5CP-01 on link 'A', but the floor now gives the table "
       "paytable PT-BJS-HUH-5CP-02 there"},
      {"a community source changed",
       [](EngineConfig& c) { c.tables[0].links[0].community = CommunitySource::flop; },
       "on link 'A', but the floor now gives the table another community source there"},
      {"the game changed", [](EngineConfig& c) { c.tables[0].game = GameRule::mississippi_stud; },
       "at a Heads Up Hold'em table, but the floor now makes the table Mississippi Stud"},
      {"a link joining the table holds none of the round's state",
       [](EngineConfig& c) {
         c.tables[0].links.push_back({LinkId("B"), "PT-BJS-HUH-5CP-02", CommunitySource::board});
       },
       ""},
      {"a table added since has no round to keep",
       [](EngineConfig& c) { c.tables[0].id = TableId("T5"); }, ""},
  };
  for (const Case& each : cases) {
    for (const RoundPhase phase :
         {RoundPhase::open, RoundPhase::locked, RoundPhase::settled, RoundPhase::voided}) {
      SCOPED_TRACE(std::string(each.rule) + ", " + std::string(to_string(phase)));
      storage::StoredState state;
      state.rounds.push_back(stored_round("T1", phase, "A", "1.00", 1));
      EngineConfig now = small_floor();
      each.edit(now);
      const auto problems = live_rounds_changed(state, small_floor(), now);
      const bool live = phase == RoundPhase::open || phase == RoundPhase::locked;
      if (*each.refusal == '\0' || !live) {
        EXPECT_TRUE(problems.empty()) << problems.front();
        continue;
      }
      ASSERT_EQ(problems.size(), 1u);
      const std::string round = std::string("round 4 of table 'T1' is ") +
                                (phase == RoundPhase::open ? "OPEN " : "LOCKED ");
      EXPECT_EQ(problems.front().rfind(round, 0), 0u) << problems.front();
      EXPECT_NE(problems.front().find(each.refusal), std::string::npos) << problems.front();
      EXPECT_NE(problems.front().find("may not change while its round is OPEN or LOCKED"),
                std::string::npos)
          << problems.front();
    }
  }
}

TEST(FloorChange, ALinkWithAPendingPayoutMayNotLeaveTheFloor) {
  storage::StoredState state;
  state.links.push_back({LinkId("A"), 1, {}, TransferId(1), {}, LinkStatus::open});
  Payout payout;
  payout.id = PayoutId(7);
  payout.table = TableId("T1");
  payout.round = RoundId(4);
  payout.seat = 3;
  payout.link = LinkId("GONE");
  payout.amount = usd("1000.00");
  state.pending.push_back({payout, Transfer{}});
  const auto snapshot = snapshot_from(state, small_floor());
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().front();
  FixedClock clock;
  SplitMix64 random(1);
  const auto restored = Engine::restore(small_floor(), paytables(), clock, random, *snapshot);
  ASSERT_FALSE(restored.ok());
  EXPECT_NE(restored.error().front().find("payout 7 (1000.00 to seat 3 of round 4 at table T1) "
                                          "is PENDING on link 'GONE', which the floor no longer "
                                          "has"),
            std::string::npos)
      << restored.error().front();
}

}  // namespace
}  // namespace jackpot
