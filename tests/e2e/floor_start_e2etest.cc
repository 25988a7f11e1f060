// The floor at start, with the real jackpotd: a floor that would serve nothing is refused (exit
// 1, a clear message); the start and the floor's version go on record only once the server has
// started, and nothing is served before they are.
#include <arpa/inet.h>
#include <google/protobuf/descriptor.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <future>
#include <pqxx/pqxx>
#include <thread>

#include "jackpot/v1/admin.grpc.pb.h"
#include "jackpot/v1/supervisor.grpc.pb.h"
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
  id: "start-link"
  levels { level: 1 name: "Royal Flush" seed: "1000.00" meter_rate_ppm: 150000 }
}
tables {
  id: "T1"
  game: TABLE_GAME_HEADS_UP_HOLDEM
  seats: 6
  links { link_id: "start-link" paytable_id: "PT-BJS-HUH-5CP-01" }
}
)";

// A file in the temporary directory, removed with the object.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char name[] = "/tmp/jackpotd-floor.XXXXXX";
    const int fd = mkstemp(name);
    close(fd);
    path_ = name;
    std::ofstream(path_) << text;
  }
  ~TempFile() { unlink(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A TCP socket bound to a free loopback port, held until the object goes away.
class HeldPort {
 public:
  HeldPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(listen(fd_, 1), 0);
    socklen_t length = sizeof address;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~HeldPort() { release(); }
  HeldPort(const HeldPort&) = delete;
  HeldPort& operator=(const HeldPort&) = delete;
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  void release() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

std::vector<std::string> args(const TestDatabase& database, const std::string& floor,
                              const std::string& listen = "127.0.0.1:0") {
  return {"--db", database.dsn(), "--listen", listen, "--metrics", "off", "--floor", floor};
}

int count(const TestDatabase& database, const std::string& query) {
  auto connection = database.connect();
  pqxx::read_transaction tx(*connection);
  return tx.exec1(query)[0].as<int>();
}

int start_records(const TestDatabase& database) {
  return count(database,
               "SELECT count(*) FROM audit_log WHERE action IN ('daemon.start', 'daemon.floor')");
}

// Calls `method` ("/package.Service/Method", unary or server-streaming) with an empty request,
// which parses as every request message, and returns how the call ended.
grpc::Status empty_call(grpc::GenericStub& stub, const std::string& method) {
  grpc::Slice slice(std::string{});
  const grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 5s);
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(std::move(status)); });
  return done.get_future().get();
}

struct Refusal {
  const char* name;
  std::string text;  // The floor file's content; unused for the directory.
  const char* message;
};

TEST(FloorAtStart, AFloorThatWouldServeNothingIsRefused) {
  TestDatabase database;
  const Refusal refusals[] = {
      {"empty", "", "the floor has no link (is the file empty, or only comments?)"},
      {"comments only", "# links { id: \"L\" }\n\n# tables { id: \"T\" }\n",
       "the floor has no link (is the file empty, or only comments?)"},
      {"links only",
       "links { id: \"L\" levels { level: 1 name: \"Royal\" seed: \"1000.00\" "
       "meter_rate_ppm: 10000 } }\n",
       "the floor has no table"},
  };
  for (const Refusal& refusal : refusals) {
    SCOPED_TRACE(refusal.name);
    const TempFile floor(refusal.text);
    DaemonProcess daemon(args(database, floor.path()));
    EXPECT_EQ(daemon.wait_for_exit(30s), 1) << daemon.stderr_text();
    const std::string errors = daemon.stderr_text();
    EXPECT_NE(errors.find(floor.path() + ": " + refusal.message), std::string::npos) << errors;
    EXPECT_NE(errors.find("the floor would serve nothing; not starting"), std::string::npos)
        << errors;
  }
  char directory[] = "/tmp/jackpotd-floor-dir.XXXXXX";
  ASSERT_NE(mkdtemp(directory), nullptr);
  DaemonProcess daemon(args(database, directory));
  EXPECT_EQ(daemon.wait_for_exit(30s), 1) << daemon.stderr_text();
  EXPECT_NE(daemon.stderr_text().find("the floor file " + std::string(directory) +
                                      " is not a regular file; not starting"),
            std::string::npos)
      << daemon.stderr_text();
  rmdir(directory);
  // None of them got as far as the database: it is not even migrated.
  EXPECT_EQ(count(database, "SELECT count(*) FROM pg_tables WHERE tablename = 'audit_log'"), 0);
}

