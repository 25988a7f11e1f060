// A re-base of a table's round counter against a real PostgreSQL (migration 0018): journaled
// with its audit-trail event in the same transaction, old round ids reused in the new counter
// epoch (rounds and payouts included) without clashing, and everything kept across a restart.
#include <gtest/gtest.h>

#include <map>
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

EngineConfig floor_config() {
  EngineConfig config;
  LinkSettings link;
  link.meters.id = LinkId("rc-link");
  LevelConfig royal;
  royal.level = 1;
  royal.name = "Royal Flush";
  royal.seed = *Money::parse("1000.00");
  royal.meter_rate_ppm = 150'000;
  link.meters.levels = {royal};
  link.approval_threshold = *Money::parse("100.00");  // A Flush ($5) is paid at once.
  config.links.push_back(link);
  config.tables.push_back({TableId("T1"),
                           GameRule::heads_up_holdem,
                           6,
                           {{LinkId("rc-link"), "PT-BJS-HUH-5CP-01", CommunitySource::board}}});
  return config;
}

// Plays one round at T1: a $1 wager at seat 1, settled with a Flush (a payout, paid at once).
void play(EngineHost& host, std::uint64_t round) {
  const TableId table("T1");
  const RoundId id(round);
  ASSERT_TRUE(host.run([&](Engine& e, Records& r) { return e.open_round({table, id}, r); }));
  const LockWagersRequest lock{table, id, {{1, LinkId("rc-link"), 100}}};
  ASSERT_TRUE(host.run([&](Engine& e, Records& r) { return e.lock_wagers(lock, r); }));
  const SettleRoundRequest settle{
      table, id, {{1, {"2s", "7s"}, std::nullopt}}, {"Qs", "Js", "4s", "5d", "Kh"}, {}};
  const auto settled = host.run([&](Engine& e, Records& r) { return e.settle_round(settle, r); });
  ASSERT_TRUE(settled.ok()) << settled.error().message;
  ASSERT_EQ(settled->results.at(0).awards.size(), 1u);
}

Result<RoundCounterRebaseRecord, EngineFailure> rebase(Engine& engine, Records& records,
                                                       const std::string& request_id,
                                                       std::uint64_t next) {
  return engine.rebase_round_counter(
      {request_id, TableId("T1"), RoundId(next), "controller card swapped"}, "supervisor/S7",
      records);
}

