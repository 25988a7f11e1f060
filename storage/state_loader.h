#pragma once

#include <cstdint>
#include <pqxx/connection>
#include <pqxx/transaction_base>
#include <stdexcept>
#include <utility>
#include <vector>

#include "journal/records.h"

namespace jackpot::storage {

// What recovery reads back: the raw durable state from which the daemon rebuilds its engine.

struct StoredLink {
  LinkId id;
  std::uint32_t levels = 0;  // As the link was opened: a link's levels never change.
  std::vector<std::pair<AccountRef, Money>> balances;  // Accounts that have moved, summed.
  TransferId next_transfer{1};
  std::vector<std::pair<std::uint32_t, HiddenTrigger>> triggers;  // The latest per level.
  LinkStatus status = LinkStatus::open;
  std::int64_t status_since_us = 0;  // When its latest status change was recorded; 0: never.
};

struct StoredRound {
  TableId table;
  RoundId round;
  std::uint64_t round_key = 0;
  RoundPhase phase = RoundPhase::open;
  std::uint64_t epoch = 0;  // The table's round-counter epoch (RoundRecord::epoch).
  std::vector<AnswerRecord> answers;
  std::vector<DynamicPayRecord> dynamic_pays;
  std::vector<WagerRecord> wagers;
  std::vector<TransferRecord> contributions;  // Contributions and overflows, by link and id.
  std::vector<MustHitByHitRecord> hits;
  std::vector<TransferRecord> hit_awards;  // The award transfer of each hit, in the same order.
  // For a LOCKED round: (link, level) of each meter that another round's award has paid from
  // since the round's lock, ascending; what its void refunds from the house.
  std::vector<std::pair<LinkId, std::uint32_t>> awarded_since;
};

struct StoredPayout {
  Payout payout;
  Transfer award;
};

struct StoredState {
  std::vector<StoredLink> links;
  // The latest two rounds of every table (by counter epoch, then round id), oldest first.
  std::vector<StoredRound> rounds;
  std::vector<StoredPayout> pending;
  std::vector<MeterAdjustmentRecord> adjustments;  // Every one applied, by request id.
  std::vector<RoundCounterRebaseRecord> rebases;   // Every re-base, by table and epoch.
  // Every supervisor's decision on a payout that carries a request id, by request id.
  std::vector<PayoutDecisionRecord> payout_decisions;
  // Every supervisor's void of a round, by request id.
  std::vector<SupervisorVoidRecord> supervisor_voids;
  std::uint64_t last_round_key = 0;
  std::uint64_t last_payout_id = 0;
  std::uint64_t last_draw_id = 0;
};

// Reads everything in one repeatable-read snapshot of the database. Throws when the balances
// cannot be trusted (see balances_from_snapshots).
StoredState load_state(pqxx::connection& connection);

// One link's balances as recovery computes them: its latest balance snapshot (migration 0013)
// plus the transfers after it, read through the transfers' primary key, so the work grows with
// what happened since the snapshot, not with the whole history.
struct SnapshotBalances {
  LinkId link;
  TransferId snapshot_through;        // The snapshot's last transfer; 0 without a snapshot.
  std::uint64_t transfers_after = 0;  // How many transfers were added to it.
  std::vector<std::pair<AccountRef, Money>> balances;  // Every account in either, by kind, level.
};

// The ledger's snapshot path does not hold together: its message is the daemon's own and names
// the link (no library text).
class SnapshotMismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Every link's, in link id order. Checks what it can without reading the whole history, and
// throws SnapshotMismatch naming the link when: a snapshot's balances do not sum to zero, or
// the transfers after it are not numbered through + 1, through + 2, ... without a gap or a
// repeat (a transfer lost or doubled after the snapshot).
std::vector<SnapshotBalances> balances_from_snapshots(pqxx::transaction_base& tx);

}  // namespace jackpot::storage
