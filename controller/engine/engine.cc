#include "controller/engine/engine.h"

#include <algorithm>
#include <bitset>
#include <cctype>
#include <set>
#include <unordered_map>

#include "controller/engine/award_rules.h"
#include "controller/engine/engine_codec.h"
#include "controller/engine/request_canonical.h"
#include "controller/engine/round_counter.h"
#include "controller/limits/request_limits.h"
#include "meters/adjustment.h"
#include "meters/invariant.h"

namespace jackpot {
namespace {

// Names the engine puts on records itself, made once: making a Name looks it up under a lock.
const Name kNoHand;

EngineFailure failure(EngineError code, std::string message) {
  return EngineFailure{code, std::move(message)};
}

// A card list's refusal: a card twice is dealt twice, anything else is no card.
EngineError card_refusal(const CardError& error) {
  return error.duplicate ? EngineError::card_dealt_twice : EngineError::card_invalid;
}

// A refusal whose status is INVALID_ARGUMENT, by its name.
EngineFailure invalid(EngineError name, std::string message) {
  return failure(name, std::move(message));
}

// The transfer `id` among those an operation just posted.
const Transfer& posted(const std::vector<Transfer>& transfers, TransferId id) {
  const auto found = std::find_if(transfers.begin(), transfers.end(),
                                  [id](const Transfer& transfer) { return transfer.id == id; });
  JACKPOT_INVARIANT(found != transfers.end(), "an award's transfer is among the posted ones");
  return *found;
}

// PostgreSQL text cannot hold NUL: the journal would keep a cut copy of what the engine keeps.
bool has_nul(const std::string& text) { return text.find('\0') != std::string::npos; }

std::string round_name(const TableId& table, RoundId round) {
  return "round " + std::to_string(round.value()) + " at table " + table.value();
}

// A first answer kept for replays, decoded.
template <typename Answer>
Answer first_answer(const EncodedCommand& first) {
  auto answer = decode<Answer>(first.answer());
  JACKPOT_INVARIANT(answer.has_value(), "a kept answer decodes");
  return std::move(answer).value();
}

// The first answer when a command repeats with the same request; a refusal (its message made by
// `differs`) when the same ids came with another request; nothing when the command has not run
// for this round yet.
// `canonical_form` makes a request's canonical form (request_canonical.h).
template <typename Answer, typename Request, typename Message, typename Canonical>
std::optional<Result<Answer, EngineFailure>> replay(const std::optional<EncodedCommand>& first,
                                                    const Request& request, Message differs,
                                                    Canonical canonical_form) {
  if (!first) return std::nullopt;
  // Compared by canonical form, not by bytes: the same request spelt otherwise (wagers in
  // another order, "10s" for "Ts", ...) or kept in an older codec version is the same request.
  auto kept = decode<Request>(first->request());
  JACKPOT_INVARIANT(kept.has_value(), "a kept request decodes");
  if (canonical_form(std::move(*kept)) == canonical_form(request)) {
    return Result<Answer, EngineFailure>(first_answer<Answer>(*first));
  }
  return Result<Answer, EngineFailure>(failure(EngineError::replay_differs, differs()));
}
template <typename Answer, typename Request, typename Message>
std::optional<Result<Answer, EngineFailure>> replay(const std::optional<EncodedCommand>& first,
                                                    const Request& request, Message differs) {
  return replay<Answer>(first, request, differs,
                        [](Request form) { return canonical(std::move(form)); });
}

// Keeps a command's first request and answer for replays, and puts them on the record.
template <typename Request, typename Answer>
void keep_first(std::optional<EncodedCommand>& into, std::uint64_t round_key, CommandKind command,
                const Request& request, const Answer& answer, Records& out) {
  into = encode_command(request, answer);
  out.answers.emplace_back(round_key, command, *into);
}

// A draw among `weights.size()` outcomes by weight (all weights 1 when empty): unbiased.
std::size_t weighted_draw(RandomSource& random, const std::vector<std::uint32_t>& weights,
                          std::size_t outcomes) {
  if (weights.empty()) return static_cast<std::size_t>(uniform_below(random, outcomes));
  std::uint64_t total = 0;
  for (const std::uint32_t weight : weights) total += weight;
  std::uint64_t point = uniform_below(random, total);
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (point < weights[i]) return i;
    point -= weights[i];
  }
  JACKPOT_INVARIANT(false, "weighted draw past the total");
}

std::string join(const std::vector<std::uint64_t>& values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ",";
    text += std::to_string(values[i]);
  }
  return text + "]";
}

std::string weights_text(const std::vector<std::uint32_t>& weights) {
  if (weights.empty()) return "uniform";
  return join(std::vector<std::uint64_t>(weights.begin(), weights.end()));
}

// Whether two principal names are one person: compared case-folded (ASCII; a principal's id is
// letters, digits, '.', '_' and '-'), so that supervisor/ann and supervisor/Ann, whom a CA may
// have issued both, cannot make the two-person rule's two people alone.
bool same_principal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// What `supervisor` already said of a pending payout ("approved", "asked to reject"), names
// compared case-folded, or nothing: one supervisor has one say on a payout.
std::optional<std::string_view> prior_say(const Payout& payout, std::string_view supervisor) {
  const auto among = [&](const std::vector<std::string>& names) {
    return std::any_of(names.begin(), names.end(),
                       [&](const std::string& name) { return same_principal(name, supervisor); });
  };
  if (among(payout.approved_by)) return "approved";
  if (among(payout.rejection_requested_by)) return "asked to reject";
  return std::nullopt;
}

// Whether a kept Dynamic Pay selection, (row, option) pairs, is one the paytable could have drawn:
// a voided round's selection carries over only then (a paytable swapped at a restart draws anew).
bool selection_fits(const std::vector<std::pair<std::size_t, std::uint32_t>>& selection,
                    const Paytable& paytable) {
  if (selection.size() < paytable.dynamic_min_selected ||
      selection.size() > paytable.dynamic_max_selected) {
    return false;
  }
  std::set<std::size_t> rows;
  for (const auto& [row, option] : selection) {
    if (row >= paytable.rows.size() || paytable.rows[row].kind != PayKind::dynamic || option < 1 ||
        option > paytable.rows[row].options.size() || !rows.insert(row).second) {
      return false;
    }
  }
  return true;
}

