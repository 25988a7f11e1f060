// The real jackpotd binary over real gRPC against the throwaway PostgreSQL: it starts, serves
// health, reflection and metrics, stops cleanly on SIGTERM and SIGINT, and refuses to start, with
// a clear message, when it cannot do its job.
#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <pqxx/pqxx>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "storage/migrations.h"
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

struct ServingAddresses {
  std::string grpc;
  int metrics_port = 0;
};

// Waits for the daemon's "serving" line and reads the addresses it bound.
std::optional<ServingAddresses> wait_until_serving(DaemonProcess& daemon) {
  const auto line = daemon.read_stdout_line(30s);
  if (!line) {
    ADD_FAILURE() << "jackpotd printed no serving line; stderr:\n" << daemon.stderr_text();
    return std::nullopt;
  }
  static const std::regex pattern(
      R"(^jackpotd \S+: serving gRPC on (127\.0\.0\.1:[0-9]+), metrics on )"
      R"(http://127\.0\.0\.1:([0-9]+)/metrics, signs off$)");
  std::smatch match;
  if (!std::regex_match(*line, match, pattern)) {
    ADD_FAILURE() << "unexpected serving line: " << *line;
    return std::nullopt;
  }
  return ServingAddresses{match[1], std::stoi(match[2])};
}

std::vector<std::string> local_args(const std::string& dsn) {
  return {"--db", dsn, "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"};
}

grpc::health::v1::HealthCheckResponse::ServingStatus check_health(const std::string& address) {
  auto stub = grpc::health::v1::Health::NewStub(channel_as(address, "sign/e2e"));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 30s);
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status = stub->Check(&context, {}, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response.status();
}

std::vector<std::string> list_services(const std::string& address) {
  auto stub =
      grpc::reflection::v1alpha::ServerReflection::NewStub(channel_as(address, "admin/e2e"));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 30s);
  auto stream = stub->ServerReflectionInfo(&context);
  grpc::reflection::v1alpha::ServerReflectionRequest request;
  request.set_list_services("*");
  EXPECT_TRUE(stream->Write(request));
  grpc::reflection::v1alpha::ServerReflectionResponse response;
  EXPECT_TRUE(stream->Read(&response));
  stream->WritesDone();
  const grpc::Status status = stream->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  std::vector<std::string> names;
  for (const auto& service : response.list_services_response().service()) {
    names.push_back(service.name());
  }
  return names;
}

std::vector<std::string> audit_actions(const TestDatabase& database) {
  auto connection = database.connect();
  pqxx::read_transaction tx(*connection);
  std::vector<std::string> actions;
  for (const auto& row : tx.exec("SELECT action FROM audit_log ORDER BY id")) {
    actions.push_back(row[0].as<std::string>());
  }
  return actions;
}