TEST(FloorAtStart, AStartThatFailsToServeLeavesNoRecordOfItsFloor) {
  TestDatabase database;
  const TempFile floor(kFloor);
  HeldPort taken;
  DaemonProcess daemon(args(database, floor.path(), taken.address()));
  EXPECT_EQ(daemon.wait_for_exit(60s), 1) << daemon.stderr_text();
  EXPECT_NE(daemon.stderr_text().find("cannot serve gRPC on " + taken.address()), std::string::npos)
      << daemon.stderr_text();
  // Before, the floor's version and a daemon.floor event were on record although it never
  // served; the next start would have judged live rounds against that floor.
  EXPECT_EQ(count(database, "SELECT count(*) FROM floor_versions"), 0);
  EXPECT_EQ(start_records(database), 0);
  // What it does leave (README, docs/architecture.md §7b): the link it opened, with its seed
  // transfer, and the start's balance snapshot, all before the server started.
  EXPECT_EQ(count(database, "SELECT count(*) FROM links WHERE link_id = 'start-link'"), 1);
  const int seeded = count(database, "SELECT count(*) FROM transfers");
  EXPECT_GE(seeded, 1);
  EXPECT_EQ(count(database,
                  "SELECT count(DISTINCT link_id) FROM balance_snapshots WHERE reason = 'start'"),
            1);

  taken.release();
  DaemonProcess served(args(database, floor.path()));
  ASSERT_TRUE(served.read_stdout_line(30s)) << served.stderr_text();
  served.send_signal(SIGTERM);
  EXPECT_EQ(served.wait_for_exit(20s), 0) << served.stderr_text();
  EXPECT_EQ(count(database, "SELECT count(*) FROM floor_versions"), 1);
  EXPECT_EQ(count(database,
                  "SELECT count(*) FROM audit_log WHERE action = 'daemon.start' AND "
                  "detail->>'floor_version' = '1'"),
            1);
  // The next start keeps the link as stored: not opened or seeded again.
  EXPECT_EQ(count(database, "SELECT count(*) FROM links"), 1);
  EXPECT_EQ(count(database, "SELECT count(*) FROM transfers"), seeded);
}

