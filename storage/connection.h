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

// Opens a connection. Throws ConnectError with the redacted DSN and libpq's reason.
std::unique_ptr<pqxx::connection> connect(const std::string& dsn);

}  // namespace jackpot::storage
