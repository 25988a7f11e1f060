#include "storage/record_writer.h"

#include <array>
#include <bit>
#include <charconv>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <pqxx/pqxx>
#include <pqxx/stream_to>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "meters/digest.h"

namespace jackpot::storage {
namespace {

std::optional<std::int64_t> positive_or_null(std::uint64_t value) {
  if (value == 0) return std::nullopt;
  return static_cast<std::int64_t>(value);
}

// The phase a round command leaves its round in.
RoundPhase phase_of(CommandKind command) {
  switch (command) {
    case CommandKind::open:
      return RoundPhase::open;
    case CommandKind::lock:
      return RoundPhase::locked;
    case CommandKind::settle:
      return RoundPhase::settled;
    case CommandKind::void_round:
      return RoundPhase::voided;
  }
  return RoundPhase::open;
}

// Array elements, as PostgreSQL's array input reads them inside a standard SQL string literal:
// quotes and backslashes escaped for the array, single quotes doubled for the literal. Runs of
// ordinary characters are appended whole.
void element(std::string& out, std::string_view value) {
  out += '"';
  std::size_t run = 0;  // Where the run of characters not yet appended starts.
  for (std::size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (c != '"' && c != '\\' && c != '\'' && c != '\0') continue;
    // libpq sends the query as a C string: a NUL would cut it short.
    if (c == '\0') throw std::invalid_argument("a record holds a NUL character");
    out.append(value.data() + run, i - run);
    out += c == '\'' ? '\'' : '\\';
    run = i;  // The character itself starts the next run.
  }
  out.append(value.data() + run, value.size() - run);
  out += '"';
}
void element(std::string& out, const Name& value) { element(out, value.view()); }
// Bytes for a bytea column, written as its hex text ("\x0a1b") straight into the array.
struct Bytea {
  std::span<const std::uint8_t> bytes;
};
Bytea bytea(std::string_view bytes) {
  return {{reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}};
}
void element(std::string& out, Bytea value) {
  out += "\"\\\\x";  // The array's quote, then \x with its backslash escaped for the array.
  append_hex(out, value.bytes);
  out += '"';
}
void element(std::string& out, std::int64_t value) {
  char digits[24];
  const auto written = std::to_chars(std::begin(digits), std::end(digits), value);
  out.append(digits, static_cast<std::size_t>(written.ptr - digits));
}
void element(std::string& out, bool value) { out += value ? 't' : 'f'; }
template <typename T>
void element(std::string& out, const std::optional<T>& value) {
  if (value) {
    element(out, *value);
  } else {
    out += "NULL";
  }
}

// A point in time for a timestamptz column.
struct Timestamp {
  std::int64_t unix_us = 0;
};
void element(std::string& out, Timestamp value) {
  element(out, std::string_view(timestamp_text(value.unix_us)));
}

// ---- Binary arrays ---------------------------------------------------------------------------
// PostgreSQL's binary array format (array_recv): a header (dimensions, a has-nulls flag, the
// element type), the length and lower bound of the one dimension, then each element as its
// length (-1 for NULL) and its bytes in the element type's binary format (its typsend): integers
// big-endian, text and bytea as they are, booleans one byte, timestamptz microseconds since
// 2000-01-01 UTC, enums their label.
constexpr std::size_t kArrayHeader = 20;

enum class ColumnType : std::uint8_t { int8, int4, text, bytea, boolean, timestamptz, enumeration };

ColumnType column_type(const std::string& sql_type) {
  if (sql_type == "bigint") return ColumnType::int8;
  if (sql_type == "integer") return ColumnType::int4;
  if (sql_type == "text") return ColumnType::text;
  if (sql_type == "bytea") return ColumnType::bytea;
  if (sql_type == "boolean") return ColumnType::boolean;
  if (sql_type == "timestamptz") return ColumnType::timestamptz;
  return ColumnType::enumeration;  // account_kind, transfer_kind: their OIDs come from the server.
}

void patch_be32(char* at, std::uint32_t value) {
  at[0] = static_cast<char>(value >> 24);
  at[1] = static_cast<char>(value >> 16);
  at[2] = static_cast<char>(value >> 8);
  at[3] = static_cast<char>(value);
}
void put_be32(std::string& out, std::uint32_t value) {
  char bytes[4];
  patch_be32(bytes, value);
  out.append(bytes, 4);
}
void put_be64(std::string& out, std::uint64_t value) {
  put_be32(out, static_cast<std::uint32_t>(value >> 32));
  put_be32(out, static_cast<std::uint32_t>(value));
}

// The microseconds from the Unix epoch to PostgreSQL's, 2000-01-01 00:00:00 UTC.
constexpr std::int64_t kPostgresEpochUnixUs = 946'684'800'000'000;

[[noreturn]] void wrong_type(const char* what) {
  throw std::logic_error(std::string("a ") + what + " value for a column of another type");
}

void binary_element(std::string& out, ColumnType type, std::int64_t value) {
  if (type == ColumnType::int8) {
    put_be32(out, 8);
    put_be64(out, static_cast<std::uint64_t>(value));
    return;
  }
  if (type != ColumnType::int4) wrong_type("integer");
  if (value < INT32_MIN || value > INT32_MAX) {
    throw std::invalid_argument("a record's value " + std::to_string(value) +
                                " does not fit an integer column");
  }
  put_be32(out, 4);
  put_be32(out, static_cast<std::uint32_t>(static_cast<std::int32_t>(value)));
}
void binary_element(std::string& out, ColumnType type, std::string_view value) {
  if (type != ColumnType::text && type != ColumnType::enumeration) wrong_type("text");
  // PostgreSQL text cannot hold NUL, in either format: refused here, as the text path does.
  if (value.find('\0') != std::string_view::npos) {
    throw std::invalid_argument("a record holds a NUL character");
  }
  put_be32(out, static_cast<std::uint32_t>(value.size()));
  out.append(value);
}
void binary_element(std::string& out, ColumnType type, const Name& value) {
  binary_element(out, type, value.view());
}
void binary_element(std::string& out, ColumnType type, Bytea value) {
  if (type != ColumnType::bytea) wrong_type("bytea");
  put_be32(out, static_cast<std::uint32_t>(value.bytes.size()));
  out.append(reinterpret_cast<const char*>(value.bytes.data()), value.bytes.size());
}
void binary_element(std::string& out, ColumnType type, bool value) {
  if (type != ColumnType::boolean) wrong_type("boolean");
  put_be32(out, 1);
  out += value ? '\1' : '\0';
}
void binary_element(std::string& out, ColumnType type, Timestamp value) {
  if (type != ColumnType::timestamptz) wrong_type("timestamp");
  put_be32(out, 8);
  put_be64(out, static_cast<std::uint64_t>(value.unix_us - kPostgresEpochUnixUs));
}

}  // namespace

// ---- BatchRows ------------------------------------------------------------------------------

// The rows of one table: one array per column, grown row by row; as array literals for SQL
// text, or in PostgreSQL's binary array format for a prepared statement's parameters.
class BatchRows::Table {
 public:
  // `ordered`: rows get their identity values in command order (unnest's order is not
  // promised to INSERT ... SELECT without an ORDER BY). `keep_existing`: a row whose key is
  // already stored is skipped (ON CONFLICT DO NOTHING) instead of failing the batch.
  Table(std::string name, std::vector<std::pair<std::string, std::string>> columns, bool binary,
        bool ordered = false, bool keep_existing = false)
      : name_(std::move(name)),
        columns_(std::move(columns)),
        arrays_(columns_.size()),
        binary_(binary),
        ordered_(ordered),
        keep_existing_(keep_existing) {
    for (const auto& column : columns_) types_.push_back(column_type(column.second));
  }

