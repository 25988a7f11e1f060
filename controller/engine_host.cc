#include "controller/engine_host.h"

#include <cstdio>
#include <utility>

namespace jackpot {

EngineHost::EngineHost(std::unique_ptr<Engine> engine, Durability* durability,
                       std::size_t batch_commands_max)
    : engine_(std::move(engine)), durability_(durability), batch_commands_max_(batch_commands_max) {
  if (durability_ != nullptr) {
    committer_ = std::thread([this] { commit_loop(); });
    responder_ = std::thread([this] { respond_loop(); });
  }
}

EngineHost::~EngineHost() { stop(); }

void EngineHost::stop_watches() {
  {
    std::lock_guard lock(status_mutex_);
    status_stopping_ = true;
  }
  status_changed_.notify_all();
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
  if (!left.empty()) deliver(answering(std::move(left), false));
  {
    std::lock_guard lock(deliveries_mutex_);
    deliveries_done_ = true;
  }
  deliveries_ready_.notify_all();
  if (responder_.joinable()) responder_.join();
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
  space_.wait(
      lock, [&] { return failed_ || committer_done_ || gathering_.size() < batch_commands_max_; });
  if (failed_ || committer_done_ || stopping_) return std::nullopt;
  auto taken = gather_snapshot(reason);
  if (!wait_durable(lock, gathering_sequence_)) return std::nullopt;
  return taken;
}

// Callers to answer, durable or not, with no commit to observe.
EngineHost::Delivery EngineHost::answering(std::vector<Waiter> waiters, bool durable) {
  return {std::move(waiters), durable, {}, 0, false, false};
}

// A commit attempt: the observer hears of it, and its callers are answered as it went.
EngineHost::Delivery EngineHost::after_commit(std::vector<Waiter> waiters,
                                              std::vector<Records> batch, double seconds, bool ok) {
  return {std::move(waiters), ok, std::move(batch), seconds, true, ok};
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
      // Observed first: a caller answered for this commit finds it in the metrics.
      if (delivery.observe && observer_) observer_(delivery.batch, delivery.seconds, delivery.ok);
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
  for (;;) {
    work_.wait(lock, [&] { return stopping_ || !gathering_.empty(); });
    if (gathering_.empty()) return;  // Stopping, and everything is written.
    std::vector<Records> batch;
    batch.swap(gathering_);
    durability_->seal();
    in_flight_ = gathering_sequence_++;
    space_.notify_all();
    lock.unlock();
    std::string error;
    const auto started = std::chrono::steady_clock::now();
    const bool ok = durability_->commit(batch, error);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    lock.lock();
    if (ok) {
      committed_sequence_ = in_flight_;
      ++batches_committed_;
      commands_committed_ += batch.size();
      committed_.notify_all();
      std::vector<Waiter> ready = take_waiters(false);
      lock.unlock();
      deliver(after_commit(std::move(ready), std::move(batch), seconds, true));
      lock.lock();
      continue;
    }
    lock.unlock();
    deliver(after_commit({}, std::move(batch), seconds, false));
    fail_and_recover(error);
    lock.lock();
  }
}

// The engine ran commands that are not durable: drop it, answer everyone UNAVAILABLE, tell the
// tables, and rebuild from the database once it answers again.
void EngineHost::fail_and_recover(const std::string& reason) {
  std::vector<Waiter> lost;
  {
    std::lock_guard lock(mutex_);
    failed_ = true;
    unavailable_since_us_ = std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
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
  std::fprintf(stderr, "jackpotd: commit failed (%s); not serving until the database is back\n",
               reason.c_str());
  std::string last_error;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    std::string error;
    if (auto engine = durability_->recover(error)) {
      {
        std::lock_guard lock(mutex_);
        engine_ = std::move(engine);
        failed_ = false;
        // What recovery rebuilt, on record as a start's is.
        gather_snapshot(SnapshotReason::recovery);
      }
      std::fprintf(stderr, "jackpotd: state rebuilt from the database; serving again\n");
      bump_status();
      space_.notify_all();
      return;
    }
    // Each new reason once: an operator must see why the floor stays down (a database still
    // unreachable, or a state the engine refuses to restore), without a line every 500 ms.
    if (error != last_error) {
      std::fprintf(stderr, "jackpotd: recovery failed (%s); retrying\n", error.c_str());
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
  {
    std::lock_guard lock(status_mutex_);
    ++status_version_;
  }
  status_changed_.notify_all();
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