// Why a table's OPEN or LOCKED round, kept across a restart, cannot go on under the table's
// settings and paytables on the floor now (docs/architecture.md §7b), or nothing. `paytables`
// and `links` are per link of the table, in configuration order, as the round's vectors are.
std::optional<std::string> live_round_problem(const TableSettings& table,
                                              const std::vector<const Paytable*>& paytables,
                                              const std::vector<const Link*>& links,
                                              const RoundSnapshot& round) {
  const std::string name = round_name(table.id, round.id) + " is " +
                           (round.phase == RoundPhase::open ? "OPEN" : "LOCKED");
  const std::string settle_first = "; settle or void it first";
  // The open's answer names the paytable each Dynamic Pay selection was drawn on: the round pays
  // those, and a paytable with Dynamic Pays needs its selection drawn at the open.
  const auto opened = round.opened ? decode<OpenRoundAnswer>(round.opened->answer())
                                   : std::optional<OpenRoundAnswer>();
  // (Recovery refuses an answer that does not decode.)
  for (std::size_t i = 0; opened && i < table.links.size(); ++i) {
    const Paytable& paytable = *paytables[i];
    const DynamicSelectionView* drawn = nullptr;
    for (const DynamicSelectionView& view : opened->dynamic_pays) {
      if (view.link == table.links[i].link) drawn = &view;
    }
    const std::string link = "link '" + table.links[i].link.value() + "'";
    if (drawn != nullptr && drawn->paytable_id != paytable.id) {
      return name + " with Dynamic Pays drawn on paytable " + drawn->paytable_id.str() + " for " +
             link + ", but the floor now gives the table paytable " + paytable.id.str() +
             " there: a table's paytable may not change while its round is OPEN or LOCKED" +
             settle_first;
    }
    if (drawn == nullptr && paytable.dynamic_max_selected > 0) {
      return name + " without Dynamic Pays drawn for " + link +
             " at its open, but the floor now gives the table paytable " + paytable.id.str() +
             " there, whose Dynamic Pays are drawn at the open: a table's paytable may not "
             "change while its round is OPEN or LOCKED" +
             settle_first;
    }
  }
  for (std::size_t i = 0; i < table.links.size(); ++i) {
    const std::string link = "link '" + table.links[i].link.value() + "'";
    for (const auto& wager : round.wagers[i]) {
      if (wager.seat < 1 || wager.seat > table.seats) {
        return name + " with a wager at seat " + std::to_string(wager.seat) + " on " + link +
               ", but the floor gives the table " + std::to_string(table.seats) +
               " seats: a table may not lose a seat that wagered in its OPEN or LOCKED round" +
               settle_first;
      }
    }
    const Paytable& paytable = *paytables[i];
    for (const auto& [row, option] : round.dynamic[i]) {
      if (row >= paytable.rows.size() || paytable.rows[row].kind != PayKind::dynamic ||
          option < 1 || option > paytable.rows[row].options.size()) {
        return name + " with a Dynamic Pay selection (row " + std::to_string(row) + ", option " +
               std::to_string(option) + ") on " + link + " that paytable " + paytable.id.str() +
               " does not have: a table's paytable may not change while its round is OPEN or "
               "LOCKED" +
               settle_first;
      }
    }
  }
  for (const RoundSnapshot::Hit& hit : round.hits) {
    if (hit.link_index >= links.size() || hit.level < 1 ||
        hit.level > links[hit.link_index]->level_count() || hit.seat < 1 ||
        hit.seat > table.seats) {
      return name + " with a Must-Hit-By hit (level " + std::to_string(hit.level) + ", seat " +
             std::to_string(hit.seat) + ") the floor's table or link no longer has" + settle_first;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(EngineError error) {
  switch (error) {
    case EngineError::unknown_table:
      return "unknown_table";
    case EngineError::unknown_link:
      return "unknown_link";
    case EngineError::unknown_payout:
      return "unknown_payout";
    case EngineError::round_not_found:
      return "round_not_found";
    case EngineError::round_id_not_increasing:
      return "round_id_not_increasing";
    case EngineError::round_superseded:
      return "round_superseded";
    case EngineError::round_id_jump_too_far:
      return "round_id_jump_too_far";
    case EngineError::previous_round_open:
      return "previous_round_open";
    case EngineError::wrong_round_state:
      return "wrong_round_state";
    case EngineError::link_closed:
      return "link_closed";
    case EngineError::link_unavailable:
      return "link_unavailable";
    case EngineError::replay_differs:
      return "replay_differs";
    case EngineError::must_hit_by_needs_supervisor:
      return "must_hit_by_needs_supervisor";
    case EngineError::payout_not_pending:
      return "payout_not_pending";
    case EngineError::already_approved:
      return "already_approved";
    case EngineError::ledger_refused:
      return "ledger_refused";
    case EngineError::database_unavailable:
      return "database_unavailable";
    case EngineError::report_end_unobserved:
      return "report_end_unobserved";
    case EngineError::balances_disagree:
      return "balances_disagree";
    case EngineError::round_id_out_of_range:
      return "round_id_out_of_range";
    case EngineError::request_id_invalid:
      return "request_id_invalid";
    case EngineError::reason_missing:
      return "reason_missing";
    case EngineError::reason_invalid:
      return "reason_invalid";
    case EngineError::requester_missing:
      return "requester_missing";
    case EngineError::requester_invalid:
      return "requester_invalid";
    case EngineError::adjustment_zero:
      return "adjustment_zero";
    case EngineError::seat_unknown:
      return "seat_unknown";
    case EngineError::link_not_played:
      return "link_not_played";
    case EngineError::wager_repeated:
      return "wager_repeated";
    case EngineError::wager_amount_invalid:
      return "wager_amount_invalid";
    case EngineError::wager_above_max:
      return "wager_above_max";
    case EngineError::wager_overflow:
      return "wager_overflow";
    case EngineError::seat_not_wagering:
      return "seat_not_wagering";
    case EngineError::seat_reported_twice:
      return "seat_reported_twice";
    case EngineError::hand_ambiguous:
      return "hand_ambiguous";
    case EngineError::hand_missing:
      return "hand_missing";
    case EngineError::link_cards_unexpected:
      return "link_cards_unexpected";
    case EngineError::card_invalid:
      return "card_invalid";
    case EngineError::card_count_wrong:
      return "card_count_wrong";
    case EngineError::card_dealt_twice:
      return "card_dealt_twice";
    case EngineError::keyed_hand_unknown:
      return "keyed_hand_unknown";
    case EngineError::keyed_hand_not_a_hand:
      return "keyed_hand_not_a_hand";
    case EngineError::audit_trail_altered:
      return "audit_trail_altered";
  }
  return "unknown";
}

struct Engine::LinkState {
  LinkSettings settings;
  Link link;
  LinkStatus status = LinkStatus::open;
  std::vector<Transfer> scratch;          // Transfers of the command in progress.
  Name name{settings.meters.id.value()};  // The link's id, as records name it.
  // Its levels' names, as answers and records name them, made once (making a Name takes a lock).
  std::vector<Name> level_names = [this] {
    std::vector<Name> names;
    for (const LevelConfig& level : settings.meters.levels) names.emplace_back(level.name);
    return names;
  }();
  std::int64_t status_since_us = 0;  // When it entered `status` (Unix microseconds).
};

struct Engine::TableState {
  struct PlayedLink {
    LinkState* link = nullptr;
    const Paytable* paytable = nullptr;
    CommunitySource community = CommunitySource::board;
  };
  TableSettings settings;
  std::vector<PlayedLink> links;
  std::vector<const Paytable*> paytables;  // Of `links`, in their order: for keyed hands.
  std::optional<RoundState> current;       // The table's latest round, in any phase.
  std::optional<RoundState> previous;      // The one before, kept for replays.
  // The counter epoch: how many times a supervisor re-based the table's counter. Only rounds of
  // this epoch answer commands; after a re-base, until a round opens, the counter is
  // `rebased_base` (the re-base's next round id - 1).
  std::uint64_t epoch = 0;
  std::uint64_t rebased_base = 0;

  // The table's latest round and the one before it, when they belong to the current epoch.
  const RoundState* latest() const {
    return current && current->epoch == epoch ? &*current : nullptr;
  }
  const RoundState* before_latest() const {
    return previous && previous->epoch == epoch ? &*previous : nullptr;
  }
  // The counter as the round-id rules see it (controller/engine/round_counter.h).
  RoundCounter counter() const {
    if (const RoundState* round = latest()) return {round->id.value(), round->phase};
    return {rebased_base, std::nullopt};
  }
};

Engine::Engine(EngineConfig config, std::vector<Paytable> paytables, Clock& clock,
               RandomSource& random)
    : config_(std::move(config)),
      paytables_(std::move(paytables)),
      clock_(clock),
      random_(random) {}

Result<std::unique_ptr<Engine>, std::vector<std::string>> Engine::create(
    EngineConfig config, std::vector<Paytable> paytables, Clock& clock, RandomSource& random,
    Records& out) {
  if (auto problems = validate(config, paytables); !problems.empty()) return problems;
  std::unique_ptr<Engine> engine(
      new Engine(std::move(config), std::move(paytables), clock, random));
  const std::int64_t now = clock.now_us();
  for (const LinkSettings& settings : engine->config_.links) {
    std::vector<Transfer> opening;
    auto link = Link::open(settings.meters, random, opening);
    JACKPOT_INVARIANT(link.ok(), "validated link configurations open");
    auto state = std::make_unique<LinkState>(
        LinkState{settings, std::move(link).value(), LinkStatus::open, {}});
    state->status_since_us = now;
    for (const Transfer& transfer : opening) out.transfers.push_back({state->name, transfer});
    for (std::uint32_t level = 1; level <= state->link.level_count(); ++level) {
      if (const auto& trigger = state->link.hidden_trigger(level)) {
        out.draws.push_back({engine->next_draw_id(), 0, settings.meters.id, level,
                             DrawKind::hidden_trigger,
                             "above=" + trigger->range_above.to_string() +
                                 " up_to=" + trigger->range_up_to.to_string(),
                             "committed " + to_hex(trigger->commitment), trigger, now});
      }
    }
    engine->links_by_id_[settings.meters.id.value()] = state.get();
    engine->links_.push_back(std::move(state));
  }
  engine->add_tables();
  return engine;
}

void Engine::add_tables() {
  for (const TableSettings& settings : config_.tables) {
    auto table = std::make_unique<TableState>();
    table->settings = settings;
    for (const TableLinkSettings& played : settings.links) {
      const Paytable* paytable = nullptr;
      for (const Paytable& candidate : paytables_) {
        if (candidate.id == played.paytable_id) paytable = &candidate;
      }
      table->links.push_back({find_link(played.link), paytable, played.community});
      table->paytables.push_back(paytable);
    }
    tables_[settings.id.value()] = std::move(table);
  }
}

Result<std::unique_ptr<Engine>, std::vector<std::string>> Engine::restore(
    EngineConfig config, std::vector<Paytable> paytables, Clock& clock, RandomSource& random,
    const EngineSnapshot& snapshot) {
  if (auto problems = validate(config, paytables); !problems.empty()) return problems;
  std::unique_ptr<Engine> engine(
      new Engine(std::move(config), std::move(paytables), clock, random));
  const auto refuse = [](std::string problem) {
    return std::vector<std::string>{"snapshot: " + std::move(problem)};
  };
  if (snapshot.links.size() != engine->config_.links.size()) return refuse("links differ");
  for (std::size_t i = 0; i < snapshot.links.size(); ++i) {
    const LinkSettings& settings = engine->config_.links[i];
    const LinkSnapshot& saved = snapshot.links[i];
    if (saved.id != settings.meters.id) return refuse("link '" + saved.id.value() + "' unknown");
    auto link =
        Link::restore(settings.meters, random, saved.balances, saved.next_transfer, saved.hidden);
    if (!link) return link.error();
    auto state =
        std::make_unique<LinkState>(LinkState{settings, std::move(link).value(), saved.status, {}});
    state->status_since_us = saved.status != LinkStatus::open && saved.status_since_us != 0
                                 ? saved.status_since_us
                                 : clock.now_us();
    engine->links_by_id_[settings.meters.id.value()] = state.get();
    engine->links_.push_back(std::move(state));
  }
  engine->add_tables();
  if (snapshot.tables.size() != engine->config_.tables.size()) return refuse("tables differ");
  for (const TableSnapshot& saved : snapshot.tables) {
    const auto it = engine->tables_.find(saved.id.value());
    if (it == engine->tables_.end()) return refuse("table '" + saved.id.value() + "' unknown");
    TableState& table = *it->second;
    for (const auto* round : {&saved.current, &saved.previous}) {
      if (*round && ((*round)->dynamic.size() != table.links.size() ||
                     (*round)->wagers.size() != table.links.size() ||
                     (*round)->contributions.size() != table.links.size())) {
        return refuse("a round of table '" + saved.id.value() + "' does not fit its links");
      }
    }
    if (saved.current &&
        (saved.current->phase == RoundPhase::open || saved.current->phase == RoundPhase::locked)) {
      std::vector<const Paytable*> played_paytables;
      std::vector<const Link*> played_links;
      for (const auto& played : table.links) {
        played_paytables.push_back(played.paytable);
        played_links.push_back(&played.link->link);
      }
      if (auto problem =
              live_round_problem(table.settings, played_paytables, played_links, *saved.current)) {
        return std::vector<std::string>{*problem};
      }
    }
    table.current = saved.current;
    table.previous = saved.previous;
    table.epoch = saved.epoch;
    table.rebased_base = saved.rebased_base;
  }
  for (const RoundCounterRebaseRecord& rebase : snapshot.rebases) {
    if (!engine->rebases_.emplace(rebase.request_id, rebase).second) {
      return refuse("re-base request id '" + rebase.request_id + "' twice");
    }
  }
  for (const PayoutDecisionRecord& decision : snapshot.payout_decisions) {
    if (!engine->payout_decisions_.emplace(decision.request_id, decision).second) {
      return refuse("payout decision request id '" + decision.request_id + "' twice");
    }
  }
  for (const SupervisorVoidRecord& voided : snapshot.supervisor_voids) {
    if (!engine->supervisor_voids_.emplace(voided.request_id, voided).second) {
      return refuse("void request id '" + voided.request_id + "' twice");
    }
  }
  for (const PendingPayout& pending : snapshot.pending) {
    const Payout& payout = pending.payout;
    const LinkState* link = engine->find_link(payout.link);
    const auto& award = pending.award;
    if (link == nullptr || !link->link.ledger().has(award.debit) ||
        !link->link.ledger().has(award.credit)) {
      return std::vector<std::string>{
          "payout " + std::to_string(payout.id.value()) + " (" + payout.amount.to_string() +
          " to seat " + std::to_string(payout.seat) + " of " +
          round_name(payout.table, payout.round) + ") is PENDING on link '" + payout.link.value() +
          "', which the floor " + (link == nullptr ? "no longer has" : "gives other levels") +
          ": a link may leave the floor only when no payout on it is pending; approve or reject "
          "it first"};
    }
    engine->payouts_[pending.payout.id.value()] = pending.payout;
    engine->award_transfers_[pending.payout.id.value()] = pending.award;
  }
  // Adjustments stay answerable on a floor that no longer has their link: a replay answers what
  // was applied then.
  for (const MeterAdjustmentRecord& adjustment : snapshot.adjustments) {
    if (!engine->adjustments_.emplace(adjustment.request_id, adjustment).second) {
      return refuse("request id '" + adjustment.request_id + "' names two adjustments");
    }
  }
  engine->last_round_key_ = snapshot.last_round_key;
  engine->last_payout_id_ = snapshot.last_payout_id;
  engine->last_draw_id_ = snapshot.last_draw_id;
  if (auto broken = engine->check_invariants()) return refuse(*broken);
  return engine;
}

EngineSnapshot Engine::snapshot() const {
  EngineSnapshot snapshot;
  for (const auto& state : links_) {
    snapshot.links.push_back({state->settings.meters.id, state->link.ledger().balances(),
                              state->link.ledger().next_id(), state->link.hidden_triggers(),
                              state->status,
                              state->status == LinkStatus::open ? 0 : state->status_since_us});
  }
  for (const TableSettings& settings : config_.tables) {
    const TableState& table = *tables_.at(settings.id.value());
    snapshot.tables.push_back(
        {settings.id, table.current, table.previous, table.epoch, table.rebased_base});
  }
  for (const auto& [id, payout] : payouts_) {
    snapshot.pending.push_back({payout, award_transfers_.at(id)});
  }
  for (const auto& [id, adjustment] : adjustments_) snapshot.adjustments.push_back(adjustment);
  for (const auto& [id, rebase] : rebases_) snapshot.rebases.push_back(rebase);
  for (const auto& [id, decision] : payout_decisions_)
    snapshot.payout_decisions.push_back(decision);
  for (const auto& [id, voided] : supervisor_voids_) snapshot.supervisor_voids.push_back(voided);
  snapshot.last_round_key = last_round_key_;
  snapshot.last_payout_id = last_payout_id_;
  snapshot.last_draw_id = last_draw_id_;
  return snapshot;
}

Engine::LinkState* Engine::find_link(const LinkId& id) {
  const auto it = links_by_id_.find(id.value());
  return it == links_by_id_.end() ? nullptr : it->second;
}

const Link* Engine::link(const LinkId& id) const {
  const auto it = links_by_id_.find(id.value());
  return it == links_by_id_.end() ? nullptr : &it->second->link;
}

namespace {

EngineFailure no_table(const TableId& id) {
  return failure(EngineError::unknown_table, "no table " + quote_prefix(id.value()));
}

EngineFailure round_id_out_of_range(const TableId& table, RoundId round) {
  return invalid(EngineError::round_id_out_of_range,
                 round_name(table, round) + ": round ids are 1.." + std::to_string(kMaxRoundId));
}

}  // namespace

Result<Engine::TableState*, EngineFailure> Engine::find_table(const TableId& id) {
  const auto it = tables_.find(id.value());
  if (it == tables_.end()) return no_table(id);
  return it->second.get();
}

Result<std::pair<Engine::TableState*, Engine::RoundState*>, EngineFailure> Engine::find_round(
    const TableId& table_id, RoundId round_id) {
  // The table looked up here rather than through find_table(): one Result fewer to make and
  // take apart on every lock and settle.
  const auto it = tables_.find(table_id.value());
  if (it == tables_.end()) return no_table(table_id);
  TableState* table = it->second.get();
  if (!round_id_in_range(round_id.value())) return round_id_out_of_range(table_id, round_id);
  const RoundCounter counter = table->counter();
  const RoundState* latest = table->latest();
  const RoundState* before = table->before_latest();
  switch (command_round_rule(
      counter.base, latest ? std::optional(latest->id.value()) : std::nullopt,
      before ? std::optional(before->id.value()) : std::nullopt, round_id.value())) {
    case CommandRoundRule::latest:
      return std::pair{table, &*table->current};
    case CommandRoundRule::previous:
      return std::pair{table, &*table->previous};
    case CommandRoundRule::superseded:
      return failure(EngineError::round_superseded,
                     round_name(table_id, round_id) +
                         " is two or more rounds behind the table's latest round " +
                         std::to_string(counter.base) +
                         " (or before its counter's re-base): only the latest two answer "
                         "commands");
    case CommandRoundRule::never_opened:
      break;
  }
  std::string latest_text = "the table has played no round";
  if (latest != nullptr) {
    latest_text = "the table's latest round is " + std::to_string(counter.base);
  } else if (table->epoch > 0) {
    latest_text =
        "no round since its round counter was re-based to " + std::to_string(counter.base + 1);
  }
  return failure(EngineError::round_not_found,
                 round_name(table_id, round_id) + " was never opened (" + latest_text + ")");
}

std::vector<LinkId> Engine::links_of_table(const TableId& table) const {
  std::vector<LinkId> ids;
  const auto it = tables_.find(table.value());
  if (it == tables_.end()) return ids;
  for (const auto& played : it->second->links) ids.push_back(played.link->settings.meters.id);
  return ids;
}

void Engine::add_levels(const LinkState& state, std::vector<LevelMeterView>& views) {
  const Link& link = state.link;
  for (std::uint32_t level = 1; level <= link.level_count(); ++level) {
    const LevelRules& rules = link.rules(level);
    views.emplace_back(state.settings.meters.id, level, state.level_names[level - 1],
                       link.meter(level), rules.must_hit_by, rules.ceiling);
  }
}

std::vector<LevelMeterView> Engine::meters(const std::vector<LinkId>& ids) const {
  std::vector<LevelMeterView> views;
  for (const auto& state : links_) {
    const LinkId& id = state->settings.meters.id;
    if (!ids.empty() && std::find(ids.begin(), ids.end(), id) == ids.end()) continue;
    add_levels(*state, views);
  }
  return views;
}

// The levels of every link the table plays, in configuration order (as meters() gives them),
// into `views` (empty): an answer's own, filled in place.
void Engine::meters_of_table(const TableState& table, std::vector<LevelMeterView>& views) const {
  std::size_t levels = 0;
  for (const auto& played : table.links) levels += played.link->link.level_count();
  views.reserve(levels);
  for (const auto& state : links_) {
    const bool played = std::any_of(table.links.begin(), table.links.end(),
                                    [&](const auto& link) { return link.link == state.get(); });
    if (played) add_levels(*state, views);
  }
}

LinkStatus Engine::link_status(const LinkId& id) const {
  const auto it = links_by_id_.find(id.value());
  return it == links_by_id_.end() ? LinkStatus::unavailable : it->second->status;
}

std::int64_t Engine::link_status_since_us(const LinkId& id) const {
  const auto it = links_by_id_.find(id.value());
  return it == links_by_id_.end() ? 0 : it->second->status_since_us;
}

Result<LinkStatus, EngineFailure> Engine::set_link_status(const LinkId& id, LinkStatus status,
                                                          const std::string& changed_by,
                                                          const std::string& reason, Records& out) {
  LinkState* state = find_link(id);
  if (state == nullptr) {
    return failure(EngineError::unknown_link, "no link " + quote_prefix(id.value()));
  }
  if (changed_by.empty())
    return invalid(EngineError::requester_missing,
                   "a status change needs the name of who asks for it");
  if (reason.find_first_not_of(" \t\r\n") == std::string::npos) {
    return invalid(EngineError::reason_missing, "a status change needs a reason");
  }
  if (has_nul(changed_by) || has_nul(reason)) {
    return invalid(
        has_nul(changed_by) ? EngineError::requester_invalid : EngineError::reason_invalid,
        "a status change's name and reason may not contain NUL characters");
  }
  const std::int64_t now = clock_.now_us();
  if (state->status != status) state->status_since_us = now;
  state->status = status;
  out.link_statuses.push_back({id, status, now, changed_by, reason});
  return status;
}

bool Engine::locked_round_holds_money(const LinkState& link, std::uint32_t level) const {
  const AccountRef meter = AccountRef::meter(level);
  for (const auto& [id, table] : tables_) {
    if (!table->current || table->current->phase != RoundPhase::locked) continue;
    const RoundState& round = *table->current;
    for (std::size_t i = 0; i < table->links.size() && i < round.contributions.size(); ++i) {
      if (table->links[i].link != &link) continue;
      for (const Transfer& transfer : round.contributions[i]) {
        if (transfer.credit == meter) return true;
      }
    }
  }
  return false;
}

namespace {

AdjustMeterAnswer adjustment_answer(const MeterAdjustmentRecord& record,
                                    const std::vector<Name>* level_names) {
  Name name;
  if (level_names != nullptr && record.level >= 1 && record.level <= level_names->size()) {
    name = (*level_names)[record.level - 1];
  }
  return {record.link,        record.level,         name,
          record.meter_after, record.reserve_after, record.transfer};
}

// Blank: empty or only spaces, tabs and line ends.
bool blank(const std::string& text) {
  return text.find_first_not_of(" \t\r\n") == std::string::npos;
}

}  // namespace

Result<AdjustMeterAnswer, EngineFailure> Engine::adjust_meter(const AdjustMeterRequest& request,
                                                              const std::string& requested_by,
                                                              Records& out) {
  if (request.request_id.empty() || request.request_id.size() > kMaxIdBytes ||
      has_nul(request.request_id)) {
    return invalid(EngineError::request_id_invalid,
                   "an adjustment needs a request id of 1 to " + std::to_string(kMaxIdBytes) +
                       " bytes without NUL characters; got " + quote_prefix(request.request_id));
  }
  if (blank(request.reason) || request.reason.size() > kMaxReasonBytes || has_nul(request.reason)) {
    return invalid(
        blank(request.reason) ? EngineError::reason_missing : EngineError::reason_invalid,
        "an adjustment needs a reason of at most " + std::to_string(kMaxReasonBytes) +
            " bytes, not blank and without NUL characters; got " + quote_prefix(request.reason));
  }
  if (request.amount == Money()) {
    return invalid(EngineError::adjustment_zero,
                   std::string(to_string(AdjustmentRefusal::zero_amount)));
  }
  if (requested_by.empty() || has_nul(requested_by)) {
    return invalid(
        requested_by.empty() ? EngineError::requester_missing : EngineError::requester_invalid,
        "an adjustment needs the name of who asks for it");
  }
  if (const auto first = adjustments_.find(request.request_id); first != adjustments_.end()) {
    const MeterAdjustmentRecord& applied = first->second;
    if (applied.link == request.link && applied.level == request.level &&
        applied.amount == request.amount && applied.reason == request.reason) {
      const LinkState* applied_to = find_link(applied.link);
      return adjustment_answer(applied, applied_to ? &applied_to->level_names : nullptr);
    }
    return failure(EngineError::replay_differs,
                   "request id " + quote_prefix(request.request_id) +
                       " was used for another adjustment (" + applied.amount.to_string() +
                       " on level " + std::to_string(applied.level) + " of link '" +
                       applied.link.value() + "'); choose a new id for a new adjustment");
  }
  LinkState* state = find_link(request.link);
  if (state == nullptr) {
    return failure(EngineError::unknown_link, "no link " + quote_prefix(request.link.value()));
  }
  Link& meters = state->link;
  if (request.level < 1 || request.level > meters.level_count()) {
    return failure(EngineError::unknown_link, "link '" + request.link.value() + "' has no level " +
                                                  std::to_string(request.level) + " (it has 1.." +
                                                  std::to_string(meters.level_count()) + ")");
  }
  AdjustmentFacts facts = meters.adjustment_facts(request.level);
  facts.locked_round_holds_money = locked_round_holds_money(*state, request.level);
  if (const auto refusal = adjustment_refusal(request.amount, facts)) {
    std::string message = "adjustment of " + request.amount.to_string() + " on level " +
                          std::to_string(request.level) + " of link '" + request.link.value() +
                          "' (meter " + facts.meter.to_string() +
                          ") refused: " + std::string(to_string(*refusal));
    if (const auto cap = adjustment_raise_cap(facts); cap && request.amount > Money()) {
      message += "; a raise may carry it to at most " + cap->to_string();
    }
    if (*refusal == AdjustmentRefusal::below_seed) {
      message += "; a lowering may take it down to its seed " + facts.seed.to_string() + " at most";
    }
    return failure(*refusal == AdjustmentRefusal::zero_amount ? EngineError::adjustment_zero
                                                              : EngineError::ledger_refused,
                   std::move(message));
  }
  state->scratch.clear();
  const auto posted =
      meters.adjust_meter(request.level, request.amount, request.reason, Origin{}, state->scratch);
  JACKPOT_INVARIANT(posted.ok(), "an adjustment the rule admits posts");
  out.transfers.push_back({state->name, state->scratch.back()});
  state->scratch.clear();
  MeterAdjustmentRecord record{request.request_id,
                               request.link,
                               request.level,
                               request.amount,
                               request.reason,
                               requested_by,
                               *posted,
                               meters.meter(request.level),
                               meters.reserve(request.level),
                               clock_.now_us()};
  out.adjustments.push_back(record);
  const AdjustMeterAnswer answer = adjustment_answer(record, &state->level_names);
  adjustments_.emplace(request.request_id, std::move(record));
  return answer;
}

const Payout* Engine::payout(PayoutId id) const {
  const auto it = payouts_.find(id.value());
  return it == payouts_.end() ? nullptr : &it->second;
}

std::vector<Payout> Engine::pending_payouts() const {
  std::vector<Payout> pending;
  for (const auto& [id, payout] : payouts_) {
    if (payout.state == PayoutState::pending) pending.push_back(payout);
  }
  return pending;
}

std::optional<std::string> Engine::check_invariants() const {
  std::unordered_map<std::string, std::int64_t> pending;  // By link: one pass over the payouts.
  for (const auto& [id, payout] : payouts_) {
    if (payout.state == PayoutState::pending)
      pending[payout.link.value()] += payout.amount.micros();
  }
  for (const auto& state : links_) {
    const std::string& link = state->settings.meters.id.value();
    if (auto broken = state->link.check_invariants()) return "link '" + link + "': " + *broken;
    const auto found = pending.find(link);
    const std::int64_t owed = found == pending.end() ? 0 : found->second;
    const Money payable =
        state->link.ledger().balance(AccountRef::link(AccountKind::awards_payable));
    if (payable.micros() != owed) {
      return "link '" + link + "': awards_payable " + payable.to_string() +
             " differs from the pending payouts " + Money::from_micros(owed).to_string();
    }
  }
  return std::nullopt;
}

void Engine::note_awards(const TableState& acting, const LinkState& link) {
  std::vector<std::uint32_t> levels;
  for (const Transfer& transfer : link.scratch) {
    if (transfer.kind == TransferKind::award && transfer.debit.kind == AccountKind::meter) {
      levels.push_back(transfer.debit.level);
    }
  }
  if (levels.empty()) return;
  for (auto& [id, table] : tables_) {
    if (table.get() == &acting || !table->current || table->current->phase != RoundPhase::locked) {
      continue;
    }
    RoundState& round = *table->current;
    for (std::size_t i = 0; i < table->links.size() && i < round.awarded_since.size(); ++i) {
      if (table->links[i].link != &link) continue;
      auto& noted = round.awarded_since[i];
      noted.insert(noted.end(), levels.begin(), levels.end());
      std::sort(noted.begin(), noted.end());
      noted.erase(std::unique(noted.begin(), noted.end()), noted.end());
    }
  }
}

// ---- OpenRound ------------------------------------------------------------------------------

Result<OpenRoundAnswer, EngineFailure> Engine::open_round(const OpenRoundRequest& request,
                                                          Records& out) {
  auto table_result = find_table(request.table);
  if (!table_result) return table_result.error();
  TableState& table = **table_result;
  if (!round_id_in_range(request.round.value())) {
    return round_id_out_of_range(request.table, request.round);
  }
  const RoundCounter counter = table.counter();
  const std::string base = std::to_string(counter.base);
  switch (open_round_rule(counter, request.round.value())) {
    case OpenRoundRule::open_new:
      break;
    case OpenRoundRule::replay:
      if (const RoundState* latest = table.latest(); latest != nullptr && latest->opened) {
        return first_answer<OpenRoundAnswer>(*latest->opened);
      }
      // A journal from before answers were kept: the round is open, but its answer cannot be
      // given again; refused as a repeat, never answered with something else.
      return failure(EngineError::round_id_not_increasing,
                     round_name(request.table, request.round) +
                         " is open, but its first answer is not on record: it cannot be replayed");
    case OpenRoundRule::not_latest_open:
      return failure(EngineError::round_id_not_increasing,
                     round_name(request.table, request.round) + " was opened before and is now " +
                         std::string(round_phase_name(table.current->phase)) +
                         ": an OpenRound repeat is answered only while its round is the table's "
                         "latest and OPEN (a controller whose counter restarted needs a "
                         "supervisor's RebaseRoundCounter)");
    case OpenRoundRule::not_increasing:
      return failure(EngineError::round_id_not_increasing,
                     round_name(request.table, request.round) + ": round ids must increase (last " +
                         base + ")");
    case OpenRoundRule::previous_open:
      return failure(
          EngineError::previous_round_open,
          round_name(request.table, table.current->id) + " is still open: settle or void it first");
    case OpenRoundRule::jump_too_far:
      return failure(EngineError::round_id_jump_too_far,
                     round_name(request.table, request.round) + " is more than " +
                         std::to_string(kMaxRoundIdJump) + " above the table's counter (" + base +
                         "); a supervisor re-bases a counter that really moved that far "
                         "(RebaseRoundCounter)");
  }
  for (const auto& played : table.links) {
    if (played.link->status == LinkStatus::closed) {
      return failure(EngineError::link_closed,
                     "link '" + played.link->settings.meters.id.value() + "' is closed");
    }
    if (played.link->status == LinkStatus::unavailable) {
      return failure(EngineError::link_unavailable,
                     "link '" + played.link->settings.meters.id.value() + "' is unavailable");
    }
  }

  RoundState round;
  round.id = request.round;
  round.epoch = table.epoch;
  round.key = ++last_round_key_;
  // The round before the previous one leaves memory below (when there is a current round to
  // become the previous one): the new round takes over its vectors' storage, emptied.
  if (table.current && table.previous) {
    RoundState& leaving = *table.previous;
    round.dynamic.swap(leaving.dynamic);
    round.wagers.swap(leaving.wagers);
    round.contributions.swap(leaving.contributions);
    round.hits.swap(leaving.hits);
    round.hits.clear();
  }
  const auto reset = [&table](auto& per_link) {
    per_link.resize(table.links.size());
    for (auto& entries : per_link) entries.clear();
  };
  reset(round.dynamic);
  reset(round.wagers);
  reset(round.contributions);
  reset(round.awarded_since);
  const std::int64_t now = clock_.now_us();
  OpenRoundAnswer answer{request.table, request.round, {}};
  const RoundState* last = table.current ? &*table.current : nullptr;
  for (std::size_t i = 0; i < table.links.size(); ++i) {
    const auto& played = table.links[i];
    const Paytable& paytable = *played.paytable;
    if (paytable.dynamic_max_selected == 0) continue;
    const LinkSettings& settings = played.link->settings;
    const LinkId& link_id = settings.meters.id;
    DynamicSelectionView view{link_id, paytable.id, {}};
    const DynamicCarry carry =
        last != nullptr && i < last->dynamic.size()
            ? dynamic_pays_carry(last->phase, i < last->wagers.size() && !last->wagers[i].empty())
            : DynamicCarry::draw;
    if (carry != DynamicCarry::draw && selection_fits(last->dynamic[i], paytable)) {
      round.dynamic[i] = last->dynamic[i];
      std::string kept = "rows=[";
      for (const auto& [row, option] : round.dynamic[i]) {
        if (kept.size() > 6) kept += ",";
        kept += std::to_string(row) + ":" + std::to_string(option);
      }
      out.draws.push_back(
          {next_draw_id(), round.key, link_id, 0, DrawKind::dynamic_carried_over,
           (carry == DynamicCarry::after_void ? "voided round " : "unwagered round ") +
               std::to_string(last->id.value()) + " (round key " + std::to_string(last->key) + ")",
           kept + "]", std::nullopt, now});
    } else {
      std::vector<std::size_t> candidates;
      for (std::size_t row = 0; row < paytable.rows.size(); ++row) {
        if (paytable.rows[row].kind == PayKind::dynamic) candidates.push_back(row);
      }
      const std::uint32_t span = paytable.dynamic_max_selected - paytable.dynamic_min_selected + 1;
      const std::uint32_t count =
          paytable.dynamic_min_selected +
          static_cast<std::uint32_t>(weighted_draw(random_, settings.dynamic_count_weights, span));
      out.draws.push_back({next_draw_id(), round.key, link_id, 0, DrawKind::dynamic_count,
                           "counts=" + std::to_string(paytable.dynamic_min_selected) + ".." +
                               std::to_string(paytable.dynamic_max_selected) +
                               " weights=" + weights_text(settings.dynamic_count_weights),
                           "count=" + std::to_string(count), std::nullopt, now});
      for (std::uint32_t pick = 0; pick < count; ++pick) {
        const auto index = static_cast<std::size_t>(uniform_below(random_, candidates.size()));
        const std::size_t row = candidates[index];
        out.draws.push_back(
            {next_draw_id(), round.key, link_id, 0, DrawKind::dynamic_hand,
             "rows=" + join(std::vector<std::uint64_t>(candidates.begin(), candidates.end())),
             "row=" + std::to_string(row), std::nullopt, now});
        candidates.erase(candidates.begin() + static_cast<std::ptrdiff_t>(index));
        const auto option = static_cast<std::uint32_t>(
            weighted_draw(random_, settings.dynamic_option_weights, 10) + 1);
        out.draws.push_back({next_draw_id(), round.key, link_id, 0, DrawKind::dynamic_option,
                             "row=" + std::to_string(row) + " options=1..10 weights=" +
                                 weights_text(settings.dynamic_option_weights),
                             "option=" + std::to_string(option), std::nullopt, now});
        round.dynamic[i].emplace_back(row, option);
      }
    }
    std::sort(round.dynamic[i].begin(), round.dynamic[i].end());
    for (const auto& [row, option] : round.dynamic[i]) {
      view.pays.push_back(
          {paytable.rows[row].label, option,
           scaled_to_cent(paytable.rows[row].options[option - 1], settings.meters.base_wager,
                          Money::from_micros(Money::kMicrosPerUnit))
               .value_or(Money())});
    }
    answer.dynamic_pays.push_back(std::move(view));
  }
  keep_first(round.opened, round.key, CommandKind::open, request, answer, out);
  for (std::size_t i = 0; i < table.links.size(); ++i) {
    for (const auto& [row, option] : round.dynamic[i]) {
      out.dynamic_pays.push_back({round.key, table.links[i].link->settings.meters.id,
                                  static_cast<std::uint32_t>(row), option});
    }
  }
  out.rounds.push_back({round.key,
                        request.table,
                        request.round,
                        RoundPhase::open,
                        now,
                        {},
                        RoundPhase::open,
                        table.epoch});
  if (table.current) table.previous = std::move(table.current);
  table.current = std::move(round);
  return answer;
}

// ---- LockWagers -----------------------------------------------------------------------------

Result<LockWagersAnswer, EngineFailure> Engine::lock_wagers(const LockWagersRequest& request,
                                                            Records& out) {
  auto found = find_round(request.table, request.round);
  if (!found) return found.error();
  TableState& table = *found->first;
  RoundState* round = found->second;
  if (auto first = replay<LockWagersAnswer>(round->locked, request, [&] {
        return round_name(request.table, request.round) + " was already locked with other wagers";
      })) {
    return *first;
  }
  if (round->phase != RoundPhase::open) {
    return failure(EngineError::wrong_round_state,
                   round_name(request.table, request.round) + " is not OPEN");
  }

  auto checked = check_wagers(request, table);
  if (!checked) return checked.error();
  std::vector<std::vector<RoundSnapshot::SeatWager>>& wagers = *checked;

  // Contributions on every link, all or nothing.
  std::vector<Link::Checkpoint> checkpoints;
  std::vector<ContributionResult> results(table.links.size());
  for (std::size_t i = 0; i < table.links.size(); ++i) {
    LinkState& link = *table.links[i].link;
    link.scratch.clear();
    checkpoints.push_back(link.link.checkpoint(link.scratch));
    std::int64_t units = 0;  // In range: check_wagers() refused a link whose sum is not.
    for (const auto& wager : wagers[i]) units += wager.units;
    if (units == 0) continue;
    auto contributed = link.link.contribute(units, Origin{round->key, 0}, link.scratch);
    if (!contributed) {
      for (std::size_t j = 0; j <= i; ++j) {
        table.links[j].link->link.rollback(checkpoints[j], table.links[j].link->scratch);
      }
      return failure(EngineError::ledger_refused, "link '" + link.settings.meters.id.value() +
                                                      "' refused the contributions: " +
                                                      std::string(to_string(contributed.error())));
    }
    results[i] = std::move(contributed).value();
  }

  // From here on nothing can fail.
  const std::int64_t now = clock_.now_us();
  LockWagersAnswer answer{request.table, request.round, {}, {}};
  for (std::size_t i = 0; i < table.links.size(); ++i) {
    LinkState& link = *table.links[i].link;
    for (const auto& wager : wagers[i]) {
      out.wagers.emplace_back(round->key, wager.seat, link.name,
                              *link.settings.meters.base_wager.times(wager.units), wager.units);
    }
    round->contributions[i].reserve(link.scratch.size());
    for (const Transfer& transfer : link.scratch) {
      out.transfers.emplace_back(link.name, transfer);
      if (transfer.kind == TransferKind::contribution || transfer.kind == TransferKind::overflow) {
        round->contributions[i].push_back(transfer);
      }
    }
    for (const MustHitByHit& hit : results[i].hits) {
      answer.must_hit_by_hits.push_back(
          award_must_hit_by(table, *round, i, hit, wagers[i], now, out));
    }
    if (!results[i].hits.empty()) note_awards(table, link);
    link.scratch.clear();
  }
  round->wagers = std::move(wagers);
  round->phase = RoundPhase::locked;
  meters_of_table(table, answer.meters);
  keep_first(round->locked, round->key, CommandKind::lock, request, answer, out);
  out.rounds.emplace_back(round->key, request.table, request.round, RoundPhase::locked, now);
  return answer;
}

// A Must-Hit-By level that a lock's contributions carried to its trigger on the table's link
// `link_index`: its winner drawn among the link's wagering seats (uniformly, or by wager), the
// draws recorded, and its payout created from the hit on, its amount frozen
// (docs/architecture.md §6): paid at once below the link's approval threshold.
MustHitByHitView Engine::award_must_hit_by(const TableState& table, RoundState& round,
                                           std::size_t link_index, const MustHitByHit& hit,
                                           std::span<const RoundSnapshot::SeatWager> wagers,
                                           std::int64_t now, Records& out) {
  LinkState& link = *table.links[link_index].link;
  const LinkId& link_id = link.settings.meters.id;
  // The winner: uniformly (or by wager) among the round's wagering seats on this link.
  std::vector<std::uint64_t> seats;
  std::vector<std::uint32_t> weights;
  for (const auto& wager : wagers) {
    seats.push_back(wager.seat);
    weights.push_back(static_cast<std::uint32_t>(std::min<std::int64_t>(wager.units, 1 << 30)));
  }
  const bool weighted = link.settings.must_hit_by_weighted_by_wager;
  const std::size_t winner =
      weighted_draw(random_, weighted ? weights : std::vector<std::uint32_t>{}, seats.size());
  const std::uint64_t draw_id = next_draw_id();
  out.draws.push_back(
      {draw_id, round.key, link_id, hit.level, DrawKind::must_hit_by_winner,
       "seats=" + join(seats) + " weights=" + (weighted ? weights_text(weights) : "uniform"),
       "seat=" + std::to_string(seats[winner]), std::nullopt, now});
  if (hit.next) {
    out.draws.push_back({next_draw_id(), round.key, link_id, hit.level, DrawKind::hidden_trigger,
                         "above=" + hit.next->range_above.to_string() +
                             " up_to=" + hit.next->range_up_to.to_string(),
                         "committed " + to_hex(hit.next->commitment), hit.next, now});
  }
  const Transfer award = posted(link.scratch, hit.award);
  // The payout exists from the hit on, its amount frozen (docs/architecture.md §6).
  const auto seat = static_cast<std::uint32_t>(seats[winner]);
  const PayoutId payout_id(++last_payout_id_);
  Payout payout;
  payout.id = payout_id;
  payout.table = table.settings.id;
  payout.round = round.id;
  payout.seat = seat;
  payout.link = link_id;
  payout.kind = AwardKind::must_hit_by;
  payout.level = hit.level;
  payout.hand = kMustHitByLabel;
  payout.amount = hit.amount;
  payout.state = PayoutState::pending;
  payout.approvals_required = approvals_required(link.settings, hit.amount);
  payout.award_transfer = award.id;
  payout.created_us = now;
  payout.epoch = round.epoch;
  if (payout.approvals_required == 0) {
    std::vector<Transfer> paid_now;
    const auto paid = link.link.pay_award(award, {round.key, payout_id.value()}, paid_now);
    JACKPOT_INVARIANT(paid.ok(), "an award just posted can be paid");
    for (const Transfer& transfer : paid_now) out.transfers.push_back({link.name, transfer});
    payout.state = PayoutState::paid;
  }
  out.payouts.push_back(payout);
  if (payout.state == PayoutState::pending) {
    award_transfers_[payout_id.value()] = award;
    payouts_[payout_id.value()] = payout;
  }
  round.hits.push_back({link_index, hit.level, seat, hit.amount, award, draw_id, payout_id});
  out.hits.push_back(
      {round.key, link_id, hit.level, seat, hit.amount, award.id, draw_id, payout_id});
  return {link_id, hit.level, seat, hit.amount, draw_id, payout.state, hit.revealed};
}

// Every wager of a lock, checked before anything changes: the seat exists, the table plays the
// link, no seat wagers twice on a link, the link is OPEN, and the amount is a positive whole
// number of the link's base wagers within its maximum, the link's total within range. The wagers
// per link of the table, lowest seat first.
Result<std::vector<std::vector<RoundSnapshot::SeatWager>>, EngineFailure> Engine::check_wagers(
    const LockWagersRequest& request, const TableState& table) {
  std::vector<std::vector<RoundSnapshot::SeatWager>> wagers(table.links.size());
  std::vector<std::bitset<kMaxSeats + 1>> seats_seen(table.links.size());
  std::vector<std::int64_t> units_on(table.links.size(), 0);  // Overflow is refused.
  for (const WagerRequest& wager : request.wagers) {
    const auto seat = [&wager] { return "seat " + std::to_string(wager.seat); };
    if (wager.seat < 1 || wager.seat > table.settings.seats) {
      return invalid(EngineError::seat_unknown, seat() + " does not exist at table " +
                                                    request.table.value() + " (seats 1.." +
                                                    std::to_string(table.settings.seats) + ")");
    }
    std::size_t index = table.links.size();
    for (std::size_t i = 0; i < table.links.size(); ++i) {
      if (table.links[i].link->settings.meters.id == wager.link) index = i;
    }
    if (index == table.links.size()) {
      return invalid(EngineError::link_not_played, "table " + request.table.value() +
                                                       " does not play link " +
                                                       quote_prefix(wager.link.value()));
    }
    if (seats_seen[index][wager.seat]) {
      return invalid(EngineError::wager_repeated,
                     seat() + " wagers twice on link " + quote_prefix(wager.link.value()));
    }
    seats_seen[index][wager.seat] = true;
    const LinkState& link = *table.links[index].link;
    if (link.status != LinkStatus::open) {
      return failure(link.status == LinkStatus::closed ? EngineError::link_closed
                                                       : EngineError::link_unavailable,
                     "link '" + wager.link.value() + "' takes no wagers now");
    }
    const Money base = link.settings.meters.base_wager;
    const auto micros = Money::from_cents(wager.amount_cents);
    if (wager.amount_cents <= 0 || !micros) {
      return invalid(EngineError::wager_amount_invalid,
                     seat() + ": the wager must be a positive amount of cents");
    }
    if (micros->micros() % base.micros() != 0) {
      return invalid(EngineError::wager_amount_invalid,
                     seat() + ": the wager " + micros->to_string() +
                         " is not a whole number of base wagers of " + base.to_string());
    }
    const std::int64_t units = micros->micros() / base.micros();
    if (units > link.settings.max_wager_units) {
      return invalid(EngineError::wager_above_max,
                     seat() + ": the wager " + micros->to_string() + " is more than the link's " +
                         std::to_string(link.settings.max_wager_units) + " base wagers");
    }
    if (__builtin_add_overflow(units_on[index], units, &units_on[index])) {
      return invalid(EngineError::wager_overflow, seat() + ": the wagers overflow");
    }
    wagers[index].push_back({wager.seat, units});
  }

  for (auto& link_wagers : wagers) {
    std::sort(link_wagers.begin(), link_wagers.end(),
              [](const auto& a, const auto& b) { return a.seat < b.seat; });
  }
  return wagers;
}

// ---- SettleRound ----------------------------------------------------------------------------
// validate (check_report) → evaluate (evaluate_link) → decide (decide_awards, award_rules.h) →
// apply (apply_awards) → record and answer (record_settlement).

// What one wagering seat's hand came to on one link.
struct SeatOutcome {
  std::uint32_t seat = 0;
  std::int64_t units = 0;
  std::optional<std::size_t> row;
  bool keyed = false;
  std::string cards;  // As the hand record keeps them; empty when keyed.
};

// A settlement's award as applied to the meters, with its payout.
struct AppliedAward {
  std::size_t link_index = 0;
  AwardDecision decision;  // Its amount as paid.
  PayoutId payout;
  Transfer award;  // What paying it moves.
  Payout created;
};

namespace {

// A seat's report, checked: its own cards, or the hand the dealer keyed (resolved per link).
struct SeatReport {
  std::vector<Card> cards;
  const std::string* keyed = nullptr;
};

// A settlement's report, checked: every card valid and dealt once, every wagering seat reported.
struct Report {
  std::vector<Card> board;
  std::vector<Card> link_cards;
  std::vector<SeatReport> seats;  // By seat number (1..the table's seats).
};

// "As Kd | 2c 3c 4c 5c 6c": the seat's own cards, then the community cards it played with.
std::string cards_text(std::span<const Card> pocket, std::span<const Card> community) {
  std::string text;
  text.reserve(3 * (pocket.size() + community.size()) + 2);
  const auto add = [&text](Card card) {
    if (!text.empty()) text += ' ';
    text += rank_letter(card);
    text += suit_letter(static_cast<Suit>(card.suit));
  };
  for (const Card card : pocket) add(card);
  if (!community.empty()) text += text.empty() ? "|" : " |";
  for (const Card card : community) add(card);
  return text;
}

Name hand_label(const Paytable& paytable, std::optional<std::size_t> row) {
  return row ? paytable.rows[*row].label : kNoHand;
}

std::string seat_name(std::uint32_t seat) { return "seat " + std::to_string(seat); }

// Validates a settlement's report before anything is evaluated: the seats (each wagering seat
// once, with either cards or a keyed hand) and the cards (each valid, in the counts the table's
// game deals, none dealt twice across board, link cards and seats).
Result<Report, EngineFailure> check_report(const SettleRoundRequest& request,
                                           const TableSettings& table, bool draws_link_cards,
                                           const std::vector<bool>& wagering) {
  Report report;
  report.seats.resize(table.seats + 1);
  std::vector<const SeatHandRequest*> reported(table.seats + 1, nullptr);  // By seat number.
  for (const SeatHandRequest& hand : request.seats) {
    if (hand.seat < 1 || hand.seat > table.seats) {
      return invalid(EngineError::seat_unknown,
                     seat_name(hand.seat) + " does not exist at table " + request.table.value());
    }
    if (!wagering[hand.seat])
      return invalid(EngineError::seat_not_wagering,
                     seat_name(hand.seat) + " did not wager this round");
    if (reported[hand.seat] != nullptr)
      return invalid(EngineError::seat_reported_twice, seat_name(hand.seat) + " is reported twice");
    reported[hand.seat] = &hand;
    if (hand.keyed_hand.has_value() == !hand.cards.empty()) {
      return invalid(EngineError::hand_ambiguous,
                     seat_name(hand.seat) + ": report either the seat's cards or a keyed hand");
    }
  }
  for (std::uint32_t seat = 1; seat <= table.seats; ++seat) {
    if (wagering[seat] && reported[seat] == nullptr)
      return invalid(EngineError::hand_missing, seat_name(seat) + " wagered but has no hand");
  }
  // Link cards where no link draws them would be kept as if they counted.
  if (!request.link_cards.empty() && !draws_link_cards) {
    return invalid(EngineError::link_cards_unexpected,
                   "link cards sent to table " + request.table.value() + ", whose links draw none");
  }

  CardMask dealt = 0;
  const auto deal = [&dealt](std::span<const Card> cards) -> std::optional<EngineFailure> {
    for (const Card card : cards) {
      if (dealt & card_bit(card))
        return invalid(EngineError::card_dealt_twice, to_string(card) + " is dealt twice");
      dealt |= card_bit(card);
    }
    return std::nullopt;
  };
  const auto parse = [](const std::vector<std::string>& texts, std::string_view what,
                        std::vector<Card>& into) -> std::optional<EngineFailure> {
    auto cards = parse_cards(texts, what);
    if (!cards) return invalid(card_refusal(cards.error()), cards.error().message);
    into = std::move(*cards);
    return std::nullopt;
  };
  if (auto refused = parse(request.board, "board", report.board)) return *refused;
  if (auto refused = parse(request.link_cards, "link cards", report.link_cards)) return *refused;
  const TableCards counts = table_cards(table.game);
  const bool any_cards =
      std::any_of(request.seats.begin(), request.seats.end(),
                  [](const SeatHandRequest& hand) { return !hand.cards.empty(); });
  if (any_cards && report.board.size() != counts.board_cards) {
    return invalid(EngineError::card_count_wrong,
                   "the board needs " + std::to_string(counts.board_cards) + " cards, got " +
                       std::to_string(report.board.size()));
  }
  if (auto refused = deal(report.board)) return *refused;
  if (auto refused = deal(report.link_cards)) return *refused;
  for (std::uint32_t seat = 1; seat <= table.seats; ++seat) {
    const SeatHandRequest* hand = reported[seat];
    if (hand == nullptr || hand->keyed_hand) continue;
    std::vector<Card>& cards = report.seats[seat].cards;
    if (auto refused = parse(hand->cards, "cards of " + seat_name(seat), cards)) return *refused;
    if (cards.size() != counts.seat_cards) {
      return invalid(EngineError::card_count_wrong,
                     seat_name(seat) + " needs " + std::to_string(counts.seat_cards) +
                         " cards, got " + std::to_string(cards.size()));
    }
    if (auto refused = deal(cards)) return *refused;
  }

  for (std::uint32_t seat = 1; seat <= table.seats; ++seat) {
    const SeatHandRequest* hand = reported[seat];
    if (hand != nullptr && hand->keyed_hand) report.seats[seat].keyed = &*hand->keyed_hand;
  }
  return report;
}

// One link's part of the table: what its seats' hands are evaluated against.
struct LinkHands {
  const Paytable& paytable;
  CommunitySource community;
  Suit specific_suit;
  const LinkId& link;
  std::span<const Paytable* const> table_paytables;  // Of every link of the table: keyed hands.
};

// Each wagering seat's row on one link, lowest seat first: its cards evaluated under the link's
// rule with the community cards the link plays, or the hand the dealer keyed (a row of the
// table's paytables, and not the Must-Hit-By row, which the lock's draw wins).
Result<std::vector<SeatOutcome>, EngineFailure> evaluate_link(
    const LinkHands& played, std::span<const RoundSnapshot::SeatWager> wagers,
    const Report& report) {
  std::span<const Card> community;
  if (played.community == CommunitySource::board) community = report.board;
  if (played.community == CommunitySource::flop && report.board.size() >= 3)
    community = std::span<const Card>(report.board).first(3);
  if (played.community == CommunitySource::link_cards) community = report.link_cards;
  const Paytable& paytable = played.paytable;
  const RoundContext context{played.specific_suit};
  const CommunityCards shared = community_cards(paytable.rule, community);  // Every seat's.

  std::vector<SeatOutcome> outcomes;
  outcomes.reserve(wagers.size());
  for (const RoundSnapshot::SeatWager& wager : wagers) {
    const SeatReport& seat = report.seats[wager.seat];
    SeatOutcome outcome{wager.seat, wager.units, std::nullopt, seat.keyed != nullptr, {}};
    if (seat.keyed) {
      const auto event = keyed_event(played.table_paytables, *seat.keyed);
      if (!event) {
        return invalid(EngineError::keyed_hand_unknown,
                       seat_name(wager.seat) + ": " + quote_prefix(*seat.keyed) +
                           " is no row of the table's paytables (key a row as printed, e.g. "
                           "\"Full House\")");
      }
      if (*event == HandEvent::must_hit_by) {
        return invalid(EngineError::keyed_hand_not_a_hand,
                       seat_name(wager.seat) + ": " + quote_prefix(*seat.keyed) +
                           " is not a hand: a Must-Hit-By level is won by the draw at the lock");
      }
      outcome.row = resolve(paytable, keyed_facts(*event, context.specific_suit), context);
    } else {
      const SeatCards cards{seat.cards, community};
      if (const auto error = check_card_counts(paytable.rule, cards)) {
        return invalid(
            EngineError::card_count_wrong,
            seat_name(wager.seat) + " on link '" + played.link.value() + "': " + error->message);
      }
      outcome.row = resolve(
          paytable, evaluate(paytable.rule, cards.pocket, shared, paytable.facts_needed), context);
      outcome.cards = cards_text(cards.pocket, community);
    }
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

// The state a Must-Hit-By hit's payout was created in, as the lock's answer recorded it; empty
// for a lock answer kept before the codec recorded it.
std::optional<PayoutState> hit_payout_state(const std::optional<LockWagersAnswer>& locked,
                                            const LinkId& link, std::uint32_t level) {
  if (locked) {
    for (const MustHitByHitView& view : locked->must_hit_by_hits) {
      if (view.link == link && view.level == level && view.payout_state) return view.payout_state;
    }
  }
  return std::nullopt;
}

}  // namespace

Engine::~Engine() = default;

Result<SettleRoundAnswer, EngineFailure> Engine::settle_round(const SettleRoundRequest& request,
                                                              Records& out) {
  auto found = find_round(request.table, request.round);
  if (!found) return found.error();
  TableState& table = *found->first;
  RoundState& round = *found->second;
  // A keyed hand is compared as the hand it names on the table's paytables: "4 of a Kind" and
  // "FOUR_OF_A_KIND" settle the same seat the same way.
  const auto settle_form = [&table](SettleRoundRequest form) {
    return canonical(std::move(form), table.paytables);
  };
  if (auto first = replay<SettleRoundAnswer>(
          round.settled, request,
          [&] {
            return round_name(request.table, request.round) +
                   " was already settled with other hands";
          },
          settle_form)) {
    return *first;
  }
  if (round.phase != RoundPhase::locked) {
    return failure(EngineError::wrong_round_state,
                   round_name(request.table, request.round) + " is not LOCKED");
  }

  // Validate.
  std::vector<bool> wagering(table.settings.seats + 1);  // By seat number.
  for (const auto& link_wagers : round.wagers) {
    for (const auto& wager : link_wagers) wagering[wager.seat] = true;
  }
  const bool draws_link_cards = std::any_of(
      table.links.begin(), table.links.end(),
      [](const auto& played) { return played.community == CommunitySource::link_cards; });
  auto report = check_report(request, table.settings, draws_link_cards, wagering);
  if (!report) return report.error();

  // Evaluate.
  std::vector<std::vector<SeatOutcome>> outcomes;
  for (std::size_t i = 0; i < table.links.size(); ++i) {
    const auto& played = table.links[i];
    const LinkSettings& settings = played.link->settings;
    auto link_outcomes = evaluate_link({*played.paytable, played.community, settings.suit_specific,
                                        settings.meters.id, table.paytables},
                                       round.wagers[i], *report);
    if (!link_outcomes) return link_outcomes.error();
    outcomes.push_back(std::move(*link_outcomes));
  }

  // Decide. (The time read here is the payouts' and the round record's.)
  const std::int64_t now = clock_.now_us();
  std::vector<std::vector<AwardDecision>> decisions;
  for (std::size_t i = 0; i < table.links.size(); ++i) {
    const auto& played = table.links[i];
    std::vector<SeatRow> rows;
    rows.reserve(outcomes[i].size());
    for (const SeatOutcome& outcome : outcomes[i]) {
      rows.push_back({outcome.seat, outcome.units, outcome.row});
    }
    std::vector<MustHitByWin> wins;
    for (const RoundSnapshot::Hit& hit : round.hits) {
      if (hit.link_index == i) wins.push_back({hit.seat, hit.level, hit.amount, hit.payout});
    }
    auto decided =
        decide_awards({played.paytable, played.link->settings.meters.base_wager,
                       played.link->settings.simultaneous_hits, rows, round.dynamic[i], wins});
    if (!decided) {  // A pay past the money range: on the wire, as the ledger's refusal it was.
      return failure(EngineError::ledger_refused, round_name(request.table, request.round) +
                                                      ": the ledger refused the awards: " +
                                                      std::string(to_string(decided.error())));
    }
    decisions.push_back(std::move(*decided));
  }

  // Apply.
  auto applied = apply_awards(table, round, decisions, now);
  if (!applied) return applied.error();

  // Record and answer.
  return record_settlement(table, round, request, outcomes, decisions, *applied, now, out);
}

// Posts the decided awards on every link in their order, all or nothing: each gets a payout,
// paid at once below the link's approval threshold. On a refusal nothing stays posted.
Result<std::vector<AppliedAward>, EngineFailure> Engine::apply_awards(
    TableState& table, const RoundState& round,
    const std::vector<std::vector<AwardDecision>>& decisions, std::int64_t now) {
  std::vector<Link::Checkpoint> checkpoints;
  for (const auto& played : table.links) {
    played.link->scratch.clear();
    checkpoints.push_back(played.link->link.checkpoint(played.link->scratch));
  }
  const std::uint64_t first_payout_id = last_payout_id_;
  const auto refuse = [&](LinkError error) -> EngineFailure {
    for (std::size_t i = 0; i < table.links.size(); ++i) {
      table.links[i].link->link.rollback(checkpoints[i], table.links[i].link->scratch);
    }
    last_payout_id_ = first_payout_id;
    return failure(EngineError::ledger_refused,
                   round_name(table.settings.id, round.id) +
                       ": the ledger refused the awards: " + std::string(to_string(error)));
  };

  std::vector<AppliedAward> applied;
  for (std::size_t i = 0; i < table.links.size(); ++i) {
    LinkState& link = *table.links[i].link;
    const std::vector<AwardDecision>& awards = decisions[i];
    for (std::size_t j = 0; j < awards.size(); ++j) {
      const AwardDecision& award = awards[j];
      switch (award.kind) {
        case AwardKind::percent:
          if (award.shared_by > 1) {
            // One split of the meter for this decision and the next `shared_by` - 1; a share
            // below a cent pays nobody.
            JACKPOT_INVARIANT(
                j + award.shared_by <= awards.size() &&
                    std::all_of(awards.begin() + static_cast<std::ptrdiff_t>(j),
                                awards.begin() + static_cast<std::ptrdiff_t>(j + award.shared_by),
                                [&award](const AwardDecision& share) {
                                  return share.level == award.level &&
                                         share.shared_by == award.shared_by;
                                }),
                "a split's shares follow one another");
            std::vector<Origin> origins;
            for (std::uint32_t k = 0; k < award.shared_by; ++k) {
              origins.push_back({round.key, last_payout_id_ + 1 + k});
            }
            auto split = link.link.award_split(award.level, origins, link.scratch);
            if (!split) return refuse(split.error());
            for (std::uint32_t k = 0; k < award.shared_by && split->share > Money(); ++k) {
              AwardDecision share = awards[j + k];
              share.amount = split->share;
              applied.push_back({i,
                                 share,
                                 PayoutId(origins[k].payout),
                                 posted(link.scratch, split->transfers[k]),
                                 {}});
            }
            if (split->share > Money()) last_payout_id_ += award.shared_by;
            j += award.shared_by - 1;
          } else {
            const PayoutId payout(last_payout_id_ + 1);
            auto paid = link.link.award_percent(award.level, award.percent,
                                                {round.key, payout.value()}, link.scratch);
            if (!paid) return refuse(paid.error());
            // A meter below one cent pays nothing and makes no payout; its reset names none.
            if (paid->amount > Money()) {
              ++last_payout_id_;
              AwardDecision won = award;
              won.amount = paid->amount;
              applied.push_back({i, won, payout, posted(link.scratch, paid->transfer), {}});
            }
          }
          break;
        case AwardKind::fixed:
        case AwardKind::dynamic:
        case AwardKind::envy: {
          const PayoutId payout(++last_payout_id_);
          auto paid =
              link.link.record_tray_pay(award.amount, {round.key, payout.value()}, link.scratch);
          if (!paid) return refuse(paid.error());
          applied.push_back({i, award, payout, posted(link.scratch, *paid), {}});
          break;
        }
        case AwardKind::must_hit_by:  // Awarded and paid out at the lock.
          break;
      }
    }
  }

  for (AppliedAward& award : applied) {
    LinkState& link = *table.links[award.link_index].link;
    const AwardDecision& decision = award.decision;
    award.created = Payout{award.payout,
                           table.settings.id,
                           round.id,
                           decision.seat,
                           link.settings.meters.id,
                           decision.kind,
                           decision.level,
                           decision.hand,
                           decision.amount,
                           PayoutState::pending,
                           approvals_required(link.settings, decision.amount),
                           {},
                           {},
                           award.award.id,
                           now,
                           {},
                           round.epoch,
                           {}};
    if (award.created.approvals_required == 0) {
      auto paid = link.link.pay_award(award.award, {round.key, award.payout.value()}, link.scratch);
      if (!paid) return refuse(paid.error());
      award.created.state = PayoutState::paid;
    }
  }
  return applied;
}

// Makes the applied settlement the round's state (pending payouts kept for approval, the round
// SETTLED, its first answer kept for replays), appends its records, and lays out the answer: a
// result per wagering seat and link, highest seat first and a seat's links in configuration
// order, each with its awards in the order applied, then the Must-Hit-By wins of the lock.
SettleRoundAnswer Engine::record_settlement(
    TableState& table, RoundState& round, const SettleRoundRequest& request,
    const std::vector<std::vector<SeatOutcome>>& outcomes,
    const std::vector<std::vector<AwardDecision>>& decisions, std::vector<AppliedAward>& applied,
    std::int64_t now, Records& out) {
  for (std::size_t i = 0; i < table.links.size(); ++i) {
    const auto& played = table.links[i];
    for (const SeatOutcome& outcome : outcomes[i]) {
      out.hands.push_back({round.key, outcome.seat, played.link->name, outcome.cards, outcome.keyed,
                           hand_label(*played.paytable, outcome.row)});
    }
    for (const Transfer& transfer : played.link->scratch) {
      out.transfers.emplace_back(played.link->name, transfer);
    }
    note_awards(table, *played.link);
    played.link->scratch.clear();
  }
  for (auto& levels : round.awarded_since) levels.clear();

  SettleRoundAnswer answer{request.table, request.round, {}, {}};
  // Each (seat, link)'s result, as an index into the results.
  const std::size_t link_count = table.links.size();
  std::vector<std::size_t> result_of((table.settings.seats + 1) * link_count);
  std::vector<bool> has_result(result_of.size());
  const auto slot = [link_count](std::uint32_t seat, std::size_t link_index) {
    return seat * link_count + link_index;
  };
  for (std::uint32_t seat = table.settings.seats; seat >= 1; --seat) {
    for (std::size_t i = 0; i < table.links.size(); ++i) {
      for (const SeatOutcome& outcome : outcomes[i]) {
        if (outcome.seat != seat) continue;
        const auto& played = table.links[i];
        result_of[slot(seat, i)] = answer.results.size();
        has_result[slot(seat, i)] = true;
        answer.results.push_back({seat,
                                  played.link->settings.meters.id,
                                  played.paytable->id,
                                  hand_label(*played.paytable, outcome.row),
                                  outcome.keyed,
                                  {},
                                  Money()});
      }
    }
  }
  const auto add = [&](std::size_t link_index, const AwardDecision& award, PayoutId payout,
                       std::optional<PayoutState> state) {
    JACKPOT_INVARIANT(has_result[slot(award.seat, link_index)], "an award's seat has a result");
    SeatResultView& result = answer.results[result_of[slot(award.seat, link_index)]];
    result.awards.push_back({result.link, award.kind, award.level, award.hand, award.from_seat,
                             award.amount, payout, state});
    result.total = *result.total.plus(award.amount);
  };
  for (AppliedAward& award : applied) {
    add(award.link_index, award.decision, award.payout, award.created.state);
    // Only pending payouts stay in memory; paid ones live on in the records (and storage).
    if (award.created.state == PayoutState::pending) {
      award_transfers_[award.payout.value()] = award.award;
      payouts_[award.payout.value()] = award.created;
    }
    out.payouts.push_back(std::move(award.created));
  }
  // The Must-Hit-By wins of the lock, each with its payout's state now: pending while it waits,
  // else as a supervisor decided it since the lock (#32: a rejected one is not shown PENDING),
  // else as the lock created it (paid at once below the approval threshold; its kept answer
  // says).
  const auto locked = round.hits.empty() || !round.locked
                          ? std::optional<LockWagersAnswer>()
                          : decode<LockWagersAnswer>(round.locked->answer());
  for (std::size_t i = 0; i < table.links.size(); ++i) {
    for (const AwardDecision& award : decisions[i]) {
      if (award.kind != AwardKind::must_hit_by) continue;
      std::optional<PayoutState> state;
      if (payouts_.count(award.payout) != 0) {
        state = PayoutState::pending;
      } else if (auto decided = decided_payout_state(PayoutId(award.payout))) {
        state = decided;
      } else {
        state = hit_payout_state(locked, table.links[i].link->settings.meters.id, award.level);
      }
      add(i, award, PayoutId(award.payout), state);
    }
  }
  meters_of_table(table, answer.meters);
  round.phase = RoundPhase::settled;
  keep_first(round.settled, round.key, CommandKind::settle, request, answer, out);
  out.rounds.emplace_back(round.key, request.table, request.round, RoundPhase::settled, now);
  return answer;
}

// ---- VoidRound ------------------------------------------------------------------------------

Result<VoidRoundAnswer, EngineFailure> Engine::void_round(const VoidRoundRequest& request,
                                                          Records& out) {
  auto found = find_round(request.table, request.round);
  if (!found) return found.error();
  TableState& table = *found->first;
  RoundState* round = found->second;
  if (has_nul(request.reason))
    return invalid(EngineError::reason_invalid, "a void reason may not contain NUL characters");
  // A replay of the accepted void answers first, whatever its reason (journals from before blank
  // reasons were refused keep some); then a blank reason is refused before any other answer.
  auto first = replay<VoidRoundAnswer>(round->voided, request, [&] {
    return round_name(request.table, request.round) + " was already voided for another reason";
  });
  if (first && first->ok()) return *first;
  if (request.reason.find_first_not_of(" \t\r\n") == std::string::npos) {
    return invalid(EngineError::reason_missing, "a void needs a reason (e.g. \"misdeal\")");
  }
  if (first) return *first;
  if (round->phase != RoundPhase::open && round->phase != RoundPhase::locked) {
    return failure(EngineError::wrong_round_state,
                   round_name(request.table, request.round) + " is settled and cannot be voided");
  }
  if (!round->hits.empty()) {
    return failure(EngineError::must_hit_by_needs_supervisor,
                   round_name(request.table, request.round) +
                       " hit a Must-Hit-By level; voiding it needs a supervisor");
  }
  std::vector<Link::Checkpoint> checkpoints = checkpoint_links(table);
  auto reversed = refund_round(table, *round, {});
  if (!reversed) {
    rollback_links(table, checkpoints);
    return reversed.error();
  }
  return finish_void(table, *round, request, *reversed, out);
}

std::vector<Link::Checkpoint> Engine::checkpoint_links(TableState& table) {
  std::vector<Link::Checkpoint> checkpoints;
  for (const auto& played : table.links) {
    played.link->scratch.clear();
    checkpoints.push_back(played.link->link.checkpoint(played.link->scratch));
  }
  return checkpoints;
}

void Engine::rollback_links(TableState& table, const std::vector<Link::Checkpoint>& checkpoints) {
  for (std::size_t i = 0; i < table.links.size(); ++i) {
    table.links[i].link->link.rollback(checkpoints[i], table.links[i].link->scratch);
  }
}

Result<std::int64_t, EngineFailure> Engine::refund_round(
    TableState& table, const RoundState& round,
    const std::vector<std::vector<std::uint32_t>>& hit_levels) {
  std::int64_t reversed = 0;
  for (std::size_t i = 0; i < table.links.size(); ++i) {
    LinkState& link = *table.links[i].link;
    if (round.contributions[i].empty()) continue;
    std::vector<std::uint32_t> awarded =
        i < round.awarded_since.size() ? round.awarded_since[i] : std::vector<std::uint32_t>();
    if (i < hit_levels.size()) {
      awarded.insert(awarded.end(), hit_levels[i].begin(), hit_levels[i].end());
    }
    std::sort(awarded.begin(), awarded.end());
    awarded.erase(std::unique(awarded.begin(), awarded.end()), awarded.end());
    auto undone =
        link.link.reverse_round(round.contributions[i], awarded, {round.key, 0}, link.scratch);
    if (!undone) {
      return failure(EngineError::ledger_refused,
                     round_name(table.settings.id, round.id) +
                         " cannot be reversed: " + std::string(to_string(undone.error())));
    }
    reversed += undone->micros();
  }
  return reversed;
}

VoidRoundAnswer Engine::finish_void(TableState& table, RoundState& round,
                                    const VoidRoundRequest& request, std::int64_t reversed,
                                    Records& out) {
  const std::int64_t now = clock_.now_us();
  for (const auto& played : table.links) {
    for (const Transfer& transfer : played.link->scratch) {
      out.transfers.push_back({played.link->name, transfer});
    }
    played.link->scratch.clear();
  }
  VoidRoundAnswer answer{request.table, request.round, Money::from_micros(reversed), {}};
  meters_of_table(table, answer.meters);
  const RoundPhase voided_from = round.phase;
  for (auto& levels : round.awarded_since) levels.clear();
  round.phase = RoundPhase::voided;
  keep_first(round.voided, round.key, CommandKind::void_round, request, answer, out);
  out.rounds.push_back({round.key, request.table, request.round, RoundPhase::voided, now,
                        request.reason, voided_from});
  return answer;
}

// ---- SupervisorService.VoidRound ------------------------------------------------------------

Result<SupervisorVoidRecord, EngineFailure> Engine::supervisor_void_round(
    const SupervisorVoidRequest& request, const std::string& supervisor, Records& out) {
  // Checked in this order; the first failure answers and nothing changes.
  const std::string& id = request.request_id;
  if (id.empty() || id.size() > kMaxIdBytes || has_nul(id)) {
    return invalid(EngineError::request_id_invalid,
                   "a void needs a request id of 1 to " + std::to_string(kMaxIdBytes) +
                       " bytes without NUL characters; got " + quote_prefix(id));
  }
  JACKPOT_INVARIANT(!supervisor.empty() && !has_nul(supervisor), "a void names its supervisor");
  if (const auto it = supervisor_voids_.find(id); it != supervisor_voids_.end()) {
    const SupervisorVoidRecord& first = it->second;
    if (first.table == request.table && first.round == request.round &&
        first.reason == request.reason && first.supervisor == supervisor) {
      return first;  // A replay: the first answer.
    }
    return failure(EngineError::replay_differs, "request id " + quote_prefix(id) +
                                                    " was used for another void (" +
                                                    round_name(first.table, first.round) + ")");
  }
  auto found = find_round(request.table, request.round);
  if (!found) return found.error();
  TableState& table = *found->first;
  RoundState& round = *found->second;
  if (blank(request.reason)) {
    return invalid(EngineError::reason_missing, "a void needs a reason (e.g. \"misdeal\")");
  }
  if (request.reason.size() > kMaxReasonBytes || has_nul(request.reason)) {
    return invalid(EngineError::reason_invalid,
                   "a void's reason is at most " + std::to_string(kMaxReasonBytes) +
                       " bytes, with no NUL characters (got " +
                       std::to_string(request.reason.size()) + " bytes)");
  }
  if (round.phase != RoundPhase::open && round.phase != RoundPhase::locked) {
    return failure(EngineError::wrong_round_state,
                   round_name(request.table, request.round) + " is " +
                       std::string(round_phase_name(round.phase)) + " and cannot be voided");
  }
  // The round's hit payouts: pending ones are rejected (or asked to be), rejected ones are
  // already back on the ledger, a paid one cannot be taken back.
  std::vector<Payout*> pending;
  std::vector<std::vector<std::uint32_t>> hit_levels(table.links.size());
  for (const RoundState::Hit& hit : round.hits) {
    hit_levels[hit.link_index].push_back(hit.level);
    if (const auto it = payouts_.find(hit.payout.value()); it != payouts_.end()) {
      pending.push_back(&it->second);
    } else if (decided_payout_state(hit.payout) != PayoutState::rejected) {
      return failure(EngineError::payout_not_pending,
                     round_name(request.table, request.round) +
                         " hit a Must-Hit-By level whose "
                         "payout " +
                         std::to_string(hit.payout.value()) +
                         " was paid: a void cannot take a paid award back");
    }
  }
  // Per payout, as RejectPayout decides it: this supervisor's say rejects a payout that needs
  // one, or one another supervisor already asked to reject; it asks to reject one that needs two.
  std::sort(pending.begin(), pending.end(),
            [](const Payout* a, const Payout* b) { return a->id.value() < b->id.value(); });
  std::vector<Payout*> rejects;
  std::vector<Payout*> asks;
  for (Payout* payout : pending) {
    if (const auto said = prior_say(*payout, supervisor)) {
      return failure(EngineError::already_approved,
                     supervisor + " already " + std::string(*said) + " payout " +
                         std::to_string(payout->id.value()) + " of " +
                         round_name(request.table, request.round) +
                         "; voiding it needs another supervisor");
    }
    const bool ends =
        payout->rejection_requested_by.size() + 1 >= std::max(payout->approvals_required, 1U);
    (ends ? rejects : asks).push_back(payout);
  }
  // The round is voided once none of its hit payouts waits any more.
  const bool voids = asks.empty();
  SupervisorVoidRecord record{
      id,
      request.table,
      round.epoch,
      request.round,
      request.reason,
      supervisor,
      voids ? SupervisorVoidOutcome::voided : SupervisorVoidOutcome::requested,
      Money(),
      {},
      {},
      clock_.now_us()};
  for (const Payout* payout : pending) record.payouts.push_back(payout->id);
  for (const Payout* payout : rejects) record.rejected.push_back(payout->id);
  const std::vector<Link::Checkpoint> checkpoints = checkpoint_links(table);
  for (const Payout* payout : rejects) {
    LinkState& link = *find_link(payout->link);
    const Transfer& award = award_transfers_.at(payout->id.value());
    auto returned =
        link.link.reverse_award(award, {award.origin.round, payout->id.value()}, link.scratch);
    if (!returned) {
      rollback_links(table, checkpoints);
      return failure(EngineError::ledger_refused, "payout " + std::to_string(payout->id.value()) +
                                                      ": " +
                                                      std::string(to_string(returned.error())));
    }
  }
  std::int64_t reversed = 0;
  if (voids) {
    auto refunded = refund_round(table, round, hit_levels);
    if (!refunded) {
      rollback_links(table, checkpoints);
      return refunded.error();
    }
    reversed = *refunded;
  }
  record.reversed = Money::from_micros(reversed);
  for (Payout* payout : rejects) {
    payout->state = PayoutState::rejected;
    payout->rejected_by = supervisor;
    payout->rejected_reason = request.reason;
    out.payouts.push_back(*payout);
  }
  for (Payout* payout : asks) {
    payout->rejection_requested_by.push_back(supervisor);
    out.payouts.push_back(*payout);
  }
  for (const PayoutId payout : record.rejected) {
    payouts_.erase(payout.value());
    award_transfers_.erase(payout.value());
  }
  if (voids) {
    finish_void(table, round, {request.table, request.round, request.reason}, reversed, out);
  } else {
    for (const auto& played : table.links) {
      for (const Transfer& transfer : played.link->scratch) {
        out.transfers.push_back({played.link->name, transfer});
      }
      played.link->scratch.clear();
    }
  }
  out.supervisor_voids.push_back(record);
  supervisor_voids_.emplace(id, record);
  return record;
}

// ---- RebaseRoundCounter ---------------------------------------------------------------------

Result<RoundCounterRebaseRecord, EngineFailure> Engine::rebase_round_counter(
    const RebaseRoundCounterRequest& request, const std::string& requested_by, Records& out) {
  // Checked in this order; the first failure answers and nothing changes.
  const std::string& id = request.request_id;
  if (id.empty()) return invalid(EngineError::request_id_invalid, "a re-base needs a request id");
  if (id.size() > kMaxIdBytes || has_nul(id)) {
    return invalid(EngineError::request_id_invalid, "request id " + quote_prefix(id) +
                                                        ": at most " + std::to_string(kMaxIdBytes) +
                                                        " bytes, no NUL characters");
  }
  if (const auto it = rebases_.find(id); it != rebases_.end()) {
    const RoundCounterRebaseRecord& first = it->second;
    if (first.table == request.table && first.next_round == request.next_round &&
        first.reason == request.reason) {
      return first;  // A replay: the first answer.
    }
    return failure(EngineError::replay_differs,
                   "request id " + quote_prefix(id) + " was used for another re-base (table " +
                       quote_prefix(first.table.value()) + ", next round " +
                       std::to_string(first.next_round.value()) + ")");
  }
  auto table_result = find_table(request.table);
  if (!table_result) return table_result.error();
  TableState& table = **table_result;
  if (blank(request.reason))
    return invalid(EngineError::reason_missing, "a re-base needs a reason (not blank)");
  if (request.reason.size() > kMaxReasonBytes || has_nul(request.reason)) {
    return invalid(EngineError::reason_invalid,
                   "a re-base reason is at most " + std::to_string(kMaxReasonBytes) +
                       " bytes, with no NUL characters (got " +
                       std::to_string(request.reason.size()) + " bytes)");
  }
  if (!round_id_in_range(request.next_round.value())) {
    return invalid(EngineError::round_id_out_of_range,
                   "next round id " + std::to_string(request.next_round.value()) +
                       ": round ids are 1.." + std::to_string(kMaxRoundId));
  }
  JACKPOT_INVARIANT(!requested_by.empty() && !has_nul(requested_by),
                    "a re-base names who asked for it");
  if (!rebase_allowed(table.counter())) {
    return failure(EngineError::previous_round_open,
                   round_name(request.table, table.current->id) + " is " +
                       std::string(round_phase_name(table.current->phase)) +
                       ": settle or void it before re-basing the table's round counter");
  }
  RoundCounterRebaseRecord rebase{id,
                                  request.table,
                                  table.epoch + 1,
                                  table.current ? table.current->id : RoundId(0),
                                  request.next_round,
                                  request.reason,
                                  requested_by,
                                  clock_.now_us()};
  table.epoch = rebase.epoch;
  table.rebased_base = rebased_counter(request.next_round.value()).base;
  rebases_.emplace(id, rebase);
  out.rebases.push_back(rebase);
  return rebase;
}

// ---- Payouts --------------------------------------------------------------------------------

std::optional<PayoutState> Engine::decided_payout_state(PayoutId id) const {
  // Only a Must-Hit-By settlement asks (a hit, rare), so the decisions are searched, not indexed.
  for (const auto& [request_id, decision] : payout_decisions_) {
    if (decision.payout == id && decision.answer.state != PayoutState::pending) {
      return decision.answer.state;
    }
  }
  for (const auto& [request_id, voided] : supervisor_voids_) {
    if (std::find(voided.rejected.begin(), voided.rejected.end(), id) != voided.rejected.end()) {
      return PayoutState::rejected;
    }
  }
  return std::nullopt;
}

Result<Payout*, EngineFailure> Engine::pending_payout(PayoutId id) {
  const auto it = payouts_.find(id.value());
  if (it != payouts_.end()) return &it->second;
  // Ids are handed out in order: a known id that is not pending was paid or rejected.
  if (id.value() >= 1 && id.value() <= last_payout_id_) {
    return failure(EngineError::payout_not_pending,
                   "payout " + std::to_string(id.value()) + " is not pending");
  }
  return failure(EngineError::unknown_payout, "no payout " + std::to_string(id.value()));
}

Result<Payout, EngineFailure> Engine::decide_payout(const PayoutDecisionRequest& request,
                                                    const std::string& supervisor, Records& out) {
  // Checked in this order; the first failure answers and nothing changes.
  const std::string& id = request.request_id;
  if (id.empty() || id.size() > kMaxIdBytes || has_nul(id)) {
    return invalid(EngineError::request_id_invalid,
                   "a payout decision needs a request id of 1 to " + std::to_string(kMaxIdBytes) +
                       " bytes without NUL characters; got " + quote_prefix(id));
  }
  if (supervisor.empty()) {
    return invalid(EngineError::requester_missing, "a payout decision needs the supervisor's name");
  }
  if (has_nul(supervisor)) {
    return invalid(EngineError::requester_invalid,
                   "a supervisor's name may not contain NUL characters");
  }
  if (const auto it = payout_decisions_.find(id); it != payout_decisions_.end()) {
    const PayoutDecisionRecord& first = it->second;
    if (first.payout == request.payout && first.decision == request.decision &&
        first.reason == request.reason && first.supervisor == supervisor) {
      return first.answer;  // A replay: the first answer.
    }
    return failure(EngineError::replay_differs,
                   "request id " + quote_prefix(id) + " was used for another decision");
  }
  auto found = pending_payout(request.payout);
  if (!found) return found.error();
  Payout& payout = **found;
  JACKPOT_INVARIANT(payout.state == PayoutState::pending, "a payout in memory is pending");
  if (request.decision == PayoutDecision::reject) {
    if (blank(request.reason)) {
      return invalid(EngineError::reason_missing, "a rejection needs a reason (not blank)");
    }
    if (request.reason.size() > kMaxReasonBytes || has_nul(request.reason)) {
      return invalid(EngineError::reason_invalid,
                     "a rejection's reason is at most " + std::to_string(kMaxReasonBytes) +
                         " bytes, with no NUL characters (got " +
                         std::to_string(request.reason.size()) + " bytes)");
    }
  } else if (!request.reason.empty()) {
    return invalid(EngineError::reason_invalid, "an approval takes no reason");
  }
  // One supervisor, one say on a payout: a second approval, or a second rejection of one that
  // needs two, must come from someone else.
  if (const auto said = prior_say(payout, supervisor)) {
    return failure(EngineError::already_approved,
                   supervisor + " already " + std::string(*said) + " payout " +
                       std::to_string(request.payout.value()) + "; it needs another supervisor");
  }
  LinkState& link = *find_link(payout.link);
  const Transfer& award = award_transfers_.at(request.payout.value());
  link.scratch.clear();
  // A payout that needs two supervisors to pay needs two to reject as well (§6): the first
  // rejection is recorded and the payout waits for a second supervisor's decision.
  const bool ends =
      request.decision == PayoutDecision::reject
          ? payout.rejection_requested_by.size() + 1 >= std::max(payout.approvals_required, 1U)
          : payout.approved_by.size() + 1 >= payout.approvals_required;
  if (request.decision == PayoutDecision::approve && ends) {
    auto paid =
        link.link.pay_award(award, {award.origin.round, request.payout.value()}, link.scratch);
    if (!paid) {
      return failure(EngineError::ledger_refused, "payout " +
                                                      std::to_string(request.payout.value()) +
                                                      ": " + std::string(to_string(paid.error())));
    }
  } else if (request.decision == PayoutDecision::reject && ends) {
    auto returned =
        link.link.reverse_award(award, {award.origin.round, request.payout.value()}, link.scratch);
    if (!returned) {
      return failure(EngineError::ledger_refused,
                     "payout " + std::to_string(request.payout.value()) + ": " +
                         std::string(to_string(returned.error())));
    }
  }
  for (const Transfer& transfer : link.scratch) out.transfers.push_back({link.name, transfer});
  link.scratch.clear();
  if (request.decision == PayoutDecision::approve) {
    payout.approved_by.push_back(supervisor);
    if (ends) payout.state = PayoutState::paid;
  } else if (!ends) {
    payout.rejection_requested_by.push_back(supervisor);
  } else {
    payout.state = PayoutState::rejected;
    payout.rejected_by = supervisor;
    payout.rejected_reason = request.reason;
  }
  out.payouts.push_back(payout);
  PayoutDecisionRecord decided{id,         request.payout, request.decision,
                               supervisor, request.reason, payout};
  out.payout_decisions.push_back(decided);
  payout_decisions_.emplace(id, std::move(decided));
  Payout answer = payout;
  if (ends) {
    payouts_.erase(request.payout.value());
    award_transfers_.erase(request.payout.value());
  }
  return answer;
}

}  // namespace jackpot