  // All columns of a row or none: unnest() pads shorter arrays with NULLs instead of failing.
  template <typename... Field>
  void add(const Field&... field) {
    static_assert(sizeof...(Field) <= kMaxColumns);
    if (sizeof...(Field) != columns_.size()) {
      throw std::logic_error("a row of " + name_ + " has the wrong number of columns");
    }
    std::array<std::size_t, kMaxColumns> before{};
    for (std::size_t i = 0; i < arrays_.size(); ++i) before[i] = arrays_[i].size();
    const std::uint32_t had_null = has_null_;
    try {
      std::size_t i = 0;
      if (binary_) {
        ((append_binary(i, field), ++i), ...);
      } else {
        ((arrays_[i] += (arrays_[i].empty() ? "{" : ","), element(arrays_[i], field), ++i), ...);
      }
    } catch (...) {
      for (std::size_t i = 0; i < arrays_.size(); ++i) arrays_[i].resize(before[i]);
      has_null_ = had_null;
      throw;
    }
    ++rows_;
  }

  std::size_t rows() const { return rows_; }

  // INSERT INTO t (c1, ...) SELECT * FROM unnest('{...}'::type1[], ...);
  void append_sql(std::string& sql) const {
    if (rows_ == 0) return;
    append_insert(sql, [&](std::string& out, std::size_t i) {
      out += '\'';
      out += arrays_[i];
      out += "}'::";
      out += columns_[i].second;
      out += "[]";
    });
    sql += ";\n";
  }

