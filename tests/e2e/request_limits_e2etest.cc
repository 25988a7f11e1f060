// The real jackpotd over real gRPC against careless and hostile requests (issue #14): strings
// and lists past their limits, a request past the message size, bytes that do not parse, and
// error messages that must not echo a client's text whole. Each refusal carries the status
// docs/limits.md names and changes nothing: no row is journaled, no meter moves.
#include <google/protobuf/descriptor.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <future>
#include <pqxx/pqxx>
#include <regex>

#include "controller/limits/request_limits.h"
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
  id: "limits-link"
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
  links { link_id: "limits-link" paytable_id: "PT-BJS-HUH-5CP-01" }
}
)";

class RequestLimitsEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/jackpotd-floor.XXXXXX";
    const int fd = mkstemp(name);
    close(fd);
    std::ofstream(name) << kFloor;
    floor_ = name;
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

  template <typename Stub, typename Request, typename Response, typename Call>
  grpc::Status call(Stub& stub, Call method, const Request& request, Response* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    return (stub.*method)(&context, request, response);
  }
  template <typename Request, typename Response, typename Call>
  grpc::Status table(Call method, const Request& request, Response* response) {
    return call(*table_, method, request, response);
  }
  template <typename Request, typename Response, typename Call>
  grpc::Status admin(Call method, const Request& request, Response* response) {
    return call(*admin_, method, request, response);
  }

  // The size of everything the daemon journaled that a client wrote: rounds and their events,
  // link status changes with their reasons.
  std::string journal_size() {
    auto db = database_.connect();
    pqxx::work tx(*db);
    const auto row = tx.exec1(
        "SELECT (SELECT count(*) FROM rounds) || '/' || (SELECT count(*) FROM round_events) || "
        "'/' || (SELECT coalesce(sum(length(reason)), 0) FROM round_events) || '/' || "
        "(SELECT count(*) FROM link_status_events) || '/' || "
        "(SELECT coalesce(sum(length(reason)), 0) FROM link_status_events)");
    return row[0].as<std::string>();
  }

  std::int64_t meter_micros() {
    pb::ListMetersResponse response;
    EXPECT_TRUE(
        admin(&pb::AdminService::Stub::ListMeters, pb::ListMetersRequest{}, &response).ok());
    return response.levels_size() > 0 ? response.levels(0).meter_micros() : -1;
  }

  // Opens and locks round `round` of T1 with one $1 wager on seat 1.
  void open_and_lock(std::uint64_t round) {
    open_round(round);
    lock_round(round);
  }
  void open_round(std::uint64_t round) {
    pb::OpenRoundRequest open;
    open.set_table_id("T1");
    open.set_round_id(round);
    pb::OpenRoundResponse opened;
    ASSERT_TRUE(table(&pb::TableService::Stub::OpenRound, open, &opened).ok());
  }
  void lock_round(std::uint64_t round) {
    pb::LockWagersRequest lock;
    lock.set_table_id("T1");
    lock.set_round_id(round);
    auto* wager = lock.add_wagers();
    wager->set_seat(1);
    wager->set_link_id("limits-link");
    wager->set_amount_cents(100);
    pb::LockWagersResponse locked;
    ASSERT_TRUE(table(&pb::TableService::Stub::LockWagers, lock, &locked).ok());
  }

  TestDatabase database_;
  std::string floor_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::string address_;
  std::unique_ptr<pb::TableService::Stub> table_;
  std::unique_ptr<pb::AdminService::Stub> admin_;
};

