#pragma once

// The round engine's requests, answers, errors and records: plain data, no behaviour.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/hands/paytable.h"
#include "journal/records.h"
#include "meters/hidden_trigger.h"
#include "meters/ids.h"
#include "meters/ledger.h"
#include "meters/money.h"

namespace jackpot {

// Why the engine refused a command, by name; mapped to one gRPC status each in one table
// (status_code() in controller/api/grpc_services.cc). A refused
// command changes nothing.
enum class EngineError : std::uint8_t {
  unknown_table,            // NOT_FOUND
  unknown_link,             // NOT_FOUND; also a level the link does not have.
  unknown_payout,           // NOT_FOUND
  round_not_found,          // NOT_FOUND: above every round the table opened.
  round_id_not_increasing,  // FAILED_PRECONDITION: a round id at or below the last one.
  round_superseded,         // FAILED_PRECONDITION: two or more rounds behind the table's latest.
  round_id_jump_too_far,    // FAILED_PRECONDITION: above the counter by more than kMaxRoundIdJump.
  previous_round_open,      // FAILED_PRECONDITION: settle or void it first.
  wrong_round_state,        // FAILED_PRECONDITION: e.g. settling a round that is not LOCKED.
  link_closed,              // FAILED_PRECONDITION: an operator closed a link of the table.
  link_unavailable,         // UNAVAILABLE: the controller cannot make changes durable.
  replay_differs,           // FAILED_PRECONDITION: the request's ids were used for another one.
  must_hit_by_needs_supervisor,  // FAILED_PRECONDITION: void of a round whose Must-Hit-By hit.
  payout_not_pending,            // FAILED_PRECONDITION
  already_approved,              // FAILED_PRECONDITION: the same supervisor approves twice.
  ledger_refused,                // FAILED_PRECONDITION: a meter would go below zero or overflow.
  database_unavailable,          // UNAVAILABLE: a report could not read the journal now; retry.
  report_end_unobserved,  // FAILED_PRECONDITION: no balance snapshot at or before a report's end.
  balances_disagree,  // FAILED_PRECONDITION: the balance audit found snapshots that do not agree.
  // INVALID_ARGUMENT, each its own name:
  round_id_out_of_range,  // A round id 0 or above 2^63-1.
  request_id_invalid,     // A request id empty, too long or with NUL characters.
  reason_missing,         // An empty or blank reason where one is needed.
  reason_invalid,         // A reason too long or with NUL characters.
  requester_missing,      // No name of who asks (the adapters always give one).
  requester_invalid,      // A requester's name with NUL characters.
  adjustment_zero,        // A meter adjustment of 0.
  seat_unknown,           // A seat the table does not have.
  link_not_played,        // A wager on a link the table does not play.
  wager_repeated,         // A seat wagering twice on one link.
  wager_amount_invalid,   // A wager not positive or not a whole number of base wagers.
  wager_above_max,        // A wager above the link's max_wager_units.
  wager_overflow,         // Wagers whose sum overflows.
  seat_not_wagering,      // A hand for a seat that did not wager.
  seat_reported_twice,    // Two hands for one seat.
  hand_ambiguous,         // A seat with both or neither of cards and a keyed hand.
  hand_missing,           // A wagering seat without a hand.
  link_cards_unexpected,  // Link cards at a table none of whose links draws them.
  card_invalid,           // Text that is not a card.
  card_count_wrong,       // Not the game's number of cards (a seat's, the board, link cards).
  card_dealt_twice,       // One card twice: in one list, or in two (seats, board, link cards).
  keyed_hand_unknown,     // A keyed hand that names no row of the table's paytables.
  keyed_hand_not_a_hand,  // A keyed hand naming the Must-Hit-By row (won by the lock's draw).
  // DATA_LOSS: a row of the audit trail that the chain's own schema would refuse (a hash not 32
  // bytes, no chain head): it was altered behind the daemon's back.
  audit_trail_altered,
};

// The refusal's name, as the wire's message starts ("seat_not_wagering: seat 3 did not ...").
std::string_view to_string(EngineError error);

struct EngineFailure {
  EngineError code;
  std::string message;
};

// ---- Requests ----------------------------------------------------------------------------

struct OpenRoundRequest {
  TableId table;
  RoundId round;
  friend bool operator==(const OpenRoundRequest&, const OpenRoundRequest&) = default;
};

struct WagerRequest {
  std::uint32_t seat = 0;
  LinkId link;
  std::int64_t amount_cents = 0;
  friend bool operator==(const WagerRequest&, const WagerRequest&) = default;
};

struct LockWagersRequest {
  TableId table;
  RoundId round;
  std::vector<WagerRequest> wagers;
  friend bool operator==(const LockWagersRequest&, const LockWagersRequest&) = default;
};

struct SeatHandRequest {
  std::uint32_t seat = 0;
  std::vector<std::string> cards;  // The seat's own cards, or empty when keyed.
  // A paytable row as the dealer keyed it ("Full House"), or a hand event's name ("FULL_HOUSE"):
  // see keyed_event().
  std::optional<std::string> keyed_hand;
  friend bool operator==(const SeatHandRequest&, const SeatHandRequest&) = default;
};

struct SettleRoundRequest {
  TableId table;
  RoundId round;
  std::vector<SeatHandRequest> seats;
  std::vector<std::string> board;       // The table's board in deal order (flop first).
  std::vector<std::string> link_cards;  // Cards drawn separately for linked progressives.
  friend bool operator==(const SettleRoundRequest&, const SettleRoundRequest&) = default;
};

struct VoidRoundRequest {
  TableId table;
  RoundId round;
  std::string reason;
  friend bool operator==(const VoidRoundRequest&, const VoidRoundRequest&) = default;
};

// An operator's correction of one level's meter (AdminService.AdjustMeter).
struct AdjustMeterRequest {
  std::string request_id;  // Chosen by the caller: a repeat answers the first answer.
  LinkId link;
  std::uint32_t level = 0;
  Money amount;  // Signed: positive raises the meter, negative lowers it.
  std::string reason;
  friend bool operator==(const AdjustMeterRequest&, const AdjustMeterRequest&) = default;
};

// A supervisor re-bases a table's round counter (SupervisorService.RebaseRoundCounter).
struct RebaseRoundCounterRequest {
  std::string request_id;  // The caller's idempotency key.
  TableId table;
  RoundId next_round;  // The first round id the table may open after the re-base.
  std::string reason;
  friend bool operator==(const RebaseRoundCounterRequest&,
                         const RebaseRoundCounterRequest&) = default;
};

// A supervisor approves or rejects a pending payout.
struct PayoutDecisionRequest {
  std::string request_id;  // The caller's idempotency key.
  PayoutId payout;
  PayoutDecision decision = PayoutDecision::approve;
  std::string reason;  // Required to reject; must be empty to approve.
  friend bool operator==(const PayoutDecisionRequest&, const PayoutDecisionRequest&) = default;
};

// A supervisor voids a round (SupervisorService.VoidRound), e.g. one whose lock hit a
// Must-Hit-By level.
struct SupervisorVoidRequest {
  std::string request_id;  // The caller's idempotency key.
  TableId table;
  RoundId round;
  std::string reason;
  friend bool operator==(const SupervisorVoidRequest&, const SupervisorVoidRequest&) = default;
};

// ---- Answers -----------------------------------------------------------------------------

struct LevelMeterView {
  LinkId link;
  std::uint32_t level = 0;
  Name name;
  Money meter;                       // Exact; signs show it floored to the cent.
  std::optional<Money> must_hit_by;  // Scaled by the base wager.
  std::optional<Money> ceiling;
  friend bool operator==(const LevelMeterView&, const LevelMeterView&) = default;
};

struct DynamicPayView {
  Name hand;                 // The row's label.
  std::uint32_t option = 0;  // 1..10.
  Money amount;              // Scaled by the base wager.
  friend bool operator==(const DynamicPayView&, const DynamicPayView&) = default;
};

struct DynamicSelectionView {
  LinkId link;
  Name paytable_id;
  std::vector<DynamicPayView> pays;
  friend bool operator==(const DynamicSelectionView&, const DynamicSelectionView&) = default;
};

struct OpenRoundAnswer {
  TableId table;
  RoundId round;
  std::vector<DynamicSelectionView> dynamic_pays;
  friend bool operator==(const OpenRoundAnswer&, const OpenRoundAnswer&) = default;
};

struct MustHitByHitView {
  LinkId link;
  std::uint32_t level = 0;
  std::uint32_t seat = 0;
  Money amount;
  std::uint64_t draw_id = 0;
  // How the hit's payout was created: paid at once, or pending a supervisor. Empty in answers
  // kept before the codec recorded it (version 1).
  std::optional<PayoutState> payout_state = std::nullopt;
  // On a hidden-trigger level, the point that was hit with its salt and commitment. Empty at a
  // level that hits at its Must-Hit-By amount, and in answers kept before the codec recorded it.
  std::optional<HiddenTrigger> revealed = std::nullopt;
  friend bool operator==(const MustHitByHitView&, const MustHitByHitView&) = default;
};

struct LockWagersAnswer {
  TableId table;
  RoundId round;
  std::vector<LevelMeterView> meters;
  std::vector<MustHitByHitView> must_hit_by_hits;
  friend bool operator==(const LockWagersAnswer&, const LockWagersAnswer&) = default;
};

struct AwardView {
  LinkId link;
  AwardKind kind = AwardKind::fixed;
  std::uint32_t level = 0;      // PERCENT and MUST_HIT_BY.
  Name hand;                    // The row's label; for ENVY the other seat's.
  std::uint32_t from_seat = 0;  // ENVY: the seat whose hand earned it.
  Money amount;
  PayoutId payout;  // Every award is a payout of its own.
  // PAID: paid at once, below the link's approval threshold; PENDING: created waiting for a
  // supervisor. Empty in answers kept before the codec recorded it (version 1).
  std::optional<PayoutState> payout_state = std::nullopt;
  friend bool operator==(const AwardView&, const AwardView&) = default;
};

struct SeatResultView {
  std::uint32_t seat = 0;
  LinkId link;
  Name paytable_id;
  Name hand;  // The row's label, or empty when the seat's hand is on no row.
  bool dealer_keyed = false;
  std::vector<AwardView> awards;
  Money total;
  friend bool operator==(const SeatResultView&, const SeatResultView&) = default;
};

struct SettleRoundAnswer {
  TableId table;
  RoundId round;
  std::vector<SeatResultView> results;  // Highest seat first.
  std::vector<LevelMeterView> meters;
  friend bool operator==(const SettleRoundAnswer&, const SettleRoundAnswer&) = default;
};

struct AdjustMeterAnswer {
  LinkId link;
  std::uint32_t level = 0;
  Name name;
  Money meter;  // The level's meter and reserve just after the adjustment.
  Money reserve;
  TransferId transfer;
  friend bool operator==(const AdjustMeterAnswer&, const AdjustMeterAnswer&) = default;
};

struct VoidRoundAnswer {
  TableId table;
  RoundId round;
  Money reversed;
  std::vector<LevelMeterView> meters;
  friend bool operator==(const VoidRoundAnswer&, const VoidRoundAnswer&) = default;
};

}  // namespace jackpot