  // The same INSERT with the arrays as parameters $first, $first + 1, ...
  void append_parameterized(std::string& sql, std::size_t first) const {
    append_insert(sql, [&](std::string& out, std::size_t i) {
      out += '$';
      out += std::to_string(first + i);
      out += "::";
      out += columns_[i].second;
      out += "[]";
    });
  }

  // Writes each binary array's header (`enum_oid` names the element type of enum columns) and
  // adds the arrays to the parameters.
  void finish_binary(const std::function<std::uint32_t(const std::string&)>& enum_oid,
                     BinaryParameters& out) {
    for (std::size_t i = 0; i < arrays_.size(); ++i) {
      std::string& array = arrays_[i];
      patch_be32(array.data(), 1);  // One dimension.
      patch_be32(array.data() + 4, (has_null_ >> i) & 1U);
      patch_be32(array.data() + 8, element_oid(i, enum_oid));
      patch_be32(array.data() + 12, static_cast<std::uint32_t>(rows_));
      patch_be32(array.data() + 16, 1);  // Lower bound.
      out.values.push_back(array.data());
      out.lengths.push_back(static_cast<int>(array.size()));
      out.formats.push_back(1);
    }
  }

  std::size_t columns() const { return columns_.size(); }

  void clear() {
    for (std::string& array : arrays_) array.clear();  // Keeps the capacity for the next batch.
    has_null_ = 0;
    rows_ = 0;
  }

 private:
  template <typename T>
  void append_binary(std::size_t i, const T& value) {
    std::string& array = arrays_[i];
    if (array.empty()) array.resize(kArrayHeader);  // Written by finish_binary().
    if constexpr (std::is_same_v<T, std::optional<std::int64_t>> ||
                  std::is_same_v<T, std::optional<Bytea>> ||
                  std::is_same_v<T, std::optional<std::string_view>>) {
      if (!value) {
        put_be32(array, 0xFFFF'FFFFU);  // Length -1: NULL.
        has_null_ |= 1U << i;
        return;
      }
      binary_element(array, types_[i], *value);
    } else {
      binary_element(array, types_[i], value);
    }
  }

  std::uint32_t element_oid(
      std::size_t i, const std::function<std::uint32_t(const std::string&)>& enum_oid) const {
    switch (types_[i]) {
      case ColumnType::int8:
        return 20;
      case ColumnType::int4:
        return 23;
      case ColumnType::text:
        return 25;
      case ColumnType::bytea:
        return 17;
      case ColumnType::boolean:
        return 16;
      case ColumnType::timestamptz:
        return 1184;
      case ColumnType::enumeration:
        return enum_oid(columns_[i].second);
    }
    return 0;
  }

  // The INSERT with `argument(out, i)` writing the i-th column's array; no terminator.
  template <typename Argument>
  void append_insert(std::string& sql, Argument argument) const {
    sql += "INSERT INTO ";
    sql += name_;
    sql += " (";
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      if (i > 0) sql += ", ";
      sql += columns_[i].first;
    }
    sql += ordered_ ? ") SELECT " : ") SELECT * FROM unnest(";
    if (ordered_) {
      for (std::size_t i = 0; i < columns_.size(); ++i) {
        sql += (i > 0 ? ", c" : "c") + std::to_string(i);
      }
      sql += " FROM unnest(";
    }
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      if (i > 0) sql += ", ";
      argument(sql, i);
    }
    if (ordered_) {
      sql += ") WITH ORDINALITY AS u(";
      for (std::size_t i = 0; i < columns_.size(); ++i) sql += "c" + std::to_string(i) + ", ";
      sql += "ord) ORDER BY ord";
    } else {
      sql += ")";
    }
    if (keep_existing_) sql += " ON CONFLICT DO NOTHING";
  }

