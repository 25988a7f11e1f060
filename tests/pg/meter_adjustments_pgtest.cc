// Meter adjustments against a real PostgreSQL: the journal row, its audit event and its transfer
// commit together; a replay of the request id answers the first answer after a restart and a
// different request under it is refused; a failed commit keeps nothing, and the retry applies
// once; the reconciliation report balances with the adjustment under its term.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <pqxx/pqxx>
#include <stdexcept>
#include <string>
#include <thread>

#include "controller/durability/durable.h"
#include "controller/hands/paytable_loader.h"
#include "controller/host/engine_host.h"
#include "storage/migrations.h"
#include "tests/support/fixed_clock.h"
#include "tests/support/test_database.h"

namespace jackpot {
namespace {

using namespace std::chrono_literals;

EngineConfig adjustment_floor() {
  EngineConfig config;
  LinkSettings link;
  link.meters.id = LinkId("adj-link");
  LevelConfig royal;
  royal.level = 1;
  royal.name = "Royal Flush";
  royal.seed = *Money::parse("1000.00");
  royal.meter_rate_ppm = 150'000;
  link.meters.levels = {royal};
  config.links.push_back(link);
  config.tables.push_back({TableId("T1"),
                           GameRule::heads_up_holdem,
                           6,
                           {{LinkId("adj-link"), "PT-BJS-HUH-5CP-01", CommunitySource::board}}});
  return config;
}

// One daemon's life on the test's database: a durable host, stopped cleanly at the end.
struct Daemon {
  Daemon(const testing::TestDatabase& database, std::uint64_t seed) : random(seed) {
    durability = std::make_unique<PostgresDurability>(database.dsn(), adjustment_floor(), paytables,
                                                      clock, random);
    auto opened = durability->open();
    if (!opened) throw std::runtime_error(opened.error().front());
    host = std::make_unique<EngineHost>(std::move(opened).value(), durability.get());
  }
  ~Daemon() { host->stop(); }

  Result<AdjustMeterAnswer, EngineFailure> adjust(const std::string& id, const char* amount,
                                                  const std::string& reason = "count fix") {
    const AdjustMeterRequest request{id, LinkId("adj-link"), 1, *Money::parse(amount), reason};
    return host->run([&](Engine& engine, Records& records) {
      return engine.adjust_meter(request, "unauthenticated ipv4:127.0.0.1:5555", records);
    });
  }
  Money meter() {
    return host->read(
        [](const Engine& engine) { return engine.link(LinkId("adj-link"))->meter(1); });
  }

