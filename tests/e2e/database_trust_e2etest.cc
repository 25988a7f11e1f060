// jackpotd does not trust whatever the database answers: a database behind the last batch the
// daemon saw committed (a standby promoted without the last transactions, an older backup) is
// refused at a restart and by the rebuild after a fail-stop, naming both marks; an operator can
// accept a deliberate restore, on the record; and two daemons never write one floor.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <optional>
#include <pqxx/pqxx>
#include <regex>
#include <sstream>
#include <thread>

#include "grpc/health/v1/health.grpc.pb.h"
#include "jackpot/v1/table.grpc.pb.h"
#include "tests/support/daemon_process.h"
#include "tests/support/test_database.h"
#include "tests/support/test_pki.h"

namespace jackpot {
namespace {

using namespace std::chrono_literals;
using testing::channel_as;
using testing::DaemonProcess;
using testing::TestDatabase;
namespace pb = ::jackpot::v1;

std::string write_floor() {
  char name[] = "/tmp/jackpotd-trust-floor.XXXXXX";
  close(mkstemp(name));
  std::ofstream(name) << R"(
links { id: "t-link" levels { level: 1 name: "Royal Flush" seed: "1000.00" meter_rate_ppm: 150000 } }
tables { id: "T1" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "t-link" paytable_id: "PT-BJS-HUH-5CP-01" } }
)";
  return name;
}

std::string temporary_name(const char* prefix) {
  std::string name = std::string("/tmp/") + prefix + ".XXXXXX";
  close(mkstemp(name.data()));
  unlink(name.c_str());  // Only the name: the daemon makes the file.
  return name;
}

// A daemon started on `dsn`; `serving` false when it exited (or hung) before serving.
struct Started {
  std::unique_ptr<DaemonProcess> process;
  std::shared_ptr<grpc::Channel> channel;
  bool serving = false;
};

Started start(const std::string& dsn, const std::string& floor, std::vector<std::string> extra) {
  std::vector<std::string> args = {"--db",      dsn,   "--listen", "127.0.0.1:0",
                                   "--metrics", "off", "--floor",  floor};
  args.insert(args.end(), extra.begin(), extra.end());
  Started started;
  started.process = std::make_unique<DaemonProcess>(args);
  const auto line = started.process->read_stdout_line(30s);
  std::smatch match;
  if (line && std::regex_search(*line, match, std::regex("serving gRPC on (\\S+),"))) {
    started.channel = channel_as(match[1], "table/T1");  // Tables may ask for health too.
    started.serving = true;
  }
  return started;
}

grpc::Status open_and_void(grpc::Channel& channel, std::uint64_t round) {
  auto stub = pb::TableService::NewStub(std::shared_ptr<grpc::Channel>(&channel, [](auto*) {}));
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    pb::OpenRoundRequest request;
    request.set_table_id("T1");
    request.set_round_id(round);
    pb::OpenRoundResponse response;
    if (auto status = stub->OpenRound(&context, request, &response); !status.ok()) return status;
  }
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 10s);
  pb::VoidRoundRequest request;
  request.set_table_id("T1");
  request.set_round_id(round);
  request.set_reason("test");
  pb::VoidRoundResponse response;
  return stub->VoidRound(&context, request, &response);
}

void stop(Started& started) {
  started.process->send_signal(SIGTERM);
  EXPECT_EQ(started.process->wait_for_exit(20s), 0) << started.process->stderr_text();
}

// The batch number in a state file.
std::uint64_t state_file_batch(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("batch ", 0) == 0) return std::stoull(line.substr(6));
  }
  ADD_FAILURE() << "no batch line in " << path;
  return 0;
}

std::uint64_t database_batch(const std::string& dsn) {
  pqxx::connection connection(dsn);
  pqxx::nontransaction tx(connection);
  return tx.exec1("SELECT coalesce(max(batch), 0) FROM commit_marks")[0].as<std::uint64_t>();
}

// A copy of the database as it is now, made from it as a template (no session may be on it):
// the "earlier backup" or "lagging standby" of the tests.
class Copy {
 public:
  explicit Copy(const TestDatabase& of) : name_(of.name() + "_copy") {
    pqxx::connection admin(TestDatabase::cluster_dsn("postgres"));
    pqxx::nontransaction tx(admin);
    tx.exec("DROP DATABASE IF EXISTS " + name_);
    // A stopped daemon's server processes may take a moment to leave; PostgreSQL refuses a
    // template in use after waiting 5 s, so this tries for a minute.
    for (int attempt = 1;; ++attempt) {
      try {
        tx.exec("CREATE DATABASE " + name_ + " TEMPLATE " + of.name());
        return;
      } catch (const pqxx::sql_error& error) {
        if (attempt == 12 ||
            std::string(error.what()).find("accessed by other users") == std::string::npos) {
          throw;
        }
      }
    }
  }
  ~Copy() {
    try {
      pqxx::connection admin(TestDatabase::cluster_dsn("postgres"));
      pqxx::nontransaction(admin).exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    } catch (const std::exception&) {
    }
  }
  std::string dsn() const { return TestDatabase::cluster_dsn(name_); }

