#include "controller/engine/engine_config.h"

#include <map>
#include <set>

#include "meters/int128.h"

namespace jackpot {
namespace {

const Paytable* find_paytable(const std::vector<Paytable>& paytables, const std::string& id) {
  for (const Paytable& paytable : paytables) {
    if (paytable.id == id) return &paytable;
  }
  return nullptr;
}

std::string link_name(const LinkSettings& link) { return "link '" + link.meters.id.value() + "'"; }

void check_link(const LinkSettings& link, std::vector<std::string>& problems) {
  for (std::string& problem : validate(link.meters)) problems.push_back(std::move(problem));
  if (!link.dynamic_option_weights.empty()) {
    std::uint64_t total = 0;
    for (const std::uint32_t weight : link.dynamic_option_weights) total += weight;
    if (link.dynamic_option_weights.size() != 10 || total == 0) {
      problems.push_back(link_name(link) +
                         ": dynamic_option_weights needs ten weights, not all zero");
    }
  }
  if (!link.dynamic_count_weights.empty()) {
    std::uint64_t total = 0;
    for (const std::uint32_t weight : link.dynamic_count_weights) total += weight;
    if (total == 0) problems.push_back(link_name(link) + ": dynamic_count_weights are all zero");
  }
  if (link.max_wager_units == 0 || link.max_wager_units > 10'000) {
    problems.push_back(link_name(link) + ": max_wager_units must be 1..10000");
  }
  if (link.approval_threshold.micros() < 0) {
    problems.push_back(link_name(link) + ": approval_threshold is negative");
  }
  if (link.dual_approval_threshold && *link.dual_approval_threshold < link.approval_threshold) {
    problems.push_back(link_name(link) + ": dual_approval_threshold is below approval_threshold");
  }
}

// The paytable's levels against the link's: PERCENT rows on existing non-Must-Hit-By levels,
// MUST_HIT_BY rows on Must-Hit-By levels with the printed amount; Dynamic Pay counts.
void check_paytable_on_link(const std::string& where, const Paytable& paytable,
                            const LinkSettings& link, std::vector<std::string>& problems) {
  const auto& levels = link.meters.levels;
  for (const PaytableRow& row : paytable.rows) {
    if (row.kind != PayKind::percent && row.kind != PayKind::must_hit_by) continue;
    const std::string what = where + ": paytable " + paytable.id + " row '" + row.label + "'";
    if (row.level < 1 || row.level > levels.size()) {
      problems.push_back(what + " pays from level " + std::to_string(row.level) + ", which " +
                         link_name(link) + " does not have");
      continue;
    }
    const LevelConfig& level = levels[row.level - 1];
    if (row.kind == PayKind::percent && level.must_hit_by) {
      problems.push_back(what + " pays a percentage of level " + std::to_string(row.level) +
                         ", a Must-Hit-By level");
    }
    if (row.kind == PayKind::must_hit_by && level.must_hit_by != row.amount) {
      problems.push_back(what + " is a Must-Hit-By " + row.amount.to_string() + " but level " +
                         std::to_string(row.level) + " of " + link_name(link) +
                         (level.must_hit_by ? " must hit by " + level.must_hit_by->to_string()
                                            : " is not a Must-Hit-By level"));
    }
  }
  if (paytable.dynamic_max_selected > 0 && !link.dynamic_count_weights.empty() &&
      link.dynamic_count_weights.size() !=
          paytable.dynamic_max_selected - paytable.dynamic_min_selected + 1) {
    problems.push_back(where + ": paytable " + paytable.id + " selects " +
                       std::to_string(paytable.dynamic_min_selected) + " to " +
                       std::to_string(paytable.dynamic_max_selected) + " Dynamic Pays, so " +
                       link_name(link) + " needs one count weight per count");
  }
}

// One round at a table of `seats` seats contributes at most seats × max units × rate to a
// level; a Must-Hit-By level needs that much room between its reset value and its amount.
void check_must_hit_by_room(const std::string& where, std::uint32_t seats, const LinkSettings& link,
                            std::vector<std::string>& problems) {
  for (const LevelConfig& level : link.meters.levels) {
    if (!level.must_hit_by) continue;
    const auto per_unit = link.meters.base_wager.times_ppm(level.meter_rate_ppm);
    const auto seed = level.seed.times_ppm(link.meters.base_wager.micros());
    const auto amount = level.must_hit_by->times_ppm(link.meters.base_wager.micros());
    if (!per_unit || !seed || !amount) continue;  // Reported by the link's own checks.
    const Int128 largest = Int128{per_unit->quotient.micros()} * seats * link.max_wager_units;
    const Int128 room =
        Int128{amount->quotient.micros()} - seed->quotient.micros() - Money::kMicrosPerCent;
    if (largest >= room) {
      problems.push_back(where + ": one round (" + std::to_string(seats) + " seats x " +
                         std::to_string(link.max_wager_units) + " base wagers) can add more to " +
                         "level " + std::to_string(level.level) + " than the room below its " +
                         "Must-Hit-By amount; lower max_wager_units or the rate");
    }
  }
}

// A dealer keys a row by its label (keyed_event()): across the paytables a table plays, one
// label's hand_key() must mean one hand.
void check_keyed_labels(const std::string& name, const TableSettings& table,
                        const std::vector<Paytable>& paytables,
                        std::vector<std::string>& problems) {
  struct Keyed {
    const Paytable* paytable;
    const PaytableRow* row;
  };
  std::map<std::string, Keyed> by_key;
  for (const TableLinkSettings& played : table.links) {
    const Paytable* paytable = find_paytable(paytables, played.paytable_id);
    if (paytable == nullptr) continue;
    for (const PaytableRow& row : paytable->rows) {
      const auto [it, fresh] = by_key.emplace(hand_key(row.label.view()), Keyed{paytable, &row});
      if (fresh || it->second.row->hand == row.hand) continue;
      problems.push_back(
          name + ": label '" + row.label.str() + "' is " + std::string(to_string(row.hand)) +
          " on paytable " + paytable->id + " but label '" + it->second.row->label.str() + "' is " +
          std::string(to_string(it->second.row->hand)) + " on paytable " + it->second.paytable->id +
          ": a hand keyed at the table must mean one hand on all its paytables");
    }
  }
}

void check_table(const TableSettings& table,
                 const std::map<std::string, const LinkSettings*>& links,
                 const std::vector<Paytable>& paytables, std::vector<std::string>& problems) {
  const std::string name = "table '" + table.id.value() + "'";
  if (table.id.value().empty()) problems.push_back("a table has no id");
  if (table.game != GameRule::heads_up_holdem && table.game != GameRule::mississippi_stud &&
      table.game != GameRule::high_card_flush) {
    problems.push_back(name + ": " + std::string(to_string(table.game)) +
                       " is not a table game here (Heads Up Hold'em, Mississippi Stud, High "
                       "Card Flush)");
    return;
  }
  if (table.seats < 1 || table.seats > kMaxSeats) {
    problems.push_back(name + ": seats must be 1.." + std::to_string(kMaxSeats));
  }
  if (table.links.empty()) problems.push_back(name + ": the table plays no link");
  std::set<std::string> seen;
  for (const TableLinkSettings& played : table.links) {
    const std::string where = name + " on link '" + played.link.value() + "'";
    if (!seen.insert(played.link.value()).second) {
      problems.push_back(where + ": the link is listed twice");
      continue;
    }
    const auto link = links.find(played.link.value());
    if (link == links.end()) {
      problems.push_back(where + ": no such link");
      continue;
    }
    const Paytable* paytable = find_paytable(paytables, played.paytable_id);
    if (paytable == nullptr) {
      problems.push_back(where + ": no paytable '" + played.paytable_id + "'");
      continue;
    }
    const CardCounts needs = card_counts(paytable->rule);
    if (needs.pocket != table_cards(table.game).seat_cards ||
        needs.community != community_count(played.community, table.game, paytable->rule)) {
      problems.push_back(where + ": paytable " + paytable->id + " (" +
                         std::string(to_string(paytable->rule)) + ") does not fit the cards of a " +
                         std::string(to_string(table.game)) + " table with this community source");
    }
    check_paytable_on_link(where, *paytable, *link->second, problems);
    check_must_hit_by_room(where, table.seats, *link->second, problems);
  }
  check_keyed_labels(name, table, paytables, problems);
}

}  // namespace

TableCards table_cards(GameRule table_game) {
  switch (table_game) {
    case GameRule::heads_up_holdem:
      return {2, 5};
    case GameRule::mississippi_stud:
      return {2, 3};
    case GameRule::high_card_flush:
      return {7, 0};
    default:
      return {0, 0};
  }
}

std::size_t community_count(CommunitySource source, GameRule table_game, GameRule link_rule) {
  switch (source) {
    case CommunitySource::none:
      return 0;
    case CommunitySource::board:
      return table_cards(table_game).board_cards;
    case CommunitySource::flop:
      return table_game == GameRule::heads_up_holdem ? 3 : static_cast<std::size_t>(-1);
    case CommunitySource::link_cards:
      return card_counts(link_rule).community;
  }
  return 0;
}

std::vector<std::string> validate(const EngineConfig& config,
                                  const std::vector<Paytable>& paytables) {
  std::vector<std::string> problems;
  std::map<std::string, const LinkSettings*> links;
  for (const LinkSettings& link : config.links) {
    if (!links.emplace(link.meters.id.value(), &link).second) {
      problems.push_back(link_name(link) + ": the link id is used twice");
    }
    check_link(link, problems);
  }
  std::set<std::string> table_ids;
  for (const TableSettings& table : config.tables) {
    if (!table_ids.insert(table.id.value()).second) {
      problems.push_back("table '" + table.id.value() + "': the table id is used twice");
    }
    check_table(table, links, paytables, problems);
  }
  return problems;
}

}  // namespace jackpot
