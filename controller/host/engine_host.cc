#include "controller/host/engine_host.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include "controller/log/log.h"
#include "meters/invariant.h"

namespace jackpot {

EngineHost::EngineHost(std::unique_ptr<Engine> engine, Durability* durability,
                       std::size_t batch_commands_max, HostTimings timings)
    : engine_(std::move(engine)),
      durability_(durability),
      batch_commands_max_(batch_commands_max),
      timings_(timings) {
  reset_statuses();
  if (durability_ != nullptr) {
    committer_ = std::thread([this] { commit_loop(); });
    responder_ = std::thread([this] { respond_loop(); });
    if (timings_.commit_late.count() > 0) watchdog_ = std::thread([this] { watch_loop(); });
  }
}

EngineHost::~EngineHost() { stop(); }

void EngineHost::stop_watches() {
  std::vector<std::function<void()>> listeners;
  {
    std::lock_guard lock(status_mutex_);
    if (status_stopping_) return;
    status_stopping_ = true;
    listeners = status_listeners_;
  }
  status_changed_.notify_all();
  for (const auto& listener : listeners) listener();
}

void EngineHost::stop() {
  stop_watches();
  {
    std::lock_guard lock(mutex_);
    // The balances at a clean stop, written with the last batch: what the next start must find.
    if (durability_ != nullptr && !stopping_ && !failed_ && !committer_done_) {
      gather_snapshot(SnapshotReason::stop);
    }
    stopping_ = true;
  }
  work_.notify_all();
  if (committer_.joinable()) committer_.join();
  std::vector<Waiter> left;
  {
    std::lock_guard lock(mutex_);
    committer_done_ = true;
    left = take_waiters(true);  // Only a failed last commit leaves any.
  }
  committed_.notify_all();
  space_.notify_all();
  flight_changed_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
  if (!left.empty()) deliver(answering(std::move(left), false));
  {
    std::lock_guard lock(deliveries_mutex_);
    deliveries_done_ = true;
  }
  deliveries_ready_.notify_all();
  if (responder_.joinable()) responder_.join();
}

bool invariant_checks_wanted() {
  static const bool wanted = [] {
#ifdef JACKPOTD_CHECK_INVARIANTS
    return true;
#else
    const char* value = std::getenv("JACKPOTD_CHECK_INVARIANTS");
    return value != nullptr && std::string_view(value) == "1";
#endif
  }();
  return wanted;
}

void EngineHost::verify_invariants() const {
  const auto broken = engine_->check_invariants();
  JACKPOT_INVARIANT(!broken, "the engine's invariants hold after every command: " +
                                 broken.value_or(std::string()));
}

namespace {

// Every account of every link of `engine`, through its last transfer.
std::vector<BalanceSnapshotRecord> balances_of(const Engine& engine, SnapshotReason reason) {
  std::vector<BalanceSnapshotRecord> snapshots;
  for (const LinkSettings& settings : engine.config().links) {
    const Link* link = engine.link(settings.meters.id);
    JACKPOT_INVARIANT(link != nullptr, "every configured link is in the engine");
    snapshots.push_back({settings.meters.id, TransferId(link->ledger().next_id().value() - 1),
                         link->ledger().balances(), reason});
  }
  return snapshots;
}

}  // namespace

std::vector<BalanceSnapshotRecord> EngineHost::gather_snapshot(SnapshotReason reason) {
  Records records;
  records.balance_snapshots = balances_of(*engine_, reason);
  std::vector<BalanceSnapshotRecord> taken = records.balance_snapshots;
  durability_->stage(records);
  gathering_.push_back(std::move(records));
  work_.notify_one();
  return taken;
}

std::optional<std::vector<BalanceSnapshotRecord>> EngineHost::snapshot_balances(
    SnapshotReason reason) {
  std::unique_lock lock(mutex_);
  if (durability_ == nullptr) return balances_of(*engine_, reason);
  // A client's snapshot waits at most the read timeout, like a read (a stalled database must not
  // hold the caller's thread); it may still commit after the caller gave up, which is harmless.
  // The daemon's own (start, interval, stop) wait for their commit.
  std::optional<std::chrono::steady_clock::time_point> until;
  if (reason == SnapshotReason::request && timings_.read_timeout.count() > 0) {
    until = std::chrono::steady_clock::now() + timings_.read_timeout;
  }
  const auto room = [&] {
    return failed_ || committer_done_ || gathering_.size() < batch_commands_max_;
  };
  if (until) {
    if (!space_.wait_until(lock, *until, room)) return std::nullopt;
  } else {
    space_.wait(lock, room);
  }
  if (failed_ || committer_done_ || stopping_) return std::nullopt;
  auto taken = gather_snapshot(reason);
  if (!wait_durable(lock, gathering_sequence_, until)) return std::nullopt;
  return taken;
}

// Callers to answer, durable or not, with no commit to observe.
EngineHost::Delivery EngineHost::answering(std::vector<Waiter> waiters, bool durable) {
  return {std::move(waiters), durable, {}, 0, false, false, {}};
}

// A commit attempt: the observer hears of it, and its callers are answered as it went.
EngineHost::Delivery EngineHost::after_commit(std::vector<Waiter> waiters,
                                              std::vector<Records> batch, double seconds, bool ok) {
  return {std::move(waiters), ok, std::move(batch), seconds, true, ok, {}};
}

void EngineHost::deliver(Delivery delivery) {
  {
    std::lock_guard lock(deliveries_mutex_);
    deliveries_.push_back(std::move(delivery));
  }
  deliveries_ready_.notify_one();
}

// Answers callers and tells the observer, off the committer's path; drains what is queued
// before it stops.
void EngineHost::respond_loop() {
  std::unique_lock lock(deliveries_mutex_);
  for (;;) {
    deliveries_ready_.wait(lock, [&] { return deliveries_done_ || !deliveries_.empty(); });
    if (deliveries_.empty()) return;
    std::vector<Delivery> taken;
    taken.swap(deliveries_);
    lock.unlock();
    for (Delivery& delivery : taken) {
      for (const std::function<void()>& restart : delivery.restarts) restart();
      // Observed first: a caller answered for this commit finds it in the metrics.
      if (delivery.observe) {
        std::lock_guard observing(observers_mutex_);
        for (const CommitObserver& observer : observers_) {
          observer(delivery.batch, delivery.seconds, delivery.ok);
        }
      }
      for (Waiter& waiter : delivery.waiters) waiter.answer(delivery.durable);
    }
    lock.lock();
  }
}

std::vector<EngineHost::Waiter> EngineHost::take_waiters(bool all) {
  std::vector<Waiter> ready;
  if (all) {
    ready.swap(waiters_);
    return ready;
  }
  std::vector<Waiter> waiting;
  for (Waiter& waiter : waiters_) {
    (waiter.needs > committed_sequence_ ? waiting : ready).push_back(std::move(waiter));
  }
  waiters_.swap(waiting);
  return ready;
}

bool EngineHost::stopping() {
  std::lock_guard lock(status_mutex_);
  return status_stopping_;
}

void EngineHost::commit_loop() {
  std::unique_lock lock(mutex_);
  const auto work = [&] { return stopping_ || !gathering_.empty(); };
  for (;;) {
    if (timings_.probe_interval.count() == 0) {
      work_.wait(lock, work);
    } else if (!work_.wait_for(lock, timings_.probe_interval, work)) {
      // Idle for a whole interval: a database that went away is found now, not at the next
      // command (commits under load are probes enough).
      begin_flight();
      lock.unlock();
      std::string error;
      const bool ok = durability_->probe(error);
      lock.lock();
      const bool was_late = end_flight(ok);
      lock.unlock();
      if (!ok) {
        fail_and_recover("the database did not answer a probe: " + error);
      } else if (was_late) {
        bump_status();
      }
      lock.lock();
      continue;
    }
    if (gathering_.empty()) return;  // Stopping, and everything is written.
    std::vector<Records> batch;
    batch.swap(gathering_);
    durability_->seal();
    in_flight_ = gathering_sequence_++;
    space_.notify_all();
    begin_flight();
    lock.unlock();
    std::string error;
    const auto started = std::chrono::steady_clock::now();
    const bool ok = durability_->commit(batch, error);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    lock.lock();
    const bool was_late = end_flight(ok);
    if (ok) {
      for (const Records& records : batch) apply_statuses(records);
      committed_sequence_ = in_flight_;
      ++batches_committed_;
      commands_committed_ += batch.size();
      committed_.notify_all();
      std::vector<Waiter> ready = take_waiters(false);
      lock.unlock();
      deliver(after_commit(std::move(ready), std::move(batch), seconds, true));
      if (was_late) bump_status();
      lock.lock();
      continue;
    }
    lock.unlock();
    deliver(after_commit({}, std::move(batch), seconds, false));
    fail_and_recover("commit failed (" + error + ")");
    lock.lock();
  }
}

void EngineHost::begin_flight() {
  flight_started_ = std::chrono::steady_clock::now();
  ++flight_;
  flight_changed_.notify_all();
}

bool EngineHost::end_flight(bool ok) {
  const bool was_late = late_;
  if (was_late && ok) {
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - *flight_started_);
    log_info("the database answered after " + std::to_string(took.count()) + " ms; serving again");
  }
  flight_started_.reset();
  ++flight_;
  // A failed flight stays late until fail_and_recover() has marked the host failed.
  if (ok) late_ = false;
  flight_changed_.notify_all();
  return was_late;
}

