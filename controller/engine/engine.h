#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "controller/engine/engine_config.h"
#include "controller/engine/engine_snapshot.h"
#include "controller/engine/engine_types.h"
#include "controller/hands/paytable.h"
#include "meters/link.h"
#include "meters/random.h"
#include "meters/result.h"

namespace jackpot {

struct AwardDecision;
struct SeatOutcome;   // What a seat's hand came to on a link (engine.cc).
struct AppliedAward;  // A settlement's award as applied, with its payout (engine.cc).

// Where the engine reads the time for its records. Injected: tests use a fixed clock.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::int64_t now_us() = 0;
};

// The round engine: every table's rounds and every link's meters, driven one command at a time
// by a single sequencer. Each command validates everything first and either refuses with a named
// error, changing nothing, or succeeds and appends the records it created to `out`. Plain C++:
// no threads, I/O, clock or random source of its own.
class Engine {
 public:
  // Opens every link at its seeds. `paytables` must hold every paytable the tables play.
  static Result<std::unique_ptr<Engine>, std::vector<std::string>> create(
      EngineConfig config, std::vector<Paytable> paytables, Clock& clock, RandomSource& random,
      Records& out);
  // An engine as a snapshot (taken by snapshot(), or rebuilt from storage) describes it, on a
  // configuration that may have been edited since (docs/architecture.md §7b). Refused, naming the
  // link, level, table, round or payout and why, when the snapshot does not fit the
  // configuration (e.g. a LOCKED round's wager on a seat the table no longer has, Dynamic Pays
  // drawn on another paytable, a pending payout on a link no longer on the floor) or breaks an
  // invariant.
  static Result<std::unique_ptr<Engine>, std::vector<std::string>> restore(
      EngineConfig config, std::vector<Paytable> paytables, Clock& clock, RandomSource& random,
      const EngineSnapshot& snapshot);
  EngineSnapshot snapshot() const;

  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Result<OpenRoundAnswer, EngineFailure> open_round(const OpenRoundRequest& request, Records& out);
  Result<LockWagersAnswer, EngineFailure> lock_wagers(const LockWagersRequest& request,
                                                      Records& out);
  Result<SettleRoundAnswer, EngineFailure> settle_round(const SettleRoundRequest& request,
                                                        Records& out);
  Result<VoidRoundAnswer, EngineFailure> void_round(const VoidRoundRequest& request, Records& out);

  // A supervisor approves a pending payout (it is paid once it has the approvals it needs: two
  // different supervisors above the link's threshold) or rejects it with a reason (the award
  // returns by compensating transfers; one that needs two supervisors to pay needs two to
  // reject: the first rejection is recorded in rejection_requested_by and the payout waits).
  // Checked in this order, each refusal changing nothing: the request id (1..kMaxIdBytes bytes, no
  // NUL) is INVALID_ARGUMENT; a request id already decided answers its first answer when the
  // request and the supervisor are the same, and is refused (replay_differs) when not; then the
  // payout (unknown: NOT_FOUND; paid or rejected: payout_not_pending), the reason (a rejection's
  // not blank, at most kMaxReasonBytes; an approval's empty), and a second decision by the same
  // supervisor, names compared case-folded (already_approved). The answer is the payout as the
  // decision left it.
  Result<Payout, EngineFailure> decide_payout(const PayoutDecisionRequest& request,
                                              const std::string& supervisor, Records& out);

  // A supervisor re-bases a table's round counter after a controller card swap: the table's
  // rounds from now on belong to a new counter epoch and its next round id is
  // `request.next_round` (controller/engine/round_counter.h). Refused while the table's latest
  // round is OPEN or LOCKED; a repeat of a request id answers its first answer, another request
  // with the same id is refused. The answer is the re-base as journaled.
  Result<RoundCounterRebaseRecord, EngineFailure> rebase_round_counter(
      const RebaseRoundCounterRequest& request, const std::string& requested_by, Records& out);

