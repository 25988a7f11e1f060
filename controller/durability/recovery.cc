#include "controller/durability/recovery.h"

#include <algorithm>
#include <map>

#include "controller/engine/engine_codec.h"
#include "controller/engine/round_counter.h"
#include "meters/digest.h"
#include "meters/link.h"

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
  // The ledger keeps each level's meter and reserve under its number: a level added would start
  // at nothing instead of its seed, a level removed would take its money with it.
  if (stored->levels != 0 && stored->levels != levels) {
    problems.push_back("link '" + settings.meters.id.value() + "' has " +
                       std::to_string(stored->levels) + " levels in the database but " +
                       std::to_string(levels) +
                       " on the floor: a link's levels cannot be added or removed between "
                       "restarts; put the new levels on a new link");
    return std::nullopt;
  }
  LinkSnapshot snapshot{settings.meters.id,    all_balances(*stored, levels),
                        stored->next_transfer, std::vector<std::optional<HiddenTrigger>>(levels),
                        stored->status,        stored->status_since_us};
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

bool is_live(RoundPhase phase) { return phase == RoundPhase::open || phase == RoundPhase::locked; }

std::string phase_name(RoundPhase phase) {
  return phase == RoundPhase::open ? "OPEN" : phase == RoundPhase::locked ? "LOCKED" : "finished";
}

const LinkSettings* find_link(const EngineConfig& config, const LinkId& id) {
  for (const LinkSettings& link : config.links) {
    if (link.meters.id == id) return &link;
  }
  return nullptr;
}

// A round's data on links the table no longer plays: a live round cannot go on without them (a
// wager, a contribution, a Dynamic Pay selection or a hit would be lost); a finished round keeps
// only its first answers for replays, so what it did on such a link is left out.
std::optional<RoundSnapshot> round_snapshot(const storage::StoredRound& stored,
                                            const TableSettings& table, const EngineConfig& config,
                                            Problems& problems) {
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
  round.epoch = stored.epoch;
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
    const LinkId link(wager.link.str());
    const auto i = place(link);
    if (i == links) continue;
    round.wagers[i].push_back({wager.seat, wager.units});
    // A live round's fixed and Dynamic pays are "for 1" per base wager locked: a base wager
    // changed since the lock would pay the seat's units at another price.
    const LinkSettings* settings = find_link(config, link);
    const auto priced_at = [&](const LinkSettings& played) {
      const auto price = played.meters.base_wager.times(wager.units);
      return price.ok() && *price == wager.amount;
    };
    if (is_live(stored.phase) && (settings == nullptr || !priced_at(*settings))) {
      problems.push_back(name + " is " + phase_name(stored.phase) + " with seat " +
                         std::to_string(wager.seat) + "'s wager of " + wager.amount.to_string() +
                         " (" + std::to_string(wager.units) + " base wagers) on link '" +
                         link.value() + "', whose base wager the floor now makes " +
                         (settings ? settings->meters.base_wager.to_string() : "?") +
                         ": a link's base wager may not change while a round at one of its "
                         "tables is OPEN or LOCKED; settle or void it first");
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
  if (!fits && is_live(stored.phase)) {
    problems.push_back(name + " is " + phase_name(stored.phase) +
                       " with wagers, contributions, Dynamic Pays or a hit on a link the floor "
                       "no longer gives the table: a table may not leave a link while its round "
                       "is OPEN or LOCKED; settle or void it first");
    return std::nullopt;
  }
  return round;
}

}  // namespace

std::vector<std::string> live_rounds_changed(const storage::StoredState& state,
                                             const EngineConfig& previous,
                                             const EngineConfig& config) {
  const auto find_table = [](const EngineConfig& floor, const TableId& id) {
    const auto found = std::find_if(floor.tables.begin(), floor.tables.end(),
                                    [&](const TableSettings& table) { return table.id == id; });
    return found == floor.tables.end() ? nullptr : &*found;
  };
  Problems problems;
  for (const storage::StoredRound& stored : state.rounds) {
    if (!is_live(stored.phase)) continue;
    const TableSettings* then = find_table(previous, stored.table);
    const TableSettings* now = find_table(config, stored.table);
    if (then == nullptr || now == nullptr) continue;  // Added, or refused by snapshot_from().
    const std::string name = "round " + std::to_string(stored.round.value()) + " of table '" +
                             stored.table.value() + "' is " + phase_name(stored.phase);
    const std::string rule =
        ": a table's game, paytables and community sources may not change while its round is "
        "OPEN or LOCKED; settle or void it first";
    if (then->game != now->game) {
      problems.push_back(name + " at a " + std::string(to_string(then->game)) +
                         " table, but the floor now makes the table " +
                         std::string(to_string(now->game)) + rule);
      continue;
    }
    for (const TableLinkSettings& played : now->links) {
      const auto was = std::find_if(then->links.begin(), then->links.end(),
                                    [&](const auto& link) { return link.link == played.link; });
      if (was == then->links.end()) continue;  // A link joining holds none of the round's state.
      if (was->paytable_id != played.paytable_id || was->community != played.community) {
        problems.push_back(name + " under paytable " + was->paytable_id + " on link '" +
                           played.link.value() + "', but the floor now gives the table " +
                           (was->paytable_id != played.paytable_id
                                ? "paytable " + played.paytable_id
                                : std::string("another community source")) +
                           " there" + rule);
        break;
      }
    }
  }
  return problems;
}