void EngineHost::mark_unavailable_now() {
  unavailable_since_us_ = std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
}

// Marks the host late when a commit or probe runs longer than timings_.commit_late, so that
// health and the tables hear of a database that stopped answering before the commit's own
// deadline fails it.
void EngineHost::watch_loop() {
  std::unique_lock lock(mutex_);
  while (!committer_done_) {
    if (!flight_started_ || late_) {
      flight_changed_.wait(lock);
      continue;
    }
    const std::uint64_t flight = flight_;
    const auto due = *flight_started_ + timings_.commit_late;
    if (flight_changed_.wait_until(lock, due,
                                   [&] { return committer_done_ || flight_ != flight; })) {
      continue;
    }
    late_ = true;
    if (!failed_) mark_unavailable_now();
    lock.unlock();
    log_error("the database has not answered for " + std::to_string(timings_.commit_late.count()) +
              " ms; not serving until it does");
    bump_status();
    lock.lock();
  }
}

// The engine ran commands that are not durable: drop it, answer everyone UNAVAILABLE, tell the
// tables, and rebuild from the database once it answers again.
void EngineHost::fail_and_recover(const std::string& reason) {
  std::vector<Waiter> lost;
  {
    std::lock_guard lock(mutex_);
    // Unavailable since the commit turned late, if it did.
    if (!late_) mark_unavailable_now();
    late_ = false;
    failed_ = true;
    gathering_.clear();
    durability_->discard();
    committed_at_failure_.push_back(committed_sequence_);
    in_flight_ = committed_sequence_;  // A replay after recovery waits for nothing lost.
    ++gathering_sequence_;             // Later batches never share a number with a lost one.
    lost = take_waiters(true);         // Every waiter still here needed a lost batch.
  }
  deliver(answering(std::move(lost), false));
  committed_.notify_all();
  space_.notify_all();
  bump_status();
  log_error(reason + "; not serving until the database is back");
  std::string last_error;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    std::string error;
    if (auto engine = durability_->recover(error)) {
      Delivery restarts;
      {
        std::lock_guard lock(mutex_);
        engine_ = std::move(engine);
        for (const RecoveryObserver& observer : recovery_observers_) observer(*engine_);
        for (const OrderedRecoveryObserver& capture : ordered_recovery_observers_) {
          restarts.restarts.push_back(capture(*engine_));
        }
        reset_statuses();
        failed_ = false;
        // What recovery rebuilt, on record as a start's is.
        gather_snapshot(SnapshotReason::recovery);
      }
      // Behind every delivery of the batches before the failure, ahead of any after it (only
      // this thread delivers commits, and it commits nothing before this returns).
      if (!restarts.restarts.empty()) deliver(std::move(restarts));
      log_info("state rebuilt from the database; serving again");
      bump_status();
      space_.notify_all();
      return;
    }
    // Each new reason once: an operator must see why the floor stays down (a database still
    // unreachable, or a state the engine refuses to restore), without a line every 500 ms.
    if (error != last_error) {
      log_error("recovery failed (" + error + "); retrying");
      last_error = error;
    }
    // Half a second between tries, unless the daemon stops meanwhile.
    std::unique_lock lock(mutex_);
    if (work_.wait_for(lock, std::chrono::milliseconds(500), [&] { return stopping_; })) return;
  }
}