 private:
  std::string name_;
};

TEST(DatabaseTrust, ARestartRefusesADatabaseBehindTheStateFileUnlessTheOperatorAcceptsIt) {
  TestDatabase database;
  const std::string floor = write_floor();
  const std::string state = temporary_name("jackpotd-trust-state");
  {
    Started daemon = start(database.dsn(), floor, {"--state-file", state});
    ASSERT_TRUE(daemon.serving) << daemon.process->stderr_text();
    for (std::uint64_t round = 1; round <= 3; ++round) {
      ASSERT_TRUE(open_and_void(*daemon.channel, round).ok());
    }
    stop(daemon);
  }
  const Copy earlier(database);  // The backup, taken here.
  {
    Started daemon = start(database.dsn(), floor, {"--state-file", state});
    ASSERT_TRUE(daemon.serving) << daemon.process->stderr_text();
    for (std::uint64_t round = 4; round <= 6; ++round) {
      ASSERT_TRUE(open_and_void(*daemon.channel, round).ok());
    }
    stop(daemon);
  }
  const std::uint64_t acknowledged = state_file_batch(state);
  const std::uint64_t restored = database_batch(earlier.dsn());
  EXPECT_EQ(acknowledged, database_batch(database.dsn()));
  ASSERT_LT(restored, acknowledged);

  // The database "failed over" to the earlier copy: the restart refuses it, naming both marks.
  {
    Started daemon = start(earlier.dsn(), floor, {"--state-file", state});
    EXPECT_FALSE(daemon.serving);
    EXPECT_EQ(daemon.process->wait_for_exit(20s), 1);
    const std::string log = daemon.process->stderr_text();
    EXPECT_NE(log.find("the database is behind this daemon: its last committed batch is " +
                       std::to_string(restored)),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("saw batch " + std::to_string(acknowledged)), std::string::npos) << log;
    EXPECT_NE(log.find("--accept-database-batch " + std::to_string(restored)), std::string::npos)
        << log;
  }
  // An override that names another batch accepts nothing.
  {
    Started daemon =
        start(earlier.dsn(), floor,
              {"--state-file", state, "--accept-database-batch", std::to_string(restored + 1)});
    EXPECT_FALSE(daemon.serving);
    EXPECT_EQ(daemon.process->wait_for_exit(20s), 1) << daemon.process->stderr_text();
  }
  // The operator accepts the restore of exactly this database: it serves, on the record, and the
  // state file follows the database from there.
  {
    Started daemon =
        start(earlier.dsn(), floor,
              {"--state-file", state, "--accept-database-batch", std::to_string(restored)});
    ASSERT_TRUE(daemon.serving) << daemon.process->stderr_text();
    // Round 4 is gone with the lost batches; the floor goes on from the copy's state.
    EXPECT_TRUE(open_and_void(*daemon.channel, 4).ok());
    stop(daemon);
    pqxx::connection connection(earlier.dsn());
    pqxx::nontransaction tx(connection);
    const auto row = tx.exec1(
        "SELECT count(*), max(detail->>'database_batch'), max(detail->>'known_batch') "
        "FROM audit_log WHERE action = 'daemon.restore_accepted'");
    EXPECT_EQ(row[0].as<int>(), 1);
    EXPECT_EQ(row[1].as<std::string>(), std::to_string(restored));
    EXPECT_EQ(row[2].as<std::string>(), std::to_string(acknowledged));
    EXPECT_EQ(state_file_batch(state), database_batch(earlier.dsn()));
  }
  unlink(state.c_str());
  unlink(floor.c_str());
}

