#include "storage/record_writer.h"

#include <algorithm>
#include <ctime>
#include <optional>
#include <pqxx/pqxx>
#include <ranges>
#include <span>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace jackpot::storage {
namespace {

std::optional<std::int64_t> positive_or_null(std::uint64_t value) {
  if (value == 0) return std::nullopt;
  return static_cast<std::int64_t>(value);
}

std::string bytea_hex(std::span<const std::uint8_t> bytes) { return "\\x" + to_hex(bytes); }

// All rows of a batch become one INSERT per table, each column one array literal that unnest()
// turns back into rows, and all of those one string that goes to the server in a single round
// trip. A batch used to take two round trips per table with COPY, which was half of its write
// time; a VALUES list cost the server a parse and an expression per cell, a third of its time.
struct Batch {
  pqxx::connection_base& connection;  // For escaping.
  std::string sql;
};

using Span = std::span<const Records>;

// Every record of one kind across the commands of a batch, in order.
template <typename T>
auto all(Span records, std::vector<T> Records::*field) {
  return records | std::views::transform([field](const Records& r) -> const std::vector<T>& {
           return r.*field;
         }) |
         std::views::join;
}
template <typename T>
bool any(Span records, std::vector<T> Records::*field) {
  return std::any_of(records.begin(), records.end(),
                     [field](const Records& r) { return !(r.*field).empty(); });
}

// Array elements, as PostgreSQL's array input reads them.
void element(std::string& out, const std::string& value) {
  out += '"';
  for (const char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}
void element(std::string& out, std::int64_t value) { out += std::to_string(value); }
void element(std::string& out, bool value) { out += value ? 't' : 'f'; }
template <typename T>
void element(std::string& out, const std::optional<T>& value) {
  if (value) {
    element(out, *value);
  } else {
    out += "NULL";
  }
}

struct Column {
  std::string name;
  std::string type;  // The column's SQL type, e.g. "bigint".
};

class Rows {
 public:
  Rows(Batch& batch, std::string table, std::vector<Column> columns)
      : batch_(batch),
        table_(std::move(table)),
        columns_(std::move(columns)),
        arrays_(columns_.size()) {}

  template <typename Tuple>
  Rows& operator<<(const Tuple& row) {
    static_assert(std::tuple_size_v<Tuple> > 0);
    std::size_t i = 0;
    std::apply(
        [&](const auto&... field) {
          ((arrays_[i] += (arrays_[i].empty() ? "{" : ","), element(arrays_[i], field), ++i), ...);
        },
        row);
    if (i != columns_.size()) throw std::logic_error("a row of " + table_ + " has wrong columns");
    return *this;
  }

  void complete() {
    if (arrays_.empty() || arrays_[0].empty()) return;
    std::string& sql = batch_.sql;
    sql += "INSERT INTO " + table_ + " (";
    for (std::size_t i = 0; i < columns_.size(); ++i) sql += (i > 0 ? ", " : "") + columns_[i].name;
    sql += ") SELECT * FROM unnest(";
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      sql += (i > 0 ? ", '" : "'") + batch_.connection.esc(arrays_[i] + "}") +
             "'::" + columns_[i].type + "[]";
    }
    sql += ");\n";
  }

 private:
  Batch& batch_;
  std::string table_;
  std::vector<Column> columns_;
  std::vector<std::string> arrays_;
};

void write_rounds(Batch& tx, Span records) {
  bool any_open = false;
  for (const RoundRecord& round : all(records, &Records::rounds))
    any_open |= round.phase == RoundPhase::open;
  if (any_open) {
    Rows rows(
        tx, "rounds",
        std::vector<Column>{{"round_key", "bigint"}, {"table_id", "text"}, {"round_id", "bigint"}});
    for (const RoundRecord& round : all(records, &Records::rounds)) {
      if (round.phase != RoundPhase::open) continue;
      rows << std::make_tuple(static_cast<std::int64_t>(round.round_key), round.table.value(),
                              static_cast<std::int64_t>(round.round.value()));
    }
    rows.complete();
  }
  if (!any(records, &Records::rounds)) return;
  Rows events(
      tx, "round_events",
      std::vector<Column>{
          {"round_key", "bigint"}, {"phase", "text"}, {"at", "timestamptz"}, {"reason", "text"}});
  for (const RoundRecord& round : all(records, &Records::rounds)) {
    events << std::make_tuple(static_cast<std::int64_t>(round.round_key),
                              std::string(to_string(round.phase)), timestamp_text(round.time_us),
                              round.reason);
  }
  events.complete();
}

void write_wagers_and_hands(Batch& tx, Span records) {
  if (any(records, &Records::wagers)) {
    Rows rows(tx, "wagers",
              std::vector<Column>{{"round_key", "bigint"},
                                  {"seat", "integer"},
                                  {"link_id", "text"},
                                  {"amount_micros", "bigint"},
                                  {"units", "bigint"}});
    for (const WagerRecord& wager : all(records, &Records::wagers)) {
      rows << std::make_tuple(static_cast<std::int64_t>(wager.round_key),
                              static_cast<std::int64_t>(wager.seat), wager.link.value(),
                              wager.amount.micros(), wager.units);
    }
    rows.complete();
  }
  if (any(records, &Records::hands)) {
    Rows rows(tx, "hands",
              std::vector<Column>{{"round_key", "bigint"},
                                  {"seat", "integer"},
                                  {"link_id", "text"},
                                  {"cards", "text"},
                                  {"dealer_keyed", "boolean"},
                                  {"hand", "text"}});
    for (const HandRecord& hand : all(records, &Records::hands)) {
      rows << std::make_tuple(static_cast<std::int64_t>(hand.round_key),
                              static_cast<std::int64_t>(hand.seat), hand.link.value(), hand.cards,
                              hand.dealer_keyed, hand.hand);
    }
    rows.complete();
  }
}

void write_draws(Batch& tx, Span records) {
  if (!any(records, &Records::draws)) return;
  Rows rows(tx, "draws",
            std::vector<Column>{{"draw_id", "bigint"},
                                {"round_key", "bigint"},
                                {"link_id", "text"},
                                {"level", "integer"},
                                {"kind", "text"},
                                {"inputs", "text"},
                                {"outcome", "text"},
                                {"trigger_point_micros", "bigint"},
                                {"trigger_salt", "bytea"},
                                {"trigger_commitment", "bytea"},
                                {"drawn_at", "timestamptz"},
                                {"trigger_above_micros", "bigint"},
                                {"trigger_up_to_micros", "bigint"}});
  for (const DrawRecord& draw : all(records, &Records::draws)) {
    std::optional<std::int64_t> point;
    std::optional<std::string> salt;
    std::optional<std::string> commitment;
    std::optional<std::int64_t> above;
    std::optional<std::int64_t> up_to;
    if (draw.trigger) {
      above = draw.trigger->range_above.micros();
      up_to = draw.trigger->range_up_to.micros();
      point = draw.trigger->point.micros();
      salt = bytea_hex(draw.trigger->salt);
      commitment = bytea_hex(draw.trigger->commitment);
    }
    rows << std::make_tuple(static_cast<std::int64_t>(draw.id), positive_or_null(draw.round_key),
                            draw.link.value(), static_cast<std::int64_t>(draw.level),
                            std::string(to_string(draw.kind)), draw.inputs, draw.outcome, point,
                            salt, commitment, timestamp_text(draw.time_us), above, up_to);
  }
  rows.complete();
}

void write_transfers(Batch& tx, Span records) {
  if (!any(records, &Records::transfers)) return;
  Rows rows(tx, "transfers",
            std::vector<Column>{{"link_id", "text"},
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
  for (const TransferRecord& record : all(records, &Records::transfers)) {
    const Transfer& t = record.transfer;
    rows << std::make_tuple(
        record.link.value(), static_cast<std::int64_t>(t.id.value()),
        std::string(to_string(t.debit.kind)), static_cast<std::int64_t>(t.debit.level),
        std::string(to_string(t.credit.kind)), static_cast<std::int64_t>(t.credit.level),
        t.amount.micros(), std::string(to_string(t.kind)), positive_or_null(t.origin.round),
        positive_or_null(t.origin.payout), positive_or_null(t.corrects.value()));
  }
  rows.complete();
}

// A payout record is a new payout (no approvals yet, not rejected) or a change of state. Its
// events are numbered from the record alone: 1 at creation, then one per approval, then the
// end, so that a batch is written with COPY and no look-up.
void write_payouts(Batch& tx, Span records) {
  if (!any(records, &Records::payouts)) return;
  bool any_new = false;
  for (const Payout& payout : all(records, &Records::payouts)) {
    any_new |= payout.approved_by.empty() && payout.state != PayoutState::rejected;
  }
  if (any_new) {
    Rows rows(tx, "payouts",
              std::vector<Column>{{"payout_id", "bigint"},
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
                                  {"created_at", "timestamptz"}});
    for (const Payout& payout : all(records, &Records::payouts)) {
      if (!payout.approved_by.empty() || payout.state == PayoutState::rejected) continue;
      rows << std::make_tuple(
          static_cast<std::int64_t>(payout.id.value()), payout.table.value(),
          static_cast<std::int64_t>(payout.round.value()), static_cast<std::int64_t>(payout.seat),
          payout.link.value(), std::string(to_string(payout.kind)),
          static_cast<std::int64_t>(payout.level), payout.hand, payout.amount.micros(),
          static_cast<std::int64_t>(payout.approvals_required),
          static_cast<std::int64_t>(payout.award_transfer.value()),
          timestamp_text(payout.created_us));
    }
    rows.complete();
  }
  Rows events(tx, "payout_events",
              std::vector<Column>{{"payout_id", "bigint"},
                                  {"seq", "integer"},
                                  {"state", "text"},
                                  {"supervisor", "text"},
                                  {"reason", "text"}});
  for (const Payout& payout : all(records, &Records::payouts)) {
    const auto approvals = static_cast<std::int64_t>(payout.approved_by.size());
    std::string state = "pending";
    std::int64_t seq = 1 + approvals;
    if (payout.state == PayoutState::paid) state = "paid";
    if (payout.state == PayoutState::pending && approvals > 0) state = "approved";
    if (payout.state == PayoutState::rejected) {
      state = "rejected";
      seq = 2 + approvals;
    }
    const std::string supervisor = payout.state == PayoutState::rejected ? payout.rejected_by
                                   : approvals > 0                       ? payout.approved_by.back()
                                                                         : "";
    events << std::make_tuple(static_cast<std::int64_t>(payout.id.value()), seq, state, supervisor,
                              payout.rejected_reason);
  }
  events.complete();
}

std::string_view command_name(CommandKind command) {
  switch (command) {
    case CommandKind::open:
      return "open";
    case CommandKind::lock:
      return "lock";
    case CommandKind::settle:
      return "settle";
    case CommandKind::void_round:
      return "void";
  }
  return "unknown";
}

// Answers, Dynamic Pay selections, Must-Hit-By hits and link status changes.
void write_recovery_rows(Batch& tx, Span records) {
  if (any(records, &Records::answers)) {
    Rows rows(tx, "command_answers",
              std::vector<Column>{{"round_key", "bigint"},
                                  {"command", "text"},
                                  {"request", "bytea"},
                                  {"answer", "bytea"}});
    for (const AnswerRecord& answer : all(records, &Records::answers)) {
      const auto* request = reinterpret_cast<const std::uint8_t*>(answer.request.data());
      const auto* body = reinterpret_cast<const std::uint8_t*>(answer.answer.data());
      rows << std::make_tuple(
          static_cast<std::int64_t>(answer.round_key), std::string(command_name(answer.command)),
          bytea_hex({request, answer.request.size()}), bytea_hex({body, answer.answer.size()}));
    }
    rows.complete();
  }
  if (any(records, &Records::dynamic_pays)) {
    Rows rows(tx, "dynamic_pays",
              std::vector<Column>{{"round_key", "bigint"},
                                  {"link_id", "text"},
                                  {"row_index", "integer"},
                                  {"option", "integer"}});
    for (const DynamicPayRecord& pay : all(records, &Records::dynamic_pays)) {
      rows << std::make_tuple(static_cast<std::int64_t>(pay.round_key), pay.link.value(),
                              static_cast<std::int64_t>(pay.row),
                              static_cast<std::int64_t>(pay.option));
    }
    rows.complete();
  }
  if (any(records, &Records::hits)) {
    Rows rows(tx, "must_hit_by_hits",
              std::vector<Column>{{"round_key", "bigint"},
                                  {"link_id", "text"},
                                  {"level", "integer"},
                                  {"seat", "integer"},
                                  {"amount_micros", "bigint"},
                                  {"award_transfer_id", "bigint"},
                                  {"draw_id", "bigint"},
                                  {"payout_id", "bigint"}});
    for (const MustHitByHitRecord& hit : all(records, &Records::hits)) {
      rows << std::make_tuple(
          static_cast<std::int64_t>(hit.round_key), hit.link.value(),
          static_cast<std::int64_t>(hit.level), static_cast<std::int64_t>(hit.seat),
          hit.amount.micros(), static_cast<std::int64_t>(hit.award.value()),
          static_cast<std::int64_t>(hit.draw_id), static_cast<std::int64_t>(hit.payout.value()));
    }
    rows.complete();
  }
  Rows statuses(tx, "link_status_events",
                std::vector<Column>{{"link_id", "text"},
                                    {"status", "text"},
                                    {"at", "timestamptz"},
                                    {"changed_by", "text"},
                                    {"reason", "text"}});
  for (const LinkStatusRecord& status : all(records, &Records::link_statuses)) {
    statuses << std::make_tuple(status.link.value(), std::string(to_string(status.status)),
                                timestamp_text(status.time_us), status.changed_by, status.reason);
  }
  statuses.complete();
}

}  // namespace

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
  for (int kind = 0; kind <= static_cast<int>(TransferKind::tray_pay_reversal); ++kind) {
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

std::string records_sql(pqxx::connection_base& connection, std::span<const Records> batch) {
  Batch sql{connection, {}};
  write_rounds(sql, batch);
  write_wagers_and_hands(sql, batch);
  write_draws(sql, batch);
  write_transfers(sql, batch);
  write_payouts(sql, batch);
  write_recovery_rows(sql, batch);
  return std::move(sql.sql);
}

void write_records(pqxx::work& tx, const Records& records) {
  const std::string sql = records_sql(tx.conn(), std::span<const Records>(&records, 1));
  if (!sql.empty()) tx.exec(sql);
}

}  // namespace jackpot::storage