  std::string name_;
  std::vector<std::pair<std::string, std::string>> columns_;  // Name and SQL type.
  std::vector<ColumnType> types_;
  std::vector<std::string> arrays_;
  std::uint32_t has_null_ = 0;  // Bit i: column i holds a NULL.
  std::size_t rows_ = 0;
  bool binary_ = false;
  bool ordered_ = false;
  bool keep_existing_ = false;
  static constexpr std::size_t kMaxColumns = 16;
};

BatchRows::BatchRows(Format format) : format_(format) {
  // Parents before children: every reference (foreign key or statement check) is satisfied.
  rounds_ = add_table(
      "rounds",
      {{"round_key", "bigint"}, {"table_id", "text"}, {"round_id", "bigint"}, {"epoch", "bigint"}});
  round_events_ = add_table("round_events", {{"round_key", "bigint"},
                                             {"phase", "text"},
                                             {"at", "timestamptz"},
                                             {"reason", "text"},
                                             {"request", "bytea"},
                                             {"answer", "bytea"}});
  wagers_ = add_table("wagers", {{"round_key", "bigint"},
                                 {"seat", "integer"},
                                 {"link_id", "text"},
                                 {"amount_micros", "bigint"},
                                 {"units", "bigint"}});
  hands_ = add_table("hands", {{"round_key", "bigint"},
                               {"seat", "integer"},
                               {"link_id", "text"},
                               {"cards", "text"},
                               {"dealer_keyed", "boolean"},
                               {"hand", "text"}});
  draws_ = add_table("draws", {{"draw_id", "bigint"},
                               {"round_key", "bigint"},
                               {"link_id", "text"},
                               {"level", "integer"},
                               {"kind", "text"},
                               {"inputs", "text"},
                               {"outcome", "text"},
                               {"trigger_commitment", "bytea"},
                               {"drawn_at", "timestamptz"},
                               {"trigger_above_micros", "bigint"},
                               {"trigger_up_to_micros", "bigint"}});
  transfers_ = add_table("transfers", {{"link_id", "text"},
                                       {"transfer_id", "bigint"},
                                       {"debit_kind", "account_kind"},
                                       {"debit_level", "integer"},
                                       {"credit_kind", "account_kind"},
                                       {"credit_level", "integer"},
                                       {"amount_micros", "bigint"},
                                       {"kind", "transfer_kind"},
                                       {"round_key", "bigint"},
                                       {"payout_id", "bigint"},
                                       {"corrects", "bigint"}});
  payouts_ = add_table("payouts", {{"payout_id", "bigint"},
                                   {"table_id", "text"},
                                   {"round_id", "bigint"},
                                   {"seat", "integer"},
                                   {"link_id", "text"},
                                   {"kind", "text"},
                                   {"level", "integer"},
                                   {"hand", "text"},
                                   {"amount_micros", "bigint"},
                                   {"approvals_required", "integer"},
                                   {"award_transfer_id", "bigint"},
                                   {"created_at", "timestamptz"},
                                   {"epoch", "bigint"}});
  payout_events_ = add_table("payout_events", {{"payout_id", "bigint"},
                                               {"seq", "integer"},
                                               {"state", "text"},
                                               {"supervisor", "text"},
                                               {"reason", "text"},
                                               {"request_id", "text"},
                                               {"void_request_id", "text"}});
  dynamic_pays_ = add_table("dynamic_pays", {{"round_key", "bigint"},
                                             {"link_id", "text"},
                                             {"row_index", "integer"},
                                             {"option", "integer"}});
  hits_ = add_table("must_hit_by_hits", {{"round_key", "bigint"},
                                         {"link_id", "text"},
                                         {"level", "integer"},
                                         {"seat", "integer"},
                                         {"amount_micros", "bigint"},
                                         {"award_transfer_id", "bigint"},
                                         {"draw_id", "bigint"},
                                         {"payout_id", "bigint"}});
  statuses_ = add_table("link_status_events",
                        {{"link_id", "text"},
                         {"status", "text"},
                         {"at", "timestamptz"},
                         {"changed_by", "text"},
                         {"reason", "text"}},
                        /*ordered=*/true);
  // A snapshot of a link at a transfer id already snapshotted (a start right after a stop, with
  // nothing in between) is the same observation again: the stored one is kept. taken_at is the
  // commit's time, as for transfers.
  snapshots_ = add_table("balance_snapshots",
                         {{"link_id", "text"},
                          {"through_transfer_id", "bigint"},
                          {"account_kind", "account_kind"},
                          {"level", "integer"},
                          {"balance_micros", "bigint"},
                          {"reason", "text"}},
                         /*ordered=*/false, /*keep_existing=*/true);
  // After transfers: each row names its adjustment transfer.
  adjustments_ = add_table("meter_adjustments", {{"request_id", "text"},
                                                 {"link_id", "text"},
                                                 {"transfer_id", "bigint"},
                                                 {"level", "integer"},
                                                 {"amount_micros", "bigint"},
                                                 {"reason", "text"},
                                                 {"requested_by", "text"},
                                                 {"meter_after_micros", "bigint"},
                                                 {"reserve_after_micros", "bigint"},
                                                 {"at", "timestamptz"}});
  // Its trigger adds the re-base to the audit trail (migration 0018).
  rebases_ = add_table("round_counter_rebases", {{"request_id", "text"},
                                                 {"table_id", "text"},
                                                 {"epoch", "bigint"},
                                                 {"last_round_id", "bigint"},
                                                 {"next_round_id", "bigint"},
                                                 {"reason", "text"},
                                                 {"requested_by", "text"},
                                                 {"at", "timestamptz"}});
  // Its trigger adds the void to the audit trail (migration 0024).
  supervisor_voids_ = add_table("supervisor_voids", {{"request_id", "text"},
                                                     {"table_id", "text"},
                                                     {"epoch", "bigint"},
                                                     {"round_id", "bigint"},
                                                     {"reason", "text"},
                                                     {"supervisor", "text"},
                                                     {"outcome", "text"},
                                                     {"reversed_micros", "bigint"},
                                                     {"at", "timestamptz"}});
}