  // A supervisor voids an OPEN or LOCKED round, typically one whose lock hit a Must-Hit-By level
  // (the table's own void refuses those: must_hit_by_needs_supervisor). The round's pending hit
  // payouts are rejected (their awards return as RejectPayout returns them), then its
  // contributions are refunded as the table's void refunds them, a hit level counting as one
  // whose meter paid since the lock. Each pending hit payout is decided as decide_payout()
  // would decide the caller's rejection of it: rejected, or (needing two supervisors, none of
  // whom asked yet) asked to reject. While one still waits the void is `requested` and the round
  // stays as it was; a later void (by another supervisor) decides the rest. Checked in this
  // order, each refusal changing nothing: the request id (1..kMaxIdBytes bytes, no NUL:
  // request_id_invalid); a request id already used answers its first answer when the table,
  // round, reason and supervisor are the same, and is refused otherwise (replay_differs); the
  // round as find_round() finds it; the reason (reason_missing, reason_invalid); the round OPEN or
  // LOCKED (wrong_round_state); no hit payout of the round paid (payout_not_pending: a void
  // cannot take a paid award back); the caller not having approved or asked to reject a pending
  // hit payout already (already_approved); the ledger (ledger_refused). The answer is the void as
  // journaled.
  Result<SupervisorVoidRecord, EngineFailure> supervisor_void_round(
      const SupervisorVoidRequest& request, const std::string& supervisor, Records& out);

  // An operator opens or closes a link; who asked and why go on the record.
  Result<LinkStatus, EngineFailure> set_link_status(const LinkId& link, LinkStatus status,
                                                    const std::string& changed_by,
                                                    const std::string& reason, Records& out);
  LinkStatus link_status(const LinkId& link) const;
  // When the link entered its status (Unix microseconds): the operator's change as recorded, or,
  // for a link that has been OPEN since, when this engine was built (start or recovery); 0 for
  // an unknown link.
  std::int64_t link_status_since_us(const LinkId& link) const;

  // An operator's meter adjustment: one transfer between the level's meter and the link's
  // seed_funding (the house), with who asked and why on the record. Checked in this order, each
  // refusal changing nothing: the request id (1..kMaxIdBytes bytes), the reason (not blank, at
  // most kMaxReasonBytes bytes) and the amount (not zero) are INVALID_ARGUMENT; a request id
  // already applied answers its first answer when the request is the same, and is refused
  // (replay_differs) when it is not; an unknown link or level is NOT_FOUND; then
  // adjustment_refusal() (meters/adjustment.h) decides, with whether a LOCKED round holds money
  // on the meter (ledger_refused, or adjustment_zero for a zero amount).
  Result<AdjustMeterAnswer, EngineFailure> adjust_meter(const AdjustMeterRequest& request,
                                                        const std::string& requested_by,
                                                        Records& out);

  // Every level of the given links (all links when empty), in configuration order.
  std::vector<LevelMeterView> meters(const std::vector<LinkId>& links = {}) const;
  const Link* link(const LinkId& id) const;
  // A pending payout (paid and rejected ones leave memory; their records carry them on).
  const Payout* payout(PayoutId id) const;
  std::vector<Payout> pending_payouts() const;
  std::vector<LinkId> links_of_table(const TableId& table) const;
  const EngineConfig& config() const { return config_; }

  // Every ledger invariant of every link, and every pending payout backed by awards_payable.
  std::optional<std::string> check_invariants() const;

 private:
  struct LinkState;
  struct TableState;
  using RoundState = RoundSnapshot;

  Engine(EngineConfig config, std::vector<Paytable> paytables, Clock& clock, RandomSource& random);

