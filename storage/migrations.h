#pragma once

#include <pqxx/connection>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace jackpot::storage {

// One versioned schema change, from storage/migrations/NNNN_name.sql.
struct Migration {
  int version;
  std::string_view name;
  std::string_view sql;
};

// The migrations built into this binary, in version order.
const std::vector<Migration>& embedded_migrations();

// A migration could not be applied, or the database's recorded schema disagrees with this
// binary's. The message names the migration and what is wrong.
class MigrationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct MigrationReport {
  int applied = 0;         // Migrations applied by this call.
  int schema_version = 0;  // The highest version now recorded in the database.
};

// Applies every migration not yet recorded in the schema_migrations table, all in one
// transaction under a lock on schema_migrations that only jackpotd's own role may take (so two
// daemons starting at once cannot interleave, and no other role can hold a start back), and
// records each with the SHA-256 of its text. Throws MigrationError, leaving the database
// unchanged, when a migration fails, when an applied migration's text has changed since, or when
// the database records a version this binary does not know (it was migrated by a newer one).
MigrationReport apply_migrations(pqxx::connection& connection,
                                 const std::vector<Migration>& migrations = embedded_migrations());

// Lower-case hex SHA-256 of the text, as recorded in schema_migrations.
std::string sha256_hex(std::string_view text);

}  // namespace jackpot::storage
