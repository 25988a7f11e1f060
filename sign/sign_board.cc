#include "sign/sign_board.h"

#include <algorithm>

namespace jackpot::sign {

std::string_view to_string(RowKind kind) {
  switch (kind) {
    case RowKind::percent:
      return "percent";
    case RowKind::fixed:
      return "fixed";
    case RowKind::dynamic:
      return "dynamic";
    case RowKind::must_hit_by:
      return "must_hit_by";
  }
  return "fixed";
}

SignBoard::SignBoard(SignFloor floor, const BoardStart& start, std::int64_t hit_shown_us)
    : hit_shown_us_(hit_shown_us) {
  auto facts = std::make_shared<Facts>();
  facts->floor = std::move(floor);
  for (std::size_t i = 0; i < facts->floor.links.size(); ++i) {
    facts->link_index.emplace(facts->floor.links[i].link, i);
  }
  for (std::size_t i = 0; i < facts->floor.tables.size(); ++i) {
    facts->table_index.emplace(facts->floor.tables[i].table, i);
  }
  facts_ = std::move(facts);
  reset(start);
}

void SignBoard::reset(const BoardStart& start) {
  links_.assign(facts_->floor.links.size(), LinkNow{});
  for (std::size_t i = 0; i < links_.size() && i < start.links.size(); ++i) {
    links_[i] = {start.links[i].status, start.links[i].meters, start.links[i].hidden};
  }
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const std::size_t levels = facts_->floor.links[i].levels.size();
    links_[i].meters.resize(levels);
    links_[i].hidden.resize(levels);
  }
  tables_.assign(facts_->floor.tables.size(), BoardStart::Table{});
  for (std::size_t i = 0; i < tables_.size() && i < start.tables.size(); ++i) {
    tables_[i] = start.tables[i];
  }
  for (std::size_t i = 0; i < tables_.size(); ++i) {
    tables_[i].dynamic.resize(facts_->floor.tables[i].links.size());
  }
  // A batch reported failed may have landed: its hits did when their payouts did.
  for (HitShown& hit : unsure_) {
    if (hit.payout == 0 || hit.payout > start.last_payout_id) continue;
    if (const auto link = link_index(hit.link)) {
      if (hit.level >= 1 && hit.level <= links_[*link].meters.size()) {
        const LevelFacts& level = facts_->floor.links[*link].levels[hit.level - 1];
        hit.reset_cents =
            shown_cents(links_[*link].meters[hit.level - 1], level.ceiling, level.must_hit_by);
      }
    }
    hits_.push_back(std::move(hit));
  }
  unsure_.clear();
  // A rejection that landed (also in a batch reported failed) takes its hit off.
  std::erase_if(hits_, [&](const HitShown& hit) {
    return std::binary_search(start.rejected_payouts.begin(), start.rejected_payouts.end(),
                              hit.payout);
  });
  std::stable_sort(hits_.begin(), hits_.end(),
                   [](const HitShown& a, const HitShown& b) { return a.hit_us < b.hit_us; });
  keep_latest_hits();
}

void SignBoard::failed(const Records& records) {
  for (HitShown& hit : hits_of(records)) unsure_.push_back(std::move(hit));
}

std::vector<HitShown> SignBoard::hits_of(const Records& records) const {
  std::vector<HitShown> made;
  for (const Payout& payout : records.payouts) {
    if (payout.kind != AwardKind::percent && payout.kind != AwardKind::must_hit_by) continue;
    // Only a payout's creation is a hit; a supervisor's decision or void changes one.
    const bool decided = std::any_of(
        records.payout_decisions.begin(), records.payout_decisions.end(),
        [&](const PayoutDecisionRecord& decision) { return decision.payout == payout.id; });
    if (decided || !payout_created(payout)) continue;
    const auto link = link_index(payout.link.value());
    if (!link || payout.level < 1 || payout.level > links_[*link].meters.size()) continue;
    const LevelFacts& level = facts_->floor.links[*link].levels[payout.level - 1];
    made.push_back(
        {payout.link.value(), payout.level, payout.table.value(), payout.round.value(), payout.seat,
         std::string(payout.hand.view()), payout.amount.cents_floor(),
         shown_cents(links_[*link].meters[payout.level - 1], level.ceiling, level.must_hit_by),
         payout.created_us, payout.id.value()});
  }
  return made;
}