  Result<TableState*, EngineFailure> find_table(const TableId& id);
  // The table and the round (current or previous) a command names.
  Result<std::pair<TableState*, RoundState*>, EngineFailure> find_round(const TableId& table,
                                                                        RoundId round);
  LinkState* find_link(const LinkId& id);
  // A payout that waits for a supervisor, or why there is none (unknown, or already decided).
  Result<Payout*, EngineFailure> pending_payout(PayoutId id);
  // How a supervisor ended a payout that has left memory (paid or rejected), if one did.
  std::optional<PayoutState> decided_payout_state(PayoutId id) const;
  // The levels of one link as answers show them, appended to `views`.
  static void add_levels(const LinkState& state, std::vector<LevelMeterView>& views);
  void meters_of_table(const TableState& table, std::vector<LevelMeterView>& views) const;
  void add_tables();
  // After a command posted awards on `link` (in link.scratch): every other table's LOCKED round
  // on that link notes the levels whose meter paid, for its void.
  void note_awards(const TableState& acting, const LinkState& link);
  // Whether the LOCKED round of some table holds money (a contribution or an overflow) on the
  // meter of `level` of `link`: its void takes exactly that back.
  bool locked_round_holds_money(const LinkState& link, std::uint32_t level) const;
  std::uint64_t next_draw_id() { return ++last_draw_id_; }
  // LockWagers' steps (engine.cc): the wagers checked, per link of the table; a Must-Hit-By hit
  // of the lock's contributions awarded to a drawn seat.
  static Result<std::vector<std::vector<RoundSnapshot::SeatWager>>, EngineFailure> check_wagers(
      const LockWagersRequest& request, const TableState& table);
  MustHitByHitView award_must_hit_by(const TableState& table, RoundState& round,
                                     std::size_t link_index, const MustHitByHit& hit,
                                     std::span<const RoundSnapshot::SeatWager> wagers,
                                     std::int64_t now, Records& out);
  // A void's steps (engine.cc): every link of the table checkpointed (its scratch cleared), and
  // rolled back; the round's contributions refunded into the links' scratch, the levels in
  // `hit_levels` (per link of the table) counting as ones whose meter paid since the lock, with
  // the round's awarded_since; the refund's transfers, answer and records.
  static std::vector<Link::Checkpoint> checkpoint_links(TableState& table);
  static void rollback_links(TableState& table, const std::vector<Link::Checkpoint>& checkpoints);
  static Result<std::int64_t, EngineFailure> refund_round(
      TableState& table, const RoundState& round,
      const std::vector<std::vector<std::uint32_t>>& hit_levels);
  VoidRoundAnswer finish_void(TableState& table, RoundState& round, const VoidRoundRequest& request,
                              std::int64_t reversed, Records& out);
  // SettleRound's last steps (after validate, evaluate and decide): the decided awards posted
  // and made payouts, all or nothing; then the records and the answer.
  Result<std::vector<AppliedAward>, EngineFailure> apply_awards(
      TableState& table, const RoundState& round,
      const std::vector<std::vector<AwardDecision>>& decisions, std::int64_t now);
  SettleRoundAnswer record_settlement(TableState& table, RoundState& round,
                                      const SettleRoundRequest& request,
                                      const std::vector<std::vector<SeatOutcome>>& outcomes,
                                      const std::vector<std::vector<AwardDecision>>& decisions,
                                      std::vector<AppliedAward>& applied, std::int64_t now,
                                      Records& out);

  EngineConfig config_;
  std::vector<Paytable> paytables_;
  Clock& clock_;
  RandomSource& random_;
  std::vector<std::unique_ptr<LinkState>> links_;
  std::unordered_map<std::string, LinkState*> links_by_id_;
  std::unordered_map<std::string, std::unique_ptr<TableState>> tables_;
  std::map<std::uint64_t, Payout> payouts_;
  std::map<std::uint64_t, Transfer> award_transfers_;  // By payout id: what paying it moves.
  // Every meter adjustment applied, by request id, for replays. Adjustments are an operator's
  // rare corrections: all of them are kept (about 200 bytes each).
  std::map<std::string, MeterAdjustmentRecord, std::less<>> adjustments_;
  std::map<std::string, RoundCounterRebaseRecord> rebases_;  // Every re-base, by request id.
  // Every supervisor's decision on a payout, by request id (rare: kept for their replays).
  std::map<std::string, PayoutDecisionRecord> payout_decisions_;
  std::map<std::string, SupervisorVoidRecord> supervisor_voids_;  // Every one, by request id.
  std::uint64_t last_round_key_ = 0;
  std::uint64_t last_payout_id_ = 0;
  std::uint64_t last_draw_id_ = 0;
};

}  // namespace jackpot
