#pragma once

#include <cstdint>
#include <memory>
#include <pqxx/connection>
#include <pqxx/transaction>
#include <string>
#include <utility>
#include <vector>

#include "meters/records.h"

namespace jackpot::storage {

// The links the engine runs, with their level counts; written once at start (existing rows are
// kept, a link whose level count changed is refused by the caller's validation).
struct LinkRow {
  std::string link_id;
  std::uint32_t levels = 0;
};
void write_links(pqxx::work& tx, const std::vector<LinkRow>& links);

// The SQL that writes a batch of commands' records: one INSERT per table, rows in command
// order, parent tables before their children, no transaction of its own. Built
// command by command (add), so that a batch can be rendered while the one before it commits.
// Strings are written as standard SQL literals: the session must have
// standard_conforming_strings on (storage::connect sets it).
class BatchRows {
 public:
  BatchRows();
  ~BatchRows();
  BatchRows(const BatchRows&) = delete;
  BatchRows& operator=(const BatchRows&) = delete;

  // Adds one command's records. Throws std::invalid_argument on a value SQL cannot carry (a NUL
  // character), possibly after adding some of the command's rows: clear() before reusing it.
  void add(const Records& records);
  std::size_t commands() const { return commands_; }
  // Everything added, as statements; empty when nothing was added.
  std::string sql() const;
  // The same, appended; `prepared`: as EXECUTEs of the statements prepare_sql() prepares, for a
  // session that ran it (the server then plans each insert once per session, not per batch).
  void append_sql(std::string& sql, bool prepared) const;
  std::string prepare_sql() const;
  // Starts over, keeping the memory for the next batch.
  void clear();

 private:
  class Table;
  Table* add_table(std::string name, std::vector<std::pair<std::string, std::string>> columns,
                   bool ordered = false);
  void add_payouts(const Records& records);

  std::vector<std::unique_ptr<Table>> tables_;
  Table* rounds_ = nullptr;
  Table* round_events_ = nullptr;
  Table* wagers_ = nullptr;
  Table* hands_ = nullptr;
  Table* draws_ = nullptr;
  Table* transfers_ = nullptr;
  Table* payouts_ = nullptr;
  Table* payout_events_ = nullptr;
  Table* dynamic_pays_ = nullptr;
  Table* hits_ = nullptr;
  Table* statuses_ = nullptr;
  std::size_t commands_ = 0;
};

// Writes one command's records in the caller's transaction; a constraint violation throws and
// the caller's transaction rolls back as a whole.
void write_records(pqxx::work& tx, const Records& records);

// "2026-11-29 17:05:29.123456+00" for microseconds since the Unix epoch.
std::string timestamp_text(std::int64_t unix_us);

// The enum values named as the database stores them; throws on a name it does not know.
AccountKind account_kind_named(const std::string& name);
TransferKind transfer_kind_named(const std::string& name);

}  // namespace jackpot::storage
