// WatchLinkStatus streams over real gRPC: they hold no thread of the daemon, are bounded per
// server and per client host (RESOURCE_EXHAUSTED past either), and end cleanly on SIGTERM.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
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

// A field of /proc/PID/status ("Threads", "VmSize" in kB).
long proc_status(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

// Many streams from one client on one completion queue: no client thread per stream either.
class Streams {
 public:
  explicit Streams(pb::TableService::Stub& stub) : stub_(stub) {}
  ~Streams() {
    for (auto& call : calls_) call->context.TryCancel();
    cq_.Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (cq_.Next(&tag, &ok)) {
    }
  }

  // Opens `count` streams on T1 and waits for each one's first update or its end: how many
  // streamed.
  int open(int count) {
    const std::size_t first = calls_.size();
    for (int i = 0; i < count; ++i) {
      auto call = std::make_unique<Call>();
      pb::WatchLinkStatusRequest request;
      request.set_table_id("T1");
      call->reader = stub_.PrepareAsyncWatchLinkStatus(&call->context, request, &cq_);
      call->reader->StartCall(tag(calls_.size(), kStarted));
      calls_.push_back(std::move(call));
    }
    std::size_t waiting = calls_.size() - first;
    int streaming = 0;
    while (waiting > 0) {
      void* got = nullptr;
      bool ok = false;
      if (!cq_.Next(&got, &ok)) break;
      const auto [index, step] = untag(got);
      Call& call = *calls_[index];
      if (step == kStarted) {
        call.reader->Read(&call.update, tag(index, kRead));
      } else if (step == kRead) {
        if (ok) {
          ++streaming;
          call.streaming = true;
          --waiting;
        } else {
          call.reader->Finish(&call.status, tag(index, kFinished));
        }
      } else if (step == kFinished) {
        call.finished = true;
        --waiting;
      }
    }
    return streaming;
  }

  // The statuses of the streams that ended, in order.
  std::vector<grpc::Status> ended() const {
    std::vector<grpc::Status> statuses;
    for (const auto& call : calls_) {
      if (call->finished) statuses.push_back(call->status);
    }
    return statuses;
  }

  // Cancels the first stream still streaming and waits until it has ended.
  void cancel_one() {
    for (std::size_t index = 0; index < calls_.size(); ++index) {
      Call& call = *calls_[index];
      if (!call.streaming) continue;
      call.context.TryCancel();
      call.reader->Read(&call.update, tag(index, kRead));
      finish(index);
      return;
    }
  }

  // Reads every streaming call to its end (the daemon stopping): their statuses.
  std::vector<grpc::Status> read_to_end() {
    std::vector<grpc::Status> statuses;
    for (std::size_t index = 0; index < calls_.size(); ++index) {
      Call& call = *calls_[index];
      if (!call.streaming) continue;
      call.reader->Read(&call.update, tag(index, kRead));
      finish(index);
      statuses.push_back(call.status);
    }
    return statuses;
  }

 private:
  enum Step : std::uintptr_t { kStarted, kRead, kFinished };
  struct Call {
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientAsyncReader<pb::LinkStatusUpdate>> reader;
    pb::LinkStatusUpdate update;
    grpc::Status status;
    bool streaming = false;
    bool finished = false;
  };
  static void* tag(std::size_t index, Step step) {
    return reinterpret_cast<void*>(index * 4 + static_cast<std::uintptr_t>(step));
  }
  static std::pair<std::size_t, Step> untag(void* tag) {
    const auto value = reinterpret_cast<std::uintptr_t>(tag);
    return {value / 4, static_cast<Step>(value % 4)};
  }
  // Waits for the call's outstanding read to fail, then for its status.
  void finish(std::size_t index) {
    Call& call = *calls_[index];
    bool reading = true;
    while (true) {
      void* got = nullptr;
      bool ok = false;
      ASSERT_TRUE(cq_.Next(&got, &ok));
      const auto [which, step] = untag(got);
      if (which != index) continue;
      if (step == kRead && reading) {
        if (ok) {
          call.reader->Read(&call.update, tag(index, kRead));  // A change: read on.
          continue;
        }
        reading = false;
        call.reader->Finish(&call.status, tag(index, kFinished));
      } else if (step == kFinished) {
        call.streaming = false;
        call.finished = true;
        return;
      }
    }
  }

  pb::TableService::Stub& stub_;
  grpc::CompletionQueue cq_;
  std::vector<std::unique_ptr<Call>> calls_;
};

class StreamsEndToEnd : public ::testing::Test {
 protected:
  void start(const std::vector<std::string>& more) {
    char name[] = "/tmp/jackpotd-streams-floor.XXXXXX";
    close(mkstemp(name));
    floor_ = name;
    std::ofstream(floor_) << R"(
links { id: "w-link" levels { level: 1 name: "Royal Flush" seed: "1000.00" meter_rate_ppm: 150000 } }
tables { id: "T1" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "w-link" paytable_id: "PT-BJS-HUH-5CP-01" } }
)";
    std::vector<std::string> args{"--db",      database_.dsn(), "--listen", "127.0.0.1:0",
                                  "--metrics", "off",           "--floor",  floor_};
    args.insert(args.end(), more.begin(), more.end());
    daemon_ = std::make_unique<DaemonProcess>(args);
    const auto line = daemon_->read_stdout_line(30s);
    ASSERT_TRUE(line) << daemon_->stderr_text();
    std::smatch match;
    ASSERT_TRUE(std::regex_search(*line, match, std::regex("serving gRPC on (\\S+),"))) << *line;
    address_ = match[1];
    channel_ = channel_as(address_, "table/T1");
    table_ = pb::TableService::NewStub(channel_);
  }
  void TearDown() override {
    if (daemon_) {
      daemon_->send_signal(SIGTERM);
      EXPECT_EQ(daemon_->wait_for_exit(20s), 0) << daemon_->stderr_text();
    }
    if (!floor_.empty()) unlink(floor_.c_str());
  }

  TestDatabase database_;
  std::string floor_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::string address_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::TableService::Stub> table_;
};