  testing::FixedClock clock;
  SplitMix64 random;
  std::vector<Paytable> paytables = std::move(load_paytables(embedded_paytables())).value();
  std::unique_ptr<PostgresDurability> durability;
  std::unique_ptr<EngineHost> host;
};

std::int64_t count(pqxx::connection& connection, const std::string& query) {
  pqxx::work tx(connection);
  return tx.exec1(query)[0].as<std::int64_t>();
}

TEST(MeterAdjustments, JournaledAuditedAndAnsweredAgainAfterARestart) {
  testing::TestDatabase database;
  auto control = database.connect();
  storage::apply_migrations(*control);
  AdjustMeterAnswer first;
  {
    Daemon daemon(database, 1);
    const auto applied = daemon.adjust("adj-1", "25.50", "sensor missed a lock");
    ASSERT_TRUE(applied.ok()) << applied.error().message;
    first = *applied;
    EXPECT_EQ(first.meter, *Money::parse("1025.50"));
    pqxx::work tx(*control);
    const auto row = tx.exec1(
        "SELECT a.link_id, a.level, a.amount_micros, a.reason, a.requested_by, "
        "a.meter_after_micros, t.kind::text, t.debit_kind::text, t.credit_kind::text, "
        "t.amount_micros FROM meter_adjustments a JOIN transfers t USING (link_id, transfer_id) "
        "WHERE a.request_id = 'adj-1'");
    EXPECT_EQ(row[0].as<std::string>(), "adj-link");
    EXPECT_EQ(row[1].as<int>(), 1);
    EXPECT_EQ(row[2].as<std::int64_t>(), 25'500'000);
    EXPECT_EQ(row[3].as<std::string>(), "sensor missed a lock");
    EXPECT_EQ(row[4].as<std::string>(), "unauthenticated ipv4:127.0.0.1:5555");
    EXPECT_EQ(row[5].as<std::int64_t>(), 1'025'500'000);
    EXPECT_EQ(row[6].as<std::string>(), "adjustment");
    EXPECT_EQ(row[7].as<std::string>(), "seed_funding");
    EXPECT_EQ(row[8].as<std::string>(), "meter");
    EXPECT_EQ(row[9].as<std::int64_t>(), 25'500'000);
    const auto audit = tx.exec1(
        "SELECT principal, detail->>'request_id', detail->>'amount_micros', detail->>'reason' "
        "FROM audit_log WHERE action = 'meter.adjust'");
    EXPECT_EQ(audit[0].as<std::string>(), "admin/unauthenticated ipv4:127.0.0.1:5555");
    EXPECT_EQ(audit[1].as<std::string>(), "adj-1");
    EXPECT_EQ(audit[2].as<std::string>(), "25500000");
    EXPECT_EQ(audit[3].as<std::string>(), "sensor missed a lock");
    tx.commit();
    // The journal keeps it as written.
    for (const char* change : {"UPDATE meter_adjustments SET amount_micros = 1",
                               "DELETE FROM meter_adjustments", "TRUNCATE meter_adjustments"}) {
      pqxx::work attempt(*control);
      EXPECT_THROW(attempt.exec(change), pqxx::sql_error) << change;
    }
    // The meter moves on; the replay still answers what the adjustment did.
    ASSERT_TRUE(daemon.adjust("adj-2", "-0.50").ok());
    EXPECT_EQ(daemon.meter(), *Money::parse("1025.00"));
  }
  Daemon restarted(database, 2);
  EXPECT_EQ(restarted.meter(), *Money::parse("1025.00"));
  const auto transfers = count(*control, "SELECT count(*) FROM transfers");
  const auto replay = restarted.adjust("adj-1", "25.50", "sensor missed a lock");
  ASSERT_TRUE(replay.ok()) << replay.error().message;
  EXPECT_EQ(*replay, first);
  const auto other = restarted.adjust("adj-1", "30.00", "sensor missed a lock");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, EngineError::replay_differs);
  EXPECT_EQ(restarted.meter(), *Money::parse("1025.00"));
  EXPECT_EQ(count(*control, "SELECT count(*) FROM transfers"), transfers);
  EXPECT_EQ(count(*control, "SELECT count(*) FROM meter_adjustments"), 2);
  EXPECT_EQ(count(*control, "SELECT count(*) FROM audit_log WHERE action = 'meter.adjust'"), 2);

  // The auditor's report over the whole ledger: the level balances, the adjustments its term.
  ASSERT_TRUE(restarted.host->snapshot_balances(SnapshotReason::request));
  const auto report = restarted.durability->reconcile({}, std::nullopt, std::nullopt);
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_EQ(report->size(), 1U);
  ASSERT_EQ(report->front().levels.size(), 1U);
  const LevelReconciliation& level = report->front().levels.front();
  EXPECT_TRUE(level.balanced);
  EXPECT_EQ(level.adjustments, *Money::parse("25.00"));
  EXPECT_EQ(level.end, *Money::parse("1025.00"));
}

TEST(MeterAdjustments, AFailedCommitKeepsNothingAndTheRetryAppliesOnce) {
  testing::TestDatabase database;
  auto control = database.connect();
  storage::apply_migrations(*control);
  {
    pqxx::work tx(*control);
    tx.exec("CREATE TABLE fail_commits (on_ boolean)");
    tx.exec(
        "CREATE FUNCTION refuse_when_failing() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "IF EXISTS (SELECT 1 FROM fail_commits) THEN RAISE EXCEPTION 'injected commit failure'; "
        "END IF; RETURN NEW; END $$");
    tx.exec(
        "CREATE TRIGGER injected_failure BEFORE INSERT ON meter_adjustments FOR EACH ROW "
        "EXECUTE FUNCTION refuse_when_failing()");
    tx.exec("INSERT INTO fail_commits VALUES (true)");
    tx.commit();
  }
  Daemon daemon(database, 3);
  const auto lost = daemon.adjust("retry-me", "10.00");
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.error().code, EngineError::link_unavailable);
  {
    pqxx::work tx(*control);
    tx.exec("DELETE FROM fail_commits");
    tx.commit();
  }
  for (int attempt = 0; attempt < 600 && daemon.host->failed(); ++attempt) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_FALSE(daemon.host->failed());
  EXPECT_EQ(daemon.meter(), *Money::parse("1000.00"));  // Rebuilt without the lost adjustment.
  EXPECT_EQ(count(*control, "SELECT count(*) FROM transfers WHERE kind = 'adjustment'"), 0);
  const auto retried = daemon.adjust("retry-me", "10.00");
  ASSERT_TRUE(retried.ok()) << retried.error().message;
  EXPECT_EQ(retried->meter, *Money::parse("1010.00"));
  ASSERT_TRUE(daemon.adjust("retry-me", "10.00").ok());
  EXPECT_EQ(daemon.meter(), *Money::parse("1010.00"));
  EXPECT_EQ(count(*control, "SELECT count(*) FROM meter_adjustments"), 1);
}

}  // namespace
}  // namespace jackpot
