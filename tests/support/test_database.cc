#include "tests/support/test_database.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <pqxx/pqxx>
#include <stdexcept>

namespace jackpot::testing {
namespace {

std::atomic<int> next_database{0};

}  // namespace

std::string TestDatabase::cluster_dsn(const std::string& database) {
  const char* base = std::getenv("JACKPOTD_TEST_PG");
  if (base == nullptr || *base == '\0') {
    throw std::runtime_error(
        "JACKPOTD_TEST_PG is not set: run the tests with ops/test, which starts a throwaway "
        "PostgreSQL, or set it to a libpq connection string (without dbname) of a cluster where "
        "you may create databases");
  }
  return std::string(base) + " dbname=" + database;
}

TestDatabase::TestDatabase()
    : name_("jackpotd_test_" + std::to_string(getpid()) + "_" + std::to_string(next_database++)),
      dsn_(cluster_dsn(name_)) {
  pqxx::connection admin(cluster_dsn("postgres"));
  pqxx::nontransaction tx(admin);
  tx.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  tx.exec("CREATE DATABASE " + name_);
}

TestDatabase::~TestDatabase() {
  try {
    pqxx::connection admin(cluster_dsn("postgres"));
    pqxx::nontransaction tx(admin);
    tx.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  } catch (const std::exception&) {
    // The cluster is thrown away after the run; a database left behind harms nothing.
  }
}

std::unique_ptr<pqxx::connection> TestDatabase::connect() const {
  return std::make_unique<pqxx::connection>(dsn_);
}

}  // namespace jackpot::testing
