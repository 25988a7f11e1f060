#include "storage/reports.h"

#include <pqxx/pqxx>

#include "storage/record_writer.h"

namespace jackpot::storage {
namespace {

// Each level's holdings from the transfers posted before `bound` (all of them when null).
std::vector<Money> holdings_before(pqxx::transaction_base& tx, const std::string& link_id,
                                   std::uint32_t levels, const std::optional<std::string>& bound) {
  std::vector<Money> holdings(levels);
  const auto rows = tx.exec_params(
      "SELECT level, sum(delta)::bigint FROM ("
      "  SELECT credit_level AS level, amount_micros AS delta FROM transfers WHERE link_id = $1 "
      "    AND credit_kind IN ('meter', 'reserve') AND ($2::timestamptz IS NULL OR posted_at < $2)"
      "  UNION ALL"
      "  SELECT debit_level, -amount_micros FROM transfers WHERE link_id = $1 "
      "    AND debit_kind IN ('meter', 'reserve') AND ($2::timestamptz IS NULL OR posted_at < $2)"
      ") moves GROUP BY level",
      link_id, bound);
  for (const auto& row : rows) {
    const auto level = row[0].as<std::int64_t>();
    if (level >= 1 && level <= levels) {
      holdings[static_cast<std::size_t>(level - 1)] = Money::from_micros(row[1].as<std::int64_t>());
    }
  }
  return holdings;
}

}  // namespace

PeriodTransfers load_period(pqxx::connection& connection, const std::string& link_id,
                            std::uint32_t levels, std::optional<std::int64_t> from_us,
                            std::optional<std::int64_t> to_us) {
  pqxx::transaction<pqxx::isolation_level::repeatable_read, pqxx::readwrite_policy::read_only> tx(
      connection, "load_period");
  std::optional<std::string> from;
  std::optional<std::string> to;
  if (from_us) from = timestamp_text(*from_us);
  if (to_us) to = timestamp_text(*to_us);
  PeriodTransfers period;
  period.start = from ? holdings_before(tx, link_id, levels, from) : std::vector<Money>(levels);
  period.end = holdings_before(tx, link_id, levels, to);
  const auto rows = tx.exec_params(
      "SELECT transfer_id, debit_kind::text, debit_level, credit_kind::text, credit_level, "
      "amount_micros, kind::text, round_key, payout_id, corrects FROM transfers "
      "WHERE link_id = $1 AND ($2::timestamptz IS NULL OR posted_at >= $2) "
      "AND ($3::timestamptz IS NULL OR posted_at < $3) ORDER BY transfer_id",
      link_id, from, to);
  for (const auto& row : rows) {
    Transfer t;
    t.id = TransferId(static_cast<std::uint64_t>(row[0].as<std::int64_t>()));
    t.debit = {account_kind_named(row[1].as<std::string>()),
               static_cast<std::uint32_t>(row[2].as<std::int64_t>())};
    t.credit = {account_kind_named(row[3].as<std::string>()),
                static_cast<std::uint32_t>(row[4].as<std::int64_t>())};
    t.amount = Money::from_micros(row[5].as<std::int64_t>());
    t.kind = transfer_kind_named(row[6].as<std::string>());
    period.transfers.push_back(t);
  }
  return period;
}

}  // namespace jackpot::storage