// At most kMaxHitsShown per link, the latest, and none that no sign shows any longer.
void SignBoard::keep_latest_hits() {
  if (hits_.empty()) return;
  const std::int64_t newest = hits_.back().hit_us;
  std::map<std::string, std::size_t, std::less<>> kept;
  std::deque<HitShown> latest;
  for (auto hit = hits_.rbegin(); hit != hits_.rend(); ++hit) {
    if (hit->hit_us + hit_shown_us_ <= newest) continue;
    if (++kept[hit->link] > kMaxHitsShown) continue;
    latest.push_front(std::move(*hit));
  }
  hits_.swap(latest);
}

std::optional<std::size_t> SignBoard::link_index(std::string_view link) const {
  const auto found = facts_->link_index.find(link);
  if (found == facts_->link_index.end()) return std::nullopt;
  return found->second;
}

std::optional<std::size_t> SignBoard::table_index(std::string_view table) const {
  const auto found = facts_->table_index.find(table);
  if (found == facts_->table_index.end()) return std::nullopt;
  return found->second;
}

void SignBoard::apply(const Records& records) {
  // The meters: every transfer into or out of a meter account. Money on a sign is shown, never
  // paid, so a sum that would overflow keeps the meter as it was (the ledger refuses those).
  for (const TransferRecord& record : records.transfers) {
    const auto link = link_index(record.link.view());
    if (!link) continue;
    std::vector<Money>& meters = links_[*link].meters;
    const Transfer& transfer = record.transfer;
    const auto move = [&](AccountRef account, bool in) {
      if (account.kind != AccountKind::meter || account.level < 1 ||
          account.level > meters.size()) {
        return;
      }
      Money& meter = meters[account.level - 1];
      const auto moved = in ? meter.plus(transfer.amount) : meter.minus(transfer.amount);
      if (moved) meter = *moved;
    };
    move(transfer.debit, false);
    move(transfer.credit, true);
  }
  // A hit clears its level's commitment; the next point drawn (below) publishes the next one.
  for (const MustHitByHitRecord& hit : records.hits) {
    const auto link = link_index(hit.link.value());
    if (link && hit.level >= 1 && hit.level <= links_[*link].hidden.size()) {
      links_[*link].hidden[hit.level - 1].reset();
    }
  }
  for (const DrawRecord& draw : records.draws) {
    if (draw.kind != DrawKind::hidden_trigger || !draw.trigger) continue;
    const auto link = link_index(draw.link.value());
    if (link && draw.level >= 1 && draw.level <= links_[*link].hidden.size()) {
      links_[*link].hidden[draw.level - 1] = TriggerShown{
          draw.trigger->commitment, draw.trigger->range_above, draw.trigger->range_up_to};
    }
  }
  for (const LinkStatusRecord& status : records.link_statuses) {
    if (const auto link = link_index(status.link.value())) links_[*link].status = status.status;
  }
  // Rounds: one that opens replaces its table's Dynamic Pays with its own; one that settles or
  // is voided ends them.
  std::vector<std::pair<std::uint64_t, std::size_t>> table_of_round;  // Rounds opened here.
  for (const RoundRecord& round : records.rounds) {
    const auto table = table_index(round.table.value());
    if (!table) continue;
    BoardStart::Table& now = tables_[*table];
    if (round.phase == RoundPhase::open) {
      now.round_key = round.round_key;
      now.round = round.round.value();
      now.in_play = true;
      for (auto& pays : now.dynamic) pays.clear();
    } else if (round.round_key == now.round_key) {
      now.in_play = round.phase == RoundPhase::locked;
      if (!now.in_play) {
        for (auto& pays : now.dynamic) pays.clear();
      }
    }
    if (round.phase == RoundPhase::open) table_of_round.emplace_back(round.round_key, *table);
  }
  for (const DynamicPayRecord& pay : records.dynamic_pays) {
    const auto table =
        std::find_if(table_of_round.begin(), table_of_round.end(),
                     [&](const auto& opened) { return opened.first == pay.round_key; });
    if (table == table_of_round.end()) continue;
    BoardStart::Table& now = tables_[table->second];
    if (now.round_key != pay.round_key) continue;
    const TableFacts& facts = facts_->floor.tables[table->second];
    for (std::size_t i = 0; i < facts.links.size(); ++i) {
      if (facts.links[i].link == pay.link.value()) now.dynamic[i].emplace_back(pay.row, pay.option);
    }
  }
  // Hits: the PERCENT and Must-Hit-By payouts this command created, with the level's value
  // after the command; a rejected payout takes its hit off the signs.
  std::vector<HitShown> made = hits_of(records);
  for (HitShown& hit : made) hits_.push_back(std::move(hit));
  for (const Payout& payout : records.payouts) {
    // Rejected, by a supervisor's rejection or void: the first of two a payout needs only asks
    // (it still waits, and its hit stays shown).
    if (payout.state != PayoutState::rejected) continue;
    std::erase_if(hits_, [&](const HitShown& hit) { return hit.payout == payout.id.value(); });
  }
  // Only when hits came: a command without one (nearly all) leaves them as they were, and
  // state() leaves out those whose time has passed.
  if (!made.empty()) keep_latest_hits();
}

