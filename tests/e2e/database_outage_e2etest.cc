// PostgreSQL stopped under load and started again: callers get UNAVAILABLE while it is down,
// tables hear their link is unavailable, nothing acknowledged is lost, and jackpotd serves again
// without a restart. The test runs its own cluster (ops/lib/pg.sh) so that it can stop it.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <pqxx/pqxx>
#include <regex>
#include <thread>

#include "grpc/health/v1/health.grpc.pb.h"
#include "jackpot/v1/admin.grpc.pb.h"
#include "jackpot/v1/sign.grpc.pb.h"
#include "jackpot/v1/supervisor.grpc.pb.h"
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

class OwnCluster {
 public:
  OwnCluster() {
    char name[] = "/tmp/jackpotd-outage.XXXXXX";
    dir_ = mkdtemp(name);
    EXPECT_EQ(cluster(dir_, "pg_cluster_init " + dir_ + "; pg_cluster_start " + dir_ +
                                "; \"$(pg_bindir)/createdb\" -h " + dir_ + "/run -U postgres j"),
              0);
  }
  ~OwnCluster() {
    cluster(dir_, "pg_cluster_stop " + dir_);
    std::system(("rm -rf " + dir_).c_str());
  }
  void stop() { EXPECT_EQ(cluster(dir_, "pg_cluster_stop " + dir_), 0); }
  void start() { EXPECT_EQ(cluster(dir_, "pg_cluster_start " + dir_), 0); }
  std::string dsn() const { return "host=" + dir_ + "/run port=5432 user=postgres dbname=j"; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

grpc::Status open_round(pb::TableService::Stub& stub, std::uint64_t round) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 10s);
  pb::OpenRoundRequest request;
  request.set_table_id("T1");
  request.set_round_id(round);
  pb::OpenRoundResponse response;
  return stub.OpenRound(&context, request, &response);
}

grpc::Status void_round(pb::TableService::Stub& stub, std::uint64_t round) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 10s);
  pb::VoidRoundRequest request;
  request.set_table_id("T1");
  request.set_round_id(round);
  request.set_reason("test");
  pb::VoidRoundResponse response;
  return stub.VoidRound(&context, request, &response);
}

