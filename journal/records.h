#pragma once

// What the round engine decides, as plain records that the storage layer makes durable: rounds
// and their phases, wagers, evaluated hands, random draws, transfers with their link, payouts.
// Here rather than in controller/ so that storage/ depends on meters/ only.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "journal/name.h"
#include "meters/hidden_trigger.h"
#include "meters/ids.h"
#include "meters/ledger.h"
#include "meters/money.h"

namespace jackpot {

enum class AwardKind : std::uint8_t { percent, fixed, dynamic, must_hit_by, envy };

// ---- Payouts -----------------------------------------------------------------------------

enum class PayoutState : std::uint8_t { pending, paid, rejected };

struct Payout {
  PayoutId id;
  TableId table;
  RoundId round;
  std::uint32_t seat = 0;
  LinkId link;
  AwardKind kind = AwardKind::fixed;
  std::uint32_t level = 0;
  Name hand;
  Money amount;  // Frozen at the hit; whole cents.
  PayoutState state = PayoutState::pending;
  std::uint32_t approvals_required = 0;  // 0 when paid at once (below the threshold).
  std::vector<std::string> approved_by;
  std::string rejected_reason;
  TransferId award_transfer;  // The award or tray pay it pays.
  std::int64_t created_us = 0;
  std::string rejected_by;  // The supervisor who rejected it (rejected_reason says why).
  std::uint64_t epoch = 0;  // The table's round-counter epoch of its round (RoundRecord::epoch).
  // A payout that needs two supervisors needs two for a rejection too: who asked to reject it
  // while it waits for the second (their reasons are in the journal's events).
  std::vector<std::string> rejection_requested_by;
  friend bool operator==(const Payout&, const Payout&) = default;
};

// Whether a payout record is the payout's creation (no supervisor has decided anything yet),
// rather than a change of its state.
inline bool payout_created(const Payout& payout) {
  return payout.approved_by.empty() && payout.rejection_requested_by.empty() &&
         payout.state != PayoutState::rejected;
}

// ---- Records: what each command created, for the storage layer to make durable ------------

enum class RoundPhase : std::uint8_t { open, locked, settled, voided };

struct RoundRecord {
  std::uint64_t round_key = 0;  // Engine-wide; transfers' Origin::round.
  TableId table;
  RoundId round;
  RoundPhase phase = RoundPhase::open;
  std::int64_t time_us = 0;
  std::string reason;  // For a void.
  // For a void: the phase the round left (open or locked), for metrics; the journal has it as
  // the round's previous event.
  RoundPhase voided_from = RoundPhase::open;
  // The table's round-counter epoch: how many times a supervisor had re-based the table's
  // counter when the round opened. Rounds are unique by table, epoch and round id.
  std::uint64_t epoch = 0;
};

// Records name their link with a Name (journal/name.h): links are configuration, and a Name
// copies as a pointer where a link id's string copies its text, about 20 times per round.
struct WagerRecord {
  std::uint64_t round_key = 0;
  std::uint32_t seat = 0;
  Name link;
  Money amount;
  std::int64_t units = 0;
};

struct HandRecord {
  std::uint64_t round_key = 0;
  std::uint32_t seat = 0;
  Name link;
  std::string cards;  // "As Kd | 2c 3c 4c 5c 6c"; empty when keyed.
  bool dealer_keyed = false;
  Name hand;  // The row's label, or empty.
};

enum class DrawKind : std::uint8_t {
  must_hit_by_winner,
  hidden_trigger,
  dynamic_count,
  dynamic_hand,
  dynamic_option,
  // Not a draw: the round kept the Dynamic Pay selection of the table's voided round before it
  // (a void never lets a table draw again for the same deal); inputs name that round.
  dynamic_carried_over,
};

// Every random draw with its inputs and outcome.
struct DrawRecord {
  std::uint64_t id = 0;
  std::uint64_t round_key = 0;
  LinkId link;
  std::uint32_t level = 0;
  DrawKind kind = DrawKind::must_hit_by_winner;
  std::string inputs;                    // e.g. "seats=[1,3,5] weights=uniform".
  std::string outcome;                   // e.g. "seat=3".
  std::optional<HiddenTrigger> trigger;  // For hidden_trigger: the point, salt, commitment.
  std::int64_t time_us = 0;
};

struct TransferRecord {
  Name link;
  Transfer transfer;
};

enum class CommandKind : std::uint8_t { open, lock, settle, void_round };

// A command's first request and answer, encoded (controller/engine/engine_codec.h), in one
// immutable buffer made with a single allocation: the engine keeps it for replays and the command's
// record shares it with storage, so neither copies the bytes.
class EncodedCommand {
 public:
  EncodedCommand() = default;
  EncodedCommand(std::string_view request, std::string_view answer);
  // The request and the answer as written one after the other: `bytes` holds both, the first
  // `request_size` bytes the request. One copy instead of two.
  EncodedCommand(std::string_view bytes, std::size_t request_size);
  EncodedCommand(const EncodedCommand&) = default;
  EncodedCommand& operator=(const EncodedCommand&) = default;
  // A moved-from command is empty, never sizes without bytes.
  EncodedCommand(EncodedCommand&& other) noexcept
      : bytes_(std::move(other.bytes_)),
        request_size_(std::exchange(other.request_size_, 0)),
        answer_size_(std::exchange(other.answer_size_, 0)) {}
  EncodedCommand& operator=(EncodedCommand&& other) noexcept {
    bytes_ = std::move(other.bytes_);
    request_size_ = std::exchange(other.request_size_, 0);
    answer_size_ = std::exchange(other.answer_size_, 0);
    return *this;
  }
  std::string_view request() const { return {bytes_.get(), request_size_}; }
  std::string_view answer() const { return {bytes_.get() + request_size_, answer_size_}; }
  friend bool operator==(const EncodedCommand& a, const EncodedCommand& b) {
    return a.request() == b.request() && a.answer() == b.answer();
  }

