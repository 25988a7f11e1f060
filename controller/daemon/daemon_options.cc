#include "controller/daemon/daemon_options.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>

#include "storage/connection.h"

namespace jackpot {
namespace {

// An error message, or nothing when the value was accepted.
using SetResult = std::optional<std::string>;

bool is_host_port(std::string_view value) {
  const auto colon = value.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == value.size()) return false;
  const std::string_view port = value.substr(colon + 1);
  unsigned number = 0;
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
  return error == std::errc() && end == port.data() + port.size() && number <= 65535;
}

SetResult set_listen(DaemonOptions& options, const std::string& value) {
  if (!is_host_port(value)) return "expected host:port, got '" + value + "'";
  options.listen_address = value;
  return std::nullopt;
}

SetResult set_db(DaemonOptions& options, const std::string& value) {
  if (value.empty()) return std::string("expected a libpq connection string, got nothing");
  if (!storage::dsn_parses(value)) {
    return std::string(
        "libpq cannot parse the connection string (not repeated here: it may hold a password)");
  }
  options.database_dsn = value;
  return std::nullopt;
}

SetResult set_metrics(DaemonOptions& options, const std::string& value) {
  if (value != "off" && !is_host_port(value)) {
    return "expected host:port or 'off', got '" + value + "'";
  }
  options.metrics_address = value;
  return std::nullopt;
}

SetResult set_floor(DaemonOptions& options, const std::string& value) {
  if (value.empty()) return std::string("expected a file name, got nothing");
  options.floor_file = value;
  return std::nullopt;
}

// Milliseconds in [low, 600000].
SetResult set_milliseconds(std::chrono::milliseconds& into, long long low,
                           const std::string& value) {
  long long ms = -1;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), ms);
  if (error != std::errc() || end != value.data() + value.size() || ms < low || ms > 600000) {
    return "expected milliseconds between " + std::to_string(low) + " and 600000, got '" + value +
           "'";
  }
  into = std::chrono::milliseconds(ms);
  return std::nullopt;
}

SetResult set_shutdown_grace(DaemonOptions& options, const std::string& value) {
  return set_milliseconds(options.shutdown_grace, 0, value);
}

SetResult set_commit_timeout(DaemonOptions& options, const std::string& value) {
  return set_milliseconds(options.commit_timeout, 100, value);
}

// Seconds in [0, 86400]; 0 turns the interval off.
SetResult set_interval(std::chrono::seconds& interval, const std::string& value) {
  long long seconds = -1;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (error != std::errc() || end != value.data() + value.size() || seconds < 0 ||
      seconds > 86400) {
    return "expected seconds between 0 and 86400, got '" + value + "'";
  }
  interval = std::chrono::seconds(seconds);
  return std::nullopt;
}
SetResult set_snapshot_interval(DaemonOptions& options, const std::string& value) {
  return set_interval(options.snapshot_interval, value);
}
SetResult set_audit_anchor_interval(DaemonOptions& options, const std::string& value) {
  return set_interval(options.audit_anchor_interval, value);
}

SetResult set_query_timeout(DaemonOptions& options, const std::string& value) {
  return set_milliseconds(options.query_timeout, 100, value);
}

SetResult set_probe_interval(DaemonOptions& options, const std::string& value) {
  return set_milliseconds(options.probe_interval, 0, value);
}

SetResult set_commit_late(DaemonOptions& options, const std::string& value) {
  return set_milliseconds(options.commit_late, 100, value);
}

SetResult set_read_timeout(DaemonOptions& options, const std::string& value) {
  return set_milliseconds(options.read_timeout, 100, value);
}

// A count in [low, high].
std::optional<long long> count_in(const std::string& value, long long low, long long high) {
  long long number = -1;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (value.empty() || error != std::errc() || end != value.data() + value.size() || number < low ||
      number > high) {
    return std::nullopt;
  }
  return number;
}

std::string expected_count(long long low, long long high, const std::string& value) {
  return "expected a number between " + std::to_string(low) + " and " + std::to_string(high) +
         ", got '" + value + "'";
}

// A count in [low, high] into `field`.
template <typename Field>
SetResult set_count(Field& field, long long low, long long high, const std::string& value) {
  const auto count = count_in(value, low, high);
  if (!count) return expected_count(low, high, value);
  field = static_cast<Field>(*count);
  return std::nullopt;
}

SetResult set_streams_max(DaemonOptions& options, const std::string& value) {
  return set_count(options.streams_max, 1, 1'000'000, value);
}

SetResult set_streams_per_peer_max(DaemonOptions& options, const std::string& value) {
  return set_count(options.streams_per_peer_max, 1, 1'000'000, value);
}