TEST(DatabaseOutage, CallersSeeUnavailableAndServiceResumesWithoutARestart) {
  OwnCluster cluster;
  char floor_name[] = "/tmp/jackpotd-outage-floor.XXXXXX";
  close(mkstemp(floor_name));
  std::ofstream(floor_name) << R"(
links { id: "o-link" levels { level: 1 name: "Royal Flush" seed: "1000.00" meter_rate_ppm: 150000 } }
tables { id: "T1" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "o-link" paytable_id: "PT-BJS-HUH-5CP-01" } }
)";
  DaemonProcess daemon({"--db", cluster.dsn(), "--listen", "127.0.0.1:0", "--metrics", "off",
                        "--floor", floor_name});
  const auto line = daemon.read_stdout_line(30s);
  ASSERT_TRUE(line) << daemon.stderr_text();
  std::smatch match;
  ASSERT_TRUE(std::regex_search(*line, match, std::regex("serving gRPC on (\\S+),")));
  auto channel = channel_as(match[1], "table/T1");  // Tables may ask for health too.
  auto stub = pb::TableService::NewStub(channel);
  auto health = grpc::health::v1::Health::NewStub(channel);
  using Serving = grpc::health::v1::HealthCheckResponse;
  // Health is refreshed once a second: wait up to a minute for the expected status.
  const auto health_becomes = [&](Serving::ServingStatus expected) {
    Serving::ServingStatus seen = Serving::UNKNOWN;
    for (int attempt = 0; attempt < 600 && seen != expected; ++attempt) {
      grpc::ClientContext context;
      Serving response;
      if (health->Check(&context, {}, &response).ok()) seen = response.status();
      if (seen != expected) std::this_thread::sleep_for(100ms);
    }
    return seen;
  };

  std::uint64_t round = 0;
  for (; round < 20; ++round) {
    ASSERT_TRUE(open_round(*stub, round + 1).ok());
    ASSERT_TRUE(void_round(*stub, round + 1).ok());
  }

  grpc::ClientContext watch_context;
  pb::WatchLinkStatusRequest watch;
  watch.set_table_id("T1");
  auto stream = stub->WatchLinkStatus(&watch_context, watch);
  pb::LinkStatusUpdate update;
  ASSERT_TRUE(stream->Read(&update));
  EXPECT_EQ(update.status(), pb::LINK_STATUS_OPEN);
  // A supervisor's watch of the payouts that wait (none do): in place once its initial metadata
  // arrives.
  auto supervisor = pb::SupervisorService::NewStub(channel_as(match[1], "supervisor/e2e"));
  grpc::ClientContext payouts_context;
  payouts_context.set_deadline(std::chrono::system_clock::now() + 120s);
  auto payouts = supervisor->WatchPendingPayouts(&payouts_context, {});
  payouts->WaitForInitialMetadata();

  cluster.stop();
  const grpc::Status down = open_round(*stub, round + 1);
  EXPECT_EQ(down.error_code(), grpc::StatusCode::UNAVAILABLE) << down.error_message();
  ASSERT_TRUE(stream->Read(&update));
  EXPECT_EQ(update.status(), pb::LINK_STATUS_UNAVAILABLE);
  EXPECT_EQ(health_becomes(Serving::NOT_SERVING), Serving::NOT_SERVING);

  cluster.start();
  // The same request, retried with the same ids, succeeds once jackpotd has recovered.
  grpc::Status status;
  for (int attempt = 0; attempt < 600; ++attempt) {
    status = open_round(*stub, round + 1);
    if (status.ok()) break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(status.ok()) << status.error_message() << "\n" << daemon.stderr_text();
  ASSERT_TRUE(stream->Read(&update));
  EXPECT_EQ(update.status(), pb::LINK_STATUS_OPEN);
  EXPECT_EQ(health_becomes(Serving::SERVING), Serving::SERVING);
  EXPECT_NE(daemon.stderr_text().find("state rebuilt from the database; serving again"),
            std::string::npos);
  watch_context.TryCancel();
  // A batch reported failed may have landed: the payout watch ends UNAVAILABLE at the rebuild,
  // and a new one starts from what the database holds.
  pb::PayoutEvent event;
  EXPECT_FALSE(payouts->Read(&event));
  const grpc::Status rebuilt = payouts->Finish();
  EXPECT_EQ(rebuilt.error_code(), grpc::StatusCode::UNAVAILABLE) << rebuilt.error_message();
  EXPECT_NE(rebuilt.error_message().find("rebuilt its state after a database failure"),
            std::string::npos)
      << rebuilt.error_message();

  // Nothing acknowledged was lost: 20 voided rounds and the open one.
  pqxx::connection connection(cluster.dsn());
  pqxx::read_transaction tx(connection);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM rounds")[0].as<int>(), 21);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM round_events WHERE phase = 'voided'")[0].as<int>(), 20);
  daemon.send_signal(SIGTERM);
  EXPECT_EQ(daemon.wait_for_exit(20s), 0) << daemon.stderr_text();
  unlink(floor_name);
}

using Serving = grpc::health::v1::HealthCheckResponse;

// A daemon on the floor of these tests, its stubs, and health as its clients see it.
class Watched {
 public:
  Watched(const std::string& dsn, const std::string& floor,
          const std::vector<std::string>& more = {}) {
    std::vector<std::string> args{"--db",      dsn,   "--listen", "127.0.0.1:0",
                                  "--metrics", "off", "--floor",  floor};
    args.insert(args.end(), more.begin(), more.end());
    daemon = std::make_unique<DaemonProcess>(args);
    const auto line = daemon->read_stdout_line(30s);
    EXPECT_TRUE(line) << daemon->stderr_text();
    std::smatch match;
    if (!line || !std::regex_search(*line, match, std::regex("serving gRPC on (\\S+),"))) return;
    address = match[1];
    std::smatch metrics;
    if (std::regex_search(*line, metrics,
                          std::regex("metrics on http://127\\.0\\.0\\.1:([0-9]+)/"))) {
      metrics_port = std::stoi(metrics[1]);
    }
    table = pb::TableService::NewStub(channel_as(match[1], "table/T1"));
    admin = pb::AdminService::NewStub(channel_as(match[1], "admin/e2e"));
    health = grpc::health::v1::Health::NewStub(channel_as(match[1], "sign/e2e"));
  }

