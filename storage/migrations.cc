#include "storage/migrations.h"

#include <array>
#include <map>
#include <pqxx/pqxx>

#include "meters/digest.h"
#include "meters/invariant.h"

namespace jackpot::storage {
namespace {

struct Applied {
  std::string name;
  std::string sha256;
};

std::map<int, Applied> read_applied(pqxx::work& tx) {
  std::map<int, Applied> applied;
  for (const auto& row : tx.exec("SELECT version, name, sha256 FROM schema_migrations")) {
    applied[row[0].as<int>()] = Applied{row[1].as<std::string>(), row[2].as<std::string>()};
  }
  return applied;
}

void check_order(const std::vector<Migration>& migrations) {
  for (std::size_t i = 0; i < migrations.size(); ++i) {
    JACKPOT_INVARIANT(migrations[i].version == static_cast<int>(i) + 1,
                      "migrations must be numbered 1, 2, 3, ... without gaps");
  }
}

}  // namespace

// Generated from migrations/*.sql (storage/CMakeLists.txt): (file name, text), sorted by name.
const std::vector<std::pair<std::string_view, std::string_view>>& migration_files();

const std::vector<Migration>& embedded_migrations() {
  static const std::vector<Migration> migrations = [] {
    std::vector<Migration> parsed;
    for (const auto& [name, sql] : migration_files()) {
      // The build refuses names that are not NNNN_name.sql.
      parsed.push_back({std::stoi(std::string(name.substr(0, 4))), name, sql});
    }
    return parsed;
  }();
  return migrations;
}

std::string sha256_hex(std::string_view text) { return to_hex(sha256(text)); }

static MigrationReport apply_migrations_once(pqxx::connection& connection,
                                             const std::vector<Migration>& migrations);

MigrationReport apply_migrations(pqxx::connection& connection,
                                 const std::vector<Migration>& migrations) {
  check_order(migrations);
  // Two daemons starting on an empty database both create schema_migrations: the second waits for
  // the first's commit, is refused (the name is taken) and tries once more, finding it there.
  for (int attempt = 1;; ++attempt) {
    try {
      return apply_migrations_once(connection, migrations);
    } catch (const pqxx::unique_violation&) {
      if (attempt == 2) throw;
    }
  }
}

static MigrationReport apply_migrations_once(pqxx::connection& connection,
                                             const std::vector<Migration>& migrations) {
  pqxx::work tx(connection, "apply_migrations");
  tx.exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations ("
      " version integer PRIMARY KEY CHECK (version > 0),"
      " name text NOT NULL,"
      " sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),"
      " applied_at timestamptz NOT NULL DEFAULT clock_timestamp())");
  // Two daemons starting at once migrate one after the other. The lock is one that only a role
  // that may change schema_migrations can take (an advisory lock, which any role that connects
  // may take, let a read-only role hold every start back; #33).
  tx.exec("LOCK TABLE schema_migrations IN SHARE ROW EXCLUSIVE MODE");
  const std::map<int, Applied> applied = read_applied(tx);

  if (!applied.empty() && applied.rbegin()->first > static_cast<int>(migrations.size())) {
    const auto& [version, newest] = *applied.rbegin();
    throw MigrationError("the database has migration " + newest.name + " (version " +
                         std::to_string(version) + ") that this jackpotd does not know; it was " +
                         "migrated by a newer jackpotd");
  }

  MigrationReport report;
  for (const Migration& migration : migrations) {
    const std::string sha = sha256_hex(migration.sql);
    const std::string name(migration.name);
    if (auto it = applied.find(migration.version); it != applied.end()) {
      if (it->second.sha256 != sha) {
        throw MigrationError("migration " + name + " was changed after it was applied (recorded " +
                             "sha256 " + it->second.sha256 + ", this binary has " + sha + ")");
      }
      continue;
    }
    try {
      tx.exec(std::string(migration.sql));
    } catch (const pqxx::sql_error& error) {
      throw MigrationError("migration " + name + " failed: " + error.what());
    }
    tx.exec_params("INSERT INTO schema_migrations (version, name, sha256) VALUES ($1, $2, $3)",
                   migration.version, name, sha);
    ++report.applied;
  }
  tx.commit();
  report.schema_version = static_cast<int>(migrations.size());
  return report;
}

}  // namespace jackpot::storage
