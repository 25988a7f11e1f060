// AdminService.AdjustMeter over real gRPC against the real daemon and PostgreSQL: an adjustment
// moves the meter once per request id (also across a restart), every refusal answers its status
// and changes nothing, ListMeters shows the new value, the reconciliation report still balances
// with the adjustment under its term, and jackpotctl adjust does the same from the shell.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "jackpot/v1/admin.grpc.pb.h"
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

// Level 2's $0.001 per $1 keeps a $5 lock below its hidden point, drawn in whole cents above $50.
constexpr const char* kFloor = R"(
links {
  id: "adj-link"
  levels { level: 1 name: "Royal Flush" seed: "1000.00" meter_rate_ppm: 150000 ceiling: "1100.00" }
  levels { level: 2 name: "Must-Hit-By $250" seed: "50.00" meter_rate_ppm: 1000 must_hit_by: "250.00" trigger: TRIGGER_HIDDEN_UNIFORM }
}
tables { id: "T1" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "adj-link" paytable_id: "PT-BJS-HUH-5CP-12" } }
)";

class MeterAdjustmentEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/jackpotd-adjust-floor.XXXXXX";
    close(mkstemp(name));
    std::ofstream(name) << kFloor;
    floor_ = name;
    start();
  }
  void TearDown() override {
    stop();
    std::remove(floor_.c_str());
  }

  void start() {
    daemon_ = std::make_unique<DaemonProcess>(std::vector<std::string>{
        "--db", database_.dsn(), "--listen", "127.0.0.1:0", "--metrics", "off", "--floor", floor_});
    const auto line = daemon_->read_stdout_line(30s);
    ASSERT_TRUE(line) << daemon_->stderr_text();
    std::smatch match;
    ASSERT_TRUE(std::regex_search(*line, match, std::regex("serving gRPC on (\\S+)"))) << *line;
    address_ = match[1];
    admin_ = pb::AdminService::NewStub(channel_as(address_, "admin/e2e"));
    table_ = pb::TableService::NewStub(channel_as(address_, "table/T1"));
  }
  void stop() {
    if (!daemon_) return;
    daemon_->send_signal(SIGTERM);
    EXPECT_EQ(daemon_->wait_for_exit(20s), 0) << daemon_->stderr_text();
    daemon_.reset();
  }

  grpc::Status adjust(const std::string& id, std::uint32_t level, std::int64_t micros,
                      const std::string& reason, pb::AdjustMeterResponse* response,
                      const std::string& link = "adj-link") {
    pb::AdjustMeterRequest request;
    request.set_request_id(id);
    request.set_link_id(link);
    request.set_level(level);
    request.set_amount_micros(micros);
    request.set_reason(reason);
    grpc::ClientContext context;
    return admin_->AdjustMeter(&context, request, response);
  }

  // Every level's meter and reserve, as ListMeters answers them.
  std::string meters() {
    grpc::ClientContext context;
    pb::ListMetersResponse response;
    EXPECT_TRUE(admin_->ListMeters(&context, {}, &response).ok());
    return response.SerializeAsString();
  }
  std::int64_t meter_micros(int level) {
    grpc::ClientContext context;
    pb::ListMetersResponse response;
    EXPECT_TRUE(admin_->ListMeters(&context, {}, &response).ok());
    return response.levels(level - 1).meter_micros();
  }

  std::pair<int, std::string> admin_tool(const std::string& command) {
    FILE* pipe = popen((std::string(JACKPOTCTL_BINARY) + " " +
                        testing::admin_tool_flags(address_, "admin/e2e") + " " + command + " 2>&1")
                           .c_str(),
                       "r");
    if (pipe == nullptr) return {-1, ""};
    std::string printed;
    char chunk[512];
    while (std::fgets(chunk, sizeof chunk, pipe) != nullptr) printed += chunk;
    const int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, printed};
  }

  TestDatabase database_;
  std::string floor_;
  std::string address_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<pb::AdminService::Stub> admin_;
  std::unique_ptr<pb::TableService::Stub> table_;
};