  Serving::ServingStatus health_now() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 2s);
    Serving response;
    return health->Check(&context, {}, &response).ok() ? response.status() : Serving::UNKNOWN;
  }
  // How long health took to say `expected`, polled every 50 ms; nothing within `limit`.
  std::optional<std::chrono::milliseconds> time_until(Serving::ServingStatus expected,
                                                      std::chrono::milliseconds limit) {
    const auto began = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - began < limit) {
      if (health_now() == expected) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - began);
      }
      std::this_thread::sleep_for(50ms);
    }
    return std::nullopt;
  }

  std::unique_ptr<DaemonProcess> daemon;
  std::string address;
  int metrics_port = 0;  // When started with --metrics.
  // Waits up to `limit` for the metrics to hold every one of `series`.
  bool metrics_show(const std::vector<std::string>& series, std::chrono::milliseconds limit) {
    const auto began = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - began < limit) {
      const std::string text = testing::http_get(metrics_port, "/metrics");
      if (std::all_of(series.begin(), series.end(), [&](const std::string& one) {
            return text.find(one) != std::string::npos;
          })) {
        return true;
      }
      std::this_thread::sleep_for(200ms);
    }
    return false;
  }
  std::unique_ptr<pb::TableService::Stub> table;
  std::unique_ptr<pb::AdminService::Stub> admin;
  std::unique_ptr<grpc::health::v1::Health::Stub> health;
};

std::string outage_floor() {
  char floor_name[] = "/tmp/jackpotd-outage-floor.XXXXXX";
  close(mkstemp(floor_name));
  std::ofstream(floor_name) << R"(
links { id: "o-link" levels { level: 1 name: "Royal Flush" seed: "1000.00" meter_rate_ppm: 150000 } }
tables { id: "T1" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "o-link" paytable_id: "PT-BJS-HUH-5CP-01" } }
)";
  return floor_name;
}

// Nothing is written while PostgreSQL is down: the idle daemon's probe finds the outage, so
// health and the tables' stream tell the truth within seconds, and again once it is back.
TEST(DatabaseOutage, AnIdleDaemonNoticesAnOutageWithinSeconds) {
  OwnCluster cluster;
  const std::string floor = outage_floor();
  Watched watched(cluster.dsn(), floor, {"--metrics", "127.0.0.1:0"});
  ASSERT_TRUE(watched.health);
  ASSERT_TRUE(watched.time_until(Serving::SERVING, 10s));
  ASSERT_NE(watched.metrics_port, 0);

  grpc::ClientContext watch_context;
  pb::WatchLinkStatusRequest watch;
  watch.set_table_id("T1");
  auto stream = watched.table->WatchLinkStatus(&watch_context, watch);
  pb::LinkStatusUpdate update;
  ASSERT_TRUE(stream->Read(&update));
  EXPECT_EQ(update.status(), pb::LINK_STATUS_OPEN);

  const auto stop_began = std::chrono::steady_clock::now();
  cluster.stop();
  const auto stopped = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - stop_began);
  const auto down = watched.time_until(Serving::NOT_SERVING, 30s);
  ASSERT_TRUE(down) << "health stayed SERVING with PostgreSQL down\n"
                    << watched.daemon->stderr_text();
  std::printf("idle outage: NOT_SERVING %lld ms after the stop began (%lld ms after it ended)\n",
              static_cast<long long>((stopped + *down).count()),
              static_cast<long long>(down->count()));
  EXPECT_LT(*down, 8s);  // A probe every second; room for a loaded machine.
  ASSERT_TRUE(stream->Read(&update));
  EXPECT_EQ(update.status(), pb::LINK_STATUS_UNAVAILABLE);
  EXPECT_TRUE(update.has_since());
  // The metrics say so too, for the alerts: while the database is down.
  EXPECT_TRUE(
      watched.metrics_show({"jackpotd_database_available 0",
                            "jackpotd_link_status{link=\"o-link\",status=\"unavailable\"} 1",
                            "jackpotd_link_status{link=\"o-link\",status=\"open\"} 0"},
                           30s));

  cluster.start();
  const auto up = watched.time_until(Serving::SERVING, 30s);
  ASSERT_TRUE(up) << watched.daemon->stderr_text();
  std::printf("idle outage: SERVING %lld ms after PostgreSQL started\n",
              static_cast<long long>(up->count()));
  ASSERT_TRUE(stream->Read(&update));
  EXPECT_EQ(update.status(), pb::LINK_STATUS_OPEN);
  EXPECT_TRUE(watched.metrics_show(
      {"jackpotd_database_available 1", "jackpotd_link_status{link=\"o-link\",status=\"open\"} 1"},
      30s));
  watch_context.TryCancel();
  ASSERT_TRUE(open_round(*watched.table, 1).ok());
  watched.daemon->send_signal(SIGTERM);
  EXPECT_EQ(watched.daemon->wait_for_exit(20s), 0) << watched.daemon->stderr_text();
  unlink(floor.c_str());
}