 private:
  std::shared_ptr<const char[]> bytes_;
  std::size_t request_size_ = 0;
  std::size_t answer_size_ = 0;
};

// The first request and answer of a command, for replays.
struct AnswerRecord {
  std::uint64_t round_key = 0;
  CommandKind command = CommandKind::open;
  EncodedCommand encoded;
};

// One boosted hand of a round's Dynamic Pay selection: the paytable row and the option, 1..10.
struct DynamicPayRecord {
  std::uint64_t round_key = 0;
  LinkId link;
  std::uint32_t row = 0;
  std::uint32_t option = 0;
};

// A Must-Hit-By level that a round's lock carried to its trigger, and who won it.
struct MustHitByHitRecord {
  std::uint64_t round_key = 0;
  LinkId link;
  std::uint32_t level = 0;
  std::uint32_t seat = 0;
  Money amount;
  TransferId award;
  std::uint64_t draw_id = 0;
  PayoutId payout;
};

enum class LinkStatus : std::uint8_t { open, closed, unavailable };

struct LinkStatusRecord {
  LinkId link;
  LinkStatus status = LinkStatus::open;
  std::int64_t time_us = 0;
  std::string changed_by;  // Who asked for it.
  std::string reason;
};

// An operator's meter adjustment (AdminService.AdjustMeter), as applied: what a replay of its
// request id answers, and what the journal keeps with who asked and why.
struct MeterAdjustmentRecord {
  std::string request_id;  // The caller's idempotency key.
  LinkId link;
  std::uint32_t level = 0;
  Money amount;  // Signed: positive raised the meter from seed_funding, negative lowered it.
  std::string reason;
  std::string requested_by;
  TransferId transfer;  // The adjustment transfer.
  Money meter_after;    // The level's meter and reserve just after it.
  Money reserve_after;
  std::int64_t time_us = 0;
  friend bool operator==(const MeterAdjustmentRecord&, const MeterAdjustmentRecord&) = default;
};

// A supervisor's decision on a pending payout (SupervisorService.ApprovePayout, RejectPayout).
enum class PayoutDecision : std::uint8_t { approve, reject };

std::string_view to_string(PayoutDecision decision);

// A decision as applied, with the caller's request id: what a repeat of the request id answers.
// Its payout event in the journal carries the request id.
struct PayoutDecisionRecord {
  std::string request_id;  // The caller's idempotency key.
  PayoutId payout;
  PayoutDecision decision = PayoutDecision::approve;
  std::string supervisor;  // The caller's principal.
  std::string reason;      // Why, for a rejection; empty for an approval.
  Payout answer;           // The payout as the decision left it.
  friend bool operator==(const PayoutDecisionRecord&, const PayoutDecisionRecord&) = default;
};

// Why the sequencer recorded a balance snapshot.
enum class SnapshotReason : std::uint8_t { start, recovery, stop, interval, request };

// Every account of one link as the sequencer held it between two commands: the independent
// observation that the reconciliation report compares the transfers with, and where recovery
// starts summing. Written in the same transaction as the commands before it, so it includes
// exactly the link's transfers up to `through`.
struct BalanceSnapshotRecord {
  LinkId link;
  TransferId through;  // The last transfer it includes; 0 before the first.
  std::vector<std::pair<AccountRef, Money>> balances;
  SnapshotReason reason = SnapshotReason::request;
};

// A supervisor re-based a table's round counter (after a controller card swap): from now on the
// table's rounds belong to counter epoch `epoch`, and its next round id is `next_round` or
// above. Keyed by the caller's request id, so a repeat answers the same.
struct RoundCounterRebaseRecord {
  std::string request_id;
  TableId table;
  std::uint64_t epoch = 0;  // 1 for the table's first re-base, then 2, ...
  RoundId last_round;       // The table's latest round id before the re-base; 0 when none.
  RoundId next_round;
  std::string reason;
  std::string requested_by;  // The supervisor's principal, "supervisor/<id>".
  std::int64_t time_us = 0;
  friend bool operator==(const RoundCounterRebaseRecord&,
                         const RoundCounterRebaseRecord&) = default;
};

// A supervisor's void of a round (SupervisorService.VoidRound), typically one whose lock hit a
// Must-Hit-By level: the table's own void is refused for such a round. Keyed by the caller's
// request id, so a repeat answers the same. The void decides each pending hit payout of the round
// as a RejectPayout by its supervisor would; while one of them still waits for a second
// supervisor (it records the caller in rejection_requested_by) the void is `requested` and the
// round stays as it was; once none waits, the void is `voided`: the round's contributions are
// refunded and it is VOIDED.
enum class SupervisorVoidOutcome : std::uint8_t { requested, voided };

std::string_view to_string(SupervisorVoidOutcome outcome);

struct SupervisorVoidRecord {
  std::string request_id;
  TableId table;
  std::uint64_t epoch = 0;  // The round's counter epoch.
  RoundId round;
  std::string reason;
  std::string supervisor;  // The caller's principal, "supervisor/<id>".
  SupervisorVoidOutcome outcome = SupervisorVoidOutcome::requested;
  Money reversed;  // The contributions refunded (voided), or 0 (requested).
  // The round's hit payouts that were PENDING, in id order, each rejected by this void (also in
  // `rejected`: one needing one supervisor, or one another supervisor had asked to reject) or
  // asked to reject (it waits for a second supervisor); their payout events carry the void's
  // request id.
  std::vector<PayoutId> payouts;
  std::vector<PayoutId> rejected;
  std::int64_t time_us = 0;
  friend bool operator==(const SupervisorVoidRecord&, const SupervisorVoidRecord&) = default;
};

// Names as the database and the logs use them: "open", "must_hit_by", "hidden_trigger", ...
std::string_view to_string(RoundPhase phase);
std::string_view to_string(AwardKind kind);
std::string_view to_string(DrawKind kind);
std::string_view to_string(LinkStatus status);
std::string_view to_string(SnapshotReason reason);

// The records of one command; the caller clears it between commands it persists separately.
struct Records {
  std::vector<TransferRecord> transfers;
  std::vector<RoundRecord> rounds;
  std::vector<WagerRecord> wagers;
  std::vector<HandRecord> hands;
  std::vector<DrawRecord> draws;
  std::vector<Payout> payouts;  // New payouts and payouts whose state changed.
  std::vector<AnswerRecord> answers;
  std::vector<DynamicPayRecord> dynamic_pays;
  std::vector<MustHitByHitRecord> hits;
  std::vector<LinkStatusRecord> link_statuses;
  std::vector<BalanceSnapshotRecord> balance_snapshots;
  std::vector<MeterAdjustmentRecord> adjustments;
  std::vector<RoundCounterRebaseRecord> rebases;
  std::vector<PayoutDecisionRecord> payout_decisions;  // Each with its payout in `payouts`.
  std::vector<SupervisorVoidRecord> supervisor_voids;  // Each with its payouts in `payouts`.

  void clear();
  bool empty() const;
};

// The supervisor's void among `records` that rejected or asked to reject `payout`, or nothing.
const SupervisorVoidRecord* void_of(const Records& records, PayoutId payout);

}  // namespace jackpot