TEST_F(RequestLimitsEndToEnd, ReasonsPastTheirLimitAreRefusedAndNeverJournaled) {
  open_and_lock(1);
  const std::string journal = journal_size();
  const std::int64_t meter = meter_micros();

  pb::VoidRoundRequest void_round;
  void_round.set_table_id("T1");
  void_round.set_round_id(1);
  void_round.set_reason(std::string(kMaxReasonBytes + 1, 'r'));
  pb::VoidRoundResponse voided;
  auto status = table(&pb::TableService::Stub::VoidRound, void_round, &voided);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_EQ(status.error_message(), "reason is 513 bytes, more than the 512 allowed");

  pb::SetLinkStatusRequest close;
  close.set_link_id("limits-link");
  close.set_status(pb::LINK_STATUS_CLOSED);
  close.set_reason(std::string(60'000, 'c'));  // Under the message limit, over the reason's.
  pb::SetLinkStatusResponse closed;
  status = admin(&pb::AdminService::Stub::SetLinkStatus, close, &closed);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_EQ(status.error_message(), "reason is 60000 bytes, more than the 512 allowed");

  EXPECT_EQ(journal_size(), journal);
  EXPECT_EQ(meter_micros(), meter);

  // At the limit both are served.
  void_round.set_reason(std::string(kMaxReasonBytes, 'r'));
  EXPECT_TRUE(table(&pb::TableService::Stub::VoidRound, void_round, &voided).ok());
  close.set_reason(std::string(kMaxReasonBytes, 'c'));
  EXPECT_TRUE(admin(&pb::AdminService::Stub::SetLinkStatus, close, &closed).ok());
}

TEST_F(RequestLimitsEndToEnd, IdsCardsHandsAndListsPastTheirLimitAreInvalidArguments) {
  open_and_lock(1);
  const std::string journal = journal_size();

  pb::OpenRoundRequest open;
  open.set_table_id(std::string(kMaxIdBytes + 1, 't'));
  open.set_round_id(2);
  pb::OpenRoundResponse opened;
  auto status = table(&pb::TableService::Stub::OpenRound, open, &opened);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_EQ(status.error_message(), "table_id is 65 bytes, more than the 64 allowed");

  pb::LockWagersRequest lock;
  lock.set_table_id("T1");
  lock.set_round_id(1);
  for (std::size_t i = 0; i <= kMaxRepeatedEntries; ++i) {
    auto* wager = lock.add_wagers();
    wager->set_seat(1);
    wager->set_link_id("limits-link");
    wager->set_amount_cents(100);
  }
  pb::LockWagersResponse locked;
  status = table(&pb::TableService::Stub::LockWagers, lock, &locked);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_EQ(status.error_message(), "wagers has 257 entries, more than the 256 allowed");

  pb::SettleRoundRequest settle;
  settle.set_table_id("T1");
  settle.set_round_id(1);
  auto* seat = settle.add_seats();
  seat->set_seat(1);
  seat->set_keyed_hand(std::string(kMaxKeyedHandBytes + 1, 'F'));
  pb::SettleRoundResponse settled;
  status = table(&pb::TableService::Stub::SettleRound, settle, &settled);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_EQ(status.error_message(), "seats[0].keyed_hand is 65 bytes, more than the 64 allowed");

  pb::ListMetersRequest list;
  list.add_link_ids(std::string(kMaxIdBytes + 1, 'l'));
  pb::ListMetersResponse listed;
  status = admin(&pb::AdminService::Stub::ListMeters, list, &listed);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_EQ(status.error_message(), "link_ids[0] is 65 bytes, more than the 64 allowed");

  grpc::ClientContext watch_context;
  pb::WatchLinkStatusRequest watch;
  watch.set_table_id(std::string(kMaxIdBytes + 1, 't'));
  auto stream = table_->WatchLinkStatus(&watch_context, watch);
  pb::LinkStatusUpdate update;
  EXPECT_FALSE(stream->Read(&update));
  status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_EQ(status.error_message(), "table_id is 65 bytes, more than the 64 allowed");

  EXPECT_EQ(journal_size(), journal);
}

TEST_F(RequestLimitsEndToEnd, ErrorsEchoAtMostAShortPrefixOfAClientsText) {
  open_round(1);
  // Within the limit, so the request is read; no table's certificate can name it (58 bytes at
  // most), so a table naming it is refused for acting for another.
  const std::string unknown(kMaxIdBytes, 'u');
  const std::string echoed = "'" + std::string(kEchoPrefixBytes, 'u') + "'\u2026 (64 bytes)";

  pb::OpenRoundRequest open;
  open.set_table_id(unknown);
  open.set_round_id(1);
  pb::OpenRoundResponse opened;
  auto status = table(&pb::TableService::Stub::OpenRound, open, &opened);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(status.error_message(),
            "acts_for_another: 'table/T1' may act only for its own table, not for " + echoed);

  pb::LockWagersRequest lock;
  lock.set_table_id("T1");
  lock.set_round_id(1);
  auto* wager = lock.add_wagers();
  wager->set_seat(2);
  wager->set_link_id(unknown);
  wager->set_amount_cents(100);
  pb::LockWagersResponse locked;
  status = table(&pb::TableService::Stub::LockWagers, lock, &locked);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message().find(std::string(kEchoPrefixBytes + 1, 'u')), std::string::npos)
      << status.error_message();
  EXPECT_NE(status.error_message().find(echoed), std::string::npos) << status.error_message();
  lock_round(1);

  pb::SetLinkStatusRequest close;
  close.set_link_id(unknown);
  close.set_status(pb::LINK_STATUS_CLOSED);
  close.set_reason("maintenance");
  pb::SetLinkStatusResponse closed;
  status = admin(&pb::AdminService::Stub::SetLinkStatus, close, &closed);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "unknown_link: no link " + echoed);

  pb::ReconciliationReportRequest report;
  report.add_link_ids(unknown);
  pb::ReconciliationReport reported;
  status = admin(&pb::AdminService::Stub::GetReconciliationReport, report, &reported);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "unknown_link: no link " + echoed);

  pb::SettleRoundRequest settle;
  settle.set_table_id("T1");
  settle.set_round_id(1);
  auto* seat = settle.add_seats();
  seat->set_seat(1);
  seat->set_keyed_hand(std::string(kMaxKeyedHandBytes, 'k'));
  pb::SettleRoundResponse settled;
  status = table(&pb::TableService::Stub::SettleRound, settle, &settled);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message().find(std::string(kEchoPrefixBytes + 1, 'k')), std::string::npos)
      << status.error_message();

  grpc::ClientContext watch_context;
  pb::WatchLinkStatusRequest watch;
  watch.set_table_id(unknown);
  auto stream = table_->WatchLinkStatus(&watch_context, watch);
  pb::LinkStatusUpdate update;
  EXPECT_FALSE(stream->Read(&update));
  status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(status.error_message(),
            "acts_for_another: 'table/T1' may act only for its own table, not for " + echoed);
}

