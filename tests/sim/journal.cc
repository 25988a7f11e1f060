#include "tests/sim/journal.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "controller/durability/recovery.h"

namespace jackpot::sim {
namespace {

const Transfer* find_transfer(const std::vector<Records>& commands, const std::string& link,
                              TransferId id) {
  for (const Records& records : commands) {
    for (const TransferRecord& t : records.transfers) {
      if (t.link.str() == link && t.transfer.id == id) return &t.transfer;
    }
  }
  return nullptr;
}

}  // namespace

// Mirrors storage/state_loader.cc query by query (the comments name the SQL each part stands
// for), over the committed records instead of the tables the record writer fills from them.
storage::StoredState Journal::stored_state() const {
  storage::StoredState state;
  // SELECT link_id FROM links ORDER BY link_id
  std::vector<std::pair<LinkId, std::uint32_t>> ids = links_;
  std::sort(ids.begin(), ids.end(),
            [](const auto& a, const auto& b) { return a.first.value() < b.first.value(); });
  for (const auto& [id, levels] : ids) {
    storage::StoredLink link{id, levels, {}, TransferId(1), {}, LinkStatus::open};
    // account_balances: the sum of every transfer per account that has moved.
    std::map<std::pair<int, std::uint32_t>, std::int64_t> sums;
    std::uint64_t max_id = 0;
    // The latest hidden trigger per level, by draw id.
    std::map<std::uint32_t, std::pair<std::uint64_t, HiddenTrigger>> triggers;
    for (const Records& records : commands_) {
      for (const TransferRecord& t : records.transfers) {
        if (t.link.str() != id.value()) continue;
        const Transfer& transfer = t.transfer;
        sums[{static_cast<int>(transfer.debit.kind), transfer.debit.level}] -=
            transfer.amount.micros();
        sums[{static_cast<int>(transfer.credit.kind), transfer.credit.level}] +=
            transfer.amount.micros();
        max_id = std::max<std::uint64_t>(max_id, transfer.id.value());
      }
      for (const DrawRecord& draw : records.draws) {
        if (draw.link != id || draw.kind != DrawKind::hidden_trigger || !draw.trigger) continue;
        auto& latest = triggers[draw.level];
        if (draw.id >= latest.first) latest = {draw.id, *draw.trigger};
      }
      for (const LinkStatusRecord& status : records.link_statuses) {
        if (status.link == id) link.status = status.status;
      }
    }
    for (const auto& [account, micros] : sums) {
      link.balances.emplace_back(
          AccountRef{static_cast<AccountKind>(account.first), account.second},
          Money::from_micros(micros));
    }
    if (max_id > 0) link.next_transfer = TransferId(max_id + 1);
    for (const auto& [level, trigger] : triggers) link.triggers.emplace_back(level, trigger.second);
    state.links.push_back(std::move(link));
  }

  // The rounds: the latest two of every table, by table id and round id.
  struct RoundRow {
    TableId table;
    RoundId round;
    RoundPhase phase = RoundPhase::open;
  };
  std::map<std::uint64_t, RoundRow> rounds;
  for (const Records& records : commands_) {
    for (const RoundRecord& r : records.rounds) {
      auto [it, added] = rounds.try_emplace(r.round_key, RoundRow{r.table, r.round, r.phase});
      // The phase of the latest event in open, locked, settled, voided order.
      if (!added && r.phase > it->second.phase) it->second.phase = r.phase;
      state.last_round_key = std::max(state.last_round_key, r.round_key);
    }
  }
  std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>> by_table;
  for (const auto& [key, row] : rounds) {
    by_table[row.table.value()].emplace_back(row.round.value(), key);
  }
  for (auto& [table, list] : by_table) {
    std::sort(list.begin(), list.end());
    const std::size_t first = list.size() > 2 ? list.size() - 2 : 0;
    for (std::size_t i = first; i < list.size(); ++i) {
      const std::uint64_t key = list[i].second;
      storage::StoredRound round;
      round.table = rounds[key].table;
      round.round = rounds[key].round;
      round.round_key = key;
      round.phase = rounds[key].phase;
      std::vector<TransferRecord> contributions;
      for (const Records& records : commands_) {
        for (const AnswerRecord& answer : records.answers) {
          if (answer.round_key == key) round.answers.push_back(answer);
        }
        for (const DynamicPayRecord& pay : records.dynamic_pays) {
          if (pay.round_key == key) round.dynamic_pays.push_back(pay);
        }
        for (const WagerRecord& wager : records.wagers) {
          if (wager.round_key == key) round.wagers.push_back(wager);
        }
        for (const TransferRecord& t : records.transfers) {
          const Transfer& transfer = t.transfer;
          if (transfer.origin.round == key && transfer.origin.payout == 0 &&
              (transfer.kind == TransferKind::contribution ||
               transfer.kind == TransferKind::overflow)) {
            contributions.push_back(t);
          }
        }
        for (const MustHitByHitRecord& hit : records.hits) {
          if (hit.round_key == key) round.hits.push_back(hit);
        }
      }
      std::stable_sort(round.dynamic_pays.begin(), round.dynamic_pays.end(),
                       [](const auto& a, const auto& b) {
                         return std::tie(a.link.value(), a.row) < std::tie(b.link.value(), b.row);
                       });
      std::stable_sort(round.wagers.begin(), round.wagers.end(), [](const auto& a, const auto& b) {
        return std::make_pair(a.link.str(), a.seat) < std::make_pair(b.link.str(), b.seat);
      });
      std::stable_sort(contributions.begin(), contributions.end(),
                       [](const auto& a, const auto& b) {
                         return std::make_pair(a.link.str(), a.transfer.id.value()) <
                                std::make_pair(b.link.str(), b.transfer.id.value());
                       });
      round.contributions = std::move(contributions);
      if (round.phase == RoundPhase::locked) {
        // SELECT DISTINCT debit_level FROM transfers WHERE link_id = <link> AND transfer_id >
        // <the round's first contribution on it> AND kind = 'award' AND debit_kind = 'meter'
        // AND round_key IS DISTINCT FROM <key>: the levels another round's award paid since.
        std::string link;
        for (const TransferRecord& contribution : round.contributions) {
          if (contribution.link.str() == link) continue;
          link = contribution.link.str();
          std::set<std::uint32_t> levels;
          for (const Records& records : commands_) {
            for (const TransferRecord& t : records.transfers) {
              const Transfer& transfer = t.transfer;
              if (t.link.str() == link && transfer.id.value() > contribution.transfer.id.value() &&
                  transfer.kind == TransferKind::award &&
                  transfer.debit.kind == AccountKind::meter && transfer.origin.round != key) {
                levels.insert(transfer.debit.level);
              }
            }
          }
          for (const std::uint32_t level : levels)
            round.awarded_since.emplace_back(LinkId(link), level);
        }
      }
      std::stable_sort(round.hits.begin(), round.hits.end(), [](const auto& a, const auto& b) {
        return std::tie(a.link.value(), a.level) < std::tie(b.link.value(), b.level);
      });
      for (const MustHitByHitRecord& hit : round.hits) {
        const Transfer* award = find_transfer(commands_, hit.link.value(), hit.award);
        round.hit_awards.push_back({Name(hit.link.value()), award ? *award : Transfer{}});
      }
      state.rounds.push_back(std::move(round));
    }
  }

  // Pending payouts: created, and neither paid nor rejected since; approvals from the
  // 'approved' events in order (storage/record_writer.cc's payout_events).
  std::map<std::uint64_t, storage::StoredPayout> created;
  std::map<std::uint64_t, bool> ended;
  for (const Records& records : commands_) {
    for (const Payout& payout : records.payouts) {
      const std::uint64_t id = payout.id.value();
      state.last_payout_id = std::max(state.last_payout_id, id);
      if (payout_created(payout)) {
        Payout row = payout;
        row.state = PayoutState::pending;
        row.approved_by.clear();
        row.rejected_reason.clear();
        row.rejected_by.clear();
        const Transfer* award =
            find_transfer(commands_, payout.link.value(), payout.award_transfer);
        created[id] = {row, award ? *award : Transfer{}};
      }
      if (payout.state == PayoutState::paid || payout.state == PayoutState::rejected) {
        ended[id] = true;
      } else if (!payout.rejection_requested_by.empty() &&
                 payout.rejection_requested_by.size() >
                     created[id].payout.rejection_requested_by.size()) {
        created[id].payout.rejection_requested_by.push_back(payout.rejection_requested_by.back());
      } else if (!payout.approved_by.empty()) {
        created[id].payout.approved_by.push_back(payout.approved_by.back());
      }
    }
    for (const DrawRecord& draw : records.draws) {
      state.last_draw_id = std::max(state.last_draw_id, draw.id);
    }
    // Decisions with their request ids and answers, as storage/state_loader.cc rebuilds them.
    for (const PayoutDecisionRecord& decision : records.payout_decisions) {
      state.payout_decisions.push_back(decision);
    }
    for (const SupervisorVoidRecord& voided : records.supervisor_voids) {
      state.supervisor_voids.push_back(voided);
    }
  }
  for (auto& [id, payout] : created) {
    if (!ended[id]) state.pending.push_back(std::move(payout));
  }
  std::sort(state.payout_decisions.begin(), state.payout_decisions.end(),
            [](const auto& a, const auto& b) { return a.request_id < b.request_id; });
  std::sort(state.supervisor_voids.begin(), state.supervisor_voids.end(),
            [](const auto& a, const auto& b) { return a.request_id < b.request_id; });
  return state;
}

// As PostgresDurability::open_new_links: a link added to the floor opens at its seeds, written
// before the engine is restored.
std::vector<std::string> Journal::open_new_links(const storage::StoredState& state) {
  auto links = jackpot::open_new_links(state, config_, random_, clock_.now_us());
  if (!links) return links.error();
  links_.insert(links_.end(), links->added.begin(), links->added.end());
  if (!links->opening.empty()) commands_.push_back(std::move(links->opening));
  return {};
}

Result<std::unique_ptr<Engine>, std::vector<std::string>> Journal::open(
    const EngineConfig& config, const std::vector<Paytable>& paytables) {
  config_ = config;
  paytables_ = paytables;
  const storage::StoredState state = stored_state();
  if (is_empty(state)) {
    Records opening;
    auto engine = Engine::create(config_, paytables_, clock_, random_, opening);
    if (!engine) return engine.error();
    for (const LinkSettings& link : config_.links) {
      links_.emplace_back(link.meters.id, static_cast<std::uint32_t>(link.meters.levels.size()));
    }
    commands_.push_back(std::move(opening));
    return engine;
  }
  if (auto problems = open_new_links(state); !problems.empty()) return problems;
  const storage::StoredState now = stored_state();
  auto snapshot = snapshot_from(now, config_);
  if (!snapshot) return snapshot.error();
  return Engine::restore(config_, paytables_, clock_, random_, *snapshot);
}

bool Journal::commit(const std::vector<Records>& batch, std::string& error) {
  const bool snapshot_only = std::all_of(batch.begin(), batch.end(), [](const Records& records) {
    Records without_snapshots = records;
    without_snapshots.balance_snapshots.clear();
    return without_snapshots.empty();
  });
  const CommitFault fault = snapshot_only ? CommitFault::none : armed_.exchange(CommitFault::none);
  const bool writes = fault == CommitFault::none || fault == CommitFault::answer_lost ||
                      fault == CommitFault::crash_after_write;
  if (writes) commands_.insert(commands_.end(), batch.begin(), batch.end());
  switch (fault) {
    case CommitFault::none:
      return true;
    case CommitFault::fail:
      error = "simulated commit failure";
      return false;
    case CommitFault::answer_lost:
      error = "simulated lost answer (the batch committed)";
      return false;
    case CommitFault::crash:
    case CommitFault::crash_after_write:
      crashed_ = true;
      error = "simulated crash during the commit";
      return false;
  }
  return false;
}

std::unique_ptr<Engine> Journal::recover(std::string& error) {
  auto engine = open(config_, paytables_);
  std::lock_guard lock(mutex_);
  if (engine) {
    recovery_error_.clear();
    return std::move(engine).value();
  }
  error = engine.error().front();
  recovery_error_ = error;
  return nullptr;
}

}  // namespace jackpot::sim
