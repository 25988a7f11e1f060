// AdminService over real gRPC against the real jackpotd: the reconciliation report's period
// checks and its storage errors, and GetConfig.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <pqxx/pqxx>
#include <regex>
#include <sstream>

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

constexpr const char* kFloor = R"(
links {
  id: "admin-link"
  base_wager: "1.00"
  levels {
    level: 1
    name: "Royal Flush"
    seed: "1000.00"
    meter_rate_ppm: 150000
    reserve_rate_ppm: 25000
  }
}
tables {
  id: "T1"
  game: TABLE_GAME_HEADS_UP_HOLDEM
  seats: 6
  links { link_id: "admin-link" paytable_id: "PT-BJS-HUH-5CP-01" }
}
)";

std::string write_file(const std::string& text) {
  char name[] = "/tmp/jackpotd-floor.XXXXXX";
  const int fd = mkstemp(name);
  close(fd);
  std::ofstream(name) << text;
  return name;
}

google::protobuf::Timestamp timestamp(std::int64_t seconds, std::int32_t nanos) {
  google::protobuf::Timestamp time;
  time.set_seconds(seconds);
  time.set_nanos(nanos);
  return time;
}

class AdminEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    floor_ = write_file(kFloor);
    daemon_ = std::make_unique<DaemonProcess>(std::vector<std::string>{
        "--db", database_.dsn(), "--listen", "127.0.0.1:0", "--metrics", "off", "--floor", floor_});
    const auto line = daemon_->read_stdout_line(30s);
    ASSERT_TRUE(line) << daemon_->stderr_text();
    std::smatch match;
    ASSERT_TRUE(std::regex_search(*line, match, std::regex("serving gRPC on (\\S+),"))) << *line;
    address_ = match[1];
    table_ = pb::TableService::NewStub(channel_as(address_, "table/T1"));
    admin_ = pb::AdminService::NewStub(channel_as(address_, "admin/e2e"));
  }
  void TearDown() override {
    daemon_->send_signal(SIGTERM);
    EXPECT_EQ(daemon_->wait_for_exit(20s), 0) << daemon_->stderr_text();
    unlink(floor_.c_str());
  }

  grpc::Status report(const pb::ReconciliationReportRequest& request,
                      pb::ReconciliationReport* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    return admin_->GetReconciliationReport(&context, request, response);
  }

  // Opens round `round` on T1 and locks a wager of `units` on the link: transfers after the
  // start's snapshot.
  void wager(std::uint64_t round, std::int64_t units) {
    pb::OpenRoundRequest open;
    open.set_table_id("T1");
    open.set_round_id(round);
    pb::OpenRoundResponse opened;
    grpc::ClientContext open_context;
    ASSERT_TRUE(table_->OpenRound(&open_context, open, &opened).ok());
    pb::LockWagersRequest lock;
    lock.set_table_id("T1");
    lock.set_round_id(round);
    auto* bet = lock.add_wagers();
    bet->set_seat(1);
    bet->set_link_id("admin-link");
    bet->set_amount_cents(units * 100);
    pb::LockWagersResponse locked;
    grpc::ClientContext lock_context;
    ASSERT_TRUE(table_->LockWagers(&lock_context, lock, &locked).ok());
  }

  std::uint64_t snapshot_now() {
    grpc::ClientContext context;
    pb::TakeBalanceSnapshotResponse response;
    EXPECT_TRUE(admin_->TakeBalanceSnapshot(&context, {}, &response).ok());
    return response.links_size() == 1 ? response.links(0).through_transfer_id() : 0;
  }

  TestDatabase database_;
  std::string address_;
  std::string floor_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<pb::TableService::Stub> table_;
  std::unique_ptr<pb::AdminService::Stub> admin_;
};

