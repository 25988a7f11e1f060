// The link status stream over real gRPC: each update says since when the link has had its
// status, and that time survives a restart for a link an operator closed.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <regex>
#include <thread>

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
links { id: "s-link" levels { level: 1 name: "Royal Flush" seed: "1000.00" meter_rate_ppm: 150000 } }
tables { id: "T1" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "s-link" paytable_id: "PT-BJS-HUH-5CP-01" } }
)";

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t micros(const google::protobuf::Timestamp& time) {
  return time.seconds() * 1'000'000 + time.nanos() / 1'000;
}

class LinkStatusSince : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/jackpotd-since-floor.XXXXXX";
    close(mkstemp(name));
    floor_ = name;
    std::ofstream(floor_) << kFloor;
  }
  void TearDown() override {
    stop();
    unlink(floor_.c_str());
  }

  void start() {
    daemon_ = std::make_unique<DaemonProcess>(std::vector<std::string>{
        "--db", database_.dsn(), "--listen", "127.0.0.1:0", "--metrics", "off", "--floor", floor_});
    const auto line = daemon_->read_stdout_line(30s);
    ASSERT_TRUE(line) << daemon_->stderr_text();
    std::smatch match;
    ASSERT_TRUE(std::regex_search(*line, match, std::regex("serving gRPC on (\\S+),"))) << *line;
    table_ = pb::TableService::NewStub(channel_as(match[1], "table/T1"));
    admin_ = pb::AdminService::NewStub(channel_as(match[1], "admin/e2e"));
  }
  void stop() {
    if (!daemon_) return;
    daemon_->send_signal(SIGTERM);
    EXPECT_EQ(daemon_->wait_for_exit(20s), 0) << daemon_->stderr_text();
    daemon_.reset();
  }

  // The first update of a new watch on T1.
  pb::LinkStatusUpdate first_update() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    pb::WatchLinkStatusRequest watch;
    watch.set_table_id("T1");
    auto stream = table_->WatchLinkStatus(&context, watch);
    pb::LinkStatusUpdate update;
    EXPECT_TRUE(stream->Read(&update));
    context.TryCancel();
    return update;
  }

  grpc::Status set_status(pb::LinkStatus status) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    pb::SetLinkStatusRequest request;
    request.set_link_id("s-link");
    request.set_status(status);
    request.set_reason("sign maintenance");
    pb::SetLinkStatusResponse response;
    return admin_->SetLinkStatus(&context, request, &response);
  }

  TestDatabase database_;
  std::string floor_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<pb::TableService::Stub> table_;
  std::unique_ptr<pb::AdminService::Stub> admin_;
};

TEST_F(LinkStatusSince, EveryUpdateSaysSinceWhenTheLinkHasHadItsStatus) {
  const std::int64_t before_start = now_us();
  ASSERT_NO_FATAL_FAILURE(start());
  const std::int64_t after_start = now_us();

  // Open since the daemon started serving it.
  grpc::ClientContext watch_context;
  pb::WatchLinkStatusRequest watch;
  watch.set_table_id("T1");
  auto stream = table_->WatchLinkStatus(&watch_context, watch);
  pb::LinkStatusUpdate update;
  ASSERT_TRUE(stream->Read(&update));
  EXPECT_EQ(update.status(), pb::LINK_STATUS_OPEN);
  ASSERT_TRUE(update.has_since());
  EXPECT_GE(micros(update.since()), before_start);
  EXPECT_LE(micros(update.since()), after_start);

  // Closed since the operator closed it; closing it again does not move the time.
  std::this_thread::sleep_for(20ms);
  const std::int64_t before_close = now_us();
  ASSERT_TRUE(set_status(pb::LINK_STATUS_CLOSED).ok());
  const std::int64_t after_close = now_us();
  ASSERT_TRUE(stream->Read(&update));
  EXPECT_EQ(update.status(), pb::LINK_STATUS_CLOSED);
  const std::int64_t closed_since = micros(update.since());
  EXPECT_GE(closed_since, before_close);
  EXPECT_LE(closed_since, after_close);
  watch_context.TryCancel();
  std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(set_status(pb::LINK_STATUS_CLOSED).ok());
  EXPECT_EQ(micros(first_update().since()), closed_since);

  // A restart keeps the time of the closing, as recorded.
  stop();
  ASSERT_NO_FATAL_FAILURE(start());
  update = first_update();
  EXPECT_EQ(update.status(), pb::LINK_STATUS_CLOSED);
  EXPECT_EQ(micros(update.since()), closed_since);

  // Open again since the operator reopened it.
  const std::int64_t before_open = now_us();
  ASSERT_TRUE(set_status(pb::LINK_STATUS_OPEN).ok());
  const std::int64_t after_open = now_us();
  update = first_update();
  EXPECT_EQ(update.status(), pb::LINK_STATUS_OPEN);
  EXPECT_GE(micros(update.since()), before_open);
  EXPECT_LE(micros(update.since()), after_open);
}

}  // namespace
}  // namespace jackpot
