#pragma once

// Everything the engine holds between commands, as plain data: what recovery rebuilds from
// storage, and what a test compares. Engine::snapshot() takes it; Engine::restore() builds an
// engine from it.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "controller/engine/engine_types.h"
#include "meters/hidden_trigger.h"
#include "meters/ledger.h"

namespace jackpot {

struct LinkSnapshot {
  LinkId id;
  std::vector<std::pair<AccountRef, Money>> balances;
  TransferId next_transfer;
  std::vector<std::optional<HiddenTrigger>> hidden;  // Per level, 1..N at index 0..N-1.
  LinkStatus status = LinkStatus::open;
  // When a link that is not OPEN entered its status (Unix microseconds, from its record); 0 when
  // open or unknown. An OPEN link is open since the engine holding it was built (start or
  // recovery): before that no table could play it.
  std::int64_t status_since_us = 0;
  friend bool operator==(const LinkSnapshot&, const LinkSnapshot&) = default;
};

// One round at a table, in any phase, with what replays need.
struct RoundSnapshot {
  struct SeatWager {
    std::uint32_t seat = 0;
    std::int64_t units = 0;
    friend bool operator==(const SeatWager&, const SeatWager&) = default;
  };
  struct Hit {
    std::size_t link_index = 0;
    std::uint32_t level = 0;
    std::uint32_t seat = 0;
    Money amount;
    Transfer award;
    std::uint64_t draw_id = 0;
    PayoutId payout;  // Created PENDING at the hit; shown with the seat's awards at settlement.
    friend bool operator==(const Hit&, const Hit&) = default;
  };

  RoundId id;
  std::uint64_t key = 0;
  RoundPhase phase = RoundPhase::open;
  std::uint64_t epoch = 0;  // The table's counter epoch when it opened (RoundRecord::epoch).
  // Per link of the table, in configuration order.
  std::vector<std::vector<std::pair<std::size_t, std::uint32_t>>> dynamic;  // (row, option)
  std::vector<std::vector<SeatWager>> wagers;                               // Ascending seats.
  std::vector<std::vector<Transfer>> contributions;
  std::vector<Hit> hits;
  // Per link: the levels (ascending) whose meter paid an award of another round since this round
  // locked. Kept only while the round is LOCKED: its void refunds what it left in those levels
  // from the house (plan_round_reversal, meters/link.h); empty in every other phase.
  std::vector<std::vector<std::uint32_t>> awarded_since;

  // The first request and answer of each command, encoded (controller/engine/engine_codec.h), as
  // the journal keeps them: a repeat is compared with the request's bytes and answered by decoding
  // the answer's.
  std::optional<EncodedCommand> opened;
  std::optional<EncodedCommand> locked;
  std::optional<EncodedCommand> settled;
  std::optional<EncodedCommand> voided;
  friend bool operator==(const RoundSnapshot&, const RoundSnapshot&) = default;
};

struct TableSnapshot {
  TableId id;
  std::optional<RoundSnapshot> current;   // The table's latest round.
  std::optional<RoundSnapshot> previous;  // The one before, kept for replays.
  // The counter epoch (re-bases so far) and, after a re-base, its next round id - 1: the
  // counter until a round opens in the epoch (controller/engine/round_counter.h).
  std::uint64_t epoch = 0;
  std::uint64_t rebased_base = 0;
  friend bool operator==(const TableSnapshot&, const TableSnapshot&) = default;
};

struct PendingPayout {
  Payout payout;
  Transfer award;  // What paying or rejecting it moves.
  friend bool operator==(const PendingPayout&, const PendingPayout&) = default;
};

struct EngineSnapshot {
  std::vector<LinkSnapshot> links;     // In configuration order.
  std::vector<TableSnapshot> tables;   // In configuration order.
  std::vector<PendingPayout> pending;  // By payout id.
  // Every meter adjustment applied, by request id: what their replays answer.
  std::vector<MeterAdjustmentRecord> adjustments;
  // Every re-base of a table's round counter, by request id: a repeat answers from them.
  std::vector<RoundCounterRebaseRecord> rebases;
  // Every supervisor's decision on a payout, by request id: a repeat answers from them.
  std::vector<PayoutDecisionRecord> payout_decisions;
  // Every supervisor's void of a round, by request id: a repeat answers from them.
  std::vector<SupervisorVoidRecord> supervisor_voids;
  std::uint64_t last_round_key = 0;
  std::uint64_t last_payout_id = 0;
  std::uint64_t last_draw_id = 0;
  friend bool operator==(const EngineSnapshot&, const EngineSnapshot&) = default;
};

}  // namespace jackpot