TEST(RoundCounterRebase, IsJournaledAuditedAndKeptAcrossARestart) {
  testing::TestDatabase database;
  auto control = database.connect();
  storage::apply_migrations(*control);
  FixedClock clock;
  SplitMix64 random(14);
  const std::vector<Paytable> paytables = std::move(load_paytables(embedded_paytables())).value();
  const EngineConfig config = floor_config();

  auto durability =
      std::make_unique<PostgresDurability>(database.dsn(), config, paytables, clock, random);
  auto opened = durability->open();
  ASSERT_TRUE(opened.ok()) << opened.error().front();
  auto host = std::make_unique<EngineHost>(std::move(opened).value(), durability.get());
  for (std::uint64_t round = 1; round <= 3; ++round) {
    play(*host, round);
    if (HasFatalFailure()) return;
  }
  // The controller card is swapped: its counter restarts at 1. A supervisor re-bases the table.
  const auto rebased = host->run([](Engine& e, Records& r) { return rebase(e, r, "swap-1", 1); });
  ASSERT_TRUE(rebased.ok()) << rebased.error().message;
  EXPECT_EQ(rebased->epoch, 1u);
  EXPECT_EQ(rebased->last_round, RoundId(3));
  play(*host, 1);  // Round 1 again, in epoch 1, with a payout of its own.
  if (HasFatalFailure()) return;
  play(*host, 2);
  if (HasFatalFailure()) return;
  // Refused while round 3 is OPEN: nothing is journaled.
  ASSERT_TRUE(host->run([](Engine& e, Records& r) {
    return e.open_round({TableId("T1"), RoundId(3)}, r);
  }));
  const auto refused = host->run([](Engine& e, Records& r) { return rebase(e, r, "swap-2", 1); });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, EngineError::previous_round_open);

  {
    pqxx::read_transaction tx(*control);
    const auto rows = tx.exec(
        "SELECT request_id, table_id, epoch, last_round_id, next_round_id, reason, requested_by "
        "FROM round_counter_rebases");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0][0].as<std::string>(), "swap-1");
    EXPECT_EQ(rows[0][2].as<int>(), 1);
    EXPECT_EQ(rows[0][3].as<int>(), 3);
    EXPECT_EQ(rows[0][4].as<int>(), 1);
    EXPECT_EQ(rows[0][5].as<std::string>(), "controller card swapped");
    EXPECT_EQ(rows[0][6].as<std::string>(), "supervisor/S7");
    // The audit trail has it, from the same transaction.
    const auto audit = tx.exec(
        "SELECT principal, detail->>'table_id', detail->>'next_round_id', detail->>'reason' "
        "FROM audit_log WHERE action = 'round_counter.rebase'");
    ASSERT_EQ(audit.size(), 1u);
    EXPECT_EQ(audit[0][0].as<std::string>(), "supervisor/S7");
    EXPECT_EQ(audit[0][1].as<std::string>(), "T1");
    EXPECT_EQ(audit[0][2].as<std::string>(), "1");
    EXPECT_EQ(audit[0][3].as<std::string>(), "controller card swapped");
    // Round ids 1 and 2 twice, once per epoch, each with its own payout.
    EXPECT_EQ(
        tx.exec1("SELECT count(*) FROM rounds WHERE table_id = 'T1' AND round_id = 1")[0].as<int>(),
        2);
    EXPECT_EQ(
        tx.exec1("SELECT count(*) FROM payouts WHERE round_id = 1 AND epoch = 1")[0].as<int>(), 1);
    EXPECT_EQ(
        tx.exec1("SELECT count(*) FROM payouts WHERE round_id = 1 AND epoch = 0")[0].as<int>(), 1);
    EXPECT_EQ(tx.exec1("SELECT count(*) FROM journal_orphans")[0].as<int>(), 0);
  }
  // A re-base row is append-only like the rest of the journal.
  {
    pqxx::work tx(*control);
    EXPECT_THROW(tx.exec("UPDATE round_counter_rebases SET next_round_id = 99"), pqxx::sql_error);
  }
  // Its reason is never blank, in the database too (migration 0019), as every journal reason:
  // the same row with a reason is accepted (then rolled back), with a blank one refused.
  const auto insert_rebase = [&](const std::string& reason) {
    pqxx::work tx(*control);
    tx.exec(
        "INSERT INTO round_counter_rebases (request_id, table_id, epoch, last_round_id, "
        "next_round_id, reason, requested_by, at) VALUES ('guard', 'T1', 2, 3, 1, " +
        tx.quote(reason) + ", 'supervisor/S7', now())");
  };  // Not committed.
  EXPECT_NO_THROW(insert_rebase("a reason"));
  EXPECT_THROW(insert_rebase(" \t "), pqxx::sql_error);

  const EngineSnapshot before = host->read([](const Engine& e) { return e.snapshot(); });
  ASSERT_EQ(before.rebases.size(), 1u);
  host->stop();
  host.reset();
  durability.reset();  // Its session holds the floor's lock; the next start takes it.

  const storage::StoredState stored = storage::load_state(*control);
  ASSERT_EQ(stored.rebases.size(), 1u);
  EXPECT_TRUE(stored.rebases[0] == *rebased);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> kept;  // (epoch, round id), oldest first.
  for (const storage::StoredRound& round : stored.rounds)
    kept.emplace_back(round.epoch, round.round.value());
  EXPECT_EQ(kept, (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{1, 2}, {1, 3}}));

  PostgresDurability again(database.dsn(), config, paytables, clock, random);
  auto reopened = again.open();
  ASSERT_TRUE(reopened.ok()) << reopened.error().front();
  Engine& engine = **reopened;
  EXPECT_EQ(engine.snapshot(), before);
  Records records;
  const auto repeat = rebase(engine, records, "swap-1", 1);  // A repeat: the first answer.
  ASSERT_TRUE(repeat.ok()) << repeat.error().message;
  EXPECT_TRUE(*repeat == *rebased);
  EXPECT_TRUE(records.empty());
  // Round 3 of epoch 1 is still OPEN after the restart; rounds of epoch 0 answer nothing.
  EXPECT_TRUE(
      engine.lock_wagers({TableId("T1"), RoundId(3), {{1, LinkId("rc-link"), 100}}}, records));
  Records refused_records;
  const auto old = engine.void_round({TableId("T1"), RoundId(1), "misdeal"}, refused_records);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error().code, EngineError::round_superseded);
  EXPECT_FALSE(engine.check_invariants());
}

}  // namespace
}  // namespace jackpot
