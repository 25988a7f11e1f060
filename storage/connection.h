#pragma once

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

// The connection string as it may be shown in logs: every parameter but the password.
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

}  // namespace jackpot::storage
