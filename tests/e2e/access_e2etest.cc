// Who may do what, over real mutual TLS with certificates from ops/pki: every role against every
// RPC, a table acting for another, certificates that are expired, from another CA or missing,
// plaintext development mode and where it is refused, and a certificate rotation on SIGHUP.
// Every refusal changes nothing and is counted.
#include <arpa/inet.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>
#include <pqxx/pqxx>
#include <regex>
#include <sstream>
#include <thread>

#include "controller/api/access_rules.h"
#include "jackpot/v1/admin.grpc.pb.h"
#include "jackpot/v1/sign.grpc.pb.h"
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
using testing::http_get;
using testing::TestDatabase;
using testing::TestPki;
namespace pb = ::jackpot::v1;
namespace fs = std::filesystem;

constexpr const char* kFloor = R"(
links { id: "acc-link" levels { level: 1 name: "Royal Flush" seed: "1000.00" meter_rate_ppm: 150000 } }
tables { id: "T1" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "acc-link" paytable_id: "PT-BJS-HUH-5CP-01" } }
tables { id: "T2" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "acc-link" paytable_id: "PT-BJS-HUH-5CP-01" } }
)";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A unary call of any method with the bytes given (a server-streaming method's first message
// ends the call, or its deadline does).
grpc::Status call_bytes(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                        const std::string& bytes,
                        std::chrono::milliseconds deadline = std::chrono::milliseconds(10000)) {
  grpc::GenericStub stub(channel);
  grpc::Slice slice(bytes);
  const grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(std::move(status)); });
  return done.get_future().get();
}

// The request of `method` with every field a principal's id goes in ("table_id", "sign_id") set
// to `id`, serialized; nothing else set.
std::string request_naming(const google::protobuf::MethodDescriptor& method,
                           const std::string& id) {
  google::protobuf::DynamicMessageFactory factory;
  std::unique_ptr<google::protobuf::Message> request(
      factory.GetPrototype(method.input_type())->New());
  for (const char* name : {"table_id", "sign_id"}) {
    if (const auto* field = method.input_type()->FindFieldByName(name)) {
      request->GetReflection()->SetString(request.get(), field, id);
    }
  }
  return request->SerializeAsString();
}

// A running jackpotd on its own database with the access floor.
class AccessEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/jackpotd-access-floor.XXXXXX";
    close(mkstemp(name));
    floor_ = name;
    std::ofstream(floor_) << kFloor;
  }
  void TearDown() override {
    if (daemon_) {
      daemon_->send_signal(SIGTERM);
      EXPECT_EQ(daemon_->wait_for_exit(20s), 0) << daemon_->stderr_text();
    }
    unlink(floor_.c_str());
  }

  // Starts jackpotd with `transport` (its TLS or plaintext flags).
  void start(const std::vector<std::string>& transport) {
    std::vector<std::string> args = {"--db",      database_.dsn(), "--listen", "127.0.0.1:0",
                                     "--metrics", "127.0.0.1:0",   "--floor",  floor_};
    args.insert(args.end(), transport.begin(), transport.end());
    daemon_ = std::make_unique<DaemonProcess>(args);
    const auto line = daemon_->read_stdout_line(30s);
    ASSERT_TRUE(line) << daemon_->stderr_text();
    std::smatch match;
    ASSERT_TRUE(std::regex_search(
        *line, match,
        std::regex("serving gRPC on (\\S+), metrics on http://127.0.0.1:([0-9]+)/metrics")))
        << *line;
    address_ = match[1];
    metrics_port_ = std::stoi(match[2]);
  }

  // The meters and every row the daemon writes for rounds, adjustments and link changes: what
  // a refused call must leave as it was.
  std::string state() {
    auto admin = pb::AdminService::NewStub(channel_as(address_, "admin/ops"));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    pb::ListMetersResponse meters;
    EXPECT_TRUE(admin->ListMeters(&context, {}, &meters).ok());
    auto db = database_.connect();
    pqxx::read_transaction tx(*db);
    std::string rows;
    for (const char* table : {"rounds", "round_events", "transfers", "meter_adjustments",
                              "link_status_events", "round_counter_rebases"}) {
      rows += std::string(table) + "=" +
              tx.exec1("SELECT count(*) FROM " + std::string(table))[0].as<std::string>() + " ";
    }
    return meters.SerializeAsString() + rows;
  }

  // The refusal counter for `reason` on the metrics endpoint.
  long refusals(AccessRefusal reason) {
    const std::string metrics = http_get(metrics_port_, "/metrics");
    const std::string name =
        "jackpotd_authorization_refusals_total{reason=\"" + std::string(to_string(reason)) + "\"} ";
    const auto at = metrics.find(name);
    if (at == std::string::npos) return -1;
    return std::stol(metrics.substr(at + name.size()));
  }

  TestDatabase database_;
  std::string floor_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::string address_;
  int metrics_port_ = 0;
};

