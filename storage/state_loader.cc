#include "storage/state_loader.h"

#include <map>
#include <pqxx/pqxx>
#include <stdexcept>

#include "storage/record_writer.h"

namespace jackpot::storage {
namespace {

template <typename Enum, typename Namer>
Enum named(const std::string& name, Enum last, Namer namer) {
  for (int value = 0; value <= static_cast<int>(last); ++value) {
    if (namer(static_cast<Enum>(value)) == name) return static_cast<Enum>(value);
  }
  throw std::runtime_error("unknown value '" + name + "' in the database");
}

std::uint64_t u64(const pqxx::field& field) {
  return field.is_null() ? 0 : static_cast<std::uint64_t>(field.as<std::int64_t>());
}

std::uint32_t u32(const pqxx::field& field) {
  return static_cast<std::uint32_t>(field.as<std::int64_t>());
}

std::string bytes(const pqxx::field& field) { return pqxx::binarystring(field).str(); }

Transfer transfer_of(const pqxx::row& row, int first) {
  Transfer t;
  t.id = TransferId(u64(row[first]));
  t.debit = {account_kind_named(row[first + 1].as<std::string>()), u32(row[first + 2])};
  t.credit = {account_kind_named(row[first + 3].as<std::string>()), u32(row[first + 4])};
  t.amount = Money::from_micros(row[first + 5].as<std::int64_t>());
  t.kind = transfer_kind_named(row[first + 6].as<std::string>());
  t.origin = {u64(row[first + 7]), u64(row[first + 8])};
  t.corrects = TransferId(u64(row[first + 9]));
  return t;
}

constexpr const char* kTransferColumns =
    "transfer_id, debit_kind::text, debit_level, credit_kind::text, credit_level, "
    "amount_micros, kind::text, round_key, payout_id, corrects";

void load_links(pqxx::transaction_base& tx, StoredState& state) {
  std::map<std::string, std::size_t> index;
  for (const auto& row : tx.exec("SELECT link_id, levels FROM links ORDER BY link_id")) {
    index[row[0].as<std::string>()] = state.links.size();
    state.links.push_back(
        {LinkId(row[0].as<std::string>()), u32(row[1]), {}, TransferId(1), {}, {}});
  }
  for (SnapshotBalances& link : balances_from_snapshots(tx)) {
    state.links[index.at(link.link.value())].balances = std::move(link.balances);
  }
  // Every query below finds its rows through an index, one look-up per link, level or table,
  // so that a start reads what the engine keeps, not the history behind it (migration 0014).
  for (const auto& row :
       tx.exec("SELECT l.link_id, (SELECT max(t.transfer_id) + 1 FROM transfers t "
               "WHERE t.link_id = l.link_id) FROM links l")) {
    if (row[1].is_null()) continue;  // No transfer yet: the ledger's first id.
    state.links[index.at(row[0].as<std::string>())].next_transfer = TransferId(u64(row[1]));
  }
  // The latest hidden trigger of each level that ever drew one: the (link, level) pairs are
  // found by skipping through the index of hidden-trigger draws, then the newest draw of each.
  for (const auto& row : tx.exec(
           "WITH RECURSIVE drawn (link_id, level) AS ("
           "  (SELECT link_id, level FROM draws WHERE kind = 'hidden_trigger' "
           "   ORDER BY link_id, level LIMIT 1) "
           "  UNION ALL "
           "  SELECT next.link_id, next.level FROM drawn CROSS JOIN LATERAL ("
           "    SELECT d.link_id, d.level FROM draws d WHERE d.kind = 'hidden_trigger' "
           "    AND (d.link_id, d.level) > (drawn.link_id, drawn.level) "
           "    ORDER BY d.link_id, d.level LIMIT 1) next) "
           "SELECT drawn.link_id, drawn.level, s.point_micros, s.salt, "
           "d.trigger_commitment, d.trigger_above_micros, d.trigger_up_to_micros "
           "FROM drawn CROSS JOIN LATERAL ("
           "  SELECT * FROM draws d WHERE d.kind = 'hidden_trigger' AND d.link_id = drawn.link_id "
           "  AND d.level = drawn.level ORDER BY d.draw_id DESC LIMIT 1) d "
           "JOIN jackpot_private.trigger_secrets s ON s.draw_id = d.draw_id "
           "ORDER BY drawn.link_id, drawn.level")) {
    HiddenTrigger trigger;
    trigger.point = Money::from_micros(row[2].as<std::int64_t>());
    const std::string salt = bytes(row[3]);
    const std::string commitment = bytes(row[4]);
    std::copy(salt.begin(), salt.end(), trigger.salt.begin());
    std::copy(commitment.begin(), commitment.end(), trigger.commitment.begin());
    trigger.range_above = Money::from_micros(row[5].as<std::int64_t>());
    trigger.range_up_to = Money::from_micros(row[6].as<std::int64_t>());
    state.links[index.at(row[0].as<std::string>())].triggers.emplace_back(u32(row[1]), trigger);
  }
  // Each link's latest status, and when it entered it: the first of the latest run of events
  // with that status (setting a closed link closed again does not move the time).
  for (const auto& row : tx.exec(
           "SELECT l.link_id, latest.status, (SELECT (extract(epoch FROM min(e.at)) * 1000000)"
           "::bigint FROM link_status_events e WHERE e.link_id = l.link_id AND e.seq > "
           "coalesce((SELECT max(p.seq) FROM link_status_events p WHERE p.link_id = l.link_id "
           "AND p.status <> latest.status), 0)) FROM links l JOIN LATERAL (SELECT e.status FROM "
           "link_status_events e WHERE e.link_id = l.link_id ORDER BY e.seq DESC LIMIT 1) latest "
           "ON true")) {
    StoredLink& link = state.links[index.at(row[0].as<std::string>())];
    link.status = named(row[1].as<std::string>(), LinkStatus::unavailable,
                        [](LinkStatus v) { return to_string(v); });
    link.status_since_us = row[2].as<std::int64_t>();
  }
}

void load_round_details(pqxx::transaction_base& tx, StoredRound& round) {
  const std::string key = std::to_string(round.round_key);
  for (const auto& row : tx.exec("SELECT phase, request, answer FROM round_events WHERE "
                                 "request IS NOT NULL AND round_key = " +
                                 key)) {
    const std::string phase = row[0].as<std::string>();
    const CommandKind kind = phase == "open"      ? CommandKind::open
                             : phase == "locked"  ? CommandKind::lock
                             : phase == "settled" ? CommandKind::settle
                                                  : CommandKind::void_round;
    round.answers.push_back({round.round_key, kind, EncodedCommand(bytes(row[1]), bytes(row[2]))});
  }
  for (const auto& row : tx.exec("SELECT link_id, row_index, option FROM dynamic_pays WHERE "
                                 "round_key = " +
                                 key + " ORDER BY link_id, row_index")) {
    round.dynamic_pays.push_back(
        {round.round_key, LinkId(row[0].as<std::string>()), u32(row[1]), u32(row[2])});
  }
  for (const auto& row : tx.exec("SELECT seat, link_id, amount_micros, units FROM wagers WHERE "
                                 "round_key = " +
                                 key + " ORDER BY link_id, seat")) {
    round.wagers.push_back({round.round_key, u32(row[0]), Name(row[1].as<std::string>()),
                            Money::from_micros(row[2].as<std::int64_t>()),
                            row[3].as<std::int64_t>()});
  }
  for (const auto& row : tx.exec(std::string("SELECT link_id, ") + kTransferColumns +
                                 " FROM transfers WHERE round_key = " + key +
                                 " AND kind IN ('contribution', 'overflow') "
                                 // A rejected Must-Hit-By payout also posts an overflow with the
                                 // round's key, and its payout's id; the lock's have none.
                                 "AND payout_id IS NULL "
                                 "ORDER BY link_id, transfer_id")) {
    round.contributions.push_back({Name(row[0].as<std::string>()), transfer_of(row, 1)});
  }
  if (round.phase == RoundPhase::locked) {
    // Contributions come by link and id: the first of each link is where its lock began. The
    // primary key (link_id, transfer_id) reads only the transfers since.
    std::string link;
    for (const TransferRecord& contribution : round.contributions) {
      if (contribution.link.str() == link) continue;
      link = contribution.link.str();
      for (const auto& row :
           tx.exec_params("SELECT DISTINCT debit_level FROM transfers WHERE link_id = $1 AND "
                          "transfer_id > $2 AND kind = 'award' AND debit_kind = 'meter' AND "
                          "round_key IS DISTINCT FROM $3 ORDER BY debit_level",
                          link, static_cast<std::int64_t>(contribution.transfer.id.value()),
                          static_cast<std::int64_t>(round.round_key))) {
        round.awarded_since.emplace_back(LinkId(link), u32(row[0]));
      }
    }
  }
  for (const auto& row : tx.exec("SELECT link_id, level, seat, amount_micros, award_transfer_id, "
                                 "draw_id, payout_id FROM must_hit_by_hits WHERE round_key = " +
                                 key + " ORDER BY link_id, level")) {
    round.hits.push_back({round.round_key, LinkId(row[0].as<std::string>()), u32(row[1]),
                          u32(row[2]), Money::from_micros(row[3].as<std::int64_t>()),
                          TransferId(u64(row[4])), u64(row[5]), PayoutId(u64(row[6]))});
  }
  for (const MustHitByHitRecord& hit : round.hits) {
    const auto award =
        tx.exec_params1(std::string("SELECT ") + kTransferColumns +
                            " FROM transfers WHERE link_id = $1 AND transfer_id = $2",
                        hit.link.value(), static_cast<std::int64_t>(hit.award.value()));
    round.hit_awards.push_back({Name(hit.link.value()), transfer_of(award, 0)});
  }
}

void load_rounds(pqxx::transaction_base& tx, StoredState& state) {
  // The tables that have rounds, found by skipping through the (table_id, round_id) index from
  // one table to the next, then each table's two highest round ids read backwards from it: a
  // few index look-ups per table, however many rounds each has played.
  const auto rows = tx.exec(
      "WITH RECURSIVE played (table_id) AS ("
      "  (SELECT table_id FROM rounds ORDER BY table_id LIMIT 1) "
      "  UNION ALL "
      "  SELECT (SELECT r.table_id FROM rounds r WHERE r.table_id > played.table_id "
      "          ORDER BY r.table_id LIMIT 1) "
      "  FROM played WHERE played.table_id IS NOT NULL) "
      "SELECT r.round_key, r.table_id, r.round_id, r.epoch, "
      "  (SELECT phase FROM round_events e WHERE e.round_key = r.round_key ORDER BY "
      "   array_position(ARRAY['open', 'locked', 'settled', 'voided'], e.phase) DESC LIMIT 1) "
      "FROM played CROSS JOIN LATERAL ("
      "  SELECT round_key, table_id, round_id, epoch FROM rounds "
      "  WHERE rounds.table_id = played.table_id ORDER BY epoch DESC, round_id DESC LIMIT 2) r "
      "ORDER BY r.table_id, r.epoch, r.round_id");
  for (const auto& row : rows) {
    StoredRound round;
    round.round_key = u64(row[0]);
    round.table = TableId(row[1].as<std::string>());
    round.round = RoundId(u64(row[2]));
    round.epoch = u64(row[3]);
    round.phase = named(row[4].as<std::string>(), RoundPhase::voided,
                        [](RoundPhase v) { return to_string(v); });
    load_round_details(tx, round);
    state.rounds.push_back(std::move(round));
  }
}

// Re-bases are rare supervisor actions: every one is read (a repeat of its request id answers
// it).
void load_rebases(pqxx::transaction_base& tx, StoredState& state) {
  for (const auto& row :
       tx.exec("SELECT request_id, table_id, epoch, last_round_id, next_round_id, reason, "
               "requested_by, (extract(epoch FROM at) * 1000000)::bigint "
               "FROM round_counter_rebases ORDER BY table_id, epoch")) {
    state.rebases.push_back({row[0].as<std::string>(), TableId(row[1].as<std::string>()),
                             u64(row[2]), RoundId(u64(row[3])), RoundId(u64(row[4])),
                             row[5].as<std::string>(), row[6].as<std::string>(),
                             row[7].as<std::int64_t>()});
  }
}

// Supervisors' voids are rare: every one is read (a repeat of its request id answers it), with the
// payouts it rejected or asked to reject (their events carry its request id).
void load_supervisor_voids(pqxx::transaction_base& tx, StoredState& state) {
  std::map<std::string, std::vector<PayoutId>> payouts;
  std::map<std::string, std::vector<PayoutId>> rejected;
  for (const auto& row : tx.exec("SELECT void_request_id, payout_id, state FROM payout_events "
                                 "WHERE void_request_id IS NOT NULL ORDER BY payout_id")) {
    payouts[row[0].as<std::string>()].push_back(PayoutId(u64(row[1])));
    if (row[2].as<std::string>() == "rejected") {
      rejected[row[0].as<std::string>()].push_back(PayoutId(u64(row[1])));
    }
  }
  for (const auto& row :
       tx.exec("SELECT request_id, table_id, epoch, round_id, reason, supervisor, outcome, "
               "reversed_micros, (extract(epoch FROM at) * 1000000)::bigint "
               "FROM supervisor_voids ORDER BY request_id COLLATE \"C\"")) {
    SupervisorVoidRecord voided;
    voided.request_id = row[0].as<std::string>();
    voided.table = TableId(row[1].as<std::string>());
    voided.epoch = u64(row[2]);
    voided.round = RoundId(u64(row[3]));
    voided.reason = row[4].as<std::string>();
    voided.supervisor = row[5].as<std::string>();
    voided.outcome = named(row[6].as<std::string>(), SupervisorVoidOutcome::voided,
                           [](SupervisorVoidOutcome v) { return to_string(v); });
    voided.reversed = Money::from_micros(row[7].as<std::int64_t>());
    voided.payouts = std::move(payouts[voided.request_id]);
    voided.rejected = std::move(rejected[voided.request_id]);
    voided.time_us = row[8].as<std::int64_t>();
    state.supervisor_voids.push_back(std::move(voided));
  }
}

void load_pending_payouts(pqxx::transaction_base& tx, StoredState& state) {
  const auto rows = tx.exec(
      std::string("SELECT p.payout_id, p.table_id, p.round_id, p.seat, p.link_id, p.kind, "
                  "p.level, p.hand, p.amount_micros, p.approvals_required, "
                  "(extract(epoch FROM p.created_at) * 1000000)::bigint, p.epoch") +
      ", t.transfer_id, t.debit_kind::text, t.debit_level, t.credit_kind::text, "
      "t.credit_level, t.amount_micros, t.kind::text, t.round_key, t.payout_id, t.corrects" +
      // A payout paid at once is recorded paid from its first event; only one that waits for a
      // supervisor has a 'pending' event. Those are found through their own index, and the ones
      // that have not ended since are the pending payouts.
      " FROM payout_events s JOIN payouts p ON p.payout_id = s.payout_id "
      "JOIN transfers t ON t.link_id = p.link_id AND t.transfer_id = p.award_transfer_id "
      "WHERE s.state = 'pending' AND NOT EXISTS (SELECT 1 FROM payout_events e WHERE "
      "e.payout_id = s.payout_id AND e.state IN ('paid', 'rejected')) ORDER BY p.payout_id");
  for (const auto& row : rows) {
    Payout payout;
    payout.id = PayoutId(u64(row[0]));
    payout.table = TableId(row[1].as<std::string>());
    payout.round = RoundId(u64(row[2]));
    payout.seat = u32(row[3]);
    payout.link = LinkId(row[4].as<std::string>());
    payout.kind =
        named(row[5].as<std::string>(), AwardKind::envy, [](AwardKind v) { return to_string(v); });
    payout.level = u32(row[6]);
    payout.hand = Name(row[7].as<std::string>());
    payout.amount = Money::from_micros(row[8].as<std::int64_t>());
    payout.approvals_required = u32(row[9]);
    payout.created_us = row[10].as<std::int64_t>();
    payout.epoch = u64(row[11]);
    const Transfer award = transfer_of(row, 12);
    payout.award_transfer = award.id;
    for (const auto& event :
         tx.exec("SELECT state, supervisor FROM payout_events WHERE state IN ('approved', "
                 "'rejection_requested') AND payout_id = " +
                 std::to_string(payout.id.value()) + " ORDER BY seq")) {
      (event[0].as<std::string>() == "approved" ? payout.approved_by
                                                : payout.rejection_requested_by)
          .push_back(event[1].as<std::string>());
    }
    state.pending.push_back({std::move(payout), award});
  }
}

// Every supervisor's decision with a request id (rare: payouts above a link's approval
// threshold), each with its answer: the payout as the decision left it, rebuilt from the payout
// and its events up to the decision's.
void load_payout_decisions(pqxx::transaction_base& tx, StoredState& state) {
  std::map<std::uint64_t, std::vector<std::pair<std::int64_t, std::string>>> approvals;
  std::map<std::uint64_t, std::vector<std::pair<std::int64_t, std::string>>> requests;
  for (const auto& row :
       // Every approval, as load_pending_payouts reads them ('approved' events, whoever they
       // name), the last approval that paid ('paid' naming a supervisor), and every request to
       // reject.
       tx.exec("SELECT payout_id, seq, supervisor, state FROM payout_events WHERE (state IN "
               "('approved', 'rejection_requested') OR (state = 'paid' AND supervisor <> '')) "
               "AND payout_id IN (SELECT payout_id FROM payout_events WHERE request_id IS NOT "
               "NULL) ORDER BY payout_id, seq")) {
    (row[3].as<std::string>() == "rejection_requested" ? requests : approvals)[u64(row[0])]
        .emplace_back(row[1].as<std::int64_t>(), row[2].as<std::string>());
  }
  for (const auto& row : tx.exec(
           "SELECT e.request_id, e.payout_id, e.seq, e.state, e.supervisor, e.reason, p.table_id, "
           "p.round_id, p.seat, p.link_id, p.kind, p.level, p.hand, p.amount_micros, "
           "p.approvals_required, p.award_transfer_id, "
           "(extract(epoch FROM p.created_at) * 1000000)::bigint, p.epoch "
           "FROM payout_events e JOIN payouts p ON p.payout_id = e.payout_id "
           "WHERE e.request_id IS NOT NULL ORDER BY e.request_id COLLATE \"C\"")) {
    PayoutDecisionRecord decision;
    decision.request_id = row[0].as<std::string>();
    decision.payout = PayoutId(u64(row[1]));
    const std::int64_t seq = row[2].as<std::int64_t>();
    const std::string event = row[3].as<std::string>();
    decision.supervisor = row[4].as<std::string>();
    Payout& payout = decision.answer;
    payout.id = decision.payout;
    payout.table = TableId(row[6].as<std::string>());
    payout.round = RoundId(u64(row[7]));
    payout.seat = u32(row[8]);
    payout.link = LinkId(row[9].as<std::string>());
    payout.kind =
        named(row[10].as<std::string>(), AwardKind::envy, [](AwardKind v) { return to_string(v); });
    payout.level = u32(row[11]);
    payout.hand = Name(row[12].as<std::string>());
    payout.amount = Money::from_micros(row[13].as<std::int64_t>());
    payout.approvals_required = u32(row[14]);
    payout.award_transfer = TransferId(u64(row[15]));
    payout.created_us = row[16].as<std::int64_t>();
    payout.epoch = u64(row[17]);
    for (const auto& [approved_seq, supervisor] : approvals[payout.id.value()]) {
      if (approved_seq <= seq) payout.approved_by.push_back(supervisor);
    }
    for (const auto& [requested_seq, supervisor] : requests[payout.id.value()]) {
      if (requested_seq <= seq) payout.rejection_requested_by.push_back(supervisor);
    }
    if (event == "rejection_requested") {
      decision.decision = PayoutDecision::reject;
      decision.reason = row[5].as<std::string>();
      payout.state = PayoutState::pending;
    } else if (event == "rejected") {
      decision.decision = PayoutDecision::reject;
      decision.reason = row[5].as<std::string>();
      payout.state = PayoutState::rejected;
      payout.rejected_by = decision.supervisor;
      payout.rejected_reason = decision.reason;
    } else if (event == "approved" || event == "paid") {
      payout.state = event == "paid" ? PayoutState::paid : PayoutState::pending;
    } else {
      throw std::runtime_error("payout " + std::to_string(payout.id.value()) + " has a '" + event +
                               "' event with a request id: only decisions carry one");
    }
    state.payout_decisions.push_back(std::move(decision));
  }
}

// Every adjustment: operators' rare corrections, all kept for replays of their request ids.
void load_adjustments(pqxx::transaction_base& tx, StoredState& state) {
  for (const auto& row :
       tx.exec("SELECT request_id, link_id, transfer_id, level, amount_micros, reason, "
               "requested_by, meter_after_micros, reserve_after_micros, "
               "(extract(epoch FROM at) * 1000000)::bigint FROM meter_adjustments "
               "ORDER BY request_id COLLATE \"C\"")) {
    state.adjustments.push_back(
        {row[0].as<std::string>(), LinkId(row[1].as<std::string>()), u32(row[3]),
         Money::from_micros(row[4].as<std::int64_t>()), row[5].as<std::string>(),
         row[6].as<std::string>(), TransferId(u64(row[2])),
         Money::from_micros(row[7].as<std::int64_t>()),
         Money::from_micros(row[8].as<std::int64_t>()), row[9].as<std::int64_t>()});
  }
}

struct AccountKey {
  AccountKind kind;
  std::uint32_t level;
  bool operator<(const AccountKey& other) const {
    return std::pair(kind, level) < std::pair(other.kind, other.level);
  }
};

std::int64_t add_checked(std::int64_t a, std::int64_t b, const std::string& link) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    throw SnapshotMismatch("link '" + link + "': a balance leaves the int64 range");
  }
  return sum;
}

}  // namespace