SetResult set_sign_updates_per_second(DaemonOptions& options, const std::string& value) {
  return set_count(options.sign_updates_per_second, 1, 50, value);
}

SetResult set_sign_hit_seconds(DaemonOptions& options, const std::string& value) {
  std::int64_t seconds = 0;
  if (auto problem = set_count(seconds, 1, 3600, value)) return problem;
  options.sign_hit_shown = std::chrono::seconds(seconds);
  return std::nullopt;
}

SetResult set_sign_streams_max(DaemonOptions& options, const std::string& value) {
  return set_count(options.sign_streams_max, 1, 1'000'000, value);
}

SetResult set_sign_streams_per_peer_max(DaemonOptions& options, const std::string& value) {
  return set_count(options.sign_streams_per_peer_max, 1, 1'000'000, value);
}

SetResult set_sign_http(DaemonOptions& options, const std::string& value) {
  if (value != "off" && !is_host_port(value)) {
    return "expected host:port or 'off', got '" + value + "'";
  }
  options.sign_http_address = value;
  return std::nullopt;
}

SetResult set_sign_http_clients_max(DaemonOptions& options, const std::string& value) {
  return set_count(options.sign_http_clients_max, 1, 20'000, value);
}

SetResult set_sign_http_clients_per_peer_max(DaemonOptions& options, const std::string& value) {
  return set_count(options.sign_http_clients_per_peer_max, 1, 20'000, value);
}

SetResult set_grpc_threads_max(DaemonOptions& options, const std::string& value) {
  return set_count(options.grpc_threads_max, 4, 4096, value);
}

SetResult set_keepalive(DaemonOptions& options, const std::string& value) {
  return set_milliseconds(options.keepalive, 1000, value);
}

SetResult set_reflection(DaemonOptions& options, const std::string& value) {
  if (value != "on" && value != "off") return "expected 'on' or 'off', got '" + value + "'";
  options.reflection = value == "on";
  return std::nullopt;
}

SetResult set_log_format(DaemonOptions& options, const std::string& value) {
  if (value != "text" && value != "json") return "expected 'text' or 'json', got '" + value + "'";
  options.log_json = value == "json";
  return std::nullopt;
}

SetResult set_state_file(DaemonOptions& options, const std::string& value) {
  if (value.empty()) return std::string("expected a file name, got nothing");
  options.state_file = value;
  return std::nullopt;
}

SetResult set_accept_database_batch(DaemonOptions& options, const std::string& value) {
  std::uint64_t batch = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), batch);
  if (value.empty() || error != std::errc() || end != value.data() + value.size()) {
    return "expected a batch number (the database's last, as the refusal names it), got '" + value +
           "'";
  }
  options.accept_database_batch = batch;
  return std::nullopt;
}

SetResult set_file(std::string& into, const std::string& value) {
  if (value.empty()) return std::string("expected a file name, got nothing");
  into = value;
  return std::nullopt;
}

SetResult set_tls_certificate(DaemonOptions& options, const std::string& value) {
  return set_file(options.tls_certificate_file, value);
}

SetResult set_tls_key(DaemonOptions& options, const std::string& value) {
  return set_file(options.tls_key_file, value);
}

SetResult set_tls_client_ca(DaemonOptions& options, const std::string& value) {
  return set_file(options.tls_client_ca_file, value);
}

SetResult set_roster(DaemonOptions& options, const std::string& value) {
  return set_file(options.roster_file, value);
}

SetResult set_revoked(DaemonOptions& options, const std::string& value) {
  return set_file(options.revoked_file, value);
}

SetResult set_plaintext(DaemonOptions& options, const std::string& value) {
  if (value != "on" && value != "off") return "expected 'on' or 'off', got '" + value + "'";
  options.plaintext = value == "on";
  return std::nullopt;
}

struct Option {
  std::string_view name;
  std::string_view value_name;
  std::string_view help;
  SetResult (*set)(DaemonOptions&, const std::string&);
};