std::uint64_t EngineHost::wait_for_status_change(std::uint64_t seen,
                                                 std::chrono::milliseconds timeout) {
  std::unique_lock lock(status_mutex_);
  status_changed_.wait_for(lock, timeout,
                           [&] { return status_version_ != seen || status_stopping_; });
  return status_version_;
}

std::uint64_t EngineHost::status_version() {
  std::lock_guard lock(status_mutex_);
  return status_version_;
}

void EngineHost::bump_status() {
  std::vector<std::function<void()>> listeners;
  {
    std::lock_guard lock(status_mutex_);
    ++status_version_;
    listeners = status_listeners_;
  }
  status_changed_.notify_all();
  for (const auto& listener : listeners) listener();
}

void EngineHost::reset_statuses() {
  durable_statuses_.clear();
  for (const LinkSettings& settings : engine_->config().links) {
    const LinkId& id = settings.meters.id;
    durable_statuses_[id.value()] = {engine_->link_status(id), engine_->link_status_since_us(id)};
  }
}

void EngineHost::apply_statuses(const Records& records) {
  for (const LinkStatusRecord& change : records.link_statuses) {
    LinkStatusView& view = durable_statuses_[change.link.value()];
    if (view.status != change.status) view = {change.status, change.time_us};
  }
}

std::vector<LinkStatusView> EngineHost::link_statuses(const std::vector<LinkId>& links) {
  std::lock_guard lock(mutex_);
  const bool down = failed_ || late_ || committer_done_;
  std::vector<LinkStatusView> views;
  views.reserve(links.size());
  for (const LinkId& link : links) {
    if (down) {
      views.push_back({LinkStatus::unavailable, unavailable_since_us_});
      continue;
    }
    const auto it = durable_statuses_.find(link.value());
    views.push_back(it == durable_statuses_.end() ? LinkStatusView{} : it->second);
  }
  return views;
}

std::uint64_t EngineHost::batches_committed() {
  std::lock_guard lock(mutex_);
  return batches_committed_;
}

std::uint64_t EngineHost::commands_committed() {
  std::lock_guard lock(mutex_);
  return commands_committed_;
}

}  // namespace jackpot
