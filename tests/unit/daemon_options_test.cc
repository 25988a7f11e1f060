#include "controller/daemon/daemon_options.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace jackpot {
namespace {

DaemonOptions parse_ok(const std::vector<std::string>& args) {
  auto parsed = parse_daemon_options(args);
  if (auto* error = std::get_if<OptionsError>(&parsed)) {
    ADD_FAILURE() << "unexpected error: " << error->message;
    return {};
  }
  return std::get<DaemonOptions>(parsed);
}

std::string parse_error(const std::vector<std::string>& args) {
  auto parsed = parse_daemon_options(args);
  if (auto* error = std::get_if<OptionsError>(&parsed)) return error->message;
  ADD_FAILURE() << "expected an error";
  return {};
}

// A config file in the temp directory, removed at the end of the test.
class ConfigFile {
 public:
  explicit ConfigFile(const std::string& text) {
    char name[] = "/tmp/jackpotd-options-test.XXXXXX";
    const int fd = mkstemp(name);
    path_ = name;
    close(fd);
    std::ofstream(path_) << text;
  }
  ~ConfigFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(DaemonOptions, DefaultsNeedOnlyTheDatabase) {
  const auto options = parse_ok({"--db", "dbname=jackpotd"});
  EXPECT_EQ(options.database_dsn, "dbname=jackpotd");
  EXPECT_EQ(options.listen_address, "127.0.0.1:50051");
  EXPECT_EQ(options.metrics_address, "127.0.0.1:9464");
  EXPECT_EQ(options.shutdown_grace, std::chrono::milliseconds(5000));
  EXPECT_EQ(options.commit_timeout, std::chrono::milliseconds(10000));
}

TEST(DaemonOptions, AcceptsSpaceAndEqualsForms) {
  const auto options =
      parse_ok({"--db=host=/tmp dbname=x", "--listen", "0.0.0.0:0", "--metrics=[::1]:9000",
                "--shutdown-grace-ms=250", "--commit-timeout-ms", "2500"});
  EXPECT_EQ(options.database_dsn, "host=/tmp dbname=x");
  EXPECT_EQ(options.listen_address, "0.0.0.0:0");
  EXPECT_EQ(options.metrics_address, "[::1]:9000");
  EXPECT_EQ(options.shutdown_grace, std::chrono::milliseconds(250));
  EXPECT_EQ(options.commit_timeout, std::chrono::milliseconds(2500));
}

TEST(DaemonOptions, SnapshotIntervalIsSecondsAndZeroTurnsItOff) {
  EXPECT_EQ(parse_ok({"--db", "dbname=y"}).snapshot_interval, std::chrono::seconds(60));
  EXPECT_EQ(parse_ok({"--db", "dbname=y", "--snapshot-interval-s", "0"}).snapshot_interval,
            std::chrono::seconds(0));
  EXPECT_EQ(parse_ok({"--db", "dbname=y", "--snapshot-interval-s=900"}).snapshot_interval,
            std::chrono::seconds(900));
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--snapshot-interval-s", "-1"}),
            "--snapshot-interval-s: expected seconds between 0 and 86400, got '-1'");
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--snapshot-interval-s", "86401"}),
            "--snapshot-interval-s: expected seconds between 0 and 86400, got '86401'");
}

TEST(DaemonOptions, TheDatabaseTrustAndTimeoutFlags) {
  const auto defaults = parse_ok({"--db", "dbname=y"});
  EXPECT_EQ(defaults.query_timeout, std::chrono::milliseconds(60000));
  EXPECT_EQ(defaults.state_file, "");
  EXPECT_EQ(defaults.accept_database_batch, std::nullopt);
  const auto options = parse_ok({"--db", "dbname=y", "--query-timeout-ms", "1500", "--state-file",
                                 "/var/lib/jackpotd/state", "--accept-database-batch=42"});
  EXPECT_EQ(options.query_timeout, std::chrono::milliseconds(1500));
  EXPECT_EQ(options.state_file, "/var/lib/jackpotd/state");
  EXPECT_EQ(options.accept_database_batch, 42U);
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--accept-database-batch", "-1"}),
            "--accept-database-batch: expected a batch number (the database's last, as the "
            "refusal names it), got '-1'");
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--query-timeout-ms", "5"}),
            "--query-timeout-ms: expected milliseconds between 100 and 600000, got '5'");
}