constexpr Option kOptions[] = {
    {"listen", "HOST:PORT", "gRPC listen address (default 127.0.0.1:50051; port 0 picks one)",
     set_listen},
    {"tls-cert", "FILE",
     "the server's TLS certificate (PEM, intermediates after it); with\n"
     "--tls-key and --tls-client-ca required unless --plaintext on; the\n"
     "three files are read again on SIGHUP",
     set_tls_certificate},
    {"tls-key", "FILE", "the certificate's private key (PEM, no passphrase)", set_tls_key},
    {"tls-client-ca", "FILE",
     "the site CA bundle (PEM) that issues client certificates; each\n"
     "names its principal in its common name: table/<id>, sign/<id>,\n"
     "supervisor/<name>, admin/<name> (ops/pki makes them)",
     set_tls_client_ca},
    {"roster", "FILE",
     "the supervisors and admins who may act, one principal a line\n"
     "(supervisor/<name>, admin/<name>; '#' comments): a certificate of\n"
     "the site CA for one it does not name is refused; required with\n"
     "mutual TLS; read at start, and on record in the daemon.start event",
     set_roster},
    {"revoked", "FILE",
     "certificates the site revoked, one 'key-sha256:<hex>' a line (ops/pki\n"
     "revoke writes it): refused UNAUTHENTICATED certificate_revoked; read\n"
     "again on SIGHUP, which also ends the open streams of those revoked",
     set_revoked},
    {"plaintext", "on|off",
     "development only: no TLS, on a loopback --listen address only;\n"
     "callers name their principal in the jackpot-principal metadata,\n"
     "unproven (default off)",
     set_plaintext},
    {"db", "DSN",
     "PostgreSQL connection string,\ne.g. 'host=/run/postgresql dbname=jackpotd'; a password "
     "is\nrefused here (the process list shows it): put it in a --config\nfile of mode 600, "
     "PGPASSFILE, ~/.pgpass or PGPASSWORD",
     set_db},
    {"metrics", "HOST:PORT|off", "Prometheus /metrics address (default 127.0.0.1:9464)",
     set_metrics},
    {"floor", "FILE", "links and tables to run (Protobuf text format, see ops/)", set_floor},
    {"shutdown-grace-ms", "N", "time in-flight calls get on SIGTERM (default 5000)",
     set_shutdown_grace},
    {"commit-timeout-ms", "N",
     "how long a commit's statement may run, and its answer take twice that,\n"
     "before the floor fails stop (default 10000)",
     set_commit_timeout},
    {"snapshot-interval-s", "N",
     "how often to record every link's balances, for reports and a quick\n"
     "recovery; 0: only at start, stop and on request (default 60)",
     set_snapshot_interval},
    {"audit-anchor-interval-s", "N",
     "how often to write the audit chain's head to the log when it moved, an\n"
     "anchor for 'jackpotctl audit verify --anchors-from'; 0: only at each\n"
     "stop (default 300)",
     set_audit_anchor_interval},
    {"query-timeout-ms", "N",
     "how long a statement of recovery or of a report may run, and its\n"
     "answer take twice that (default 60000)",
     set_query_timeout},
    {"probe-interval-ms", "N",
     "how often an idle daemon asks the database whether it answers, so that\n"
     "health and the link status stream turn within about that; 0: never\n"
     "(default 1000)",
     set_probe_interval},
    {"commit-late-ms", "N",
     "a commit or probe running longer makes health NOT_SERVING and links\n"
     "UNAVAILABLE until it ends (default 1500)",
     set_commit_late},
    {"read-timeout-ms", "N",
     "the longest a read (ListMeters) or a client's balance snapshot\n"
     "(TakeBalanceSnapshot, a report up to now) waits for its commit;\n"
     "UNAVAILABLE past it (default 2000)",
     set_read_timeout},
    {"streams-max", "N",
     "WatchLinkStatus streams held at once; RESOURCE_EXHAUSTED past it\n(default 4096)",
     set_streams_max},
    {"streams-per-peer-max", "N",
     "WatchLinkStatus streams one client host may hold; RESOURCE_EXHAUSTED\npast it (default 64)",
     set_streams_per_peer_max},
    {"sign-updates-per-second", "N",
     "at most this many sign snapshots a second, to every sign (1..50,\n"
     "default 4)",
     set_sign_updates_per_second},
    {"sign-hit-seconds", "N", "how long a hit stays on the signs (1..3600, default 60)",
     set_sign_hit_seconds},
    {"sign-streams-max", "N",
     "WatchMeters streams held at once; RESOURCE_EXHAUSTED past it\n(default 10000)",
     set_sign_streams_max},
    {"sign-streams-per-peer-max", "N",
     "WatchMeters streams one client host may hold; RESOURCE_EXHAUSTED past\nit (default 1000)",
     set_sign_streams_per_peer_max},
    {"sign-http", "HOST:PORT|off",
     "serve the web sign (/sign/) over plain HTTP: read-only, no secrets\n(default off)",
     set_sign_http},
    {"sign-http-clients-max", "N",
     "web sign pages live at once, each holding one thread; 503 past it\n(1..20000, default 256)",
     set_sign_http_clients_max},
    {"sign-http-clients-per-peer-max", "N",
     "web sign pages live at once from one client address; 503 past it\n(1..20000, default 32)",
     set_sign_http_clients_per_peer_max},
    {"grpc-threads-max", "N",
     "threads for the synchronous RPCs (admin, supervisor, health,\n"
     "reflection); a call with none free is RESOURCE_EXHAUSTED; the round\n"
     "commands and streams hold none (default 64)",
     set_grpc_threads_max},
    {"keepalive-ms", "N",
     "how often the server pings an idle connection, so that the streams of\n"
     "a client that vanished end (default 30000)",
     set_keepalive},
    {"reflection", "on|off", "serve gRPC server reflection (default off)", set_reflection},
    {"log-format", "text|json",
     "the log on stderr, a line per event with its level and ids: for a\n"
     "person (text, the default) or a collector (json: an object a line)",
     set_log_format},
    {"state-file", "FILE",
     "where to keep the last commit mark seen, so that a restart refuses a\n"
     "database that lost acknowledged batches (default: none)",
     set_state_file},
    {"accept-database-batch", "N",
     "start on a database behind the state file whose last batch is N:\n"
     "a deliberate restore from backup, recorded in the audit trail",
     set_accept_database_batch},
};