TEST_F(StreamsEndToEnd, OneClientHostGetsAtMostItsStreams) {
  ASSERT_NO_FATAL_FAILURE(start({"--streams-per-peer-max", "3", "--streams-max", "100"}));
  Streams streams(*table_);
  EXPECT_EQ(streams.open(3), 3);
  EXPECT_EQ(streams.open(1), 0);
  const auto ended = streams.ended();
  ASSERT_EQ(ended.size(), 1U);
  EXPECT_EQ(ended[0].error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(ended[0].error_message().find("--streams-per-peer-max"), std::string::npos)
      << ended[0].error_message();

  // A stream that ends gives its slot back (the daemon hears of the cancel asynchronously).
  streams.cancel_one();
  int opened = 0;
  for (int attempt = 0; attempt < 300 && opened == 0; ++attempt) {
    opened = streams.open(1);
    if (opened == 0) std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(opened, 1);
}

TEST_F(StreamsEndToEnd, TheServerHoldsAtMostItsStreams) {
  ASSERT_NO_FATAL_FAILURE(start({"--streams-max", "4", "--streams-per-peer-max", "64"}));
  Streams streams(*table_);
  EXPECT_EQ(streams.open(4), 4);
  EXPECT_EQ(streams.open(2), 0);
  for (const grpc::Status& status : streams.ended()) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_NE(status.error_message().find("--streams-max"), std::string::npos)
        << status.error_message();
  }
}

// 300 streams cost the daemon no thread each (a thread per stream would add 300), and every one
// of them ends OK when the daemon stops.
TEST_F(StreamsEndToEnd, StreamsHoldNoThreadAndEndCleanlyOnSigterm) {
  ASSERT_NO_FATAL_FAILURE(start({"--streams-per-peer-max", "1000"}));
  const pid_t pid = daemon_->pid();
  const long threads_before = proc_status(pid, "Threads");
  Streams streams(*table_);
  constexpr int kStreams = 300;
  const int opened = streams.open(kStreams);
  EXPECT_EQ(opened, kStreams);
  const long threads_after = proc_status(pid, "Threads");
  std::printf("%d streams: daemon threads %ld before, %ld after; VmSize %ld kB\n", opened,
              threads_before, threads_after, proc_status(pid, "VmSize"));
  // gRPC's own pools may grow a little under load; a thread per stream would add 300.
  EXPECT_LT(threads_after - threads_before, 64);

  daemon_->send_signal(SIGTERM);
  const auto statuses = streams.read_to_end();
  ASSERT_EQ(statuses.size(), static_cast<std::size_t>(opened));
  for (const grpc::Status& status : statuses) {
    EXPECT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
  }
  EXPECT_EQ(daemon_->wait_for_exit(20s), 0) << daemon_->stderr_text();
  EXPECT_NE(daemon_->stderr_text().find("stopped in"), std::string::npos);
  daemon_.reset();
}

// Reflection is off unless asked for: a tool cannot take the synchronous threads with it.
TEST_F(StreamsEndToEnd, ReflectionIsOffByDefault) {
  ASSERT_NO_FATAL_FAILURE(start({}));
  // Asked as an admin, the one role reflection is for (access_rules.h).
  auto stub =
      grpc::reflection::v1alpha::ServerReflection::NewStub(channel_as(address_, "admin/e2e"));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 5s);
  auto stream = stub->ServerReflectionInfo(&context);
  grpc::reflection::v1alpha::ServerReflectionRequest request;
  request.set_list_services("*");
  stream->Write(request);
  stream->WritesDone();
  grpc::reflection::v1alpha::ServerReflectionResponse response;
  EXPECT_FALSE(stream->Read(&response));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::UNIMPLEMENTED);
}

}  // namespace
}  // namespace jackpot