TEST(DaemonOptions, TheLivenessFlags) {
  const auto defaults = parse_ok({"--db", "dbname=y"});
  EXPECT_EQ(defaults.probe_interval, std::chrono::milliseconds(1000));
  EXPECT_EQ(defaults.commit_late, std::chrono::milliseconds(1500));
  EXPECT_EQ(defaults.read_timeout, std::chrono::milliseconds(2000));
  const auto options = parse_ok({"--db", "dbname=y", "--probe-interval-ms", "0",
                                 "--commit-late-ms=300", "--read-timeout-ms", "250"});
  EXPECT_EQ(options.probe_interval, std::chrono::milliseconds(0));
  EXPECT_EQ(options.commit_late, std::chrono::milliseconds(300));
  EXPECT_EQ(options.read_timeout, std::chrono::milliseconds(250));
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--commit-late-ms", "0"}),
            "--commit-late-ms: expected milliseconds between 100 and 600000, got '0'");
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--read-timeout-ms", "fast"}),
            "--read-timeout-ms: expected milliseconds between 100 and 600000, got 'fast'");
}

TEST(DaemonOptions, TheStreamAndThreadFlags) {
  const auto defaults = parse_ok({"--db", "dbname=y"});
  EXPECT_EQ(defaults.streams_max, 4096U);
  EXPECT_EQ(defaults.streams_per_peer_max, 64U);
  EXPECT_EQ(defaults.grpc_threads_max, 64);
  EXPECT_EQ(defaults.keepalive, std::chrono::milliseconds(30000));
  EXPECT_FALSE(defaults.reflection);
  const auto options =
      parse_ok({"--db", "dbname=y", "--streams-max", "10", "--streams-per-peer-max=2",
                "--grpc-threads-max", "8", "--keepalive-ms", "5000", "--reflection", "on"});
  EXPECT_EQ(options.streams_max, 10U);
  EXPECT_EQ(options.streams_per_peer_max, 2U);
  EXPECT_EQ(options.grpc_threads_max, 8);
  EXPECT_EQ(options.keepalive, std::chrono::milliseconds(5000));
  EXPECT_TRUE(options.reflection);
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--streams-max", "0"}),
            "--streams-max: expected a number between 1 and 1000000, got '0'");
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--grpc-threads-max", "2"}),
            "--grpc-threads-max: expected a number between 4 and 4096, got '2'");
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--reflection", "yes"}),
            "--reflection: expected 'on' or 'off', got 'yes'");
}

TEST(DaemonOptions, TheSignFlags) {
  const auto defaults = parse_ok({"--db", "dbname=y"});
  EXPECT_EQ(defaults.sign_updates_per_second, 4);
  EXPECT_EQ(defaults.sign_hit_shown, std::chrono::seconds(60));
  EXPECT_EQ(defaults.sign_streams_max, 10000U);
  EXPECT_EQ(defaults.sign_streams_per_peer_max, 1000U);
  const auto options =
      parse_ok({"--db", "dbname=y", "--sign-updates-per-second", "10", "--sign-hit-seconds=5",
                "--sign-streams-max", "20000", "--sign-streams-per-peer-max", "12000"});
  EXPECT_EQ(options.sign_updates_per_second, 10);
  EXPECT_EQ(options.sign_hit_shown, std::chrono::seconds(5));
  EXPECT_EQ(options.sign_streams_max, 20000U);
  EXPECT_EQ(options.sign_streams_per_peer_max, 12000U);
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--sign-updates-per-second", "0"}),
            "--sign-updates-per-second: expected a number between 1 and 50, got '0'");
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--sign-hit-seconds", "3601"}),
            "--sign-hit-seconds: expected a number between 1 and 3600, got '3601'");
}

