// A clean stop completes within --shutdown-grace-ms whatever PostgreSQL does: with a commit, a
// recovery or a report waiting on a server process stopped by SIGSTOP (which no server-side
// timeout can end), and promptly when a client only holds an idle connection. The tests run their
// own cluster (ops/lib/pg.sh), so that stopping a server process disturbs no other test. They
// print the times they measure and assert only a generous bound.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <pqxx/pqxx>
#include <regex>
#include <thread>

#include "grpc/health/v1/health.grpc.pb.h"
#include "jackpot/v1/admin.grpc.pb.h"
#include "jackpot/v1/table.grpc.pb.h"
#include "tests/support/daemon_process.h"
#include "tests/support/test_pki.h"

namespace jackpot {
namespace {

using namespace std::chrono_literals;
using testing::channel_as;
using testing::DaemonProcess;
namespace pb = ::jackpot::v1;

int cluster(const std::string& dir, const std::string& steps) {
  const std::string command = "bash -c 'set -e; source \"" + std::string(JACKPOTD_SOURCE_DIR) +
                              "/ops/lib/pg.sh\"; " + steps + "' >>\"" + dir + "/cluster.log\" 2>&1";
  return std::system(command.c_str());
}

// One cluster for the suite (initdb is slow on a shared machine); a database per test.
class OwnCluster {
 public:
  OwnCluster() {
    char name[] = "/tmp/jackpotd-stop.XXXXXX";
    dir_ = mkdtemp(name);
    EXPECT_EQ(cluster(dir_, "pg_cluster_init " + dir_ + "; pg_cluster_start " + dir_), 0);
  }
  ~OwnCluster() {
    resume();
    cluster(dir_, "pg_cluster_stop " + dir_);
    std::system(("rm -rf " + dir_).c_str());
  }
  OwnCluster(const OwnCluster&) = delete;
  OwnCluster& operator=(const OwnCluster&) = delete;

  // A new database; its connection string.
  std::string create_database() {
    const std::string name = "j" + std::to_string(++databases_);
    pqxx::connection admin(dsn("postgres"));
    pqxx::nontransaction(admin).exec("CREATE DATABASE " + name);
    return dsn(name);
  }
  std::string dsn(const std::string& database) const {
    return "host=" + dir_ + "/run port=5432 user=postgres dbname=" + database;
  }

  // Stops a server process with SIGSTOP until resume() (at the latest when the cluster goes).
  void freeze(int pid) {
    ASSERT_EQ(kill(pid, SIGSTOP), 0);
    stopped_.push_back(pid);
  }
  void resume() {
    for (const int pid : stopped_) kill(pid, SIGCONT);
    stopped_.clear();
  }

  // The server process of a session on the database of `database_dsn` that `where` selects
  // (from pg_stat_activity), waiting up to 20 s for it to appear; 0 if none did.
  int backend(const std::string& database_dsn, const std::string& where) {
    for (int attempt = 0; attempt < 200; ++attempt) {
      pqxx::connection connection(database_dsn);
      pqxx::nontransaction tx(connection);
      const auto rows = tx.exec(
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
          "AND pid <> pg_backend_pid() AND (" +
          where + ") LIMIT 1");
      if (!rows.empty()) return rows[0][0].as<int>();
      std::this_thread::sleep_for(100ms);
    }
    return 0;
  }

 private:
  std::string dir_;
  std::vector<int> stopped_;
  int databases_ = 0;
};

class Stop : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { cluster_ = new OwnCluster; }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  void TearDown() override { cluster_->resume(); }
  static OwnCluster* cluster_;
};
OwnCluster* Stop::cluster_ = nullptr;

std::string write_floor() {
  char name[] = "/tmp/jackpotd-stop-floor.XXXXXX";
  close(mkstemp(name));
  std::ofstream(name) << R"(
links { id: "s-link" levels { level: 1 name: "Royal Flush" seed: "1000.00" meter_rate_ppm: 150000 } }
tables { id: "T1" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "s-link" paytable_id: "PT-BJS-HUH-5CP-01" } }
)";
  return name;
}

