#pragma once

#include <cstdint>
#include <optional>
#include <pqxx/connection>
#include <string>
#include <vector>

#include "meters/ledger.h"

namespace jackpot::storage {

// One bound of a reconciled period: a balance snapshot the daemon recorded (migration 0013), or
// the beginning of the ledger, where every balance is zero.
struct PeriodBound {
  std::uint64_t through_transfer_id = 0;  // The last transfer it includes; 0 at the beginning.
  std::optional<std::int64_t> taken_us;   // Unix microseconds; nothing at the beginning.
  std::vector<Money> holdings;            // Meter + reserve per level (index level - 1).
};

// What an auditor's reconciliation of a link over a period needs: two independent observations
// of the levels' holdings, and the transfers the journal holds between them.
struct PeriodTransfers {
  PeriodBound start;
  PeriodBound end;
  // The link's transfers with ids in (start.through_transfer_id, end.through_transfer_id], in id
  // order, as many as the journal holds (a lost or doubled one shows in the reconciliation).
  std::vector<Transfer> transfers;
};

// The period of `link_id` bounded by its balance snapshots: it starts at the latest snapshot
// taken at or before `from_us` (the beginning of the ledger when there is none, or no
// `from_us`) and ends at the latest snapshot taken at or before `to_us` (the latest of all
// without `to_us`). Unix microseconds. Nothing when no snapshot of the link was taken at or
// before `to_us`: the end cannot be observed.
std::optional<PeriodTransfers> load_period(pqxx::connection& connection, const std::string& link_id,
                                           std::uint32_t levels,
                                           std::optional<std::int64_t> from_us,
                                           std::optional<std::int64_t> to_us);

// One account of a link, as recovery computes it (latest snapshot + the transfers after it) and
// as the sum of every transfer of the link.
struct AccountAudit {
  std::string link_id;
  AccountRef account;
  Money from_snapshot;
  Money full_sum;
};

struct BalanceAudit {
  std::vector<AccountAudit> accounts;  // Every account either path knows, by link, kind, level.
  bool consistent = true;              // Every account's two balances are equal.
};

// The full re-sum that recovery no longer does, for audits: reads the whole journal. Throws
// std::runtime_error when the snapshot path itself is inconsistent (storage::
// balances_from_snapshots).
BalanceAudit audit_balances(pqxx::connection& connection);

}  // namespace jackpot::storage