BatchRows::~BatchRows() = default;

BatchRows::Table* BatchRows::add_table(std::string name,
                                       std::vector<std::pair<std::string, std::string>> columns,
                                       bool ordered, bool keep_existing) {
  tables_.push_back(std::make_unique<Table>(std::move(name), std::move(columns),
                                            format_ == Format::binary, ordered, keep_existing));
  return tables_.back().get();
}

void BatchRows::add(const Records& records) {
  ++commands_;
  // Each round event with its command's first request and answer (the same command made both).
  std::size_t answered = 0;
  for (const RoundRecord& round : records.rounds) {
    const auto key = static_cast<std::int64_t>(round.round_key);
    const AnswerRecord* first = nullptr;
    for (const AnswerRecord& answer : records.answers) {
      if (answer.round_key == round.round_key && phase_of(answer.command) == round.phase) {
        first = &answer;
      }
    }
    if (first == nullptr) throw std::logic_error("a round event without its command's answer");
    ++answered;
    if (round.phase == RoundPhase::open) {
      rounds_->add(key, round.table.value(), static_cast<std::int64_t>(round.round.value()),
                   static_cast<std::int64_t>(round.epoch));
    }
    round_events_->add(key, std::string(to_string(round.phase)), Timestamp{round.time_us},
                       round.reason, bytea(first->encoded.request()),
                       bytea(first->encoded.answer()));
  }
  if (answered != records.answers.size()) {
    throw std::logic_error("a command's answer without its round event");
  }
  for (const WagerRecord& wager : records.wagers) {
    wagers_->add(static_cast<std::int64_t>(wager.round_key), static_cast<std::int64_t>(wager.seat),
                 wager.link, wager.amount.micros(), wager.units);
  }
  for (const HandRecord& hand : records.hands) {
    hands_->add(static_cast<std::int64_t>(hand.round_key), static_cast<std::int64_t>(hand.seat),
                hand.link, hand.cards, hand.dealer_keyed, hand.hand);
  }
  for (const DrawRecord& draw : records.draws) {
    std::optional<Bytea> commitment;
    std::optional<std::int64_t> above;
    std::optional<std::int64_t> up_to;
    if (draw.trigger) {
      above = draw.trigger->range_above.micros();
      up_to = draw.trigger->range_up_to.micros();
      commitment = Bytea{draw.trigger->commitment};
      // A hidden point and its salt, where only the daemon's role reads them (migration 0022),
      // through COPY (trigger_secrets_copy()).
      trigger_secrets_.push_back(
          {static_cast<std::int64_t>(draw.id), draw.trigger->point.micros(), draw.trigger->salt});
    }
    draws_->add(static_cast<std::int64_t>(draw.id), positive_or_null(draw.round_key),
                draw.link.value(), static_cast<std::int64_t>(draw.level),
                std::string(to_string(draw.kind)), draw.inputs, draw.outcome, commitment,
                Timestamp{draw.time_us}, above, up_to);
  }
  for (const TransferRecord& record : records.transfers) {
    const Transfer& t = record.transfer;
    transfers_->add(record.link, static_cast<std::int64_t>(t.id.value()),
                    std::string(to_string(t.debit.kind)), static_cast<std::int64_t>(t.debit.level),
                    std::string(to_string(t.credit.kind)),
                    static_cast<std::int64_t>(t.credit.level), t.amount.micros(),
                    std::string(to_string(t.kind)), positive_or_null(t.origin.round),
                    positive_or_null(t.origin.payout), positive_or_null(t.corrects.value()));
  }
  add_payouts(records);
  for (const DynamicPayRecord& pay : records.dynamic_pays) {
    dynamic_pays_->add(static_cast<std::int64_t>(pay.round_key), pay.link.value(),
                       static_cast<std::int64_t>(pay.row), static_cast<std::int64_t>(pay.option));
  }
  for (const MustHitByHitRecord& hit : records.hits) {
    hits_->add(static_cast<std::int64_t>(hit.round_key), hit.link.value(),
               static_cast<std::int64_t>(hit.level), static_cast<std::int64_t>(hit.seat),
               hit.amount.micros(), static_cast<std::int64_t>(hit.award.value()),
               static_cast<std::int64_t>(hit.draw_id),
               static_cast<std::int64_t>(hit.payout.value()));
  }
  for (const LinkStatusRecord& status : records.link_statuses) {
    statuses_->add(status.link.value(), std::string(to_string(status.status)),
                   Timestamp{status.time_us}, status.changed_by, status.reason);
  }
  for (const RoundCounterRebaseRecord& rebase : records.rebases) {
    rebases_->add(rebase.request_id, rebase.table.value(), static_cast<std::int64_t>(rebase.epoch),
                  static_cast<std::int64_t>(rebase.last_round.value()),
                  static_cast<std::int64_t>(rebase.next_round.value()), rebase.reason,
                  rebase.requested_by, Timestamp{rebase.time_us});
  }
  for (const SupervisorVoidRecord& voided : records.supervisor_voids) {
    supervisor_voids_->add(voided.request_id, voided.table.value(),
                           static_cast<std::int64_t>(voided.epoch),
                           static_cast<std::int64_t>(voided.round.value()), voided.reason,
                           voided.supervisor, std::string(to_string(voided.outcome)),
                           voided.reversed.micros(), Timestamp{voided.time_us});
  }
  for (const BalanceSnapshotRecord& snapshot : records.balance_snapshots) {
    const std::string reason(to_string(snapshot.reason));
    for (const auto& [account, balance] : snapshot.balances) {
      snapshots_->add(snapshot.link.value(), static_cast<std::int64_t>(snapshot.through.value()),
                      std::string(to_string(account.kind)),
                      static_cast<std::int64_t>(account.level), balance.micros(), reason);
    }
  }
  add_adjustments(records);
}