TEST(DaemonOptions, MetricsCanBeTurnedOff) {
  EXPECT_EQ(parse_ok({"--db", "dbname=y", "--metrics", "off"}).metrics_address, "off");
}

TEST(DaemonOptions, HelpAndVersionDoNotNeedTheDatabase) {
  EXPECT_TRUE(parse_ok({"--help"}).show_help);
  EXPECT_TRUE(parse_ok({"--version"}).show_version);
  EXPECT_NE(daemon_usage().find("--shutdown-grace-ms"), std::string::npos);
  // Every line fits a terminal.
  std::istringstream lines(daemon_usage());
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), 100U) << line;
    // An option's name and value stand apart from its help, which starts at column 29 (a name too
    // long for the column stands alone, "  --name VALUE", its help on the next line).
    if (line.rfind("  --", 0) != 0) continue;
    const bool name_alone = std::count(line.begin() + 2, line.end(), ' ') == 1;
    if (!name_alone) {
      ASSERT_GT(line.size(), 29U) << line;
      EXPECT_EQ(line.substr(27, 2), "  ") << line;
    }
  }
  EXPECT_NE(daemon_usage().find("  --audit-anchor-interval-s N\n" + std::string(29, ' ') + "how"),
            std::string::npos);
}

TEST(DaemonOptions, RefusesBadFlags) {
  EXPECT_EQ(parse_error({}), "--db is required: a PostgreSQL connection string (see --help)");
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--frobnicate"}),
            "unknown flag --frobnicate (see --help)");
  EXPECT_EQ(parse_error({"--db"}), "--db needs a value (DSN)");
  EXPECT_EQ(parse_error({"--db", "dbname=y", "stray"}), "unexpected argument 'stray' (see --help)");
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--listen", "localhost"}),
            "--listen: expected host:port, got 'localhost'");
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--listen", "localhost:65536"}),
            "--listen: expected host:port, got 'localhost:65536'");
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--listen", ":80"}),
            "--listen: expected host:port, got ':80'");
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--metrics", "on"}),
            "--metrics: expected host:port or 'off', got 'on'");
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--shutdown-grace-ms", "-1"}),
            "--shutdown-grace-ms: expected milliseconds between 0 and 600000, got '-1'");
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--shutdown-grace-ms", "10s"}),
            "--shutdown-grace-ms: expected milliseconds between 0 and 600000, got '10s'");
}

TEST(DaemonOptions, ReadsConfigFileAndFlagsOverrideIt) {
  const ConfigFile config(
      "# jackpotd example\n"
      "\n"
      "db = host=/run/postgresql dbname=jackpotd   # the ledger\n"
      "listen = 0.0.0.0:6000\n"
      "metrics=off\n");
  const auto from_file = parse_ok({"--config", config.path()});
  EXPECT_EQ(from_file.database_dsn, "host=/run/postgresql dbname=jackpotd");
  EXPECT_EQ(from_file.listen_address, "0.0.0.0:6000");
  EXPECT_EQ(from_file.metrics_address, "off");

  // The flag wins although it stands before --config.
  const auto overridden = parse_ok({"--listen", "127.0.0.1:7000", "--config=" + config.path()});
  EXPECT_EQ(overridden.listen_address, "127.0.0.1:7000");
  EXPECT_EQ(overridden.database_dsn, "host=/run/postgresql dbname=jackpotd");
}

TEST(DaemonOptions, ConfigErrorsNameFileAndLine) {
  const ConfigFile unknown("db = dbname=y\n\nlisen = 1.2.3.4:5\n");
  EXPECT_EQ(parse_error({"--config", unknown.path()}),
            unknown.path() + ":3: unknown option 'lisen'");
  const ConfigFile malformed("# ok\nlisten 1.2.3.4:5\n");
  EXPECT_EQ(parse_error({"--config", malformed.path()}),
            malformed.path() + ":2: expected 'name = value', got 'listen 1.2.3.4:5'");
  const ConfigFile bad_value("metrics = nowhere\n");
  EXPECT_EQ(parse_error({"--config", bad_value.path()}),
            bad_value.path() + ":1: metrics: expected host:port or 'off', got 'nowhere'");
  EXPECT_EQ(parse_error({"--config", "/nonexistent/jackpotd.conf"}),
            "cannot read config file /nonexistent/jackpotd.conf");
  EXPECT_EQ(parse_error({"--config"}), "--config needs a value (a file)");
}