struct Running {
  std::unique_ptr<DaemonProcess> process;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::TableService::Stub> table;
  std::unique_ptr<pb::AdminService::Stub> admin;
};

Running start(const std::string& dsn, const std::string& floor, std::vector<std::string> extra) {
  std::vector<std::string> args = {"--db",      dsn,   "--listen", "127.0.0.1:0",
                                   "--metrics", "off", "--floor",  floor};
  args.insert(args.end(), extra.begin(), extra.end());
  Running running;
  running.process = std::make_unique<DaemonProcess>(args);
  const auto line = running.process->read_stdout_line(30s);
  std::smatch match;
  EXPECT_TRUE(line && std::regex_search(*line, match, std::regex("serving gRPC on (\\S+),")))
      << running.process->stderr_text();
  if (!match.empty()) {
    running.channel = channel_as(match[1], "table/T1");
    running.table = pb::TableService::NewStub(running.channel);
    running.admin = pb::AdminService::NewStub(channel_as(match[1], "admin/e2e"));
  }
  return running;
}

grpc::Status open_round(pb::TableService::Stub& stub, std::uint64_t round) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 60s);
  pb::OpenRoundRequest request;
  request.set_table_id("T1");
  request.set_round_id(round);
  pb::OpenRoundResponse response;
  return stub.OpenRound(&context, request, &response);
}

grpc::Status void_round(pb::TableService::Stub& stub, std::uint64_t round) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 60s);
  pb::VoidRoundRequest request;
  request.set_table_id("T1");
  request.set_round_id(round);
  request.set_reason("test");
  pb::VoidRoundResponse response;
  return stub.VoidRound(&context, request, &response);
}

// Sends SIGTERM and waits up to `bound` for the exit; prints and returns how long it took.
std::optional<std::chrono::milliseconds> stop_within(Running& daemon,
                                                     std::chrono::milliseconds bound,
                                                     const char* what) {
  const auto began = std::chrono::steady_clock::now();
  daemon.process->send_signal(SIGTERM);
  const auto code = daemon.process->wait_for_exit(bound);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - began);
  std::printf("[ measured ] %s: SIGTERM to exit in %lld ms\n", what,
              static_cast<long long>(took.count()));
  std::fflush(stdout);
  EXPECT_TRUE(code.has_value()) << what << ": still running after " << bound.count() << " ms\n"
                                << daemon.process->stderr_text();
  if (!code) return std::nullopt;
  EXPECT_EQ(*code, 0) << daemon.process->stderr_text();
  return took;
}

constexpr auto kGrace = 2000ms;
// Generous: the grace, plus seconds for a loaded machine; well short of the 30 s commit and
// query timeouts below, which are what a stop that ignored its grace would wait for.
constexpr auto kBound = kGrace + 10000ms;

// A long commit timeout: the daemon's own answer deadline (twice it) must not be what ends the
// waits below.
const std::vector<std::string> kSlowDatabase = {
    "--shutdown-grace-ms", "2000", "--commit-timeout-ms", "30000", "--query-timeout-ms", "30000"};

TEST_F(Stop, WithinTheGraceWhileACommitWaitsOnAStoppedServerProcess) {
  const std::string dsn = cluster_->create_database();
  const std::string floor = write_floor();
  Running daemon = start(dsn, floor, kSlowDatabase);
  ASSERT_TRUE(daemon.table);
  ASSERT_TRUE(open_round(*daemon.table, 1).ok());
  const int commit = cluster_->backend(dsn, "application_name = 'jackpotd-commit'");
  ASSERT_NE(commit, 0);
  cluster_->freeze(commit);
  auto hung = std::async(std::launch::async, [&] { return void_round(*daemon.table, 1); });
  std::this_thread::sleep_for(500ms);  // The commit is sent and waits.
  ASSERT_EQ(hung.wait_for(0s), std::future_status::timeout) << hung.get().error_message() << "\n"
                                                            << daemon.process->stderr_text();
  stop_within(daemon, kBound, "hung commit");
  // The caller was not told its round was voided: UNAVAILABLE, or the connection went with the
  // stop.
  EXPECT_FALSE(hung.get().ok());
  unlink(floor.c_str());
}