TEST_F(AdminEndToEnd, ReportRefusesTimesOutsideTheTimestampRange) {
  struct Bad {
    const char* name;
    std::optional<google::protobuf::Timestamp> from;
    std::optional<google::protobuf::Timestamp> to;
    const char* names;
  };
  const std::int64_t now = std::time(nullptr);
  const Bad cases[] = {
      {"year 10000", std::nullopt, timestamp(253'402'300'800, 0), "to_time"},
      {"a huge to", timestamp(0, 0), timestamp(INT64_MAX / 2, 0), "to_time"},
      {"before year 1", timestamp(-62'135'596'801, 0), std::nullopt, "from_time"},
      {"a huge negative from", timestamp(INT64_MIN, 0), timestamp(now, 0), "from_time"},
      {"negative nanos", timestamp(now - 10, -1), std::nullopt, "from_time.nanos"},
      {"a second of nanos", std::nullopt, timestamp(now - 10, 1'000'000'000), "to_time.nanos"},
  };
  for (const Bad& bad : cases) {
    SCOPED_TRACE(bad.name);
    pb::ReconciliationReportRequest request;
    if (bad.from) *request.mutable_from_time() = *bad.from;
    if (bad.to) *request.mutable_to_time() = *bad.to;
    pb::ReconciliationReport response;
    const grpc::Status status = report(request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
    EXPECT_NE(status.error_message().find(bad.names), std::string::npos) << status.error_message();
    EXPECT_EQ(response.levels_size(), 0);
  }
}

TEST_F(AdminEndToEnd, ReportRefusesFromAfterToEvenWithinAMicrosecond) {
  const std::int64_t now = std::time(nullptr);
  for (const auto& [from, to] :
       {std::pair{timestamp(now - 10, 999'999'999), timestamp(now - 10, 999'999'000)},
        std::pair{timestamp(now - 10, 1), timestamp(now - 10, 0)},
        std::pair{timestamp(now - 5, 0), timestamp(now - 10, 0)}}) {
    pb::ReconciliationReportRequest request;
    *request.mutable_from_time() = from;
    *request.mutable_to_time() = to;
    pb::ReconciliationReport response;
    const grpc::Status status = report(request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
    EXPECT_EQ(status.error_message(), "from_time is after to_time");
  }
  // The same instant is a valid period (here a future one: both bounds read as now).
  pb::ReconciliationReportRequest request;
  *request.mutable_from_time() = timestamp(now + 1, 5);
  *request.mutable_to_time() = timestamp(now + 1, 5);
  pb::ReconciliationReport response;
  const grpc::Status status = report(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.levels_size(), 1);
  EXPECT_TRUE(response.levels(0).balanced());
}

TEST_F(AdminEndToEnd, AFarFutureToReportsUpToNowNotUpToTheLatestSnapshot) {
  const std::uint64_t at_start = snapshot_now();
  wager(1, 5);  // Transfers after every snapshot so far.
  pb::ReconciliationReportRequest request;
  *request.mutable_to_time() = timestamp(253'402'300'799, 999'999'999);
  pb::ReconciliationReport response;
  const grpc::Status status = report(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.levels_size(), 1);
  const auto& level = response.levels(0);
  EXPECT_TRUE(level.balanced());
  // The end is a snapshot recorded for the report, through the wager's transfers; before, a
  // far-future to_time ended at the latest snapshot already taken, leaving the wager out.
  EXPECT_GT(level.end_through_transfer_id(), at_start);
  EXPECT_EQ(level.end_through_transfer_id(), snapshot_now());
  EXPECT_EQ(level.contributions_micros(), 5 * 175'000);  // Meter and reserve rates.
  // The report says which period it read: up to the daemon's clock, not year 9999.
  EXPECT_LE(response.to_time().seconds(), std::time(nullptr) + 1);
  EXPECT_GE(response.to_time().seconds(), std::time(nullptr) - 60);
  // Exactly up to the snapshot it recorded for its end; before, the clock after the read, later
  // than the snapshot, claiming transfers the report does not hold.
  EXPECT_EQ(response.to_time().seconds(), level.end_snapshot_time().seconds());
  EXPECT_EQ(response.to_time().nanos(), level.end_snapshot_time().nanos());
}

TEST_F(AdminEndToEnd, AStorageErrorReachesTheClientAsAFixedMessageWithoutSql) {
  const std::int64_t now = std::time(nullptr);
  {
    auto connection = database_.connect();
    pqxx::work tx(*connection);
    tx.exec("ALTER TABLE balance_snapshots RENAME TO balance_snapshots_away");
    tx.commit();
  }
  pb::ReconciliationReportRequest request;
  *request.mutable_to_time() = timestamp(now, 0);
  pb::ReconciliationReport response;
  const grpc::Status status = report(request, &response);
  grpc::ClientContext audit_context;
  pb::AuditBalancesResponse audit;
  const grpc::Status audit_status = admin_->AuditBalances(&audit_context, {}, &audit);
  {
    auto connection = database_.connect();
    pqxx::work tx(*connection);
    tx.exec("ALTER TABLE balance_snapshots_away RENAME TO balance_snapshots");
    tx.commit();
  }
  for (const grpc::Status& failed : {status, audit_status}) {
    EXPECT_EQ(failed.error_code(), grpc::StatusCode::UNAVAILABLE) << failed.error_message();
    EXPECT_EQ(
        failed.error_message(),
        "database_unavailable: cannot read the ledger now (the daemon's log says why); retry");
  }
  // The reason is in the daemon's log, for its operators.
  EXPECT_NE(daemon_->stderr_text().find("balance_snapshots"), std::string::npos)
      << daemon_->stderr_text();
}

TEST_F(AdminEndToEnd, ALibraryErrorThatIsNotSqlStaysInTheLogToo) {
  // A balance the audit cannot convert (SQL NULL): libpqxx throws a conversion_error, which is
  // not a pqxx::failure. Before, its text ("...null...") reached the client as
  // FAILED_PRECONDITION.
  {
    auto connection = database_.connect();
    pqxx::work tx(*connection);
    tx.exec("ALTER VIEW account_balances RENAME TO account_balances_away");
    tx.exec(
        "CREATE VIEW account_balances AS SELECT link_id, account_kind, level, "
        "NULL::bigint AS balance_micros FROM account_balances_away");
    tx.commit();
  }
  grpc::ClientContext audit_context;
  pb::AuditBalancesResponse audit;
  const grpc::Status status = admin_->AuditBalances(&audit_context, {}, &audit);
  {
    auto connection = database_.connect();
    pqxx::work tx(*connection);
    tx.exec("DROP VIEW account_balances");
    tx.exec("ALTER VIEW account_balances_away RENAME TO account_balances");
    tx.commit();
  }
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_EQ(status.error_message(),
            "database_unavailable: cannot read the ledger now (the daemon's log says why); retry");
  EXPECT_NE(daemon_->stderr_text().find("the balance audit cannot read the ledger"),
            std::string::npos)
      << daemon_->stderr_text();
  grpc::ClientContext again_context;  // The view is back: the audit answers again.
  EXPECT_TRUE(admin_->AuditBalances(&again_context, {}, &audit).ok());
}

TEST_F(AdminEndToEnd, GetConfigAnswersTheFloorAndPaytablesInForce) {
  grpc::ClientContext context;
  pb::GetConfigResponse config;
  const grpc::Status status = admin_->GetConfig(&context, {}, &config);
  ASSERT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
  EXPECT_EQ(config.config_text(), kFloor);
  EXPECT_EQ(config.floor_file(), floor_);
  EXPECT_FALSE(config.daemon_version().empty());
  // The version and digest are the ones the journal holds for this floor.
  auto connection = database_.connect();
  pqxx::read_transaction tx(*connection);
  const auto row = tx.exec1("SELECT version, sha256 FROM floor_versions");
  EXPECT_EQ(config.config_version(), row[0].as<std::uint64_t>());
  EXPECT_EQ(config.floor_sha256(), row[1].as<std::string>());
  EXPECT_EQ(config.floor_sha256().size(), 64u);
  EXPECT_EQ(tx.exec1("SELECT detail->>'floor_version' FROM audit_log WHERE action = "
                     "'daemon.start'")[0]
                .as<std::string>(),
            std::to_string(config.config_version()));
  // The one paytable the floor's table uses, as shipped.
  ASSERT_EQ(config.paytables_size(), 1);
  EXPECT_EQ(config.paytables(0).paytable_id(), "PT-BJS-HUH-5CP-01");
  std::ifstream shipped(std::string(JACKPOTD_SOURCE_DIR) +
                        "/controller/hands/paytables/pt-bjs-huh-5cp-01.textproto");
  std::ostringstream text;
  text << shipped.rdbuf();
  EXPECT_EQ(config.paytables(0).text(), text.str());

  // The operator's command line prints the same.
  FILE* pipe = popen((std::string(JACKPOTCTL_BINARY) + " " +
                      testing::admin_tool_flags(address_, "admin/e2e") + " config")
                         .c_str(),
                     "r");
  ASSERT_NE(pipe, nullptr);
  std::string printed;
  char chunk[512];
  while (std::fgets(chunk, sizeof chunk, pipe) != nullptr) printed += chunk;
  EXPECT_EQ(pclose(pipe), 0) << printed;
  EXPECT_EQ(printed, "# floor " + floor_ + ", version " + std::to_string(config.config_version()) +
                         ", sha256 " + config.floor_sha256() + " (jackpotd " +
                         config.daemon_version() + ")\n" + kFloor +
                         "# uses paytable PT-BJS-HUH-5CP-01\n");
}

}  // namespace
}  // namespace jackpot
