#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <pqxx/connection>
#include <stdexcept>
#include <string>

namespace jackpot::storage {

// PostgreSQL could not be reached with the given connection string.
class ConnectError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whether libpq can parse the connection string (key=value or URI form).
bool dsn_parses(const std::string& dsn);

// Whether the connection string gives a secret: a password or an sslpassword (what libpq marks
// secret); false for one libpq cannot parse (see dsn_parses()).
bool dsn_has_password(const std::string& dsn);

// The connection string as it may be shown in logs: every parameter but the secret ones
// (password, sslpassword).
// A string libpq cannot parse is returned as "<unparsable connection string>".
std::string redact_dsn(const std::string& dsn);

// The connection string with limits on a lost network added where it sets none, so that a
// partitioned database fails a commit (and the daemon fail-stops) instead of hanging it:
// connect_timeout=10, TCP keepalives probing after 10 s idle, and tcp_user_timeout=15000 ms
// for unacknowledged writes. Returned as key=value pairs; an unparsable string is returned as it
// is, for connect() to report.
std::string with_network_timeouts(const std::string& dsn);

// Opens a connection (with_network_timeouts applied). Throws ConnectError with the redacted DSN and
// libpq's reason.
std::unique_ptr<pqxx::connection> connect(const std::string& dsn);

// What the server enforces on a daemon's session, so that a lock held on a journal table or a
// query that never ends fails the daemon's wait with the server's reason instead of holding it.
struct SessionLimits {
  std::chrono::milliseconds statement{60000};  // statement_timeout
  std::chrono::milliseconds lock{10000};       // lock_timeout
};

// connect() with the limits set on the session, and application_name=`name` unless the DSN names
// one (so that operators, and tests, can tell the daemon's sessions in pg_stat_activity).
std::unique_ptr<pqxx::connection> connect(const std::string& dsn, const SessionLimits& limits,
                                          const std::string& name);

// The deadlines the daemon keeps on its own side, for what the server cannot enforce: a server
// process that stopped answering (stopped, swapping, a network that drops without a reset) never
// runs its statement_timeout. A blocking libpq call cannot be given a timeout, so a guard
// watches the connection's socket from a thread of its own and shuts it down when the deadline
// passes: the blocked call then fails as on a broken connection. When the daemon stops,
// abort_all() does the same at once to every wait in progress and makes every later one fail
// at once, so that no database wait can hold a stop past its grace. Process-wide.
class DatabaseWaits {
 public:
  static DatabaseWaits& instance();

  // Bounds one wait (or a sequence of them) on `connection` while it lives. A guard that is not
  // `abortable` is left alone by abort_all() and only keeps its deadline: for the daemon's very
  // last write, its stop's audit event.
  class Guard {
   public:
    Guard(Guard&& other) noexcept;
    Guard& operator=(Guard&&) = delete;
    Guard(const Guard&) = delete;
    ~Guard();
    // Whether the guard shut the socket down: the wait's failure is the deadline's (or the
    // stop's), not the server's.
    bool fired() const;
    // Why it fired, for messages.
    std::string reason() const;

   private:
    friend class DatabaseWaits;
    Guard(DatabaseWaits* owner, std::uint64_t id) : owner_(owner), id_(id) {}
    DatabaseWaits* owner_;
    std::uint64_t id_;
  };
  [[nodiscard]] Guard guard(pqxx::connection& connection, std::chrono::milliseconds deadline,
                            bool abortable = true);
  [[nodiscard]] Guard guard_socket(int socket, std::chrono::milliseconds deadline,
                                   bool abortable = true);

  // The daemon is stopping: every abortable wait in progress fails now, every later one at once.
  void abort_all();
  bool aborted() const;
  // A descriptor that becomes readable, and stays so, once abort_all() has run: for poll loops.
  int abort_descriptor() const { return abort_fd_; }

 private:
  DatabaseWaits();
  struct Entry;
  void watch_loop();
  class State;
  State* state_;
  int abort_fd_ = -1;
};

}  // namespace jackpot::storage