TEST_F(Stop, WithinTheGraceWhileRecoveryWaitsOnAStoppedServerProcess) {
  const std::string dsn = cluster_->create_database();
  const std::string floor = write_floor();
  Running daemon = start(dsn, floor, kSlowDatabase);
  ASSERT_TRUE(daemon.table);
  ASSERT_TRUE(open_round(*daemon.table, 1).ok());
  // Recovery will wait behind this lock; its server process is then stopped, and the lock let go.
  pqxx::connection locker(dsn);
  pqxx::work lock(locker);
  lock.exec("LOCK TABLE transfers IN ACCESS EXCLUSIVE MODE");
  const int locker_pid = lock.exec1("SELECT pg_backend_pid()")[0].as<int>();
  {
    pqxx::connection killer(dsn);
    pqxx::nontransaction(killer).exec(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE application_name = 'jackpotd-commit' AND datname = current_database()");
  }
  EXPECT_FALSE(void_round(*daemon.table, 1).ok());  // The commit fails: recovery starts.
  const int recovery =
      cluster_->backend(dsn, "wait_event_type = 'Lock' AND pid <> " + std::to_string(locker_pid));
  ASSERT_NE(recovery, 0) << daemon.process->stderr_text();
  cluster_->freeze(recovery);
  lock.commit();
  stop_within(daemon, kBound, "hung recovery");
  unlink(floor.c_str());
}

TEST_F(Stop, WithinTheGraceWhileAReportWaitsOnAStoppedServerProcess) {
  const std::string dsn = cluster_->create_database();
  const std::string floor = write_floor();
  Running daemon = start(dsn, floor, kSlowDatabase);
  ASSERT_TRUE(daemon.table);
  ASSERT_TRUE(open_round(*daemon.table, 1).ok());
  pqxx::connection locker(dsn);
  pqxx::work lock(locker);
  lock.exec("LOCK TABLE transfers IN ACCESS EXCLUSIVE MODE");
  const int locker_pid = lock.exec1("SELECT pg_backend_pid()")[0].as<int>();
  auto report = std::async(std::launch::async, [&] {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 60s);
    pb::ReconciliationReport response;
    return daemon.admin->GetReconciliationReport(&context, {}, &response);
  });
  const int reader =
      cluster_->backend(dsn, "wait_event_type = 'Lock' AND pid <> " + std::to_string(locker_pid));
  ASSERT_NE(reader, 0) << daemon.process->stderr_text();
  cluster_->freeze(reader);
  lock.commit();
  stop_within(daemon, kBound, "hung report");
  EXPECT_FALSE(report.get().ok());
  unlink(floor.c_str());
}

// gRPC's graceful shutdown waits for clients to close their connections; one that holds an idle
// connection must not keep the stop waiting for the whole grace.
TEST_F(Stop, PromptWhileAClientHoldsAnIdleConnection) {
  const std::string dsn = cluster_->create_database();
  const std::string floor = write_floor();
  Running daemon = start(dsn, floor, {"--shutdown-grace-ms", "20000"});
  ASSERT_TRUE(daemon.table);
  ASSERT_TRUE(open_round(*daemon.table, 1).ok());
  ASSERT_EQ(daemon.channel->GetState(false), GRPC_CHANNEL_READY);  // Open, and idle from here.
  // Generous against what the stop takes (tens of milliseconds here), and well short of what an
  // idle connection made it take before (about 5 s, or the whole grace when that is shorter).
  const auto took = stop_within(daemon, 4s, "idle connection, grace 20000 ms");
  ASSERT_TRUE(took);
  const std::string log = daemon.process->stderr_text();
  EXPECT_EQ(log.find("could not record the stop"), std::string::npos) << log;
  pqxx::connection connection(dsn);
  pqxx::nontransaction tx(connection);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM audit_log WHERE action = 'daemon.stop'")[0].as<int>(),
            1);
  unlink(floor.c_str());
}

}  // namespace
}  // namespace jackpot
