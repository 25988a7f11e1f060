// The live metrics endpoint after tables played (jackpot-tablesim) and a call was refused: it
// passes `promtool check metrics` (Debian's prometheus package) without a complaint, and holds
// the series an operator's dashboards and alerts read (ops/monitoring; docs/operations.md).
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/support/daemon_process.h"
#include "tests/support/test_database.h"
#include "tests/support/test_pki.h"

namespace jackpot {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::TestDatabase;
using testing::TestPki;

constexpr const char* kFloor = R"(
links {
  id: "royal"
  approval_threshold: "100.00"
  max_wager_units: 5
  levels { level: 1 name: "Royal Flush" seed: "1000.00" meter_rate_ppm: 150000 reserve_rate_ppm: 25000 }
  levels { level: 2 name: "Must-Hit-By $250" seed: "50.00" meter_rate_ppm: 100000 must_hit_by: "250.00" trigger: TRIGGER_HIDDEN_UNIFORM }
}
tables { id: "T1" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "royal" paytable_id: "PT-BJS-HUH-5CP-12" } }
tables { id: "T2" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "royal" paytable_id: "PT-BJS-HUH-5CP-12" } }
)";

TEST(MetricsEndToEnd, TheExpositionPassesPromtoolAndHoldsTheFloorsSeries) {
  TestDatabase database;
  char dir[] = "/tmp/jackpotd-metrics.XXXXXX";
  const std::string work = mkdtemp(dir);
  const std::string floor = work + "/floor.textproto";
  std::ofstream(floor) << kFloor;
  for (const char* table : {"table/T1", "table/T2"}) TestPki::site().certificate_file(table);

  DaemonProcess daemon({"--db", database.dsn(), "--listen", "127.0.0.1:0", "--metrics",
                        "127.0.0.1:0", "--floor", floor});
  const auto line = daemon.read_stdout_line(30s);
  ASSERT_TRUE(line) << daemon.stderr_text();
  std::smatch match;
  ASSERT_TRUE(std::regex_search(*line, match,
                                std::regex("serving gRPC on (\\S+), metrics on "
                                           "http://127\\.0\\.0\\.1:([0-9]+)/metrics")))
      << *line;
  const std::string address = match[1];
  const int metrics_port = std::stoi(match[2]);

  // Rounds played until a Must-Hit-By level hits (it must by $250 of meter: at most a few
  // hundred rounds: 800 rounds lock about 2,900 dollar wagers, 10% of them to the level), and a
  // call refused for the caller's role.
  const auto [played, sim_output] =
      testing::run_command(std::string(JACKPOT_TABLESIM_BINARY) + " --target " + address +
                           " --pki " + TestPki::site().dir() + " --floor " + floor +
                           " --fast --rounds 800 --seed metrics --progress-seconds 0");
  ASSERT_EQ(played, 0) << sim_output;
  // Refused by the authorisation before any handler (counted by reason), and by the handler
  // (counted by status code).
  const auto [denied, denial] =
      testing::run_tool(JACKPOTCTL_BINARY, address, "sign/metrics", "meters");
  EXPECT_NE(denied, 0) << denial;
  const auto [unknown, refusal] = testing::run_tool(JACKPOTCTL_BINARY, address, "admin/metrics",
                                                    "links close no-such-link --reason test");
  EXPECT_NE(unknown, 0) << refusal;
  std::this_thread::sleep_for(1500ms);  // The gauges are read once a second.

  const std::string response = testing::http_get(metrics_port, "/metrics");
  const std::size_t body_at = response.find("\r\n\r\n");
  ASSERT_NE(body_at, std::string::npos) << response;
  const std::string body = response.substr(body_at + 4);
  const std::string exposition = work + "/metrics.txt";
  std::ofstream(exposition) << body;
  const auto [lint, complaints] = testing::run_command("promtool check metrics < " + exposition);
  EXPECT_EQ(lint, 0) << complaints;
  EXPECT_EQ(complaints, "") << complaints;

  for (const std::string& series : {
           std::string("jackpotd_meter{level=\"1\",link=\"royal\"} "),
           std::string("jackpotd_reserve{level=\"1\",link=\"royal\"} "),
           std::string("jackpotd_link_status{link=\"royal\",status=\"open\"} 1"),
           std::string("jackpotd_ledger_balanced 1"),
           std::string("jackpotd_database_available 1"),
           std::string("jackpotd_hits_total{kind=\"must_hit_by\",level=\"2\",link=\"royal\"} "),
           std::string("jackpotd_awards_total{kind=\"fixed\",link=\"royal\"} "),
           std::string("jackpotd_contributions_total{direction=\"contributed\",link=\"royal\"} "),
           std::string("jackpotd_pending_payouts "),
           std::string("jackpotd_pending_payout_oldest_age_seconds "),
           std::string("jackpotd_commit_latency_seconds_bucket{le=\"0.01\"} "),
           std::string("jackpotd_commit_batch_commands_bucket{le=\"1\"} "),
           std::string("jackpotd_grpc_call_duration_seconds_bucket{method=\"LockWagers\","
                       "service=\"jackpot.v1.TableService\",le=\"0.05\"} "),
           std::string("jackpotd_grpc_calls_total{code=\"OK\",method=\"SettleRound\","
                       "service=\"jackpot.v1.TableService\"} "),
           std::string("jackpotd_authorization_refusals_total{reason=\"role_not_allowed\"} 1"),
           std::string("jackpotd_grpc_calls_total{code=\"NOT_FOUND\",method=\"SetLinkStatus\","
                       "service=\"jackpot.v1.AdminService\"} 1"),
           std::string("jackpotd_sign_streams{transport=\"grpc\"} 0"),
           std::string("jackpotd_sign_states_skipped_total{transport=\"web\"} "),
           std::string("jackpotd_rounds_total{phase=\"settled\"} "),
       }) {
    EXPECT_NE(body.find(series), std::string::npos) << series;
  }

  // Every series the dashboard and the alerts read is one jackpotd exposes, and the dashboard
  // is JSON Grafana can read.
  for (const char* file : {"grafana-dashboard.json", "alerts.yml"}) {
    std::ifstream in(std::string(JACKPOTD_SOURCE_DIR) + "/ops/monitoring/" + file);
    std::stringstream text;
    text << in.rdbuf();
    const std::string content = text.str();
    ASSERT_FALSE(content.empty()) << file;
    const std::regex name("jackpotd_[a-z_]+");
    for (auto it = std::sregex_iterator(content.begin(), content.end(), name);
         it != std::sregex_iterator(); ++it) {
      std::string metric = it->str();
      for (const std::string suffix : {"_bucket", "_count", "_sum"}) {
        if (metric.size() > suffix.size() &&
            metric.compare(metric.size() - suffix.size(), suffix.size(), suffix) == 0) {
          metric.resize(metric.size() - suffix.size());
        }
      }
      EXPECT_NE(body.find("# TYPE " + metric + " "), std::string::npos) << file << ": " << metric;
    }
    if (std::string(file).ends_with(".json")) {
      google::protobuf::Struct parsed;
      EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(content, &parsed).ok()) << file;
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(work, ignored);
}

}  // namespace
}  // namespace jackpot