void BatchRows::add_adjustments(const Records& records) {
  for (const MeterAdjustmentRecord& adjustment : records.adjustments) {
    adjustments_->add(adjustment.request_id, adjustment.link.value(),
                      static_cast<std::int64_t>(adjustment.transfer.value()),
                      static_cast<std::int64_t>(adjustment.level), adjustment.amount.micros(),
                      adjustment.reason, adjustment.requested_by, adjustment.meter_after.micros(),
                      adjustment.reserve_after.micros(), Timestamp{adjustment.time_us});
  }
}

// A payout record is a new payout (payout_created()) or a change of state. Its events are
// numbered from the record alone: 1 at creation, then one per approval or request to reject,
// then the end, so that a batch is written with no look-up. Which decision made the change (an
// approval or a request to reject, when the payout still waits) is the command's decision.
void BatchRows::add_payouts(const Records& records) {
  for (const Payout& payout : records.payouts) {
    const auto approvals = static_cast<std::int64_t>(payout.approved_by.size());
    const auto requests = static_cast<std::int64_t>(payout.rejection_requested_by.size());
    if (payout_created(payout)) {
      payouts_->add(static_cast<std::int64_t>(payout.id.value()), payout.table.value(),
                    static_cast<std::int64_t>(payout.round.value()),
                    static_cast<std::int64_t>(payout.seat), payout.link.value(),
                    std::string(to_string(payout.kind)), static_cast<std::int64_t>(payout.level),
                    payout.hand, payout.amount.micros(),
                    static_cast<std::int64_t>(payout.approvals_required),
                    static_cast<std::int64_t>(payout.award_transfer.value()),
                    Timestamp{payout.created_us}, static_cast<std::int64_t>(payout.epoch));
    }
    // The decision that wrote this event, if a supervisor's: its request id goes with it.
    const PayoutDecisionRecord* decision = nullptr;
    for (const PayoutDecisionRecord& candidate : records.payout_decisions) {
      if (candidate.payout == payout.id) decision = &candidate;
    }
    // Or the supervisor's void that wrote it: its request id goes with it, apart.
    const SupervisorVoidRecord* voided = void_of(records, payout.id);
    std::string state = "pending";
    std::int64_t seq = 1 + approvals + requests;
    std::string supervisor = approvals > 0 ? payout.approved_by.back() : "";
    std::string reason;
    if (payout.state == PayoutState::paid) {
      state = "paid";
    } else if (payout.state == PayoutState::rejected) {
      state = "rejected";
      seq = 2 + approvals + requests;
      supervisor = payout.rejected_by;
      reason = payout.rejected_reason;
    } else if (decision != nullptr && decision->decision == PayoutDecision::reject) {
      state = "rejection_requested";
      supervisor = decision->supervisor;
      reason = decision->reason;
    } else if (voided != nullptr) {
      state = "rejection_requested";
      supervisor = voided->supervisor;
      reason = voided->reason;
    } else if (approvals > 0) {
      state = "approved";
    }
    std::optional<std::string_view> request_id;
    std::optional<std::string_view> void_request_id;
    if (decision != nullptr) request_id = decision->request_id;
    if (voided != nullptr) void_request_id = voided->request_id;
    payout_events_->add(static_cast<std::int64_t>(payout.id.value()), seq, state, supervisor,
                        reason, request_id, void_request_id);
  }
}