const Option* find_option(std::string_view name) {
  for (const Option& option : kOptions) {
    if (option.name == name) return &option;
  }
  return nullptr;
}

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return std::string(text.substr(first, last - first + 1));
}

// A flag split into its name (without dashes) and, for --name=value, its value.
struct Flag {
  std::string name;
  std::optional<std::string> inline_value;
};

std::optional<Flag> split_flag(const std::string& arg) {
  if (arg.rfind("--", 0) != 0 || arg.size() == 2) return std::nullopt;
  const auto equals = arg.find('=');
  if (equals == std::string::npos) return Flag{arg.substr(2), std::nullopt};
  return Flag{arg.substr(2, equals - 2), arg.substr(equals + 1)};
}

std::variant<std::string, OptionsError> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return OptionsError{"cannot read config file " + path};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::variant<DaemonOptions, OptionsError> parse_config_text(const std::string& text,
                                                            const std::string& origin,
                                                            DaemonOptions options,
                                                            bool* holds_password) {
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    const std::string content = trim(line.substr(0, line.find('#')));
    if (content.empty()) continue;
    const std::string where = origin + ":" + std::to_string(number) + ": ";
    const auto equals = content.find('=');
    if (equals == std::string::npos) {
      return OptionsError{where + "expected 'name = value', got '" + content + "'"};
    }
    const std::string name = trim(std::string_view(content).substr(0, equals));
    const std::string value = trim(std::string_view(content).substr(equals + 1));
    const Option* option = find_option(name);
    if (option == nullptr) return OptionsError{where + "unknown option '" + name + "'"};
    if (auto error = option->set(options, value)) {
      return OptionsError{where + name + ": " + *error};
    }
    if (holds_password != nullptr && name == "db" && storage::dsn_has_password(value)) {
      *holds_password = true;
    }
  }
  return options;
}

std::variant<DaemonOptions, OptionsError> parse_daemon_options(
    const std::vector<std::string>& args) {
  DaemonOptions options;
  // The config file is read first, wherever --config stands, so that flags override it.
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto flag = split_flag(args[i]);
    if (!flag || flag->name != "config") continue;
    std::string path;
    if (flag->inline_value) {
      path = *flag->inline_value;
    } else if (i + 1 < args.size()) {
      path = args[++i];
    } else {
      return OptionsError{"--config needs a value (a file)"};
    }
    auto text = read_file(path);
    if (auto* error = std::get_if<OptionsError>(&text)) return *error;
    bool holds_password = false;
    auto parsed = parse_config_text(std::get<std::string>(text), path, options, &holds_password);
    if (auto* error = std::get_if<OptionsError>(&parsed)) return *error;
    options = std::get<DaemonOptions>(parsed);
    struct stat file {};
    if (holds_password &&
        (::stat(path.c_str(), &file) != 0 ||
         !password_file_private(file.st_uid, file.st_gid, file.st_mode, ::getegid()))) {
      return OptionsError{"config file " + path +
                          " holds the database password but other users may read it: "
                          "chmod 600 " +
                          path + " (or, owned by root with jackpotd's group, chmod 640)"};
    }
  }

  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto flag = split_flag(args[i]);
    if (!flag) {
      // Not repeated when it may be part of a connection string split by the shell.
      if (args[i].find('=') != std::string::npos) {
        return OptionsError{
            "unexpected argument (not repeated: it may hold a password; quote a "
            "connection string as one argument) (see --help)"};
      }
      return OptionsError{"unexpected argument '" + args[i] + "' (see --help)"};
    }
    if (flag->name == "help") {
      options.show_help = true;
      continue;
    }
    if (flag->name == "version") {
      options.show_version = true;
      continue;
    }
    if (flag->name == "config") {
      if (!flag->inline_value) ++i;
      continue;
    }
    const Option* option = find_option(flag->name);
    if (option == nullptr) return OptionsError{"unknown flag --" + flag->name + " (see --help)"};
    std::string value;
    if (flag->inline_value) {
      value = *flag->inline_value;
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return OptionsError{"--" + flag->name + " needs a value (" + std::string(option->value_name) +
                          ")"};
    }
    if (auto error = option->set(options, value)) {
      return OptionsError{"--" + flag->name + ": " + *error};
    }
    if (flag->name == "db" && storage::dsn_has_password(value)) {
      return OptionsError{
          "--db: the connection string holds a password, which any user of the machine can read "
          "from the process list: put it in a --config file only jackpotd's user can read, in "
          "PGPASSFILE or ~/.pgpass, or in PGPASSWORD"};
    }
  }

  if (!options.show_help && !options.show_version && options.database_dsn.empty()) {
    return OptionsError{"--db is required: a PostgreSQL connection string (see --help)"};
  }
  return options;
}