TEST(FloorAtStart, NothingIsServedBeforeTheStartIsOnRecordAndAFailedRecordLeavesNone) {
  TestDatabase database;
  const TempFile floor(kFloor);
  {  // A first start migrates the database and records floor version 1.
    DaemonProcess first(args(database, floor.path()));
    ASSERT_TRUE(first.read_stdout_line(30s)) << first.stderr_text();
    first.send_signal(SIGTERM);
    ASSERT_EQ(first.wait_for_exit(20s), 0) << first.stderr_text();
  }
  // The next start, with an edited floor, cannot write its start record: the audit trail is
  // locked for longer than the daemon waits for a lock.
  const TempFile edited(std::string(kFloor) + "# edited\n");
  auto locker = database.connect();
  pqxx::work lock(*locker);
  lock.exec("LOCK TABLE audit_log IN EXCLUSIVE MODE");
  HeldPort port;
  const std::string address = port.address();
  port.release();
  auto arguments = args(database, edited.path(), address);
  // The checks below must all run before the daemon gives up on the lock: 20 s leaves a loaded
  // machine room.
  arguments.insert(arguments.end(), {"--commit-timeout-ms", "20000"});
  DaemonProcess daemon(arguments);
  // Reconnect at once: the window between the server's start and the failed record is seconds.
  grpc::ChannelArguments channel_args;
  channel_args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
  channel_args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 50);
  channel_args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 100);
  auto admin = pb::AdminService::NewStub(channel_as(address, "admin/e2e", channel_args));
  auto table = pb::TableService::NewStub(channel_as(address, "table/T1", channel_args));
  // Once the server answers, every call is UNAVAILABLE until the start is on record.
  grpc::Status config_status;
  pb::GetConfigResponse config;
  for (int attempt = 0; attempt < 100; ++attempt) {
    grpc::ClientContext context;
    context.set_wait_for_ready(true);
    context.set_deadline(std::chrono::system_clock::now() + 300ms);
    config_status = admin->GetConfig(&context, {}, &config);
    if (config_status.error_message().find("starting") != std::string::npos) break;
    std::this_thread::sleep_for(30ms);
  }
  EXPECT_EQ(config_status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(config_status.error_message(),
            "jackpotd is starting: its start is not on record yet; retry");
  grpc::ClientContext open_context;
  pb::OpenRoundRequest open;
  open.set_table_id("T1");
  open.set_round_id(1);
  pb::OpenRoundResponse opened;
  const grpc::Status open_status = table->OpenRound(&open_context, open, &opened);
  EXPECT_EQ(open_status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(open_status.error_message(), config_status.error_message());
  // Every method of every service, by its descriptor (so a method added later is tried too),
  // with a request that parses: UNAVAILABLE "jackpotd is starting" (before, AdjustMeter answered
  // UNIMPLEMENTED: the gate was copied into each method and it had none).
  ASSERT_NE(pb::ApprovePayoutRequest::descriptor(), nullptr);  // Links supervisor.proto's pool.
  int methods = 0;
  // Each service as the role that may call it, so that the call reaches the service.
  for (const auto& [name, principal] : std::vector<std::pair<std::string, std::string>>{
           {"jackpot.v1.TableService", "table/T1"},
           {"jackpot.v1.AdminService", "admin/e2e"},
           {"jackpot.v1.SupervisorService", "supervisor/e2e"}}) {
    grpc::GenericStub stub(channel_as(address, principal, channel_args));
    const auto* service =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
    ASSERT_NE(service, nullptr) << name;
    std::vector<grpc::Status> answers;
    for (int m = 0; m < service->method_count(); ++m) {
      answers.push_back(
          empty_call(stub, "/" + service->full_name() + "/" + service->method(m)->name()));
    }
    // A service the daemon does not register (SupervisorService, until it has an RPC) answers
    // UNIMPLEMENTED for every method; a registered one must refuse every method.
    const bool registered = std::any_of(answers.begin(), answers.end(), [](const auto& status) {
      return status.error_code() != grpc::StatusCode::UNIMPLEMENTED;
    });
    EXPECT_TRUE(registered || service->name() == "SupervisorService") << name;
    if (!registered) continue;
    for (int m = 0; m < service->method_count(); ++m) {
      SCOPED_TRACE(service->method(m)->full_name());
      EXPECT_EQ(answers[static_cast<std::size_t>(m)].error_code(), grpc::StatusCode::UNAVAILABLE);
      EXPECT_EQ(answers[static_cast<std::size_t>(m)].error_message(),
                config_status.error_message());
      ++methods;
    }
  }
  EXPECT_GE(methods, 12);

  EXPECT_EQ(daemon.wait_for_exit(60s), 1) << daemon.stderr_text();
  EXPECT_NE(daemon.stderr_text().find("cannot record the start in the audit trail"),
            std::string::npos)
      << daemon.stderr_text();
  lock.abort();
  // The edited floor never served: neither it nor a start naming it is on record.
  EXPECT_EQ(count(database, "SELECT count(*) FROM floor_versions"), 1);
  EXPECT_EQ(count(database, "SELECT count(*) FROM audit_log WHERE action = 'daemon.start'"), 1);
  EXPECT_EQ(count(database, "SELECT count(*) FROM rounds"), 0);
}

}  // namespace
}  // namespace jackpot