TEST(DatabaseTrust, ARebuildWhileRunningRefusesADatabaseThatLostAcknowledgedBatches) {
  TestDatabase database;
  const std::string floor = write_floor();
  Started daemon = start(database.dsn(), floor, {});
  ASSERT_TRUE(daemon.serving) << daemon.process->stderr_text();
  for (std::uint64_t round = 1; round <= 3; ++round) {
    ASSERT_TRUE(open_and_void(*daemon.channel, round).ok());
  }
  const std::uint64_t acknowledged = database_batch(database.dsn());
  {
    // The database loses the last batch behind the daemon's back (the void of round 3), as a
    // standby that had not received it would, and the commit session is lost with the failover.
    auto connection = database.connect();
    pqxx::work tx(*connection);
    tx.exec("ALTER TABLE commit_marks DISABLE TRIGGER USER");
    tx.exec("ALTER TABLE round_events DISABLE TRIGGER USER");
    tx.exec("DELETE FROM commit_marks WHERE batch = " + std::to_string(acknowledged));
    tx.exec(
        "DELETE FROM round_events WHERE phase = 'voided' AND round_key = "
        "(SELECT round_key FROM rounds WHERE table_id = 'T1' AND round_id = 3)");
    tx.exec("ALTER TABLE commit_marks ENABLE TRIGGER USER");
    tx.exec("ALTER TABLE round_events ENABLE TRIGGER USER");
    tx.exec(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE application_name = 'jackpotd-commit' AND datname = current_database()");
    tx.commit();
  }
  // The next commit fails; the rebuild finds the database behind and stays down, saying why.
  EXPECT_FALSE(open_and_void(*daemon.channel, 4).ok());
  const std::string expected = "the database is behind this daemon: its last committed batch is " +
                               std::to_string(acknowledged - 1) + ", but this daemon saw batch " +
                               std::to_string(acknowledged);
  std::string log;
  for (int attempt = 0; attempt < 300 && log.find(expected) == std::string::npos; ++attempt) {
    std::this_thread::sleep_for(100ms);
    log = daemon.process->stderr_text();
  }
  EXPECT_NE(log.find(expected), std::string::npos) << log;
  EXPECT_EQ(log.find("serving again"), std::string::npos) << log;
  // Round 3's void is not served again as if it had never happened.
  const grpc::Status refused = open_and_void(*daemon.channel, 3);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE) << refused.error_message();
  auto health = grpc::health::v1::Health::NewStub(daemon.channel);
  grpc::health::v1::HealthCheckResponse status;
  for (int attempt = 0; attempt < 300; ++attempt) {
    grpc::ClientContext context;
    ASSERT_TRUE(health->Check(&context, {}, &status).ok());
    if (status.status() == grpc::health::v1::HealthCheckResponse::NOT_SERVING) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(status.status(), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  stop(daemon);
  unlink(floor.c_str());
}

TEST(DatabaseTrust, ASecondDaemonOnTheSameDatabaseRefusesToStartNamingTheHolder) {
  TestDatabase database;
  const std::string floor = write_floor();
  Started first = start(database.dsn(), floor, {});
  ASSERT_TRUE(first.serving) << first.process->stderr_text();
  ASSERT_TRUE(open_and_void(*first.channel, 1).ok());

  // It waits the commit timeout (a killed daemon's last commit may still hold the lock) and
  // then refuses.
  Started second = start(database.dsn(), floor, {"--commit-timeout-ms", "1000"});
  EXPECT_FALSE(second.serving);
  EXPECT_EQ(second.process->wait_for_exit(20s), 1);
  const std::string log = second.process->stderr_text();
  EXPECT_NE(log.find("another jackpotd holds this database's floor lock (server process "),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("application_name 'jackpotd-commit'"), std::string::npos) << log;
  // It wrote nothing: the first daemon goes on as before.
  ASSERT_TRUE(open_and_void(*first.channel, 2).ok());
  stop(first);

  // Once the first has stopped, the floor's lock is free for the next daemon.
  Started third = start(database.dsn(), floor, {});
  ASSERT_TRUE(third.serving) << third.process->stderr_text();
  EXPECT_TRUE(open_and_void(*third.channel, 3).ok());
  stop(third);
  unlink(floor.c_str());
}

// Two writers that both got past the lock are still caught: every batch's commit mark must follow
// the database's last one.
TEST(DatabaseTrust, ACommitMarkThatDoesNotFollowTheLastOneIsRefused) {
  TestDatabase database;
  const std::string floor = write_floor();
  {
    Started daemon = start(database.dsn(), floor, {});
    ASSERT_TRUE(daemon.serving) << daemon.process->stderr_text();
    ASSERT_TRUE(open_and_void(*daemon.channel, 1).ok());
    stop(daemon);
  }
  const std::uint64_t last = database_batch(database.dsn());
  auto connection = database.connect();
  for (const std::uint64_t batch : {last, last + 2}) {
    pqxx::work tx(*connection);
    EXPECT_THROW(tx.exec("INSERT INTO commit_marks (batch) VALUES (" + std::to_string(batch) + ")"),
                 pqxx::failure)
        << batch;
  }
  {
    // The next number, but from a session that does not hold the floor (floor_owner, #33).
    pqxx::work tx(*connection);
    EXPECT_THROW(
        tx.exec("INSERT INTO commit_marks (batch) VALUES (" + std::to_string(last + 1) + ")"),
        pqxx::failure);
  }
  pqxx::work tx(*connection);
  tx.exec("SELECT set_config('jackpot.floor_token', (SELECT token::text FROM floor_owner), true)");
  tx.exec("INSERT INTO commit_marks (batch) VALUES (" + std::to_string(last + 1) + ")");
  tx.commit();
  unlink(floor.c_str());
}

}  // namespace
}  // namespace jackpot