std::string BatchRows::sql() const {
  if (format_ != Format::text) throw std::logic_error("sql() of a binary batch");
  std::string sql;
  for (const auto& table : tables_) table->append_sql(sql);
  return sql;
}

std::string BatchRows::trigger_secrets_copy() const {
  std::string data;
  for (const TriggerSecret& secret : trigger_secrets_) {
    element(data, secret.draw_id);
    data += '\t';
    element(data, secret.point_micros);
    data += "\t\\\\x";  // COPY's text format doubles the backslash of bytea's \x.
    append_hex(data, secret.salt);
    data += '\n';
  }
  return data;
}

std::uint32_t BatchRows::statement_tables() const {
  std::uint32_t mask = 0;
  for (std::size_t t = 0; t < tables_.size(); ++t) {
    if (tables_[t]->rows() > 0) mask |= 1U << t;
  }
  return mask;
}

std::string BatchRows::statement_name() const {
  char name[32];
  std::snprintf(name, sizeof name, "jackpot_batch_%x", statement_tables());
  return name;
}

// WITH t0 AS (INSERT ...), t1 AS (INSERT ...) INSERT ...: one statement, so one round of
// executor start-up and one plan for the batch. The reference checks and foreign keys run at its
// end and see every table's new rows, so the order of the inserts does not matter.
std::string BatchRows::statement_sql() const {
  std::string sql;
  std::size_t parameter = 1;
  std::size_t written = 0;
  const std::size_t tables = static_cast<std::size_t>(std::popcount(statement_tables()));
  for (const auto& table : tables_) {
    if (table->rows() == 0) continue;
    ++written;
    if (written < tables) {
      sql += written == 1 ? "WITH " : ", ";
      sql += "t" + std::to_string(written) + " AS (";
    } else if (written > 1) {
      sql += ' ';
    }
    table->append_parameterized(sql, parameter);
    if (written < tables) sql += ')';
    parameter += table->columns();
  }
  return sql;
}

