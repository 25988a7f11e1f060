#include "storage/commit_connection.h"

#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <string_view>
#include <thread>

#include "storage/connection.h"

namespace jackpot::storage {
namespace {

std::string libpq_message(const PGconn* conn) {
  std::string message = PQerrorMessage(conn);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return message;
}

// The DSN with application_name=jackpotd-commit unless it names one, so that operators (and
// tests) can tell the commit connection in pg_stat_activity.
std::string commit_dsn(const std::string& dsn) {
  std::string timed = with_network_timeouts(dsn);
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(timed.c_str(), &error);
  if (options == nullptr) {
    PQfreemem(error);
    return timed;
  }
  bool named = false;
  for (const PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
    if (option->val != nullptr && std::string_view(option->keyword) == "application_name") {
      named = true;
    }
  }
  PQconninfoFree(options);
  return named ? timed : timed + " application_name=jackpotd-commit";
}

// The connect_timeout the DSN sets (libpq ignores it for a connection made step by step), else
// with_network_timeouts()'s.
std::chrono::milliseconds connect_deadline(const std::string& timed_dsn) {
  std::chrono::milliseconds deadline{10000};
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(timed_dsn.c_str(), &error);
  if (options == nullptr) {
    PQfreemem(error);
    return deadline;
  }
  for (const PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
    if (option->val != nullptr && std::string_view(option->keyword) == "connect_timeout") {
      try {
        // As libpq reads it: whole seconds, at least 2.
        deadline = std::chrono::seconds(std::max(2, std::stoi(option->val)));
      } catch (const std::exception&) {
      }
    }
  }
  PQconninfoFree(options);
  return deadline;
}

// Asks the server to cancel what `conn` runs, without waiting for it here: libpq 15's PQcancel
// connects to the server and waits for it to answer with no timeout, which a stopped postmaster
// or a dropped network would make for ever. It runs on a thread of its own, at most one at a
// time (a cancel that still hangs makes the next one pointless); the orphaned server process is
// ended by recovery in any case (PostgresDurability::end_orphan).
void cancel_in_background(PGconn* conn) {
  static std::atomic<bool> cancelling{false};
  if (cancelling.exchange(true)) return;
  PGcancel* cancel = PQgetCancel(conn);
  if (cancel == nullptr) {
    cancelling = false;
    return;
  }
  std::thread([cancel] {
    char ignored[256];
    PQcancel(cancel, ignored, sizeof ignored);
    PQfreeCancel(cancel);
    cancelling = false;
  }).detach();
}

}  // namespace

CommitConnection::CommitConnection(const std::string& dsn) {
  const std::string timed = commit_dsn(dsn);
  const auto until = std::chrono::steady_clock::now() + connect_deadline(timed);
  const int abort = DatabaseWaits::instance().abort_descriptor();
  conn_ = PQconnectStart(timed.c_str());
  const auto fail = [&](const std::string& reason) {
    close();
    throw ConnectError("cannot connect to PostgreSQL (" + redact_dsn(dsn) + "): " + reason);
  };
  if (conn_ == nullptr) fail("out of memory");
  // Step by step, so that the wait has the deadline and ends when the daemon stops.
  for (PostgresPollingStatusType polling = PGRES_POLLING_WRITING;;) {
    if (PQstatus(conn_) == CONNECTION_BAD) fail(libpq_message(conn_));
    if (polling == PGRES_POLLING_OK) break;
    if (polling == PGRES_POLLING_FAILED) fail(libpq_message(conn_));
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          until - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) fail("no answer within the connect timeout");
    pollfd waits[2] = {{PQsocket(conn_),
                        static_cast<short>(polling == PGRES_POLLING_READING ? POLLIN : POLLOUT), 0},
                       {abort, POLLIN, 0}};
    const int ready = ::poll(waits, 2, static_cast<int>(left));
    if (ready < 0 && errno != EINTR) fail("cannot wait for the server");
    if (waits[1].revents & POLLIN) fail("the daemon is stopping");
    if (ready > 0) polling = PQconnectPoll(conn_);
  }
  // Sending never blocks either: a batch larger than the socket's buffer, to a server process
  // that stopped reading, must not hold the committer past its deadline.
  if (PQsetnonblocking(conn_, 1) != 0) {
    const std::string reason = libpq_message(conn_);
    close();
    throw ConnectError("cannot make the commit connection non-blocking: " + reason);
  }
  backend_pid_ = PQbackendPID(conn_);
}

CommitConnection::~CommitConnection() { close(); }

void CommitConnection::close() {
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = nullptr;
  prepared_.clear();
}

void CommitConnection::broken(const std::string& what) {
  const std::string reason = what + ": " + libpq_message(conn_);
  close();
  throw ConnectError(reason);
}

// Asks the server to stop (it may not: a stopped process reads nothing) and gives up on the
// connection; the statement's outcome stays unknown to us.
void CommitConnection::give_up(const std::string& why) {
  cancel_in_background(conn_);
  close();
  throw DeadlineExceeded(why);
}

std::string CommitConnection::exec(const std::string& sql, std::chrono::milliseconds deadline) {
  if (conn_ == nullptr) throw ConnectError("the commit connection is closed");
  const auto until = std::chrono::steady_clock::now() + deadline;
  if (PQsendQuery(conn_, sql.c_str()) != 1) broken("cannot send the batch");
  return finish(until, deadline);
}

