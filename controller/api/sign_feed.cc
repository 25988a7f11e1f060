#include "controller/api/sign_feed.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <utility>

#include "controller/engine/award_rules.h"

namespace jackpot {

namespace {

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t scaled_cents(Money printed, Money numerator, Money denominator) {
  const auto scaled = scaled_to_cent(printed, numerator, denominator);
  return scaled ? scaled->cents_floor() : 0;
}

// A paytable's paying rows for a link of base wager `base`, as a placard prints them for one
// base wager: fixed and Dynamic Pays per $1 scaled by the base wager, Envy pays by the
// paytable's own base wager (award_rules.cc pays them so).
sign::TableLinkFacts table_link_facts(const TableLinkSettings& settings, const Paytable& paytable,
                                      const LinkConfig& link) {
  const Money unit = Money::from_micros(Money::kMicrosPerUnit);
  sign::TableLinkFacts facts{settings.link.value(), settings.paytable_id, {}, {}};
  for (const PaytableRow& row : paytable.rows) {
    if (row.kind == PayKind::loss) {
      facts.row_of.push_back(static_cast<std::size_t>(-1));
      continue;
    }
    sign::PaytableRowShown shown;
    shown.hand = row.label.str();
    shown.kind = row.kind == PayKind::percent       ? sign::RowKind::percent
                 : row.kind == PayKind::dynamic     ? sign::RowKind::dynamic
                 : row.kind == PayKind::must_hit_by ? sign::RowKind::must_hit_by
                                                    : sign::RowKind::fixed;
    shown.level = row.level;
    shown.percent = row.percent;
    shown.amount_cents = scaled_cents(row.amount, link.base_wager, unit);
    if (row.kind == PayKind::dynamic) {
      for (const Money option : row.options) {
        shown.option_cents.push_back(scaled_cents(option, link.base_wager, unit));
      }
    }
    if (row.envy) shown.envy_cents = scaled_cents(*row.envy, link.base_wager, paytable.base_wager);
    facts.row_of.push_back(facts.rows.size());
    facts.rows.push_back(std::move(shown));
  }
  return facts;
}

}  // namespace

sign::SignFloor sign_floor(const Engine& engine, const std::vector<Paytable>& paytables) {
  sign::SignFloor floor;
  std::map<std::string, std::size_t> link_of;
  for (const LevelMeterView& view : engine.meters()) {
    if (floor.links.empty() || floor.links.back().link != view.link.value()) {
      link_of.emplace(view.link.value(), floor.links.size());
      floor.links.push_back({view.link.value(), {}});
    }
    floor.links.back().levels.push_back(
        {view.level, view.name.str(), view.must_hit_by, view.ceiling});
  }
  std::map<std::string, const Paytable*> paytable_of;
  for (const Paytable& paytable : paytables) paytable_of.emplace(paytable.id.str(), &paytable);
  std::map<std::string, const LinkConfig*> link_config_of;
  for (const LinkSettings& link : engine.config().links) {
    link_config_of.emplace(link.meters.id.value(), &link.meters);
  }
  for (const TableSettings& table : engine.config().tables) {
    sign::TableFacts facts{table.id.value(), {}};
    for (const TableLinkSettings& link : table.links) {
      const auto paytable = paytable_of.find(link.paytable_id);
      const auto config = link_config_of.find(link.link.value());
      if (paytable == paytable_of.end() || config == link_config_of.end()) {
        // The engine was built with these: it cannot be.
        facts.links.push_back({link.link.value(), link.paytable_id, {}, {}});
        continue;
      }
      facts.links.push_back(table_link_facts(link, *paytable->second, *config->second));
    }
    floor.tables.push_back(std::move(facts));
  }
  return floor;
}

sign::BoardStart board_start(const Engine& engine) {
  sign::BoardStart start;
  const EngineSnapshot snapshot = engine.snapshot();
  for (const LinkSnapshot& link : snapshot.links) {
    sign::BoardStart::Link now;
    now.status = link.status;
    const Link* state = engine.link(link.id);
    for (const LevelMeterView& view : engine.meters({link.id})) {
      now.meters.push_back(view.meter);
      std::optional<sign::TriggerShown> shown;
      if (state != nullptr) {
        if (const auto& trigger = state->hidden_trigger(view.level)) {
          shown =
              sign::TriggerShown{trigger->commitment, trigger->range_above, trigger->range_up_to};
        }
      }
      now.hidden.push_back(shown);
    }
    start.links.push_back(std::move(now));
  }
  start.last_payout_id = snapshot.last_payout_id;
  for (const PayoutDecisionRecord& decision : snapshot.payout_decisions) {
    // Rejected by it; a request to reject (the first of two) leaves the payout waiting.
    if (decision.answer.state == PayoutState::rejected) {
      start.rejected_payouts.push_back(decision.payout.value());
    }
  }
  for (const SupervisorVoidRecord& voided : snapshot.supervisor_voids) {
    // The hit payouts a supervisor's void rejected (one it asked to reject still waits).
    for (const PayoutId payout : voided.rejected) start.rejected_payouts.push_back(payout.value());
  }
  std::sort(start.rejected_payouts.begin(), start.rejected_payouts.end());
  for (const TableSnapshot& table : snapshot.tables) {
    sign::BoardStart::Table now;
    if (table.current) {
      const RoundSnapshot& round = *table.current;
      now.round_key = round.key;
      now.round = round.id.value();
      now.in_play = round.phase == RoundPhase::open || round.phase == RoundPhase::locked;
      for (const auto& pays : round.dynamic) {
        std::vector<std::pair<std::uint32_t, std::uint32_t>> shown;
        if (now.in_play) {
          for (const auto& [row, option] : pays) {
            shown.emplace_back(static_cast<std::uint32_t>(row), option);
          }
        }
        now.dynamic.push_back(std::move(shown));
      }
    }
    start.tables.push_back(std::move(now));
  }
  return start;
}

std::shared_ptr<FollowedBoard> follow_commits(EngineHost& host,
                                              const std::vector<Paytable>& paytables,
                                              std::int64_t hit_shown_us) {
  auto followed = std::make_shared<FollowedBoard>(host.read([&](const Engine& engine) {
    return sign::SignBoard(sign_floor(engine, paytables), board_start(engine), hit_shown_us);
  }));
  const std::weak_ptr<FollowedBoard> weak = followed;
  const auto changed = [](FollowedBoard& board) {
    board.dirty = true;
    board.notified = true;
  };
  host.observe_commits([weak, changed](const std::vector<Records>& batch, double, bool ok) {
    const auto shared = weak.lock();
    if (!shared) return;
    {
      const std::lock_guard lock(shared->mutex);
      for (const Records& records : batch) {
        // A batch reported failed may have landed: the restart after the rebuild that follows
        // tells, and shows its hits if it did.
        if (ok) {
          shared->board.apply(records);
        } else {
          shared->board.failed(records);
        }
      }
      changed(*shared);
    }
    shared->changed.notify_all();
  });
  // In the commit order: a batch committed before the failure but observed after the rebuild
  // would otherwise count its transfers twice.
  host.observe_recoveries_in_commit_order(
      [weak, changed](const Engine& rebuilt) -> std::function<void()> {
        if (weak.expired()) return [] {};
        auto start = std::make_shared<const sign::BoardStart>(board_start(rebuilt));
        return [weak, changed, start] {
          const auto shared = weak.lock();
          if (!shared) return;
          {
            const std::lock_guard lock(shared->mutex);
            shared->board.reset(*start);
            changed(*shared);
          }
          shared->changed.notify_all();
        };
      });
  host.on_status_change([weak, changed] {
    const auto shared = weak.lock();
    if (!shared) return;
    {
      const std::lock_guard lock(shared->mutex);
      changed(*shared);
    }
    shared->changed.notify_all();
  });
  return followed;
}

SignFeed::SignFeed(EngineHost& host, const std::vector<Paytable>& paytables,
                   SignFeedOptions options)
    : host_(host),
      options_(options),
      shared_(follow_commits(host, paytables, options.hit_shown_us)),
      floor_(shared_->board.floor()),  // Never changes: no lock needed.
      publisher_(options.first_sequence) {
  sign::SignBoard board = [&] {
    const std::lock_guard lock(shared_->mutex);  // The host's observers may run already.
    return shared_->board;
  }();
  publisher_.publish(board.state(now_us(), host_.available()));
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "sign-feed");
    run();
  });
}