BinaryParameters BatchRows::finish_binary(
    const std::function<std::uint32_t(const std::string&)>& enum_oid) {
  if (format_ != Format::binary) throw std::logic_error("finish_binary() of a text batch");
  BinaryParameters parameters;
  for (const auto& table : tables_) {
    if (table->rows() > 0) table->finish_binary(enum_oid, parameters);
  }
  return parameters;
}

void BatchRows::clear() {
  for (const auto& table : tables_) table->clear();
  trigger_secrets_.clear();
  commands_ = 0;
}

std::string timestamp_text(std::int64_t unix_us) {
  std::int64_t seconds = unix_us / 1'000'000;
  std::int64_t micros = unix_us % 1'000'000;
  if (micros < 0) {
    micros += 1'000'000;
    --seconds;
  }
  const auto time = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&time, &utc);
  char text[96];
  std::snprintf(text, sizeof text, "%04d-%02d-%02d %02d:%02d:%02d.%06lld+00", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<long long>(micros));
  return text;
}

AccountKind account_kind_named(const std::string& name) {
  for (int kind = 0; kind <= static_cast<int>(AccountKind::reserve); ++kind) {
    if (to_string(static_cast<AccountKind>(kind)) == name) return static_cast<AccountKind>(kind);
  }
  throw std::runtime_error("unknown account kind '" + name + "' in the database");
}

TransferKind transfer_kind_named(const std::string& name) {
  for (int kind = 0; kind <= static_cast<int>(TransferKind::house_funded_refund); ++kind) {
    if (to_string(static_cast<TransferKind>(kind)) == name) {
      return static_cast<TransferKind>(kind);
    }
  }
  throw std::runtime_error("unknown transfer kind '" + name + "' in the database");
}

void write_links(pqxx::work& tx, const std::vector<LinkRow>& links) {
  for (const LinkRow& link : links) {
    tx.exec_params("INSERT INTO links (link_id, levels) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                   link.link_id, static_cast<std::int64_t>(link.levels));
  }
}

void write_records(pqxx::work& tx, const Records& records) {
  BatchRows rows;
  rows.add(records);
  if (!rows.trigger_secrets().empty()) {
    // As COPY's data, never in a statement's text or parameters, and before the statement that
    // writes their draws (trigger_secrets_copy()).
    pqxx::stream_to copy(tx, "jackpot_private.trigger_secrets",
                         std::vector<std::string>{"draw_id", "point_micros", "salt"});
    for (const BatchRows::TriggerSecret& secret : rows.trigger_secrets()) {
      std::string salt = "\\x";  // bytea's hex input; stream_to escapes the backslash for COPY.
      append_hex(salt, secret.salt);
      copy << std::make_tuple(secret.draw_id, secret.point_micros, salt);
    }
    copy.complete();
  }
  const std::string sql = rows.sql();
  if (!sql.empty()) tx.exec(sql);
}

}  // namespace jackpot::storage