TEST(Daemon, ServesHealthReflectionAndMetricsThenStopsCleanlyOnSigterm) {
  TestDatabase database;
  auto args = local_args(database.dsn());
  args.insert(args.end(), {"--reflection", "on"});  // Off by default (streams_e2etest.cc).
  DaemonProcess daemon(args);
  const auto serving = wait_until_serving(daemon);
  ASSERT_TRUE(serving);

  EXPECT_EQ(check_health(serving->grpc), grpc::health::v1::HealthCheckResponse::SERVING);
  const auto services = list_services(serving->grpc);
  EXPECT_NE(std::find(services.begin(), services.end(), "grpc.health.v1.Health"), services.end());
  EXPECT_NE(std::find(services.begin(), services.end(), "grpc.reflection.v1alpha.ServerReflection"),
            services.end());
  const std::string metrics = http_get(serving->metrics_port, "/metrics");
  EXPECT_NE(metrics.find("200 OK"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("jackpotd_build_info{version=\""), std::string::npos) << metrics;
  const std::string schema_version =
      "jackpotd_schema_version " + std::to_string(storage::embedded_migrations().size());
  EXPECT_NE(metrics.find(schema_version), std::string::npos) << metrics;

  daemon.send_signal(SIGTERM);
  EXPECT_EQ(daemon.wait_for_exit(20s), 0) << daemon.stderr_text();
  EXPECT_NE(daemon.stderr_text().find("received SIGTERM, stopping"), std::string::npos);
  EXPECT_EQ(audit_actions(database), (std::vector<std::string>{"daemon.start", "daemon.stop"}));
}

TEST(Daemon, StopsCleanlyOnSigintAndRestartsOnTheMigratedDatabase) {
  TestDatabase database;
  for (int run = 0; run < 2; ++run) {
    DaemonProcess daemon(local_args(database.dsn()));
    ASSERT_TRUE(wait_until_serving(daemon));
    daemon.send_signal(SIGINT);
    EXPECT_EQ(daemon.wait_for_exit(20s), 0) << daemon.stderr_text();
    const std::size_t applied = run == 0 ? storage::embedded_migrations().size() : 0;
    const std::string expected_applied =
        "(" + std::to_string(applied) + " migration(s) applied now)";
    EXPECT_NE(daemon.stderr_text().find(expected_applied), std::string::npos)
        << daemon.stderr_text();
  }
  EXPECT_EQ(audit_actions(database).size(), 4u);
}

TEST(Daemon, RefusesToStartWhenTheDatabaseIsUnreachable) {
  // The password in a config file only its owner reads (mkstemp makes it so): never on the
  // command line.
  struct PrivateFile {
    std::string path = (std::filesystem::temp_directory_path() / "jackpotd-e2e-XXXXXX").string();
    explicit PrivateFile(const std::string& text) {
      const int fd = ::mkstemp(path.data());  // Mode 600.
      if (fd >= 0) {
        const auto written = ::write(fd, text.data(), text.size());
        ::close(fd);
        if (written == static_cast<ssize_t>(text.size())) return;
      }
      throw std::runtime_error("cannot write a temporary config file");
    }
    ~PrivateFile() { std::remove(path.c_str()); }
  } config("db = host=/nonexistent-socket-dir dbname=x password=hunter2\n");
  DaemonProcess daemon({"--config", config.path, "--listen", "127.0.0.1:0", "--metrics", "off"});
  EXPECT_EQ(daemon.wait_for_exit(30s), 1);
  const std::string errors = daemon.stderr_text();
  EXPECT_NE(errors.find("cannot connect to PostgreSQL ("), std::string::npos) << errors;
  EXPECT_NE(errors.find("host=/nonexistent-socket-dir"), std::string::npos) << errors;
  EXPECT_NE(errors.find("No such file or directory Is the server running"), std::string::npos)
      << errors;
  EXPECT_NE(errors.find("not starting"), std::string::npos) << errors;
  EXPECT_EQ(errors.find("hunter2"), std::string::npos) << errors;
}

// --log-format json: every line of the log an object with the time, a level and the message;
// the DSN's password (from the config file) is not in it either.
TEST(Daemon, LogsJsonLinesWithALevelWhenAsked) {
  std::string config = "/tmp/jackpotd-json-config.XXXXXX";
  const int fd = ::mkstemp(config.data());
  ASSERT_GE(fd, 0);
  const std::string text = "db = host=/nonexistent-socket-dir dbname=x password=hunter2\n";
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fd);
  DaemonProcess daemon(
      {"--config", config, "--listen", "127.0.0.1:0", "--metrics", "off", "--log-format", "json"});
  EXPECT_EQ(daemon.wait_for_exit(30s), 1);
  std::remove(config.c_str());
  EXPECT_EQ(daemon.stderr_text().find("hunter2"), std::string::npos) << daemon.stderr_text();
  std::istringstream errors(daemon.stderr_text());
  const std::regex object(
      R"re(^\{"time":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{15}Z","level":"(info|warning|error)","message":".*"\}$)re");
  int lines = 0;
  bool refused = false;
  for (std::string line; std::getline(errors, line); ++lines) {
    EXPECT_TRUE(std::regex_match(line, object)) << line;
    refused |= line.find(R"("level":"error","message":"cannot connect to PostgreSQL)") !=
               std::string::npos;
  }
  EXPECT_GT(lines, 0);
  EXPECT_TRUE(refused) << daemon.stderr_text();
}

