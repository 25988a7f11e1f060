#pragma once

#include <cstdint>
#include <pqxx/connection>
#include <utility>
#include <vector>

#include "meters/records.h"

namespace jackpot::storage {

// What recovery reads back: the raw durable state from which the daemon rebuilds its engine.

struct StoredLink {
  LinkId id;
  std::uint32_t levels = 0;  // As the link was opened: a link's levels never change.
  std::vector<std::pair<AccountRef, Money>> balances;  // Accounts that have moved, summed.
  TransferId next_transfer{1};
  std::vector<std::pair<std::uint32_t, HiddenTrigger>> triggers;  // The latest per level.
  LinkStatus status = LinkStatus::open;
};

struct StoredRound {
  TableId table;
  RoundId round;
  std::uint64_t round_key = 0;
  RoundPhase phase = RoundPhase::open;
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
  std::vector<StoredRound> rounds;  // The latest two rounds of every table, oldest first.
  std::vector<StoredPayout> pending;
  std::uint64_t last_round_key = 0;
  std::uint64_t last_payout_id = 0;
  std::uint64_t last_draw_id = 0;
};

// Reads everything in one repeatable-read snapshot of the database.
StoredState load_state(pqxx::connection& connection);

}  // namespace jackpot::storage
