#include "storage/reports.h"

#include <map>
#include <pqxx/pqxx>
#include <utility>

#include "storage/record_writer.h"
#include "storage/state_loader.h"

namespace jackpot::storage {
namespace {

// The snapshot of the link taken latest at or before `bound` (latest of all when null). Latest
// by transfer id, which follows the commits' order whatever the server's clock did: a period's
// start, chosen among the snapshots up to an earlier time, can then never lie past its end.
std::optional<PeriodBound> snapshot_at(pqxx::transaction_base& tx, const std::string& link_id,
                                       std::uint32_t levels,
                                       const std::optional<std::string>& bound) {
  const auto found = tx.exec_params(
      "SELECT through_transfer_id, (extract(epoch FROM taken_at) * 1000000)::bigint "
      "FROM balance_snapshots WHERE link_id = $1 AND ($2::timestamptz IS NULL OR taken_at <= $2) "
      "ORDER BY through_transfer_id DESC, taken_at DESC LIMIT 1",
      link_id, bound);
  if (found.empty()) return std::nullopt;
  PeriodBound snapshot;
  snapshot.through_transfer_id = static_cast<std::uint64_t>(found[0][0].as<std::int64_t>());
  snapshot.taken_us = found[0][1].as<std::int64_t>();
  snapshot.holdings.resize(levels);
  const auto rows = tx.exec_params(
      "SELECT level, sum(balance_micros)::bigint FROM balance_snapshots WHERE link_id = $1 "
      "AND through_transfer_id = $2 AND account_kind IN ('meter', 'reserve') GROUP BY level",
      link_id, static_cast<std::int64_t>(snapshot.through_transfer_id));
  for (const auto& row : rows) {
    const auto level = row[0].as<std::int64_t>();
    if (level >= 1 && level <= levels) {
      snapshot.holdings[static_cast<std::size_t>(level - 1)] =
          Money::from_micros(row[1].as<std::int64_t>());
    }
  }
  return snapshot;
}

}  // namespace

std::optional<PeriodTransfers> load_period(pqxx::connection& connection, const std::string& link_id,
                                           std::uint32_t levels,
                                           std::optional<std::int64_t> from_us,
                                           std::optional<std::int64_t> to_us) {
  pqxx::transaction<pqxx::isolation_level::repeatable_read, pqxx::readwrite_policy::read_only> tx(
      connection, "load_period");
  std::optional<std::string> from;
  std::optional<std::string> to;
  if (from_us) from = timestamp_text(*from_us);
  if (to_us) to = timestamp_text(*to_us);
  PeriodTransfers period;
  auto end = snapshot_at(tx, link_id, levels, to);
  if (!end) return std::nullopt;
  period.end = std::move(*end);
  std::optional<PeriodBound> start;
  if (from) start = snapshot_at(tx, link_id, levels, from);
  if (start) {
    period.start = std::move(*start);
  } else {
    period.start.holdings.resize(levels);  // The beginning of the ledger: nothing anywhere.
  }
  const auto rows = tx.exec_params(
      "SELECT transfer_id, debit_kind::text, debit_level, credit_kind::text, credit_level, "
      "amount_micros, kind::text FROM transfers "
      "WHERE link_id = $1 AND transfer_id > $2 AND transfer_id <= $3 ORDER BY transfer_id",
      link_id, static_cast<std::int64_t>(period.start.through_transfer_id),
      static_cast<std::int64_t>(period.end.through_transfer_id));
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

BalanceAudit audit_balances(pqxx::connection& connection) {
  pqxx::transaction<pqxx::isolation_level::repeatable_read, pqxx::readwrite_policy::read_only> tx(
      connection, "audit_balances");
  using Key = std::tuple<std::string, AccountKind, std::uint32_t>;
  std::map<Key, std::pair<Money, Money>> accounts;  // (from the snapshot, full sum)
  for (const SnapshotBalances& link : balances_from_snapshots(tx)) {
    for (const auto& [account, balance] : link.balances) {
      accounts[{link.link.value(), account.kind, account.level}].first = balance;
    }
  }
  for (const auto& row : tx.exec("SELECT link_id, account_kind::text, level, balance_micros "
                                 "FROM account_balances")) {
    accounts[{row[0].as<std::string>(), account_kind_named(row[1].as<std::string>()),
              static_cast<std::uint32_t>(row[2].as<std::int64_t>())}]
        .second = Money::from_micros(row[3].as<std::int64_t>());
  }
  BalanceAudit audit;
  for (const auto& [key, balances] : accounts) {
    const auto& [link, kind, level] = key;
    audit.accounts.push_back({link, {kind, level}, balances.first, balances.second});
    if (balances.first != balances.second) audit.consistent = false;
  }
  return audit;
}

}  // namespace jackpot::storage
