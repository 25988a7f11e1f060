// A supervisor's void of a round whose lock hit a Must-Hit-By level, against a real PostgreSQL
// (migration 0024): two supervisors where the hit's payout needs two, journaled with the payout
// events and the audit-trail events in the same transaction, and kept across a restart.
#include <gtest/gtest.h>

#include <memory>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "controller/durability/durable.h"
#include "controller/hands/paytable_loader.h"
#include "controller/host/engine_host.h"
#include "storage/migrations.h"
#include "storage/state_loader.h"
#include "tests/support/fixed_clock.h"
#include "tests/support/test_database.h"

namespace jackpot {
namespace {

using testing::FixedClock;

Money usd(const char* text) { return *Money::parse(text); }

// A hidden-trigger Must-Hit-By level ($100 seed, $250 amount) whose hits need two supervisors.
EngineConfig floor_config() {
  EngineConfig config;
  LinkSettings link;
  link.meters.id = LinkId("sv-link");
  LevelConfig royal;
  royal.level = 1;
  royal.name = "Royal Flush";
  royal.seed = usd("1000.00");
  royal.meter_rate_ppm = 10'000;
  LevelConfig mhb;
  mhb.level = 2;
  mhb.name = "Must-Hit-By";
  mhb.seed = usd("100.00");
  mhb.meter_rate_ppm = 300'000;
  mhb.must_hit_by = usd("250.00");
  mhb.trigger = TriggerMode::hidden_uniform;
  link.meters.levels = {royal, mhb};
  link.max_wager_units = 10;
  link.dual_approval_threshold = usd("100.00");
  config.links.push_back(link);
  config.tables.push_back({TableId("T1"),
                           GameRule::heads_up_holdem,
                           6,
                           {{LinkId("sv-link"), "PT-BJS-HUH-5CP-12", CommunitySource::board}}});
  return config;
}

// Plays rounds of two $10 wagers until a lock hits; that round stays LOCKED. Its id, or 0.
std::uint64_t play_until_hit(EngineHost& host) {
  const TableId table("T1");
  for (std::uint64_t round = 1; round <= 100; ++round) {
    const RoundId id(round);
    EXPECT_TRUE(host.run([&](Engine& e, Records& r) { return e.open_round({table, id}, r); }));
    const LockWagersRequest lock{
        table, id, {{1, LinkId("sv-link"), 1000}, {4, LinkId("sv-link"), 1000}}};
    const auto locked = host.run([&](Engine& e, Records& r) { return e.lock_wagers(lock, r); });
    EXPECT_TRUE(locked.ok());
    if (!locked.ok()) return 0;
    if (!locked->must_hit_by_hits.empty()) return round;
    const SettleRoundRequest settle{
        table,
        id,
        {{1, {"3c", "4d"}, std::nullopt}, {4, {"8h", "Qc"}, std::nullopt}},
        {"2h", "7s", "9d", "Jc", "Ks"},
        {}};
    EXPECT_TRUE(host.run([&](Engine& e, Records& r) { return e.settle_round(settle, r); }));
  }
  return 0;
}

Result<SupervisorVoidRecord, EngineFailure> supervisor_void(Engine& engine, Records& records,
                                                            const std::string& request_id,
                                                            std::uint64_t round,
                                                            const std::string& supervisor) {
  return engine.supervisor_void_round(
      {request_id, TableId("T1"), RoundId(round), "misdeal after the lock"}, supervisor, records);
}

TEST(SupervisorVoid, IsJournaledAuditedAndKeptAcrossARestart) {
  testing::TestDatabase database;
  auto control = database.connect();
  storage::apply_migrations(*control);
  FixedClock clock;
  SplitMix64 random(32);
  const std::vector<Paytable> paytables = std::move(load_paytables(embedded_paytables())).value();
  const EngineConfig config = floor_config();

  auto durability =
      std::make_unique<PostgresDurability>(database.dsn(), config, paytables, clock, random);
  auto opened = durability->open();
  ASSERT_TRUE(opened.ok()) << opened.error().front();
  auto host = std::make_unique<EngineHost>(std::move(opened).value(), durability.get());
  const std::uint64_t round = play_until_hit(*host);
  ASSERT_NE(round, 0U);
  const std::vector<Payout> pending =
      host->read([](const Engine& e) { return e.pending_payouts(); });
  ASSERT_EQ(pending.size(), 1U);
  ASSERT_EQ(pending[0].approvals_required, 2U);
  const PayoutId hit = pending[0].id;

  const auto requested = host->run([&](Engine& e, Records& r) {
    return supervisor_void(e, r, "void-ann", round, "supervisor/ann");
  });
  ASSERT_TRUE(requested.ok()) << requested.error().message;
  EXPECT_EQ(requested->outcome, SupervisorVoidOutcome::requested);
  {
    // Between the two voids, a restart finds the request on the pending payout.
    const storage::StoredState stored = storage::load_state(*control);
    ASSERT_EQ(stored.pending.size(), 1U);
    EXPECT_EQ(stored.pending[0].payout.rejection_requested_by,
              std::vector<std::string>{"supervisor/ann"});
    ASSERT_EQ(stored.supervisor_voids.size(), 1U);
    EXPECT_EQ(stored.supervisor_voids[0], *requested);
  }
  {
    // An event naming a supervisor carries a decision's or a void's request id, never both; the
    // same event with one of them is accepted (then rolled back).
    const auto forge = [&](const std::string& request_id) {
      pqxx::work tx(*control);
      tx.exec(
          "INSERT INTO payout_events (payout_id, seq, state, supervisor, reason, request_id, "
          "void_request_id) VALUES (" +
          std::to_string(hit.value()) + ", 9, 'rejection_requested', 'supervisor/x', 'r', " +
          request_id + ", 'void-ann')");
    };
    EXPECT_NO_THROW(forge("NULL"));
    try {
      forge("'a'");
      ADD_FAILURE() << "an event with two request ids was accepted";
    } catch (const pqxx::check_violation& error) {
      EXPECT_NE(std::string(error.what()).find("payout_events_one_request_id"), std::string::npos)
          << error.what();
    }
  }
  const auto voided = host->run([&](Engine& e, Records& r) {
    return supervisor_void(e, r, "void-bob", round, "supervisor/bob");
  });
  ASSERT_TRUE(voided.ok()) << voided.error().message;
  EXPECT_EQ(voided->outcome, SupervisorVoidOutcome::voided);
  EXPECT_EQ(voided->reversed, usd("6.20"));  // 1% and 30% of two $10 wagers.

  {
    pqxx::read_transaction tx(*control);
    const auto voids = tx.exec(
        "SELECT request_id, supervisor, outcome, reversed_micros, round_id FROM supervisor_voids "
        "ORDER BY at, request_id");
    ASSERT_EQ(voids.size(), 2U);
    EXPECT_EQ(voids[0][0].as<std::string>(), "void-ann");
    EXPECT_EQ(voids[0][2].as<std::string>(), "requested");
    EXPECT_EQ(voids[1][0].as<std::string>(), "void-bob");
    EXPECT_EQ(voids[1][1].as<std::string>(), "supervisor/bob");
    EXPECT_EQ(voids[1][2].as<std::string>(), "voided");
    EXPECT_EQ(voids[1][3].as<std::int64_t>(), 6'200'000);
    EXPECT_EQ(voids[1][4].as<std::uint64_t>(), round);
    const auto events =
        tx.exec("SELECT state, supervisor, void_request_id FROM payout_events WHERE payout_id = " +
                std::to_string(hit.value()) + " ORDER BY seq");
    ASSERT_EQ(events.size(), 3U);
    EXPECT_EQ(events[0][0].as<std::string>(), "pending");
    EXPECT_EQ(events[1][0].as<std::string>(), "rejection_requested");
    EXPECT_EQ(events[1][2].as<std::string>(), "void-ann");
    EXPECT_EQ(events[2][0].as<std::string>(), "rejected");
    EXPECT_EQ(events[2][1].as<std::string>(), "supervisor/bob");
    EXPECT_EQ(events[2][2].as<std::string>(), "void-bob");
    const auto audit = tx.exec(
        "SELECT action, principal, coalesce(detail->>'void_request_id', detail->>'request_id') "
        "FROM audit_log WHERE action IN ('round.supervisor_void_request', "
        "'round.supervisor_void', 'payout.reject_request', 'payout.reject') ORDER BY id");
    std::vector<std::string> trail;
    for (const auto& row : audit) {
      trail.push_back(row[0].as<std::string>() + " " + row[1].as<std::string>() + " " +
                      row[2].as<std::string>());
    }
    EXPECT_EQ(trail, (std::vector<std::string>{
                         "round.supervisor_void_request supervisor/ann void-ann",
                         "payout.reject_request supervisor/ann void-ann",
                         "round.supervisor_void supervisor/bob void-bob",
                         "payout.reject supervisor/bob void-bob",
                     }));
    EXPECT_EQ(tx.exec1("SELECT count(*) FROM journal_orphans")[0].as<int>(), 0);
  }
  {
    pqxx::work tx(*control);
    EXPECT_THROW(tx.exec("UPDATE supervisor_voids SET reason = 'x'"), pqxx::sql_error);
  }

  const EngineSnapshot before = host->read([](const Engine& e) { return e.snapshot(); });
  host->stop();
  host.reset();
  durability.reset();

  PostgresDurability again(database.dsn(), config, paytables, clock, random);
  auto reopened = again.open();
  ASSERT_TRUE(reopened.ok()) << reopened.error().front();
  Engine& engine = **reopened;
  EXPECT_EQ(engine.snapshot(), before);
  Records records;
  const auto repeat = supervisor_void(engine, records, "void-ann", round, "supervisor/ann");
  ASSERT_TRUE(repeat.ok()) << repeat.error().message;
  EXPECT_EQ(*repeat, *requested);
  const auto repeat_bob = supervisor_void(engine, records, "void-bob", round, "supervisor/bob");
  ASSERT_TRUE(repeat_bob.ok()) << repeat_bob.error().message;
  EXPECT_EQ(*repeat_bob, *voided);
  EXPECT_TRUE(records.empty());
  EXPECT_FALSE(engine.check_invariants());
}

}  // namespace
}  // namespace jackpot