// The database password never on the command line, where the process list shows it; in a
// config file only if only its owner can read it (as libpq treats a password file).
TEST(DaemonOptions, ADatabasePasswordStaysOffTheCommandLine) {
  const std::string refused =
      "--db: the connection string holds a password, which any user of the machine can read "
      "from the process list: put it in a --config file only jackpotd's user can read, in "
      "PGPASSFILE or ~/.pgpass, or in PGPASSWORD";
  EXPECT_EQ(parse_error({"--db", "host=/run/postgresql dbname=j password=secret"}), refused);
  EXPECT_EQ(parse_error({"--db=postgresql://jackpotd:secret@db.lan/jackpotd"}), refused);
  EXPECT_EQ(parse_ok({"--db", "postgresql://jackpotd@db.lan/jackpotd"}).database_dsn,
            "postgresql://jackpotd@db.lan/jackpotd");
  EXPECT_EQ(parse_ok({"--db", "host=/run/postgresql password="}).database_dsn,
            "host=/run/postgresql password=");  // Empty: no password given.

  const ConfigFile config("db = host=db.lan dbname=jackpotd password=secret\n");  // Mode 600.
  EXPECT_EQ(parse_ok({"--config", config.path()}).database_dsn,
            "host=db.lan dbname=jackpotd password=secret");
  ASSERT_EQ(::chmod(config.path().c_str(), 0644), 0);
  EXPECT_EQ(parse_error({"--config", config.path()}),
            "config file " + config.path() +
                " holds the database password but other users may read it: chmod 600 " +
                config.path() + " (or, owned by root with jackpotd's group, chmod 640)");
  // Each file is judged by what it holds: a readable file that also sets another db is refused,
  // a readable one beside the private one that holds the password is not.
  const ConfigFile overridden("db = host=db.lan password=x\ndb = host=other\n");
  ASSERT_EQ(::chmod(overridden.path().c_str(), 0644), 0);
  EXPECT_NE(parse_error({"--config", overridden.path()}).find("other users may read it"),
            std::string::npos);
  const ConfigFile secret("db = host=db.lan password=x\n");  // Mode 600.
  const ConfigFile listen("listen = 127.0.0.1:7000\n");
  ASSERT_EQ(::chmod(listen.path().c_str(), 0644), 0);
  EXPECT_EQ(parse_ok({"--config", secret.path(), "--config=" + listen.path()}).listen_address,
            "127.0.0.1:7000");
  // Other spellings libpq reads as secrets.
  EXPECT_EQ(parse_error({"--db", "postgresql://u@db.lan/j?password=s%65cret"}), refused);
  EXPECT_EQ(parse_error({"--db", "host=db.lan sslpassword=secret"}), refused);
  // A string libpq cannot parse is refused without being repeated (its error would quote it).
  for (const std::string dsn : {"postgresql://u:se%zzcret@h/db", "host=x password=my secret"}) {
    const std::string error = parse_error({"--db", dsn});
    EXPECT_EQ(error,
              "--db: libpq cannot parse the connection string (not repeated here: it may hold a "
              "password)")
        << dsn;
  }
  // Nor is an unquoted connection string the shell split.
  const std::string split = parse_error({"--db", "host=x", "password=secret"});
  EXPECT_EQ(split.find("secret"), std::string::npos) << split;

  const ConfigFile no_password("db = host=db.lan dbname=jackpotd\n");
  ASSERT_EQ(::chmod(no_password.path().c_str(), 0644), 0);
  EXPECT_EQ(parse_ok({"--config", no_password.path()}).database_dsn, "host=db.lan dbname=jackpotd");
}

}  // namespace
}  // namespace jackpot