// Every role against every RPC jackpotd serves: a role the table does not allow is
// PERMISSION_DENIED before any handler runs, whatever the request; an allowed one reaches the
// handler (whose answer to a request with nothing set is its own business). Nothing changes,
// and each refusal is counted.
TEST_F(AccessEndToEnd, EveryRoleAgainstEveryRpc) {
  ASSERT_NO_FATAL_FAILURE(start(TestPki::site().daemon_args()));
  const std::string before = state();
  const std::vector<Principal> principals = {{Role::table, "T1"},
                                             {Role::sign, "lobby"},
                                             {Role::supervisor, "alice"},
                                             {Role::admin, "ops"}};
  const long denied_before = refusals(AccessRefusal::role_not_allowed);
  long denied = 0;
  int pairs = 0;
  for (const Principal& principal : principals) {
    const auto channel = channel_as(address_, to_string(principal));
    for (const RpcAccess& access : rpc_access_table()) {
      const std::string method(access.method);
      const auto slash = method.rfind('/');
      const auto* service = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          method.substr(1, slash - 1));
      std::string bytes;
      bool streams = false;
      if (service != nullptr) {  // grpc.health and reflection: an empty request.
        const auto* descriptor = service->FindMethodByName(method.substr(slash + 1));
        ASSERT_NE(descriptor, nullptr) << method;
        bytes = request_naming(*descriptor, principal.id);
        streams = descriptor->server_streaming();
      } else {
        streams = method.find("Watch") != std::string::npos ||
                  method.find("Reflection") != std::string::npos;
      }
      const bool allowed = (access.roles & role_bit(principal.role)) != 0;
      // An allowed stream runs until its deadline; a refusal must come before a long one.
      const grpc::Status status = call_bytes(
          channel, method, bytes, streams && allowed ? std::chrono::milliseconds(1500) : 10000ms);
      ++pairs;
      if (allowed) {
        EXPECT_NE(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << to_string(principal) << " " << method << ": " << status.error_message();
        EXPECT_NE(status.error_code(), grpc::StatusCode::UNAUTHENTICATED)
            << to_string(principal) << " " << method << ": " << status.error_message();
      } else {
        ++denied;
        EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << to_string(principal) << " " << method;
        EXPECT_EQ(status.error_message(),
                  "role_not_allowed: '" + to_string(principal) + "' may not call '" + method + "'")
            << to_string(principal) << " " << method;
      }
    }
  }
  EXPECT_EQ(pairs, 4 * static_cast<int>(rpc_access_table().size()));
  EXPECT_GT(denied, 40);
  EXPECT_EQ(refusals(AccessRefusal::role_not_allowed) - denied_before, denied);
  // An RPC no role may call, and one that does not exist.
  const grpc::Status unknown =
      call_bytes(channel_as(address_, "admin/ops"), "/jackpot.v1.AdminService/DropEverything", "");
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(unknown.error_message(),
            "unknown_method: no principal may call '/jackpot.v1.AdminService/DropEverything'");
  EXPECT_EQ(refusals(AccessRefusal::unknown_method), 1);
  EXPECT_EQ(state(), before);
}

