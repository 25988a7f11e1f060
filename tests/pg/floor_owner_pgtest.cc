// Who may hold a database's floor, against a real PostgreSQL (issue #33, migration 0025): a
// read-only reporting role that takes every advisory lock and holds its reads open cannot keep
// jackpotd from migrating, claiming the floor and committing, nor claim or lock the floor itself;
// a second claimer is refused while the owner's session lives.
#include <gtest/gtest.h>

#include <memory>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "controller/durability/durable.h"
#include "controller/hands/paytable_loader.h"
#include "controller/host/engine_host.h"
#include "storage/migrations.h"
#include "tests/support/fixed_clock.h"
#include "tests/support/test_database.h"

namespace jackpot {
namespace {

using testing::FixedClock;

EngineConfig floor_config() {
  EngineConfig config;
  LinkSettings link;
  link.meters.id = LinkId("fo-link");
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
                           {{LinkId("fo-link"), "PT-BJS-HUH-5CP-01", CommunitySource::board}}});
  return config;
}

// The advisory keys jackpotd used to hold the floor and its migrations with ("jackpotd", "jpmg").
constexpr long long kOldFloorKey = 0x6a61636b706f7464;
constexpr long long kOldMigrationKey = 0x6a706d67;

TEST(FloorOwner, AReadOnlyRoleCannotHoldTheFloorDown) {
  testing::TestDatabase database;
  auto control = database.connect();
  const std::string reporter = database.name() + "_reporter";
  {
    pqxx::nontransaction tx(*control);
    tx.exec("DROP ROLE IF EXISTS " + reporter);
    tx.exec("CREATE ROLE " + reporter + " LOGIN");
  }
  struct DropRole {
    pqxx::connection& control;
    std::string role;
    ~DropRole() {
      try {
        pqxx::nontransaction tx(control);
        tx.exec("DROP OWNED BY " + role);
        tx.exec("DROP ROLE IF EXISTS " + role);
      } catch (const std::exception&) {
        // The cluster is thrown away after the run.
      }
    }
  } drop_role{*control, reporter};

  // Before the first start: the reporter takes the advisory locks a start used to wait for.
  pqxx::connection reporting(database.dsn() + " user=" + reporter);
  pqxx::nontransaction(reporting).exec("SELECT pg_advisory_lock(" + std::to_string(kOldFloorKey) +
                                       "), pg_advisory_lock(" + std::to_string(kOldMigrationKey) +
                                       ")");
  // Bounded: with the advisory lock jackpotd once took, this waited for ever.
  pqxx::nontransaction(*control).exec("SET statement_timeout = 30000");
  storage::apply_migrations(*control);
  {
    pqxx::nontransaction tx(*control);
    tx.exec("GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + reporter);
  }
  // The reporter reads and keeps its transaction open, as a long report does.
  pqxx::work report(reporting);
  report.exec("SELECT count(*) FROM schema_migrations");
  report.exec("SELECT token FROM floor_owner");
  // It cannot claim, lock or change the floor, nor lock the migrations.
  for (const char* attempt :
       {"SELECT jackpot_claim_floor()", "SELECT token FROM floor_owner FOR UPDATE",
        "SELECT token FROM floor_owner FOR SHARE", "UPDATE floor_owner SET token = token + 1",
        "LOCK TABLE schema_migrations IN SHARE ROW EXCLUSIVE MODE",
        "LOCK TABLE floor_owner IN EXCLUSIVE MODE"}) {
    pqxx::connection probe(database.dsn() + " user=" + reporter);
    pqxx::work tx(probe);
    EXPECT_THROW(tx.exec(attempt), pqxx::insufficient_privilege) << attempt;
  }

  FixedClock clock;
  SplitMix64 random(33);
  const std::vector<Paytable> paytables = std::move(load_paytables(embedded_paytables())).value();
  PostgresDurability durability(database.dsn(), floor_config(), paytables, clock, random);
  ASSERT_NO_THROW(durability.claim());
  storage::apply_migrations(*control);  // Checked again at a start, the reporter reading.
  auto opened = durability.open();
  ASSERT_TRUE(opened.ok()) << opened.error().front();
  EngineHost host(std::move(opened).value(), &durability);
  const auto played = host.run([](Engine& e, Records& r) {
    return e.open_round({TableId("T1"), RoundId(1)}, r);
  });
  ASSERT_TRUE(played.ok()) << played.error().message;

  // A second claimer (another daemon's commit session) is refused while this one lives.
  {
    auto other = database.connect();
    pqxx::nontransaction tx(*other);
    EXPECT_TRUE(tx.exec1("SELECT jackpot_claim_floor()")[0].is_null());
  }
  // Nor by a session of another role that was granted the claim: the owner's start is hidden
  // from it (pg_stat_activity), and a hidden start is taken for a live session.
  {
    pqxx::nontransaction tx(*control);
    tx.exec("GRANT SELECT, UPDATE ON floor_owner TO " + reporter);
    tx.exec("GRANT EXECUTE ON FUNCTION jackpot_claim_floor() TO " + reporter);
    pqxx::connection other(database.dsn() + " user=" + reporter);
    pqxx::nontransaction claim(other);
    EXPECT_TRUE(claim.exec1("SELECT jackpot_claim_floor()")[0].is_null());
  }
  // A session without the floor's token writes no commit mark (the fence every batch passes).
  {
    auto other = database.connect();
    pqxx::work tx(*other);
    try {
      tx.exec("INSERT INTO commit_marks (batch) SELECT max(batch) + 1 FROM commit_marks");
      ADD_FAILURE() << "a commit mark without the floor's token was written";
    } catch (const pqxx::sql_error& error) {
      EXPECT_NE(std::string(error.what()).find("floor_not_owned"), std::string::npos)
          << error.what();
    }
  }
  const auto voided = host.run([](Engine& e, Records& r) {
    return e.void_round({TableId("T1"), RoundId(1), "misdeal"}, r);
  });
  ASSERT_TRUE(voided.ok()) << voided.error().message;
  host.stop();
}

}  // namespace
}  // namespace jackpot