bool is_loopback_address(std::string_view host_port) {
  const auto colon = host_port.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string host(host_port.substr(0, colon));
  if (host == "localhost") return true;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    in6_addr address{};
    return inet_pton(AF_INET6, host.c_str(), &address) == 1 && IN6_IS_ADDR_LOOPBACK(&address);
  }
  // gRPC's local credentials serve 127.0.0.1 and ::1 only, not the rest of 127.0.0.0/8.
  in_addr address{};
  return inet_pton(AF_INET, host.c_str(), &address) == 1 && ntohl(address.s_addr) == 0x7f000001U;
}

bool password_file_private(std::uint32_t owner_uid, std::uint32_t group_gid, std::uint32_t mode,
                           std::uint32_t own_gid) {
  if ((mode & S_IRWXO) != 0) return false;
  if ((mode & S_IRWXG) == 0) return true;
  return owner_uid == 0 && group_gid == own_gid && (mode & (S_IWGRP | S_IXGRP)) == 0;
}

std::optional<std::string> transport_problem(const DaemonOptions& options) {
  const bool any_tls = !options.tls_certificate_file.empty() || !options.tls_key_file.empty() ||
                       !options.tls_client_ca_file.empty() || !options.revoked_file.empty();
  if (options.plaintext) {
    if (any_tls) return std::string("--plaintext on and TLS files: give one or the other");
    if (!is_loopback_address(options.listen_address)) {
      return "--plaintext on is for development on this machine only: --listen " +
             options.listen_address +
             " is not a loopback address (127.0.0.1, [::1] or localhost); serve mutual TLS "
             "with --tls-cert, --tls-key and --tls-client-ca";
    }
    return std::nullopt;
  }
  if (options.tls_certificate_file.empty() || options.tls_key_file.empty() ||
      options.tls_client_ca_file.empty()) {
    return std::string(
        "jackpotd serves mutual TLS: give --tls-cert, --tls-key and --tls-client-ca (ops/pki "
        "makes them), or --plaintext on for development on a loopback address");
  }
  if (options.roster_file.empty()) {
    return std::string(
        "jackpotd serves mutual TLS to the supervisors and admins a roster names: give --roster "
        "FILE (one principal a line, e.g. supervisor/ann, admin/ops-1)");
  }
  return std::nullopt;
}

std::string daemon_usage() {
  std::string usage =
      "usage: jackpotd --db DSN [options]\n"
      "\n"
      "The linked progressive jackpot controller.\n"
      "\n"
      "options:\n"
      "  --config FILE              read 'name = value' lines (names as below, without dashes);\n"
      "                             flags override the file\n";
  for (const Option& option : kOptions) {
    std::string left = "  --" + std::string(option.name) + " " + std::string(option.value_name);
    // A name too long for the column goes on a line of its own, its help under it.
    if (left.size() >= 29) left += "\n";
    left.resize(left.back() == '\n' ? left.size() + 29 : 29, ' ');
    // A help text's line breaks continue under its first line.
    std::string help;
    for (const char c : option.help)
      help += c == '\n' ? "\n" + std::string(29, ' ') : std::string(1, c);
    usage += left + help + "\n";
  }
  usage +=
      "  --help                     print this and exit\n"
      "  --version                  print the version and exit\n";
  return usage;
}

}  // namespace jackpot