bool is_empty(const storage::StoredState& state) {
  return state.links.empty() && state.rounds.empty() && state.pending.empty() &&
         state.rebases.empty();
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
    // The table's latest re-base (they come by table and epoch) sets its counter's epoch.
    for (const RoundCounterRebaseRecord& rebase : state.rebases) {
      if (rebase.table != table.id) continue;
      saved.epoch = rebase.epoch;
      saved.rebased_base = rebased_counter(rebase.next_round.value()).base;
    }
    for (const storage::StoredRound& stored : state.rounds) {
      if (stored.table != table.id) continue;
      auto round = round_snapshot(stored, table, config, problems);
      if (!round) continue;
      saved.previous = std::move(saved.current);  // Rounds come oldest first.
      saved.current = std::move(round);
    }
    snapshot.tables.push_back(std::move(saved));
  }
  // A table may leave the floor once its round is finished: its rounds stay in the journal (a
  // floor that names it again carries on from them), its pending payouts stay payable.
  for (const storage::StoredRound& stored : state.rounds) {
    const bool known = std::any_of(config.tables.begin(), config.tables.end(),
                                   [&](const auto& table) { return table.id == stored.table; });
    if (!known && is_live(stored.phase)) {
      problems.push_back("table '" + stored.table.value() + "' is not on the floor but its round " +
                         std::to_string(stored.round.value()) + " is " + phase_name(stored.phase) +
                         ": a table may leave the floor only when its round is settled or "
                         "voided");
    }
  }
  for (const storage::StoredPayout& pending : state.pending) {
    snapshot.pending.push_back({pending.payout, pending.award});
  }
  snapshot.adjustments = state.adjustments;
  snapshot.payout_decisions = state.payout_decisions;  // By request id, as the engine keeps them.
  snapshot.supervisor_voids = state.supervisor_voids;  // By request id, as the engine keeps them.
  snapshot.rebases = state.rebases;  // By request id, as Engine::snapshot() lists them.
  std::sort(snapshot.rebases.begin(), snapshot.rebases.end(),
            [](const auto& a, const auto& b) { return a.request_id < b.request_id; });
  snapshot.last_round_key = state.last_round_key;
  snapshot.last_payout_id = state.last_payout_id;
  snapshot.last_draw_id = state.last_draw_id;
  if (!problems.empty()) return problems;
  return snapshot;
}

Result<NewLinks, std::vector<std::string>> open_new_links(const storage::StoredState& state,
                                                          const EngineConfig& config,
                                                          RandomSource& random,
                                                          std::int64_t now_us) {
  NewLinks links;
  std::uint64_t draw_id = state.last_draw_id;
  for (const LinkSettings& settings : config.links) {
    const bool stored = std::any_of(state.links.begin(), state.links.end(), [&](const auto& link) {
      return link.id == settings.meters.id;
    });
    if (stored) continue;
    std::vector<Transfer> transfers;
    auto link = Link::open(settings.meters, random, transfers);
    if (!link) return link.error();
    links.added.emplace_back(settings.meters.id,
                             static_cast<std::uint32_t>(settings.meters.levels.size()));
    for (const Transfer& transfer : transfers) {
      links.opening.transfers.push_back({Name(settings.meters.id.value()), transfer});
    }
    for (std::uint32_t level = 1; level <= link->level_count(); ++level) {
      if (const auto& trigger = link->hidden_trigger(level)) {
        links.opening.draws.push_back(
            {++draw_id, 0, settings.meters.id, level, DrawKind::hidden_trigger,
             "above=" + trigger->range_above.to_string() +
                 " up_to=" + trigger->range_up_to.to_string(),
             "committed " + to_hex(trigger->commitment), trigger, now_us});
      }
    }
  }
  return links;
}

}  // namespace jackpot