namespace jackpot {
namespace {

// Plaintext only where gRPC's local credentials serve: 127.0.0.1, ::1 and localhost.
TEST(DaemonOptions, PlaintextIsForTheLoopbackAddressOnly) {
  const std::vector<std::pair<std::string, bool>> cases = {
      {"127.0.0.1:50051", true},    {"localhost:0", true},
      {"[::1]:50051", true},        {"127.0.0.2:50051", false},
      {"0.0.0.0:50051", false},     {"[::]:50051", false},
      {"10.0.0.5:50051", false},    {"[::ffff:127.0.0.1]:1", false},
      {"jackpot.lan:50051", false}, {"unix:/tmp/x:1", false},
      {"127.0.0.1", false},         {"[::1:50051", false},
  };
  for (const auto& [address, loopback] : cases) {
    EXPECT_EQ(is_loopback_address(address), loopback) << address;
  }
}

// Mutual TLS needs all three files; plaintext excludes them and needs the loopback address;
// without either jackpotd does not start.
TEST(DaemonOptions, ATransportMustBeChosen) {
  const auto problem = [](const std::vector<std::string>& args) {
    std::vector<std::string> all = {"--db", "dbname=y"};
    all.insert(all.end(), args.begin(), args.end());
    return transport_problem(parse_ok(all)).value_or("");
  };
  const std::string tls =
      "jackpotd serves mutual TLS: give --tls-cert, --tls-key and "
      "--tls-client-ca (ops/pki makes them), or --plaintext on for development "
      "on a loopback address";
  EXPECT_EQ(problem({}), tls);
  EXPECT_EQ(problem({"--tls-cert", "c.pem", "--tls-key", "k.pem"}), tls);
  EXPECT_EQ(problem({"--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-client-ca", "ca.pem"}),
            "jackpotd serves mutual TLS to the supervisors and admins a roster names: give "
            "--roster FILE (one principal a line, e.g. supervisor/ann, admin/ops-1)");
  EXPECT_EQ(problem({"--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-client-ca", "ca.pem",
                     "--roster", "roster"}),
            "");
  EXPECT_EQ(problem({"--plaintext", "on"}), "");
  EXPECT_EQ(problem({"--plaintext", "on", "--roster", "roster"}), "");
  EXPECT_EQ(problem({"--plaintext", "on", "--tls-client-ca", "ca.pem"}),
            "--plaintext on and TLS files: give one or the other");
  EXPECT_EQ(
      problem({"--plaintext", "on", "--listen", "0.0.0.0:50051"})
          .rfind("--plaintext on is for development on this machine only: --listen 0.0.0.0:50051 "
                 "is not a loopback address",
                 0),
      0U);
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--plaintext", "yes"}),
            "--plaintext: expected 'on' or 'off', got 'yes'");
  EXPECT_EQ(parse_error({"--db", "dbname=y", "--tls-cert", ""}),
            "--tls-cert: expected a file name, got nothing");
}

}  // namespace
// docs/operations.md's layout (owner root, group jackpotd, mode 640) is accepted, as
// PostgreSQL accepts its key file; any other owner keeps the file to itself (#32).
TEST(DaemonOptions, APasswordFileIsPrivateAsPostgresqlJudgesAKeyFile) {
  struct Case {
    std::uint32_t uid;
    std::uint32_t gid;  // jackpotd's own group is 999.
    std::uint32_t mode;
    bool accepted;
  };
  for (const Case& c :
       {Case{0, 999, 0600, true}, Case{0, 999, 0400, true}, Case{0, 999, 0640, true},
        Case{0, 999, 0440, true}, Case{0, 100, 0640, false},  // root:users 640: others read it.
        Case{0, 0, 0600, true}, Case{0, 999, 0660, false}, Case{0, 999, 0650, false},
        Case{0, 999, 0644, false}, Case{0, 999, 0604, false}, Case{1000, 999, 0600, true},
        Case{1000, 999, 0400, true}, Case{1000, 999, 0640, false}, Case{1000, 999, 0604, false}}) {
    EXPECT_EQ(password_file_private(c.uid, c.gid, c.mode, 999), c.accepted)
        << "uid " << c.uid << " gid " << c.gid << " mode " << std::oct << c.mode;
  }
}

}  // namespace jackpot