SignState SignBoard::state(std::int64_t now_us, bool available) const {
  SignState state;
  state.built_us = now_us;
  state.links.reserve(links_.size());
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const LinkFacts& facts = facts_->floor.links[i];
    const LinkNow& now = links_[i];
    LinkShown link;
    link.link = facts.link;
    link.status = !available                         ? LinkShownStatus::unavailable
                  : now.status == LinkStatus::open   ? LinkShownStatus::open
                  : now.status == LinkStatus::closed ? LinkShownStatus::closed
                                                     : LinkShownStatus::unavailable;
    for (std::size_t level = 0; level < facts.levels.size(); ++level) {
      const LevelFacts& level_facts = facts.levels[level];
      link.levels.push_back(
          {level_facts.level, level_facts.name,
           shown_cents(now.meters[level], level_facts.ceiling, level_facts.must_hit_by),
           level_facts.must_hit_by ? level_facts.must_hit_by->cents_floor() : 0,
           level_facts.ceiling ? level_facts.ceiling->cents_floor() : 0, now.hidden[level]});
    }
    state.links.push_back(std::move(link));
  }
  state.tables.reserve(tables_.size());
  for (std::size_t i = 0; i < tables_.size(); ++i) {
    const TableFacts& facts = facts_->floor.tables[i];
    const BoardStart::Table& now = tables_[i];
    TableShown table;
    table.table = facts.table;
    table.round = now.round;
    for (std::size_t l = 0; l < facts.links.size(); ++l) {
      const TableLinkFacts& link = facts.links[l];
      TableShown::LinkPays pays{link.link, link.paytable, {}};
      for (const auto& [row, option] : now.dynamic[l]) {
        if (row >= link.row_of.size() || link.row_of[row] >= link.rows.size()) continue;
        const PaytableRowShown& shown = link.rows[link.row_of[row]];
        if (option < 1 || option > shown.option_cents.size()) continue;
        pays.pays.push_back({shown.hand, option, shown.option_cents[option - 1]});
      }
      table.links.push_back(std::move(pays));
    }
    state.tables.push_back(std::move(table));
  }
  for (const HitShown& hit : hits_) {
    if (hit.hit_us + hit_shown_us_ > now_us) state.hits.push_back(hit);
  }
  return state;
}

}  // namespace jackpot::sign