TEST_F(MeterAdjustmentEndToEnd, AdjustReplayRefuseReportAndRestart) {
  pb::AdjustMeterResponse first;
  const auto applied = adjust("e2e-1", 1, 25'000'000, "sensor missed a lock", &first);
  ASSERT_TRUE(applied.ok()) << applied.error_message();
  EXPECT_EQ(first.balance().link_id(), "adj-link");
  EXPECT_EQ(first.balance().level(), 1u);
  EXPECT_EQ(first.balance().name(), "Royal Flush");
  EXPECT_EQ(first.balance().meter_micros(), 1'025'000'000);
  EXPECT_GT(first.transfer_id(), 0u);
  EXPECT_EQ(meter_micros(1), 1'025'000'000);

  // The same request again: the first answer, applied once.
  pb::AdjustMeterResponse again;
  ASSERT_TRUE(adjust("e2e-1", 1, 25'000'000, "sensor missed a lock", &again).ok());
  EXPECT_EQ(again.SerializeAsString(), first.SerializeAsString());
  EXPECT_EQ(meter_micros(1), 1'025'000'000);

  // Each refusal answers its status and changes nothing.
  const std::string before = meters();
  struct Refusal {
    grpc::StatusCode code;
    std::string id;
    std::uint32_t level;
    std::int64_t micros;
    std::string reason;
    std::string link;
    const char* what;
  };
  const std::vector<Refusal> refusals = {
      {grpc::StatusCode::FAILED_PRECONDITION, "e2e-1", 1, 30'000'000, "sensor missed a lock",
       "adj-link", "the same id for another amount"},
      {grpc::StatusCode::INVALID_ARGUMENT, "", 1, 1'000'000, "why", "adj-link", "no request id"},
      {grpc::StatusCode::INVALID_ARGUMENT, std::string(65, 'i'), 1, 1'000'000, "why", "adj-link",
       "a 65-byte request id"},
      {grpc::StatusCode::INVALID_ARGUMENT, "r", 1, 1'000'000, "", "adj-link", "no reason"},
      {grpc::StatusCode::INVALID_ARGUMENT, "r", 1, 1'000'000, std::string(513, 'x'), "adj-link",
       "a 513-byte reason"},
      {grpc::StatusCode::INVALID_ARGUMENT, "r", 1, 0, "why", "adj-link", "a zero amount"},
      {grpc::StatusCode::NOT_FOUND, "r", 1, 1'000'000, "why", "no-such-link", "an unknown link"},
      {grpc::StatusCode::NOT_FOUND, "r", 3, 1'000'000, "why", "adj-link", "an unknown level"},
      {grpc::StatusCode::FAILED_PRECONDITION, "r", 1, -1'025'000'001, "why", "adj-link",
       "below zero"},
      {grpc::StatusCode::FAILED_PRECONDITION, "r", 1, 75'000'001, "why", "adj-link",
       "past the ceiling"},
      {grpc::StatusCode::FAILED_PRECONDITION, "r", 2, 10'000, "why", "adj-link",
       "a hidden-trigger level above its lower bound"},
      {grpc::StatusCode::FAILED_PRECONDITION, "r", 2, 200'000'000, "why", "adj-link",
       "to the Must-Hit-By amount"},
  };
  for (const Refusal& refusal : refusals) {
    pb::AdjustMeterResponse response;
    const auto status =
        adjust(refusal.id, refusal.level, refusal.micros, refusal.reason, &response, refusal.link);
    EXPECT_EQ(status.error_code(), refusal.code) << refusal.what << ": " << status.error_message();
    EXPECT_FALSE(status.error_message().empty()) << refusal.what;
    EXPECT_LT(status.error_message().size(), 400u) << refusal.what;
    EXPECT_EQ(meters(), before) << refusal.what;
  }

  // A LOCKED round holds contributions on level 1: no lowering until it is voided.
  {
    pb::OpenRoundRequest open;
    open.set_table_id("T1");
    open.set_round_id(1);
    pb::OpenRoundResponse opened;
    grpc::ClientContext open_context;
    ASSERT_TRUE(table_->OpenRound(&open_context, open, &opened).ok());
    pb::LockWagersRequest lock;
    lock.set_table_id("T1");
    lock.set_round_id(1);
    auto* wager = lock.add_wagers();
    wager->set_seat(1);
    wager->set_link_id("adj-link");
    wager->set_amount_cents(500);
    pb::LockWagersResponse locked;
    grpc::ClientContext lock_context;
    ASSERT_TRUE(table_->LockWagers(&lock_context, lock, &locked).ok());
  }
  const std::string while_locked = meters();
  pb::AdjustMeterResponse response;
  EXPECT_EQ(adjust("down", 1, -1'000'000, "why", &response).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(meters(), while_locked);
  {
    pb::VoidRoundRequest void_request;
    void_request.set_table_id("T1");
    void_request.set_round_id(1);
    void_request.set_reason("misdeal");
    pb::VoidRoundResponse voided;
    grpc::ClientContext void_context;
    ASSERT_TRUE(table_->VoidRound(&void_context, void_request, &voided).ok());
  }
  EXPECT_EQ(meters(), before);
  ASSERT_TRUE(adjust("down", 1, -1'000'000, "why", &response).ok());
  EXPECT_EQ(meter_micros(1), 1'024'000'000);

  // The auditor's report up to now balances, with the adjustments under their term.
  {
    grpc::ClientContext context;
    pb::ReconciliationReport report;
    ASSERT_TRUE(admin_->GetReconciliationReport(&context, {}, &report).ok());
    ASSERT_EQ(report.levels_size(), 2);
    for (const auto& level : report.levels()) {
      EXPECT_TRUE(level.balanced()) << level.level() << " differs by " << level.difference_micros();
    }
    EXPECT_EQ(report.levels(0).adjustments_micros(), 24'000'000);
    EXPECT_EQ(report.levels(0).end_micros(), 1'024'000'000);
  }

  // After a restart the replay still answers the first answer, and a different request under
  // its id is still refused.
  stop();
  start();
  EXPECT_EQ(meter_micros(1), 1'024'000'000);
  pb::AdjustMeterResponse after_restart;
  ASSERT_TRUE(adjust("e2e-1", 1, 25'000'000, "sensor missed a lock", &after_restart).ok());
  EXPECT_EQ(after_restart.SerializeAsString(), first.SerializeAsString());
  EXPECT_EQ(adjust("e2e-1", 1, -25'000'000, "sensor missed a lock", &response).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(meter_micros(1), 1'024'000'000);

  // The operator's command line: the same, from the shell.
  const auto [exit_code, printed] =
      admin_tool("adjust adj-link 1 -4.5 --request-id cli-1 --reason 'double count'");
  EXPECT_EQ(exit_code, 0) << printed;
  EXPECT_NE(printed.find("adj-link level 1 adjusted by -4.500000"), std::string::npos) << printed;
  EXPECT_NE(printed.find("meter 1019.500000"), std::string::npos) << printed;
  const auto [again_code, again_printed] =
      admin_tool("adjust adj-link 1 -4.5 --request-id cli-1 --reason 'double count'");
  EXPECT_EQ(again_code, 0) << again_printed;
  EXPECT_EQ(again_printed, printed);
  EXPECT_EQ(meter_micros(1), 1'019'500'000);
  const auto [refused_code, refused_printed] =
      admin_tool("adjust adj-link 1 0 --request-id cli-2 --reason 'nothing'");
  EXPECT_EQ(refused_code, 1) << refused_printed;
  const auto [usage_code, usage_printed] =
      admin_tool("adjust adj-link 1 4.1234567 --request-id cli-3 --reason why");
  EXPECT_EQ(usage_code, 2) << usage_printed;
  // Amounts past what int64 micros hold are refused, never wrapped into a small adjustment
  // (18446744073710 units wrapped to 0.448384 before).
  for (const char* huge :
       {"18446744073710", "-18446744073710", "92233720368549", "9223372036855"}) {
    const auto [huge_code, huge_printed] =
        admin_tool(std::string("adjust adj-link 1 ") + huge + " --request-id cli-4 --reason typo");
    EXPECT_EQ(huge_code, 2) << huge << ": " << huge_printed;
  }
  EXPECT_EQ(meter_micros(1), 1'019'500'000);
}

}  // namespace
}  // namespace jackpot
