// PostgreSQL stopped under load and started again: callers get UNAVAILABLE while it is down,
// tables hear their link is unavailable, nothing acknowledged is lost, and jackpotd serves again
// without a restart. The test runs its own cluster (ops/lib/pg.sh) so that it can stop it.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <pqxx/pqxx>
#include <regex>

#include "grpc/health/v1/health.grpc.pb.h"
#include "jackpot/v1/admin.grpc.pb.h"
#include "jackpot/v1/table.grpc.pb.h"
#include "tests/support/daemon_process.h"

namespace jackpot {
namespace {

using namespace std::chrono_literals;
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
  auto channel = grpc::CreateChannel(match[1], grpc::InsecureChannelCredentials());
  auto stub = pb::TableService::NewStub(channel);
  auto health = grpc::health::v1::Health::NewStub(channel);
  using Serving = grpc::health::v1::HealthCheckResponse;
  // Health is refreshed once a second: wait up to 10 s for the expected status.
  const auto health_becomes = [&](Serving::ServingStatus expected) {
    Serving::ServingStatus seen = Serving::UNKNOWN;
    for (int attempt = 0; attempt < 100 && seen != expected; ++attempt) {
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

  cluster.stop();
  const grpc::Status down = open_round(*stub, round + 1);
  EXPECT_EQ(down.error_code(), grpc::StatusCode::UNAVAILABLE) << down.error_message();
  ASSERT_TRUE(stream->Read(&update));
  EXPECT_EQ(update.status(), pb::LINK_STATUS_UNAVAILABLE);
  EXPECT_EQ(health_becomes(Serving::NOT_SERVING), Serving::NOT_SERVING);

  cluster.start();
  // The same request, retried with the same ids, succeeds once jackpotd has recovered.
  grpc::Status status;
  for (int attempt = 0; attempt < 100; ++attempt) {
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

  // Nothing acknowledged was lost: 20 voided rounds and the open one.
  pqxx::connection connection(cluster.dsn());
  pqxx::read_transaction tx(connection);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM rounds")[0].as<int>(), 21);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM round_events WHERE phase = 'voided'")[0].as<int>(), 20);
  daemon.send_signal(SIGTERM);
  EXPECT_EQ(daemon.wait_for_exit(20s), 0) << daemon.stderr_text();
  unlink(floor_name);
}

}  // namespace
}  // namespace jackpot