// A sign watches while PostgreSQL stops under a round's lock: the lock's contribution, never
// committed, is never shown; the link shows UNAVAILABLE within seconds, and OPEN again once the
// daemon has rebuilt its state, with the meter the database holds.
TEST(DatabaseOutage, ASignShowsUnavailableAndNeverAnUncommittedMeter) {
  OwnCluster cluster;
  const std::string floor = outage_floor();
  Watched watched(cluster.dsn(), floor);
  ASSERT_TRUE(watched.table);
  auto signs = pb::SignService::NewStub(channel_as(watched.address, "sign/lobby"));
  grpc::ClientContext sign_context;
  sign_context.set_deadline(std::chrono::system_clock::now() + 120s);
  pb::WatchMetersRequest request;
  request.set_sign_id("lobby");
  auto sign = signs->WatchMeters(&sign_context, request);
  pb::SignUpdate update;
  ASSERT_TRUE(sign->Read(&update));
  ASSERT_EQ(update.meters().levels_size(), 1);
  EXPECT_EQ(update.meters().levels(0).amount_cents(), 100000);
  EXPECT_EQ(update.meters().links(0).status(), pb::LINK_STATUS_OPEN);
  ASSERT_TRUE(open_round(*watched.table, 1).ok());

  cluster.stop();
  const auto stop_ended = std::chrono::steady_clock::now();
  grpc::ClientContext lock_context;
  lock_context.set_deadline(std::chrono::system_clock::now() + 10s);
  pb::LockWagersRequest lock;
  lock.set_table_id("T1");
  lock.set_round_id(1);
  auto* wager = lock.add_wagers();
  wager->set_seat(1);
  wager->set_link_id("o-link");
  wager->set_amount_cents(1000);
  pb::LockWagersResponse locked;
  EXPECT_EQ(watched.table->LockWagers(&lock_context, lock, &locked).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // Until the sign shows the outage, and while it lasts, the meter is the committed one.
  bool unavailable = false;
  while (!unavailable && sign->Read(&update)) {
    if (!update.has_meters()) continue;
    EXPECT_EQ(update.meters().levels(0).amount_cents(), 100000);
    unavailable = update.meters().links(0).status() == pb::LINK_STATUS_UNAVAILABLE;
  }
  ASSERT_TRUE(unavailable);
  const auto shown_after = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - stop_ended);
  std::printf("sign: UNAVAILABLE %lld ms after PostgreSQL stopped\n",
              static_cast<long long>(shown_after.count()));
  EXPECT_LT(shown_after, 15s);

  cluster.start();
  bool open = false;
  while (!open && sign->Read(&update)) {
    if (!update.has_meters()) continue;
    open = update.meters().links(0).status() == pb::LINK_STATUS_OPEN;
  }
  ASSERT_TRUE(open) << watched.daemon->stderr_text();
  // The meter shown is the one the database holds (the failed lock did not land).
  pqxx::connection connection(cluster.dsn());
  pqxx::read_transaction tx(connection);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM wagers")[0].as<int>(), 0);
  EXPECT_EQ(update.meters().levels(0).amount_cents(), 100000);
  sign_context.TryCancel();
  watched.daemon->send_signal(SIGTERM);
  EXPECT_EQ(watched.daemon->wait_for_exit(20s), 0) << watched.daemon->stderr_text();
  unlink(floor.c_str());
}