// A supervisor or admin whose certificate the site CA issued but whom the roster does not name is
// refused before any handler runs, on every method; the roster in force is on the audit trail.
TEST_F(AccessEndToEnd, ASupervisorOrAdminNotOnTheRosterIsRefused) {
  ASSERT_NO_FATAL_FAILURE(start(TestPki::site().daemon_args()));
  const std::string before = state();
  for (const char* principal : {"supervisor/mallory", "admin/mallory"}) {
    const auto channel = channel_as(address_, principal);
    for (const char* method :
         {"/jackpot.v1.SupervisorService/ApprovePayout", "/jackpot.v1.SupervisorService/VoidRound",
          "/jackpot.v1.AdminService/ListMeters", "/jackpot.v1.AdminService/AdjustMeter"}) {
      const grpc::Status status = call_bytes(channel, method, "", 10000ms);
      EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << principal << method;
      EXPECT_EQ(status.error_message().rfind(std::string("not_on_roster: '") + principal + "'", 0),
                0U)
          << status.error_message();
    }
  }
  EXPECT_EQ(refusals(AccessRefusal::not_on_roster), 8);
  EXPECT_EQ(state(), before);  // As admin/ops, who is on the roster.
  auto db = database_.connect();
  pqxx::read_transaction tx(*db);
  const auto start = tx.exec1(
      "SELECT detail->>'roster', detail->>'roster_sha256' FROM audit_log "
      "WHERE action = 'daemon.start' ORDER BY seq DESC LIMIT 1");
  EXPECT_NE(start[0].as<std::string>().find("supervisor/alice"), std::string::npos);
  EXPECT_EQ(start[1].as<std::string>().size(), 64U);
}

// A roster that names no one it may, or that others may write, stops the start, naming why;
// mutual TLS without one is a usage error.
TEST_F(AccessEndToEnd, ARosterThatCannotBeTrustedStopsTheStart) {
  const fs::path dir = fs::path(TestPki::site().dir()) / "rosters";
  fs::create_directories(dir);
  struct Case {
    std::string what;
    std::string text;
    fs::perms mode;
    std::string message;
  };
  const fs::perms owner = fs::perms::owner_read | fs::perms::owner_write;
  const std::vector<Case> cases = {
      {"group-writable", "supervisor/alice\n", owner | fs::perms::group_write,
       "may be written by its group or by everyone (mode 620)"},
      {"empty", "# nobody yet\n", owner, "the roster names no supervisor or admin"},
      {"a table", "supervisor/alice\ntable/T1\n", owner,
       "roster line 2: 'table/T1': only supervisors and admins"},
      {"twice", "supervisor/alice\nsupervisor/ALICE\n", owner,
       "'supervisor/ALICE' is on the roster already"},
  };
  std::vector<std::string> tls = TestPki::site().daemon_args();
  tls.resize(tls.size() - 2);  // Without its --roster.
  for (const Case& c : cases) {
    const fs::path file = dir / "roster";
    std::ofstream(file) << c.text;
    fs::permissions(file, c.mode);
    std::vector<std::string> args = {"--db",      database_.dsn(), "--listen", "127.0.0.1:0",
                                     "--metrics", "off",           "--floor",  floor_,
                                     "--roster",  file.string()};
    args.insert(args.end(), tls.begin(), tls.end());
    DaemonProcess daemon(args);
    EXPECT_EQ(daemon.wait_for_exit(20s), 1) << c.what;
    EXPECT_NE(daemon.stderr_text().find(c.message), std::string::npos)
        << c.what << ": " << daemon.stderr_text();
  }
  std::vector<std::string> args = {"--db",      database_.dsn(), "--listen", "127.0.0.1:0",
                                   "--metrics", "off",           "--floor",  floor_};
  args.insert(args.end(), tls.begin(), tls.end());
  DaemonProcess without(args);
  EXPECT_EQ(without.wait_for_exit(20s), 2);
  EXPECT_NE(without.stderr_text().find("give --roster FILE"), std::string::npos)
      << without.stderr_text();
}

