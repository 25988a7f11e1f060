#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

struct pg_conn;  // libpq's PGconn.

namespace jackpot::storage {

// The daemon gave up waiting for the server: the statement's outcome is unknown (it may still
// commit), so the connection is closed and must not be used again.
class DeadlineExceeded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A connection for the commit path whose every exec() has a deadline on the daemon's side. A
// server process that stops answering while the network stays up (stopped, swapping, a WAL flush
// that never returns) would otherwise hold the committer, and with it every table, for ever.
// Plain libpq, asynchronous: the query is sent, then the socket is polled until the results are
// in or the deadline passes; then the server is asked to cancel and the connection is closed.
class CommitConnection {
 public:
  // Connects with with_network_timeouts() applied and application_name=jackpotd-commit unless
  // the DSN sets one, within the connect timeout; a stop (DatabaseWaits::abort_all) ends the
  // wait at once. Throws ConnectError with the redacted DSN and libpq's reason.
  explicit CommitConnection(const std::string& dsn);
  ~CommitConnection();
  CommitConnection(const CommitConnection&) = delete;
  CommitConnection& operator=(const CommitConnection&) = delete;

  // Runs `sql` (one or more statements, as one simple query message: one implicit transaction)
  // and waits at most `deadline` for it to finish. Throws std::runtime_error with the server's
  // message when a statement fails, ConnectError when the connection breaks, DeadlineExceeded
  // when the deadline passes or the daemon stops (DatabaseWaits::abort_all); after any of those
  // the connection is closed.
  // Returns the first value of the last result that has rows, or "" when none has.
  std::string exec(const std::string& sql, std::chrono::milliseconds deadline);

  // Prepares `sql` as `name` on this session (parameter types from its casts), unless it is.
  void prepare(const std::string& name, const std::string& sql, std::chrono::milliseconds deadline);
  bool prepared(const std::string& name) const { return prepared_.contains(name); }
  // Runs the statement prepared as `name` with binary parameters. One statement: one implicit
  // transaction. Fails (and closes the connection) as exec() does.
  void exec_prepared(const std::string& name, const std::vector<const char*>& values,
                     const std::vector<int>& lengths, const std::vector<int>& formats,
                     std::chrono::milliseconds deadline);

  // Runs `copy_sql` (a COPY ... FROM STDIN) and sends `data` as its rows, in COPY's text
  // format. The data is in neither pg_stat_activity nor the server's statement log, as a
  // statement's text and parameters are. Fails (and closes the connection) as exec() does.
  void copy_in(const std::string& copy_sql, const std::string& data,
               std::chrono::milliseconds deadline);

  bool is_open() const { return conn_ != nullptr; }
  // The server process serving this connection.
  std::int64_t backend_pid() const { return backend_pid_; }

 private:
  void close();
  // Sends what libpq holds for the server, then collects every result until the deadline; the
  // value and failures as exec() describes.
  std::string finish(std::chrono::steady_clock::time_point until,
                     std::chrono::milliseconds deadline);
  // Sends what libpq holds for the server, within the deadline.
  void flush(std::chrono::steady_clock::time_point until);
  // Waits until libpq has a result (or none is left) within the deadline.
  void wait_readable(std::chrono::steady_clock::time_point until,
                     std::chrono::milliseconds deadline);
  [[noreturn]] void broken(const std::string& what);
  [[noreturn]] void give_up(const std::string& why);

  std::set<std::string> prepared_;  // The statements this session has prepared.

  ::pg_conn* conn_ = nullptr;
  std::int64_t backend_pid_ = 0;
};

}  // namespace jackpot::storage