// With --log-format json the "serving" line on stdout is a JSON line too (the journal gets
// stdout and stderr), its fields the addresses; every stderr line of a start and stop is JSON.
TEST(Daemon, TheServingLineIsJsonWhenTheLogIs) {
  TestDatabase database;
  auto args = local_args(database.dsn());
  args.insert(args.end(), {"--log-format", "json"});
  DaemonProcess daemon(args);
  const auto line = daemon.read_stdout_line(30s);
  ASSERT_TRUE(line) << daemon.stderr_text();
  const std::regex serving(
      R"re(^\{"time":"[0-9-]{10}T[0-9:.]{15}Z","level":"info","message":"jackpotd \S+: serving )re"
      R"re(gRPC on (127\.0\.0\.1:[0-9]+), metrics on (http://127\.0\.0\.1:[0-9]+/metrics), )re"
      R"re(signs off","version":"\S+","grpc":"([^"]+)","metrics":"([^"]+)","signs":"off"\}$)re");
  std::smatch match;
  ASSERT_TRUE(std::regex_match(*line, match, serving)) << *line;
  EXPECT_EQ(match[1], match[3]);
  EXPECT_EQ(match[2], match[4]);
  EXPECT_EQ(check_health(match[3]), grpc::health::v1::HealthCheckResponse::SERVING);
  daemon.send_signal(SIGTERM);
  EXPECT_EQ(daemon.wait_for_exit(20s), 0) << daemon.stderr_text();
  std::istringstream errors(daemon.stderr_text());
  int lines = 0;
  for (std::string text; std::getline(errors, text); ++lines) {
    EXPECT_TRUE(text.starts_with("{\"time\":\"") && text.ends_with("}")) << text;
  }
  EXPECT_GT(lines, 3);
}

TEST(Daemon, RefusesADatabasePasswordOnTheCommandLine) {
  DaemonProcess daemon({"--db", "host=/nonexistent-socket-dir dbname=x password=hunter2",
                        "--listen", "127.0.0.1:0", "--metrics", "off"});
  EXPECT_EQ(daemon.wait_for_exit(30s), 2);
  const std::string errors = daemon.stderr_text();
  EXPECT_NE(errors.find("--db: the connection string holds a password"), std::string::npos)
      << errors;
  EXPECT_EQ(errors.find("hunter2"), std::string::npos) << errors;
}

TEST(Daemon, RefusesToStartWhenAMigrationFails) {
  TestDatabase database;
  {
    auto connection = database.connect();
    pqxx::work tx(*connection);
    tx.exec("CREATE TABLE audit_log (something_else integer)");
    tx.commit();
  }
  DaemonProcess daemon(local_args(database.dsn()));
  EXPECT_EQ(daemon.wait_for_exit(30s), 1);
  const std::string errors = daemon.stderr_text();
  EXPECT_NE(errors.find("schema migration failed: migration 0001_audit_log.sql failed"),
            std::string::npos)
      << errors;
}

TEST(Daemon, RefusesToShareItsPortWithAnotherDaemon) {
  TestDatabase database;
  DaemonProcess first(local_args(database.dsn()));
  const auto serving = wait_until_serving(first);
  ASSERT_TRUE(serving);

  DaemonProcess second({"--db", database.dsn(), "--listen", serving->grpc, "--metrics", "off"});
  EXPECT_EQ(second.wait_for_exit(30s), 1);
  EXPECT_NE(second.stderr_text().find("cannot serve gRPC on " + serving->grpc), std::string::npos)
      << second.stderr_text();
  EXPECT_EQ(check_health(serving->grpc), grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST(Daemon, RejectsBadFlagsWithAUsageError) {
  DaemonProcess daemon({"--db", "dbname=x", "--listen", "nowhere"});
  EXPECT_EQ(daemon.wait_for_exit(10s), 2);
  EXPECT_NE(daemon.stderr_text().find("--listen: expected host:port, got 'nowhere'"),
            std::string::npos);
}

}  // namespace
}  // namespace jackpot