// Continues a server process stopped with SIGSTOP when the test ends, however it ends.
struct Frozen {
  explicit Frozen(int server_process) : pid(server_process) {
    EXPECT_EQ(kill(pid, SIGSTOP), 0) << "the test needs to signal the server's processes (root)";
  }
  ~Frozen() { resume(); }
  Frozen(const Frozen&) = delete;
  Frozen& operator=(const Frozen&) = delete;
  void resume() {
    if (pid > 0) kill(pid, SIGCONT);
    pid = 0;
  }
  int pid;
};

// The commit session's server process stops answering (SIGSTOP: the network stays up, no
// server-side timeout fires): health turns as soon as the probe is late, a read waits no longer
// than the read deadline, and both come back when the process continues.
TEST(DatabaseOutage, AStoppedCommitBackendTurnsHealthAtOnceAndReadsDoNotHang) {
  OwnCluster cluster;
  const std::string floor = outage_floor();
  Watched watched(
      cluster.dsn(), floor,
      {"--probe-interval-ms", "500", "--commit-late-ms", "1500", "--read-timeout-ms", "2000",
       // The stuck probe gives up only at twice this: far past every bound below.
       "--commit-timeout-ms", "30000"});
  ASSERT_TRUE(watched.health);
  ASSERT_TRUE(watched.time_until(Serving::SERVING, 10s));
  ASSERT_TRUE(open_round(*watched.table, 1).ok());

  int pid = 0;
  {
    pqxx::connection connection(cluster.dsn());
    pqxx::nontransaction tx(connection);
    pid = tx.exec1("SELECT pid FROM pg_stat_activity WHERE application_name = 'jackpotd-commit'")[0]
              .as<int>();
  }
  Frozen frozen(pid);
  const auto down = watched.time_until(Serving::NOT_SERVING, 30s);
  ASSERT_TRUE(down) << "health stayed SERVING with the commit backend stopped\n"
                    << watched.daemon->stderr_text();
  std::printf("stopped commit backend: NOT_SERVING %lld ms after SIGSTOP\n",
              static_cast<long long>(down->count()));
  // About 2 s (a probe every 500 ms, late after 1500 ms); the bound leaves a loaded machine room.
  EXPECT_LT(*down, 10s);

  // A command gathers behind the stuck probe (its caller gives up); a read that saw it waits
  // the read deadline, then answers UNAVAILABLE.
  {
    grpc::ClientContext context;  // Long enough to reach jackpotd on a loaded machine.
    context.set_deadline(std::chrono::system_clock::now() + 3s);
    pb::VoidRoundRequest request;
    request.set_table_id("T1");
    request.set_round_id(1);
    request.set_reason("test");
    pb::VoidRoundResponse response;
    EXPECT_FALSE(watched.table->VoidRound(&context, request, &response).ok());
  }
  grpc::ClientContext read_context;
  read_context.set_deadline(std::chrono::system_clock::now() + 30s);
  pb::ListMetersResponse meters;
  const auto read_began = std::chrono::steady_clock::now();
  const grpc::Status read = watched.admin->ListMeters(&read_context, {}, &meters);
  const auto read_took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - read_began);
  std::printf("stopped commit backend: ListMeters answered %s after %lld ms\n",
              read.ok() ? "OK" : read.error_message().c_str(),
              static_cast<long long>(read_took.count()));
  EXPECT_EQ(read.error_code(), grpc::StatusCode::UNAVAILABLE) << read.error_message();
  EXPECT_GE(read_took, 1900ms);
  EXPECT_LT(read_took, 10s);  // The read deadline (2 s), not the 30 s the caller allows.

  frozen.resume();
  const auto up = watched.time_until(Serving::SERVING, 60s);
  ASSERT_TRUE(up) << watched.daemon->stderr_text();
  std::printf("stopped commit backend: SERVING %lld ms after SIGCONT\n",
              static_cast<long long>(up->count()));
  grpc::ClientContext after_context;
  after_context.set_deadline(std::chrono::system_clock::now() + 10s);
  EXPECT_TRUE(watched.admin->ListMeters(&after_context, {}, &meters).ok());
  watched.daemon->send_signal(SIGTERM);
  EXPECT_EQ(watched.daemon->wait_for_exit(20s), 0) << watched.daemon->stderr_text();
  unlink(floor.c_str());
}

}  // namespace
}  // namespace jackpot
