#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <pqxx/connection>
#include <pqxx/transaction>
#include <string>
#include <utility>
#include <vector>

#include "journal/records.h"

namespace jackpot::storage {

// The links the engine runs, with their level counts; written once at start (existing rows are
// kept, a link whose level count changed is refused by the caller's validation).
struct LinkRow {
  std::string link_id;
  std::uint32_t levels = 0;
};
void write_links(pqxx::work& tx, const std::vector<LinkRow>& links);

// A prepared statement's parameters, all in binary format; the pointers point into the
// BatchRows that made them and stay valid until it changes.
struct BinaryParameters {
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
};

// A batch of commands' records as one INSERT per table, rows in command order, with no
// transaction of its own. Built command by command (add), so that a batch can be rendered while
// the one before it commits. In text format, as SQL statements with the rows in array literals
// (strings written as standard SQL literals: the session must have standard_conforming_strings
// on, as storage::connect sets it). In binary format, as one prepared statement whose parameters
// are the columns in PostgreSQL's binary array format: the server neither parses nor converts
// the values' text, and plans the statement once per session.
class BatchRows {
 public:
  enum class Format { text, binary };
  explicit BatchRows(Format format = Format::text);
  ~BatchRows();
  BatchRows(const BatchRows&) = delete;
  BatchRows& operator=(const BatchRows&) = delete;

  // Adds one command's records. Throws std::invalid_argument on a value SQL cannot carry (a NUL
  // character, an integer too large for its column), possibly after adding some of the command's
  // rows: clear() before reusing it.
  void add(const Records& records);
  std::size_t commands() const { return commands_; }
  bool has_rows() const { return statement_tables() != 0; }
  // Text format: everything added, as statements; empty when nothing was added.
  std::string sql() const;

  // Binary format, when something was added. The statement's name depends only on which tables
  // have rows, so a session prepares each variant once (statement_sql() is its text).
  std::string statement_name() const;
  std::string statement_sql() const;
  // The statement's parameters; `enum_oid` gives the type OID of an enum column's type, by the
  // type's name (the server assigns those). Call once, when nothing more will be added.
  BinaryParameters finish_binary(const std::function<std::uint32_t(const std::string&)>& enum_oid);

  // The hidden points and salts drawn by the commands added (docs/audit.md), as the data of
  // kTriggerSecretsCopy in COPY's text format: one line a draw. Never part of the statement
  // above: a statement's text is in pg_stat_activity for a pg_monitor role to read, and its
  // parameters in the server log under log_statement = 'all'; COPY's data is in neither. Run
  // before the statement, in its transaction, so that the statement's triggers see the points
  // (each row's draw is checked at the commit, migration 0023). Empty when none.
  std::string trigger_secrets_copy() const;
  struct TriggerSecret {
    std::int64_t draw_id = 0;
    std::int64_t point_micros = 0;
    TriggerSalt salt{};
  };
  const std::vector<TriggerSecret>& trigger_secrets() const { return trigger_secrets_; }

  // Starts over, keeping the memory for the next batch.
  void clear();

 private:
  class Table;
  Table* add_table(std::string name, std::vector<std::pair<std::string, std::string>> columns,
                   bool ordered = false, bool keep_existing = false);
  void add_payouts(const Records& records);
  void add_adjustments(const Records& records);
  // Bit t: tables_[t] has rows.
  std::uint32_t statement_tables() const;

  Format format_;
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
  Table* snapshots_ = nullptr;
  Table* adjustments_ = nullptr;
  Table* rebases_ = nullptr;
  Table* supervisor_voids_ = nullptr;
  std::vector<TriggerSecret> trigger_secrets_;
  std::size_t commands_ = 0;
};

// Where trigger_secrets_copy()'s rows go.
inline constexpr const char* kTriggerSecretsCopy =
    "COPY jackpot_private.trigger_secrets (draw_id, point_micros, salt) FROM STDIN";

// Writes one command's records in the caller's transaction (a hidden point through COPY, as
// trigger_secrets_copy() says); a constraint violation throws and
// the caller's transaction rolls back as a whole.
void write_records(pqxx::work& tx, const Records& records);

// "2026-11-29 17:05:29.123456+00" for microseconds since the Unix epoch.
std::string timestamp_text(std::int64_t unix_us);

// The enum values named as the database stores them; throws on a name it does not know.
AccountKind account_kind_named(const std::string& name);
// The database's account_kind 'breakage' (migration 0002): an account nothing ever posted to,
// no longer in the ledger. Balance snapshots taken while it was hold a zero row of it.
inline constexpr std::string_view kRetiredBreakageAccount = "breakage";
TransferKind transfer_kind_named(const std::string& name);

}  // namespace jackpot::storage
