#pragma once

#include <memory>
#include <pqxx/connection>
#include <string>

namespace jackpot::testing {

// A fresh, empty database on the throwaway cluster that ops/test starts (its connection string,
// without dbname, is in JACKPOTD_TEST_PG). Dropped when the object goes away.
class TestDatabase {
 public:
  TestDatabase();
  ~TestDatabase();
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  // Connection string for this database.
  const std::string& dsn() const { return dsn_; }
  const std::string& name() const { return name_; }
  std::unique_ptr<pqxx::connection> connect() const;

  // Connection string for the cluster's maintenance database (to create and drop databases).
  static std::string cluster_dsn(const std::string& database);

 private:
  std::string name_;
  std::string dsn_;
};

}  // namespace jackpot::testing