TEST_F(RequestLimitsEndToEnd, ARequestPastTheMessageSizeIsResourceExhaustedAndChangesNothing) {
  open_and_lock(1);
  const std::string journal = journal_size();
  const std::int64_t meter = meter_micros();

  // A 1 MB table id: the request is refused by its size before it is read, and the answer does
  // not carry the id back (a default client would see its own limit exceeded instead).
  pb::OpenRoundRequest open;
  open.set_table_id(std::string(1 << 20, 't'));
  open.set_round_id(2);
  pb::OpenRoundResponse opened;
  auto status = table(&pb::TableService::Stub::OpenRound, open, &opened);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_NE(status.error_message().find("65536"), std::string::npos) << status.error_message();
  EXPECT_LT(status.error_message().size(), 200U);

  pb::VoidRoundRequest void_round;
  void_round.set_table_id("T1");
  void_round.set_round_id(1);
  void_round.set_reason(std::string(3 << 20, 'r'));  // The 3 MB reason of issue #14.
  pb::VoidRoundResponse voided;
  status = table(&pb::TableService::Stub::VoidRound, void_round, &voided);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();

  // Just past the limit, and just under it (then refused for its field, not its size).
  pb::SetLinkStatusRequest close;
  close.set_link_id("limits-link");
  close.set_status(pb::LINK_STATUS_CLOSED);
  close.set_reason(std::string(kMaxReceiveMessageBytes, 'c'));
  ASSERT_GT(close.ByteSizeLong(), static_cast<std::size_t>(kMaxReceiveMessageBytes));
  pb::SetLinkStatusResponse closed;
  status = admin(&pb::AdminService::Stub::SetLinkStatus, close, &closed);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  close.set_reason(std::string(kMaxReceiveMessageBytes - 100, 'c'));
  ASSERT_LE(close.ByteSizeLong(), static_cast<std::size_t>(kMaxReceiveMessageBytes));
  status = admin(&pb::AdminService::Stub::SetLinkStatus, close, &closed);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();

  EXPECT_EQ(journal_size(), journal);
  EXPECT_EQ(meter_micros(), meter);
}