std::vector<SnapshotBalances> balances_from_snapshots(pqxx::transaction_base& tx) {
  std::vector<SnapshotBalances> links;
  std::vector<std::map<AccountKey, std::int64_t>> sums;
  // Each link's latest balance snapshot (the primary key's last entry for the link), or 0 for a
  // link without one: then every transfer counts.
  for (const auto& row :
       tx.exec("SELECT l.link_id, coalesce((SELECT max(through_transfer_id) FROM "
               "balance_snapshots b WHERE b.link_id = l.link_id), 0) FROM links l ORDER BY "
               "l.link_id")) {
    links.push_back({LinkId(row[0].as<std::string>()), TransferId(u64(row[1])), 0, {}});
    sums.emplace_back();
  }
  // The few transfers after a snapshot are not worth parallel workers, whose start-up cost the
  // planner underrates (measured: 0.2-0.5 s per query on a busy machine, for 1 ms of index scan);
  // the setting goes back to what it was for the rest of the transaction.
  const std::string parallel =
      tx.exec1("SELECT current_setting('max_parallel_workers_per_gather')")[0].as<std::string>();
  tx.exec("SELECT set_config('max_parallel_workers_per_gather', '0', true)");
  // One link at a time, with its snapshot's transfer id as a parameter: the planner then sees
  // how few transfers follow it and reads them through the primary key (joined to the snapshots
  // instead, it guessed a third of the table and scanned all of it).
  for (std::size_t at = 0; at < links.size(); ++at) {
    SnapshotBalances& link = links[at];
    const std::string& id = link.link.value();
    const auto through = static_cast<std::int64_t>(link.snapshot_through.value());
    const auto add = [&](const std::string& kind, std::uint32_t level, std::int64_t micros) {
      // A `breakage` account, which nothing ever posted to, is no longer part of a ledger:
      // snapshots taken before it was removed hold a zero row of it, which means nothing.
      if (kind == kRetiredBreakageAccount) {
        if (micros == 0) return;
        throw SnapshotMismatch("link '" + id + "': its balance snapshot through transfer " +
                               std::to_string(through) + " holds " +
                               Money::from_micros(micros).to_string() +
                               " on the breakage account, which no transfer ever posted to");
      }
      std::int64_t& sum = sums[at][{account_kind_named(kind), level}];
      sum = add_checked(sum, micros, id);
    };
    // The snapshot, checked on its own: double entry means it sums to zero.
    std::int64_t snapshot_total = 0;
    for (const auto& row :
         tx.exec_params("SELECT account_kind::text, level, balance_micros FROM balance_snapshots "
                        "WHERE link_id = $1 AND through_transfer_id = $2",
                        id, through)) {
      add(row[0].as<std::string>(), u32(row[1]), row[2].as<std::int64_t>());
      snapshot_total = add_checked(snapshot_total, row[2].as<std::int64_t>(), id);
    }
    if (snapshot_total != 0) {
      throw SnapshotMismatch("link '" + id + "': its balance snapshot through transfer " +
                             std::to_string(through) + " sums to " +
                             Money::from_micros(snapshot_total).to_string() + ", not zero");
    }
    // The snapshot's own last transfer must still be there: were it gone (a journal whose tail
    // was cut, or a restore from an older copy), the ledger would hand out its id again and the
    // snapshot, which includes the lost transfer, would hide both.
    if (through > 0 &&
        !tx.exec_params1("SELECT EXISTS (SELECT 1 FROM transfers WHERE link_id = $1 AND "
                         "transfer_id = $2)",
                         id, through)[0]
             .as<bool>()) {
      throw SnapshotMismatch("link '" + id + "': its balance snapshot includes transfer " +
                             std::to_string(through) +
                             ", which the journal no longer holds; the journal needs an audit "
                             "before the link serves");
    }
    // The transfers after it: numbered on from it, then summed per account.
    const auto numbered = tx.exec_params1(
        "SELECT count(*), coalesce(max(transfer_id), $2) FROM transfers "
        "WHERE link_id = $1 AND transfer_id > $2",
        id, through);
    link.transfers_after = u64(numbered[0]);
    const std::uint64_t last = u64(numbered[1]);
    if (last - link.snapshot_through.value() != link.transfers_after) {
      throw SnapshotMismatch(
          "link '" + id + "': " + std::to_string(link.transfers_after) +
          " transfers follow its balance snapshot through transfer " + std::to_string(through) +
          ", numbered up to " + std::to_string(last) +
          ": a transfer is missing or doubled; the journal needs an audit before the link "
          "serves");
    }
    for (const auto& row : tx.exec_params(
             "SELECT account_kind::text, level, sum(delta)::bigint FROM ("
             "  SELECT credit_kind AS account_kind, credit_level AS level, amount_micros AS delta "
             "    FROM transfers WHERE link_id = $1 AND transfer_id > $2"
             "  UNION ALL"
             "  SELECT debit_kind, debit_level, -amount_micros "
             "    FROM transfers WHERE link_id = $1 AND transfer_id > $2"
             ") moves GROUP BY account_kind, level",
             id, through)) {
      add(row[0].as<std::string>(), u32(row[1]), row[2].as<std::int64_t>());
    }
  }
  tx.exec_params("SELECT set_config('max_parallel_workers_per_gather', $1, true)", parallel);
  for (std::size_t at = 0; at < links.size(); ++at) {
    for (const auto& [account, micros] : sums[at]) {
      links[at].balances.emplace_back(AccountRef{account.kind, account.level},
                                      Money::from_micros(micros));
    }
  }
  return links;
}

StoredState load_state(pqxx::connection& connection) {
  pqxx::transaction<pqxx::isolation_level::repeatable_read, pqxx::readwrite_policy::read_only> tx(
      connection, "load_state");
  // Every query is a handful of index look-ups: compiling them to machine code would cost more
  // than running them (JIT was a third of a start on an empty database).
  tx.exec("SET LOCAL jit = off");
  StoredState state;
  load_links(tx, state);
  load_rounds(tx, state);
  load_pending_payouts(tx, state);
  load_adjustments(tx, state);
  load_rebases(tx, state);
  load_supervisor_voids(tx, state);
  load_payout_decisions(tx, state);
  const auto counters = tx.exec1(
      "SELECT (SELECT coalesce(max(round_key), 0) FROM rounds), "
      "(SELECT coalesce(max(payout_id), 0) FROM payouts), "
      "(SELECT coalesce(max(draw_id), 0) FROM draws)");
  state.last_round_key = u64(counters[0]);
  state.last_payout_id = u64(counters[1]);
  state.last_draw_id = u64(counters[2]);
  return state;
}

}  // namespace jackpot::storage
