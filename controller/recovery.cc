#include "controller/recovery.h"

#include <algorithm>
#include <map>

#include "controller/engine_codec.h"

namespace jackpot {
namespace {

using Problems = std::vector<std::string>;

std::vector<std::pair<AccountRef, Money>> all_balances(const storage::StoredLink& stored,
                                                       std::uint32_t levels) {
  const Ledger layout(levels);
  auto balances = layout.balances();  // Every account, in ledger order, at zero.
  for (auto& [account, amount] : balances) {
    for (const auto& [stored_account, stored_amount] : stored.balances) {
      if (stored_account == account) amount = stored_amount;
    }
  }
  return balances;
}

std::optional<LinkSnapshot> link_snapshot(const storage::StoredState& state,
                                          const LinkSettings& settings, Problems& problems) {
  const auto stored = std::find_if(state.links.begin(), state.links.end(),
                                   [&](const auto& link) { return link.id == settings.meters.id; });
  if (stored == state.links.end()) {
    problems.push_back("link '" + settings.meters.id.value() + "' is not in the database");
    return std::nullopt;
  }
  const auto levels = static_cast<std::uint32_t>(settings.meters.levels.size());
  LinkSnapshot snapshot{settings.meters.id, all_balances(*stored, levels), stored->next_transfer,
                        std::vector<std::optional<HiddenTrigger>>(levels), stored->status};
  for (const auto& [level, trigger] : stored->triggers) {
    if (level >= 1 && level <= levels) snapshot.hidden[level - 1] = trigger;
  }
  return snapshot;
}

// Whether kept bytes are a request or answer this engine can replay.
template <typename T>
bool decodes(std::string_view bytes) {
  return decode<T>(bytes).has_value();
}

std::optional<RoundSnapshot> round_snapshot(const storage::StoredRound& stored,
                                            const TableSettings& table, Problems& problems) {
  const std::size_t links = table.links.size();
  const auto index_of = [&](const LinkId& link) {
    for (std::size_t i = 0; i < links; ++i) {
      if (table.links[i].link == link) return i;
    }
    return links;
  };
  const std::string name =
      "round " + std::to_string(stored.round.value()) + " of table '" + table.id.value() + "'";
  RoundSnapshot round;
  round.id = stored.round;
  round.key = stored.round_key;
  round.phase = stored.phase;
  round.dynamic.resize(links);
  round.wagers.resize(links);
  round.contributions.resize(links);
  round.awarded_since.resize(links);
  bool fits = true;
  const auto place = [&](const LinkId& link) {
    const std::size_t i = index_of(link);
    if (i == links) fits = false;
    return i;
  };
  for (const auto& pay : stored.dynamic_pays) {
    if (const auto i = place(pay.link); i < links)
      round.dynamic[i].emplace_back(pay.row, pay.option);
  }
  for (const auto& wager : stored.wagers) {
    if (const auto i = place(LinkId(wager.link.str())); i < links) {
      round.wagers[i].push_back({wager.seat, wager.units});
    }
  }
  for (const auto& transfer : stored.contributions) {
    if (const auto i = place(LinkId(transfer.link.str())); i < links) {
      round.contributions[i].push_back(transfer.transfer);
    }
  }
  for (const auto& [link, level] : stored.awarded_since) {
    if (const auto i = place(link); i < links) round.awarded_since[i].push_back(level);
  }
  for (std::size_t k = 0; k < stored.hits.size(); ++k) {
    const auto& hit = stored.hits[k];
    if (const auto i = place(hit.link); i < links) {
      round.hits.push_back({i, hit.level, hit.seat, hit.amount, stored.hit_awards[k].transfer,
                            hit.draw_id, hit.payout});
    }
  }
  for (auto& wagers : round.wagers) {
    std::sort(wagers.begin(), wagers.end(), [](auto& a, auto& b) { return a.seat < b.seat; });
  }
  // The engine keeps hits in the table's link order (the loader's is by link id), and by level
  // within a link, as the loader already gives them.
  std::stable_sort(round.hits.begin(), round.hits.end(),
                   [](const auto& a, const auto& b) { return a.link_index < b.link_index; });
  for (const AnswerRecord& answer : stored.answers) {
    bool decoded = true;
    std::optional<EncodedCommand>* into = nullptr;
    switch (answer.command) {
      case CommandKind::open:
        decoded = decodes<OpenRoundRequest>(answer.encoded.request()) &&
                  decodes<OpenRoundAnswer>(answer.encoded.answer());
        into = &round.opened;
        break;
      case CommandKind::lock:
        decoded = decodes<LockWagersRequest>(answer.encoded.request()) &&
                  decodes<LockWagersAnswer>(answer.encoded.answer());
        into = &round.locked;
        break;
      case CommandKind::settle:
        decoded = decodes<SettleRoundRequest>(answer.encoded.request()) &&
                  decodes<SettleRoundAnswer>(answer.encoded.answer());
        into = &round.settled;
        break;
      case CommandKind::void_round:
        decoded = decodes<VoidRoundRequest>(answer.encoded.request()) &&
                  decodes<VoidRoundAnswer>(answer.encoded.answer());
        into = &round.voided;
        break;
    }
    if (into != nullptr) *into = answer.encoded;
    if (!decoded) problems.push_back(name + ": a stored answer does not decode");
  }
  if (!fits) {
    problems.push_back(name + " names a link the table does not play");
    return std::nullopt;
  }
  return round;
}

}  // namespace

bool is_empty(const storage::StoredState& state) {
  return state.links.empty() && state.rounds.empty() && state.pending.empty();
}

Result<EngineSnapshot, std::vector<std::string>> snapshot_from(const storage::StoredState& state,
                                                               const EngineConfig& config) {
  Problems problems;
  EngineSnapshot snapshot;
  for (const LinkSettings& settings : config.links) {
    if (auto link = link_snapshot(state, settings, problems)) {
      snapshot.links.push_back(std::move(*link));
    }
  }
  for (const TableSettings& table : config.tables) {
    TableSnapshot saved{table.id, std::nullopt, std::nullopt};
    for (const storage::StoredRound& stored : state.rounds) {
      if (stored.table != table.id) continue;
      auto round = round_snapshot(stored, table, problems);
      if (!round) continue;
      saved.previous = std::move(saved.current);  // Rounds come oldest first.
      saved.current = std::move(round);
    }
    snapshot.tables.push_back(std::move(saved));
  }
  for (const storage::StoredRound& stored : state.rounds) {
    const bool known = std::any_of(config.tables.begin(), config.tables.end(),
                                   [&](const auto& table) { return table.id == stored.table; });
    if (!known) problems.push_back("table '" + stored.table.value() + "' is not on the floor");
  }
  for (const storage::StoredPayout& pending : state.pending) {
    snapshot.pending.push_back({pending.payout, pending.award});
  }
  snapshot.last_round_key = state.last_round_key;
  snapshot.last_payout_id = state.last_payout_id;
  snapshot.last_draw_id = state.last_draw_id;
  if (!problems.empty()) return problems;
  return snapshot;
}

}  // namespace jackpot
