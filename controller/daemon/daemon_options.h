#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace jackpot {

// How the daemon is started: from command-line flags, optionally on top of a config file.
struct DaemonOptions {
  std::string listen_address = "127.0.0.1:50051";  // gRPC, host:port; port 0 picks a free one.
  std::string database_dsn;                        // libpq connection string; required.
  std::string metrics_address = "127.0.0.1:9464";  // Prometheus /metrics; "off" disables.
  std::chrono::milliseconds shutdown_grace{5000};  // In-flight calls get this long on SIGTERM.
  // A commit whose statements take longer (a lock held by someone else, a stalled disk) fails,
  // and the floor fails stop instead of waiting without end.
  std::chrono::milliseconds commit_timeout{10000};
  // How often the daemon records a balance snapshot of every link (a period boundary for the
  // reconciliation report, and where recovery starts summing); 0: only at start, recovery, stop
  // and on request.
  std::chrono::seconds snapshot_interval{60};
  // How often the daemon writes the audit chain's head to its log (when it moved), besides at
  // each stop: an anchor outside the database for `jackpotctl audit verify --anchors-from`;
  // 0: only at stops.
  std::chrono::seconds audit_anchor_interval{300};
  // How long a statement of recovery or of a report may run (statement_timeout); the daemon
  // gives up on its answer after twice that.
  std::chrono::milliseconds query_timeout{60000};
  // How often an idle daemon asks the database whether it answers (0: never): health and the
  // link status stream turn within about this long of an outage.
  std::chrono::milliseconds probe_interval{1000};
  // A commit (or probe) running longer makes the daemon unavailable (health NOT_SERVING, links
  // UNAVAILABLE) until it ends.
  std::chrono::milliseconds commit_late{1500};
  // The longest a read (ListMeters) waits for what it saw to be committed: UNAVAILABLE past it.
  std::chrono::milliseconds read_timeout{2000};
  // WatchLinkStatus streams held at once, in all and per client host: RESOURCE_EXHAUSTED past.
  std::size_t streams_max = 4096;
  std::size_t streams_per_peer_max = 64;
  // The sign feed (SignService.WatchMeters): at most this many snapshots a second, a hit on
  // show this long, and how many watches at once, in all and per client host.
  int sign_updates_per_second = 4;
  std::chrono::seconds sign_hit_shown{60};
  std::size_t sign_streams_max = 10000;
  std::size_t sign_streams_per_peer_max = 1000;
  // The web sign over HTTP (controller/api/web_sign.h): HOST:PORT, or "off"; and how many pages'
  // event streams at once (each holds one of its threads).
  std::string sign_http_address = "off";
  std::size_t sign_http_clients_max = 256;
  std::size_t sign_http_clients_per_peer_max = 32;
  // Threads gRPC may run the synchronous RPCs (AdminService, health, reflection) on; the round
  // commands and the streams use none of their own.
  int grpc_threads_max = 64;
  // How often the server pings an idle connection, so that a vanished client's streams end.
  std::chrono::milliseconds keepalive{30000};
  // Serve gRPC server reflection (for grpcurl-like tools): off unless asked for.
  bool reflection = false;
  // The log as JSON objects, one a line, rather than text (controller/log/log.h).
  bool log_json = false;
  // Where the daemon keeps the last commit mark it saw, outside the database; empty: none.
  std::string state_file;
  // Accept, at start, a database behind the state file whose last batch is exactly this one: a
  // deliberate restore from backup, recorded in the audit trail.
  std::optional<std::uint64_t> accept_database_batch;
  std::string floor_file;  // Links and tables (Protobuf text format); none: no TableService.
  // Mutual TLS: the server's certificate and key, and the site CA bundle that issues the
  // clients' certificates (PEM files; ops/pki makes them). Re-read on SIGHUP.
  std::string tls_certificate_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  // The supervisors and admins who may act (controller/api/roster.h); required with mutual TLS,
  // optional in plaintext mode. Read at start.
  std::string roster_file;
  // The revocation list (controller/api/revocations.h); none when empty. Read at start and on
  // SIGHUP, with the TLS files.
  std::string revoked_file;
  // Development only: no TLS, callers name their principal (transport_security.h); allowed on a
  // loopback address only.
  bool plaintext = false;
  bool show_help = false;
  bool show_version = false;
};

// What went wrong while reading the options, with file:line for config files.
struct OptionsError {
  std::string message;
};

// Parses `jackpotd [--config FILE] [--listen ADDR] [--db DSN] [--metrics ADDR|off] [--floor FILE]
// [--shutdown-grace-ms N] [--commit-timeout-ms N] [--snapshot-interval-s N]
// [--audit-anchor-interval-s N]
// [--query-timeout-ms N] [--probe-interval-ms N] [--commit-late-ms N] [--read-timeout-ms N]
// [--streams-max N] [--streams-per-peer-max N] [--sign-updates-per-second N]
// [--sign-hit-seconds N] [--sign-streams-max N] [--sign-streams-per-peer-max N]
// [--sign-http HOST:PORT|off] [--sign-http-clients-max N] [--sign-http-clients-per-peer-max N]
// [--grpc-threads-max N] [--keepalive-ms N]
// [--reflection on|off] [--log-format text|json] [--state-file FILE] [--accept-database-batch N]
// [--tls-cert FILE]
// [--tls-key FILE] [--tls-client-ca FILE] [--plaintext on|off] [--help] [--version]`.
// Flags accept `--name value` and `--name=value`. The config file holds `name = value` lines
// with the flags' names (without dashes), `#` comments and blank lines; flags given on the
// command line override it.
std::variant<DaemonOptions, OptionsError> parse_daemon_options(
    const std::vector<std::string>& args);

// Reads `name = value` lines into `options`. `origin` names the text in errors (a file name).
// Sets *holds_password when a `db` line of the text gives a password.
std::variant<DaemonOptions, OptionsError> parse_config_text(const std::string& text,
                                                            const std::string& origin,
                                                            DaemonOptions options,
                                                            bool* holds_password = nullptr);

// Whether the daemon may listen as the options say: mutual TLS with all three files, or
// plaintext on a loopback address; an error that says what to give, or nothing.
std::optional<std::string> transport_problem(const DaemonOptions& options);

// Whether a config file that holds the database password is private enough, as PostgreSQL
// judges its own key file: nothing for other users; the group may read it (not write it) only
// when root owns it and the group is jackpotd's own (`own_gid`), the packaged layout (owner
// root, group jackpotd, mode 640: docs/operations.md); a file of any other owner is its owner's
// alone (mode 600 or 400).
bool password_file_private(std::uint32_t owner_uid, std::uint32_t group_gid, std::uint32_t mode,
                           std::uint32_t own_gid);

// Whether `host_port` (as --listen takes it) is on the loopback address plaintext mode may use:
// 127.0.0.1, [::1] or localhost (gRPC's local credentials accept nothing else).
bool is_loopback_address(std::string_view host_port);

// The --help text.
std::string daemon_usage();

}  // namespace jackpot