// Sends `bytes` as the request of `method` ("/package.Service/Method") and returns the status.
grpc::Status send_bytes(grpc::GenericStub& stub, const std::string& method,
                        const std::string& bytes) {
  grpc::Slice slice(bytes);
  const grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 10s);
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(std::move(status)); });
  return done.get_future().get();
}

TEST_F(RequestLimitsEndToEnd, BytesThatDoNotParseAreInvalidArgumentsForEveryRpc) {
  open_and_lock(1);
  const std::string journal = journal_size();
  const std::int64_t meter = meter_micros();
  const std::vector<std::string> garbage = {
      std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11),  // A varint that never ends.
      std::string("\x0a\x7f"
                  "ab",
                  4),          // A length past the end.
      std::string("\x0f", 1),  // Wire type 7.
  };
  int methods = 0;
  // Each service as the role that may call it, so that the bytes reach it.
  for (const auto& [name, principal] : std::vector<std::pair<std::string, std::string>>{
           {"jackpot.v1.TableService", "table/T1"},
           {"jackpot.v1.AdminService", "admin/e2e"},
           {"jackpot.v1.SupervisorService", "supervisor/e2e"}}) {
    grpc::GenericStub stub(channel_as(address_, principal));
    const auto* service =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
    ASSERT_NE(service, nullptr) << name;
    for (int m = 0; m < service->method_count(); ++m) {
      const auto* method = service->method(m);
      const std::string path = "/" + service->full_name() + "/" + method->name();
      for (const std::string& bytes : garbage) {
        const grpc::Status status = send_bytes(stub, path, bytes);
        EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
            << path << ": " << status.error_message();
        EXPECT_EQ(status.error_message(),
                  "the request is not a valid " + method->input_type()->full_name() +
                      ": its bytes do not parse as that message (string fields must be UTF-8)")
            << path;
      }
      ++methods;
    }
  }
  EXPECT_GE(methods, 16);

  // A table id that is not UTF-8 does not parse either (proto3 strings are UTF-8). Protobuf
  // writes a log line for each such request: the daemon writes at most one per 10 s.
  grpc::GenericStub stub(channel_as(address_, "table/T1"));
  for (int i = 0; i < 50; ++i) {
    const grpc::Status status =
        send_bytes(stub, "/jackpot.v1.TableService/OpenRound", std::string("\x0a\x02\xc3\x28", 4));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  }
  const std::string log = daemon_->stderr_text();
  std::size_t utf8_lines = 0;
  for (std::size_t at = log.find("UTF-8"); at != std::string::npos;
       at = log.find("UTF-8", at + 1)) {
    ++utf8_lines;
  }
  EXPECT_GE(utf8_lines, 1U) << log;  // The first is written: the operator sees that it happens.
  EXPECT_LE(utf8_lines, 2U) << log;  // Not fifty.
  // A client's fault, not jackpotd's: a warning (protobuf says error).
  EXPECT_NE(log.find("jackpotd: warning: protobuf: "), std::string::npos) << log;
  EXPECT_EQ(log.find("jackpotd: error: protobuf: "), std::string::npos) << log;

  EXPECT_EQ(journal_size(), journal);
  EXPECT_EQ(meter_micros(), meter);
  pb::VoidRoundRequest void_round;  // Still serving.
  void_round.set_table_id("T1");
  void_round.set_round_id(1);
  void_round.set_reason("misdeal");
  pb::VoidRoundResponse voided;
  EXPECT_TRUE(table(&pb::TableService::Stub::VoidRound, void_round, &voided).ok());
}

}  // namespace
}  // namespace jackpot