void CommitConnection::prepare(const std::string& name, const std::string& sql,
                               std::chrono::milliseconds deadline) {
  if (conn_ == nullptr) throw ConnectError("the commit connection is closed");
  if (prepared(name)) return;
  const auto until = std::chrono::steady_clock::now() + deadline;
  if (PQsendPrepare(conn_, name.c_str(), sql.c_str(), 0, nullptr) != 1) {
    broken("cannot prepare a statement");
  }
  finish(until, deadline);
  prepared_.insert(name);
}

void CommitConnection::exec_prepared(const std::string& name,
                                     const std::vector<const char*>& values,
                                     const std::vector<int>& lengths,
                                     const std::vector<int>& formats,
                                     std::chrono::milliseconds deadline) {
  if (conn_ == nullptr) throw ConnectError("the commit connection is closed");
  const auto until = std::chrono::steady_clock::now() + deadline;
  if (PQsendQueryPrepared(conn_, name.c_str(), static_cast<int>(values.size()), values.data(),
                          lengths.data(), formats.data(), 0) != 1) {
    broken("cannot send the batch");
  }
  finish(until, deadline);
}

namespace {

std::int64_t remaining_ms(std::chrono::steady_clock::time_point until) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(until -
                                                               std::chrono::steady_clock::now())
      .count();
}

}  // namespace

void CommitConnection::flush(std::chrono::steady_clock::time_point until) {
  // Large batches may not fit the socket at once.
  for (int sent = PQflush(conn_); sent != 0; sent = PQflush(conn_)) {
    if (sent < 0) broken("cannot send the batch");
    const auto left = remaining_ms(until);
    if (left <= 0) break;  // Handled by the wait for the answer, with the cancel.
    pollfd waits[2] = {{PQsocket(conn_), POLLIN | POLLOUT, 0},
                       {DatabaseWaits::instance().abort_descriptor(), POLLIN, 0}};
    ::poll(waits, 2, static_cast<int>(left));
    if (waits[1].revents & POLLIN) give_up("the daemon is stopping");
    if (waits[0].revents & POLLIN) PQconsumeInput(conn_);
  }
}

void CommitConnection::wait_readable(std::chrono::steady_clock::time_point until,
                                     std::chrono::milliseconds deadline) {
  while (PQisBusy(conn_) != 0) {
    const auto left = remaining_ms(until);
    if (left <= 0) {
      give_up("no answer from the server within " + std::to_string(deadline.count()) + " ms");
    }
    pollfd waits[2] = {{PQsocket(conn_), POLLIN, 0},
                       {DatabaseWaits::instance().abort_descriptor(), POLLIN, 0}};
    const int ready = ::poll(waits, 2, static_cast<int>(left));
    if (ready < 0 && errno != EINTR) broken("cannot wait for the server");
    if (waits[1].revents & POLLIN) give_up("the daemon is stopping");
    if (ready > 0 && (waits[0].revents != 0) && PQconsumeInput(conn_) != 1) {
      broken("lost the connection");
    }
  }
}

void CommitConnection::copy_in(const std::string& copy_sql, const std::string& data,
                               std::chrono::milliseconds deadline) {
  if (conn_ == nullptr) throw ConnectError("the commit connection is closed");
  const auto until = std::chrono::steady_clock::now() + deadline;
  if (PQsendQuery(conn_, copy_sql.c_str()) != 1) broken("cannot send the COPY");
  flush(until);
  wait_readable(until, deadline);
  PGresult* started = PQgetResult(conn_);
  if (started == nullptr || PQresultStatus(started) != PGRES_COPY_IN) {
    const char* primary =
        started != nullptr ? PQresultErrorField(started, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
    const std::string failure =
        std::string("ERROR:  ") + (primary != nullptr ? primary : "the COPY did not start");
    PQclear(started);
    close();  // A failed statement: the session is in no state worth keeping.
    throw std::runtime_error(failure);
  }
  PQclear(started);
  // Non-blocking: 0 means libpq's buffer is full until some of it is sent.
  const auto until_taken = [&](const auto& send, const char* what) {
    for (int taken = send(); taken != 1; taken = send()) {
      if (taken < 0) broken(std::string("cannot send ") + what);
      if (remaining_ms(until) <= 0) give_up("the server took no more of the COPY");
      flush(until);
    }
  };
  until_taken([&] { return PQputCopyData(conn_, data.data(), static_cast<int>(data.size())); },
              "the COPY's rows");
  until_taken([&] { return PQputCopyEnd(conn_, nullptr); }, "the COPY's end");
  finish(until, deadline);
}

std::string CommitConnection::finish(std::chrono::steady_clock::time_point until,
                                     std::chrono::milliseconds deadline) {
  flush(until);
  std::string failure;
  std::string value;
  for (;;) {
    while (PQisBusy(conn_) == 0) {
      PGresult* result = PQgetResult(conn_);
      if (result == nullptr) {
        if (!failure.empty()) {
          close();  // A failed statement: the session is in no state worth keeping.
          throw std::runtime_error(failure);
        }
        return value;
      }
      const ExecStatusType status = PQresultStatus(result);
      if (status == PGRES_TUPLES_OK && PQntuples(result) > 0 && PQnfields(result) > 0) {
        value = PQgetvalue(result, 0, 0);
      }
      if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && failure.empty()) {
        // One line for the log: "ERROR:  the server's message".
        const char* severity = PQresultErrorField(result, PG_DIAG_SEVERITY);
        const char* primary = PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
        failure = std::string(severity != nullptr ? severity : "ERROR") + ":  " +
                  (primary != nullptr ? primary : PQresStatus(status));
      }
      PQclear(result);
    }
    wait_readable(until, deadline);
  }
}

}  // namespace jackpot::storage