SignFeed::~SignFeed() {
  stop();
  if (thread_.joinable()) thread_.join();
}

void SignFeed::stop() {
  {
    const std::lock_guard lock(shared_->mutex);
    if (stopping_) return;
    stopping_ = true;
    stopped_.store(true);
    shared_->notified = true;
  }
  shared_->changed.notify_all();
}

bool SignFeed::stopping() const { return stopped_.load(); }

// Publishes what changed at most once per min_interval (the first change after a quiet spell at
// once), and at least once per min_interval builds the state again and wakes every subscriber:
// for heartbeats, and for hits that leave the signs. The host's availability is read here, never
// in an observer.
void SignFeed::run() {
  using Steady = std::chrono::steady_clock;
  const auto interval = std::chrono::microseconds(options_.pace.min_interval_us);
  auto last_published = Steady::now() - interval;
  auto last_tick = last_published;
  std::unique_lock lock(shared_->mutex);
  while (!stopping_) {
    const auto now = Steady::now();
    if (now >= last_tick + interval) shared_->dirty = true;
    if (shared_->dirty && now >= last_published + interval) {
      shared_->dirty = false;
      // The board copied under the lock, its state built without it: the commit observer (on
      // the host's responder thread) waits for the copy only.
      const sign::SignBoard board = shared_->board;
      lock.unlock();
      sign::SignState state = board.state(now_us(), host_.available());
      const std::uint64_t before = publisher_.latest()->sequence;
      // A change wakes every subscriber, and the next waits min_interval after it; without one,
      // the tick wakes them, and a change after it may go at once.
      if (publisher_.publish(std::move(state)) != before) {
        last_published = now;
      } else {
        publisher_.wake_all();
      }
      last_tick = now;
      lock.lock();
      continue;
    }
    auto next = last_tick + interval;
    if (shared_->dirty) next = std::min(next, last_published + interval);
    shared_->notified = false;
    shared_->changed.wait_until(lock, next, [&] { return stopping_ || shared_->notified; });
  }
  lock.unlock();
  publisher_.wake_all();  // The streams see stopping() and finish.
}

}  // namespace jackpot