// A stolen certificate is withdrawn (#33 item 2): ops/pki revoke lists it, SIGHUP reads the list
// again, the open stream of a revoked supervisor ends, and every call with a revoked certificate
// is UNAUTHENTICATED certificate_revoked, whatever its role; others go on.
TEST_F(AccessEndToEnd, ARevokedCertificateIsRefusedAndItsStreamsEndOnSighup) {
  const std::string list = TestPki::site().dir() + "/revoked";
  std::ofstream(list) << "# nothing revoked yet\n";
  std::vector<std::string> args = TestPki::site().daemon_args();
  args.insert(args.end(), {"--revoked", list});
  ASSERT_NO_FATAL_FAILURE(start(args));
  const std::string before = state();
  // The channels are made (their certificates read) before the revocation moves the files.
  const auto table = channel_as(address_, "table/T1");
  const auto admin = channel_as(address_, "admin/e2e");
  const auto supervisor = pb::SupervisorService::NewStub(channel_as(address_, "supervisor/dave"));
  const auto other_table = channel_as(address_, "table/T2");
  grpc::ClientContext watching;
  watching.set_deadline(std::chrono::system_clock::now() + 120s);
  auto stream = supervisor->WatchPendingPayouts(&watching, {});
  stream->WaitForInitialMetadata();
  EXPECT_EQ(watching.GetServerInitialMetadata().count("jackpot-watch"), 1U);
  // And a table's link status stream (WatchLinkStatus), its first update read.
  auto table_stub = pb::TableService::NewStub(table);
  grpc::ClientContext table_watching;
  table_watching.set_deadline(std::chrono::system_clock::now() + 120s);
  pb::WatchLinkStatusRequest watch;
  watch.set_table_id("T1");
  auto links = table_stub->WatchLinkStatus(&table_watching, watch);
  pb::LinkStatusUpdate update;
  ASSERT_TRUE(links->Read(&update));
  EXPECT_TRUE(call_bytes(admin, "/jackpot.v1.AdminService/ListMeters", "", 10000ms).ok());

  for (const char* principal : {"supervisor dave", "admin e2e", "table T1"}) {
    const std::string command = std::string(JACKPOTD_SOURCE_DIR) + "/ops/pki revoke " +
                                TestPki::site().dir() + " " + principal + " >/dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  const long revoked_before = refusals(AccessRefusal::certificate_revoked);
  daemon_->send_signal(SIGHUP);
  // The stream ends (its end is the event waited for, with a generous deadline).
  pb::PayoutEvent event;
  while (stream->Read(&event)) {
  }
  const grpc::Status ended = stream->Finish();
  EXPECT_FALSE(ended.ok());
  EXPECT_NE(ended.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << ended.error_message();
  while (links->Read(&update)) {
  }
  const grpc::Status links_ended = links->Finish();
  EXPECT_FALSE(links_ended.ok());
  EXPECT_NE(links_ended.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << links_ended.error_message();
  // The daemon says so once the list is in force (the line comes after the streams' end).
  const std::string said = "2 open streams of revoked certificates ended";
  for (int i = 0; i < 600 && daemon_->stderr_text().find(said) == std::string::npos; ++i) {
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_NE(daemon_->stderr_text().find(said), std::string::npos) << daemon_->stderr_text();

  for (const auto& [channel, method] :
       std::vector<std::pair<std::shared_ptr<grpc::Channel>, std::string>>{
           {admin, "/jackpot.v1.AdminService/ListMeters"},
           {table, "/jackpot.v1.TableService/OpenRound"}}) {
    const grpc::Status refused = call_bytes(channel, method, "", 10000ms);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAUTHENTICATED) << method;
    EXPECT_EQ(refused.error_message().rfind("certificate_revoked: ", 0), 0U)
        << refused.error_message();
  }
  EXPECT_EQ(refusals(AccessRefusal::certificate_revoked) - revoked_before, 2);
  // A certificate not on the list goes on (authenticated: its empty request names no table).
  EXPECT_EQ(call_bytes(other_table, "/jackpot.v1.TableService/OpenRound", "", 10000ms).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(state(), before);  // As admin/ops, not revoked.
}

// Anyone who can connect makes gRPC write a line per failed TLS handshake: those lines go through
// jackpotd's log, at most one per 10 s from each place (#33: 23,122 lines in 5 s were seen).
TEST_F(AccessEndToEnd, FailedHandshakesDoNotFloodTheLog) {
  ASSERT_NO_FATAL_FAILURE(start(TestPki::site().daemon_args()));
  const auto colon = address_.rfind(':');
  const int port = std::stoi(address_.substr(colon + 1));
  const auto junk_connection = [port] {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<std::uint16_t>(port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0) {
      const char junk[] = "GET / HTTP/1.0\r\n\r\nnot a TLS client hello at all";
      (void)!::write(fd, junk, sizeof junk);
    }
    ::close(fd);
  };
  const auto handshake_lines = [&] {
    const std::string text = daemon_->stderr_text();
    std::size_t lines = 0;
    for (auto at = text.find("grpc: "); at != std::string::npos; at = text.find("grpc: ", at + 1)) {
      ++lines;
    }
    return lines;
  };
  junk_connection();
  for (int i = 0; i < 300 && handshake_lines() == 0; ++i) {
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_GT(handshake_lines(), 0U) << daemon_->stderr_text();
  // In jackpotd's own format: its time, then "jackpotd: error: grpc: ...".
  EXPECT_TRUE(std::regex_search(daemon_->stderr_text(),
                                std::regex("\\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z jackpotd: "
                                           "(error: )?grpc: ")))
      << daemon_->stderr_text();
  const std::size_t first = handshake_lines();
  for (int i = 0; i < 200; ++i) junk_connection();
  // The port still serves: the junk was read and refused meanwhile.
  EXPECT_TRUE(call_bytes(channel_as(address_, "admin/ops"), "/jackpot.v1.AdminService/ListMeters",
                         "", 10000ms)
                  .ok());
  EXPECT_LE(handshake_lines(), first + 4) << daemon_->stderr_text();
}

// A connection that never finishes its TLS handshake (someone holding descriptors open) is closed
// after 10 s (#33), not gRPC's default 120 s.
TEST_F(AccessEndToEnd, AConnectionThatNeverHandshakesIsClosed) {
  ASSERT_NO_FATAL_FAILURE(start(TestPki::site().daemon_args()));
  const int port = std::stoi(address_.substr(address_.rfind(':') + 1));
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to), 0);
  // Nothing is sent; the read returns when the server closes the connection (0, or a reset). A
  // receive timeout of 60 s bounds the wait: well past 10 s on a busy machine, well below 120 s.
  timeval limit{60, 0};
  ASSERT_EQ(::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit), 0);
  const auto started = std::chrono::steady_clock::now();
  char byte = 0;
  const ssize_t got = ::read(fd, &byte, 1);
  const int error = errno;
  const auto waited = std::chrono::steady_clock::now() - started;
  ::close(fd);
  EXPECT_TRUE(got == 0 || (got < 0 && error == ECONNRESET))
      << "the connection was not closed within 60 s (read " << got << ", errno " << error << ")";
  EXPECT_LT(waited, 60s);
}

// A table's certificate acts for its own table only: another table's round or link status
// stream is PERMISSION_DENIED and changes nothing; the other table then plays its own round.
TEST_F(AccessEndToEnd, ATableActsOnlyForItself) {
  ASSERT_NO_FATAL_FAILURE(start(TestPki::site().daemon_args()));
  const std::string before = state();
  auto t1 = pb::TableService::NewStub(channel_as(address_, "table/T1"));
  pb::OpenRoundRequest open;
  open.set_table_id("T2");
  open.set_round_id(1);
  pb::OpenRoundResponse opened;
  grpc::ClientContext context;
  const grpc::Status status = t1->OpenRound(&context, open, &opened);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(status.error_message(),
            "acts_for_another: 'table/T1' may act only for its own table, not for 'T2'");

  pb::VoidRoundRequest void_request;
  void_request.set_table_id("T2");
  void_request.set_round_id(1);
  void_request.set_reason("misdeal");
  pb::VoidRoundResponse voided;
  grpc::ClientContext void_context;
  EXPECT_EQ(t1->VoidRound(&void_context, void_request, &voided).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  grpc::ClientContext watch_context;
  watch_context.set_deadline(std::chrono::system_clock::now() + 10s);
  pb::WatchLinkStatusRequest watch;
  watch.set_table_id("T2");
  auto stream = t1->WatchLinkStatus(&watch_context, watch);
  pb::LinkStatusUpdate update;
  EXPECT_FALSE(stream->Read(&update));
  const grpc::Status watched = stream->Finish();
  EXPECT_EQ(watched.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(watched.error_message(),
            "acts_for_another: 'table/T1' may act only for its own table, not for 'T2'");
  EXPECT_EQ(refusals(AccessRefusal::acts_for_another), 3);
  EXPECT_EQ(state(), before);

  auto t2 = pb::TableService::NewStub(channel_as(address_, "table/T2"));
  grpc::ClientContext own_context;
  EXPECT_TRUE(t2->OpenRound(&own_context, open, &opened).ok());
}

// No certificate, another CA's, an expired one: UNAUTHENTICATED with why, counted, and nothing
// changed; the TLS handshake itself accepts them, so the caller hears the reason.
TEST_F(AccessEndToEnd, CallersWithoutAGoodCertificateAreUnauthenticated) {
  ASSERT_NO_FATAL_FAILURE(start(TestPki::site().daemon_args()));
  const std::string before = state();
  const std::string site_ca = read(TestPki::site().dir() + "/ca.pem");
  const auto credentials = [&](TestPki& pki, const std::string& principal, bool expired) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = site_ca;  // The server's certificate is the site's.
    if (!principal.empty()) {
      options.pem_cert_chain = read(pki.certificate_file(principal, expired));
      options.pem_private_key = read(pki.key_file(principal, expired));
    }
    return grpc::SslCredentials(options);
  };
  struct Case {
    std::string what;
    std::shared_ptr<grpc::ChannelCredentials> credentials;
    std::string message;  // A part of it.
    AccessRefusal reason;
  };
  const std::vector<Case> cases = {
      {"none", credentials(TestPki::site(), "", false), "no client certificate",
       AccessRefusal::no_certificate},
      {"another CA's", credentials(TestPki::other(), "admin/ops", false),
       "client certificate refused: unable to get local issuer certificate",
       AccessRefusal::certificate_untrusted},
      {"expired", credentials(TestPki::site(), "admin/old", true),
       "client certificate refused: certificate has expired", AccessRefusal::certificate_untrusted},
  };
  for (const Case& c : cases) {
    const long counted = refusals(c.reason);
    auto admin = pb::AdminService::NewStub(grpc::CreateChannel(address_, c.credentials));
    pb::SetLinkStatusRequest close;
    close.set_link_id("acc-link");
    close.set_status(pb::LINK_STATUS_CLOSED);
    close.set_reason("not allowed");
    pb::SetLinkStatusResponse closed;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    const grpc::Status status = admin->SetLinkStatus(&context, close, &closed);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << c.what;
    EXPECT_NE(status.error_message().find(c.message), std::string::npos)
        << c.what << ": " << status.error_message();
    EXPECT_EQ(refusals(c.reason), counted + 1) << c.what;
  }
  // A plaintext client does not get through the TLS port at all.
  auto plain =
      pb::AdminService::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 10s);
  pb::ListMetersResponse meters;
  EXPECT_EQ(plain->ListMeters(&context, {}, &meters).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(state(), before);
}

// Plaintext is for development on this machine: refused on any other address and without an
// explicit choice; where allowed it is loud, visible in the metrics, and the same rules apply to
// the principal a caller names.
TEST_F(AccessEndToEnd, PlaintextOnlyOnLoopbackLoudAndStillAuthorised) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"--listen", "0.0.0.0:0", "--plaintext", "on"},
       "--plaintext on is for development on this machine only: --listen 0.0.0.0:0 is not a "
       "loopback address"},
      {{"--listen", "127.0.0.1:0", "--plaintext", "off"},
       "jackpotd serves mutual TLS: give --tls-cert, --tls-key and --tls-client-ca"},
  };
  for (const auto& [transport, message] : refused) {
    std::vector<std::string> args = {"--db", database_.dsn(), "--metrics",
                                     "off",  "--floor",       floor_};
    args.insert(args.end(), transport.begin(), transport.end());
    DaemonProcess daemon(args);
    EXPECT_EQ(daemon.wait_for_exit(10s), 2) << message;
    EXPECT_NE(daemon.stderr_text().find(message), std::string::npos) << daemon.stderr_text();
  }
  ASSERT_NO_FATAL_FAILURE(start({"--plaintext", "on"}));
  EXPECT_NE(daemon_->stderr_text().find("WARNING: --plaintext on"), std::string::npos);
  const std::string metrics = http_get(metrics_port_, "/metrics");
  EXPECT_NE(metrics.find("\njackpotd_plaintext 1"), std::string::npos) << metrics;

  const auto channel = grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
  auto table = pb::TableService::NewStub(channel);
  const auto open = [&](const std::string& named, const std::string& table_id) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    if (!named.empty()) context.AddMetadata("jackpot-principal", named);
    pb::OpenRoundRequest request;
    request.set_table_id(table_id);
    request.set_round_id(1);
    pb::OpenRoundResponse response;
    return table->OpenRound(&context, request, &response);
  };
  const grpc::Status unnamed = open("", "T1");
  EXPECT_EQ(unnamed.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(unnamed.error_message().find("name the caller in the jackpot-principal metadata"),
            std::string::npos)
      << unnamed.error_message();
  EXPECT_EQ(open("table/T1", "T2").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(open("admin/ops", "T1").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(open("table/T1", "T1").error_code(), grpc::StatusCode::OK);

  // What the daemon records names the principal the caller gave.
  auto admin = pb::AdminService::NewStub(channel);
  grpc::ClientContext context;
  context.AddMetadata("jackpot-principal", "admin/dev");
  pb::SetLinkStatusRequest close;
  close.set_link_id("acc-link");
  close.set_status(pb::LINK_STATUS_CLOSED);
  close.set_reason("dev");
  pb::SetLinkStatusResponse closed;
  ASSERT_TRUE(admin->SetLinkStatus(&context, close, &closed).ok());
  auto db = database_.connect();
  pqxx::read_transaction tx(*db);
  EXPECT_EQ(tx.exec1("SELECT changed_by FROM link_status_events")[0].as<std::string>(),
            "admin/dev");
  EXPECT_EQ(tx.exec1("SELECT detail->>'transport' FROM audit_log WHERE action = 'daemon.start'")[0]
                .as<std::string>(),
            "plaintext");
}

// SIGHUP re-reads the certificate, key and client CA: new connections get the new server
// certificate, every call after it is checked against the new CA (also on connections opened
// before), and files that cannot be used leave the ones in force.
TEST_F(AccessEndToEnd, SighupRotatesTheCertificatesWithoutARestart) {
  const fs::path dir = fs::path(TestPki::site().dir()) / "rotation";
  fs::create_directories(dir);
  const auto install = [&](TestPki& pki) {
    for (const char* file : {"server.pem", "server.key", "ca.pem"}) {
      fs::copy_file(fs::path(pki.dir()) / file, dir / file, fs::copy_options::overwrite_existing);
    }
  };
  install(TestPki::site());
  ASSERT_NO_FATAL_FAILURE(start(
      {"--tls-cert", (dir / "server.pem").string(), "--tls-key", (dir / "server.key").string(),
       "--tls-client-ca", (dir / "ca.pem").string(), "--roster", TestPki::site().roster_file()}));
  // Clients that trust both sites' CAs for the server, each presenting one site's certificate.
  const std::string both =
      read(TestPki::site().dir() + "/ca.pem") + read(TestPki::other().dir() + "/ca.pem");
  const auto admin_of = [&](TestPki& pki) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = both;
    options.pem_cert_chain = read(pki.certificate_file("admin/ops"));
    options.pem_private_key = read(pki.key_file("admin/ops"));
    return pb::AdminService::NewStub(grpc::CreateChannel(address_, grpc::SslCredentials(options)));
  };
  const auto list = [](pb::AdminService::Stub& stub) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    pb::ListMetersResponse meters;
    return stub.ListMeters(&context, {}, &meters);
  };
  auto site_admin = admin_of(TestPki::site());
  ASSERT_TRUE(list(*site_admin).ok());

  install(TestPki::other());
  daemon_->send_signal(SIGHUP);
  for (int i = 0; i < 600 && daemon_->stderr_text().find("received SIGHUP: read the TLS files "
                                                         "again") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_NE(daemon_->stderr_text().find("received SIGHUP: read the TLS files again"),
            std::string::npos);
  // The connection opened before: its certificate is no longer the CA's.
  const grpc::Status old_site = list(*site_admin);
  EXPECT_EQ(old_site.error_code(), grpc::StatusCode::UNAUTHENTICATED) << old_site.error_message();
  // A new connection sees the other site's server certificate and is served with its client
  // certificate.
  auto other_admin = admin_of(TestPki::other());
  const grpc::Status other_site = list(*other_admin);
  EXPECT_TRUE(other_site.ok()) << other_site.error_message();
  {
    grpc::SslCredentialsOptions options;  // Trusting only the first site's CA for the server.
    options.pem_root_certs = read(TestPki::site().dir() + "/ca.pem");
    options.pem_cert_chain = read(TestPki::other().certificate_file("admin/ops"));
    options.pem_private_key = read(TestPki::other().key_file("admin/ops"));
    auto stale =
        pb::AdminService::NewStub(grpc::CreateChannel(address_, grpc::SslCredentials(options)));
    EXPECT_EQ(list(*stale).error_code(), grpc::StatusCode::UNAVAILABLE);
  }

  // A key that does not go with the certificate: refused, the files in force stay.
  std::ofstream(dir / "server.key") << read(TestPki::site().dir() + "/server.key");
  daemon_->send_signal(SIGHUP);
  for (int i = 0;
       i < 600 && daemon_->stderr_text().find("the files in force stay") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_NE(daemon_->stderr_text().find("is not the key of"), std::string::npos)
      << daemon_->stderr_text();
  const std::string metrics = http_get(metrics_port_, "/metrics");
  EXPECT_NE(metrics.find("jackpotd_tls_reloads_total{result=\"ok\"} 1"), std::string::npos);
  EXPECT_NE(metrics.find("jackpotd_tls_reloads_total{result=\"failed\"} 1"), std::string::npos);
  auto another = admin_of(TestPki::other());
  EXPECT_TRUE(list(*another).ok());
}

}  // namespace
}  // namespace jackpot
