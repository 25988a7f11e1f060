#include "controller/engine_host.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <deque>
#include <iterator>
#include <system_error>
#include <utility>

namespace jackpot {

EngineHost::EngineHost(std::unique_ptr<Engine> engine, Durability* durability,
                       std::size_t batch_commands_max)
    : engine_(std::move(engine)), durability_(durability), batch_commands_max_(batch_commands_max) {
  if (durability_ != nullptr) {
    wake_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
    committer_ = std::thread([this] { commit_loop(); });
    responder_ = std::thread([this] { respond_loop(); });
  }
}

EngineHost::~EngineHost() {
  stop();
  if (wake_ >= 0) ::close(wake_);
}

void EngineHost::wake_committer() {
  const std::uint64_t one = 1;
  // A full counter already wakes it; nothing else can fail on an eventfd.
  [[maybe_unused]] const auto written = ::write(wake_, &one, sizeof one);
}

void EngineHost::drain_wake() {
  std::uint64_t count = 0;
  [[maybe_unused]] const auto read = ::read(wake_, &count, sizeof count);
}

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

// Sends each gathered batch as soon as the pipeline has room: at once when nothing is in
// flight, or, with one batch in flight, once that batch has written its rows (then the server
// starts on the next the moment the first commit reaches the disk, and the next has gathered
// for as long as the first took to write). Answers callers as their batches commit, in order.
void EngineHost::commit_loop() {
  struct InFlight {
    std::uint64_t sequence = 0;
    std::vector<Records> batch;
    std::chrono::steady_clock::time_point sent;
  };
  std::deque<InFlight> flight;
  bool oldest_rows_written = false;
  std::unique_lock lock(mutex_);
  const auto lose_all = [&](const std::string& error) {
    const auto now = std::chrono::steady_clock::now();
    std::vector<InFlight> lost(std::make_move_iterator(flight.begin()),
                               std::make_move_iterator(flight.end()));
    flight.clear();
    lock.unlock();
    for (InFlight& batch : lost) {
      deliver(after_commit({}, std::move(batch.batch),
                           std::chrono::duration<double>(now - batch.sent).count(), false));
    }
    fail_and_recover(error);
    lock.lock();
  };
  for (;;) {
    const bool room = flight.empty() || (flight.size() == 1 && oldest_rows_written);
    if (room && !gathering_.empty() && !failed_) {
      InFlight next{gathering_sequence_++, {}, std::chrono::steady_clock::now()};
      next.batch.swap(gathering_);
      durability_->seal();
      in_flight_ = next.sequence;
      space_.notify_all();
      const std::size_t commands = next.batch.size();
      ++batches_sent_;
      flight.push_back(std::move(next));
      if (flight.size() == 1) oldest_rows_written = false;
      lock.unlock();
      std::string error;
      const bool sent = durability_->send(commands, error);
      lock.lock();
      if (!sent) lose_all(error);
      continue;
    }
    if (flight.empty()) {
      if (stopping_ && gathering_.empty()) return;  // Everything is written.
      work_.wait(lock, [&] { return stopping_ || !gathering_.empty(); });
      continue;
    }
    // Wait for the batches in flight; with room for one more, also for the first command of it.
    const bool could_send = flight.size() == 1 && oldest_rows_written;
    const bool wake_on_command = could_send && gathering_.empty();
    wake_on_command_ = wake_on_command;
    lock.unlock();
    Durability::Progress progress;
    std::string error;
    const bool ok = durability_->wait(wake_on_command ? wake_ : -1, progress, error);
    drain_wake();
    lock.lock();
    wake_on_command_ = false;
    if (!ok) {
      lose_all(error);
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < progress.committed && !flight.empty(); ++i) {
      InFlight done = std::move(flight.front());
      flight.pop_front();
      committed_sequence_ = done.sequence;
      ++batches_committed_;
      commands_committed_ += done.batch.size();
      std::vector<Waiter> ready = take_waiters(false);
      lock.unlock();
      deliver(after_commit(std::move(ready), std::move(done.batch),
                           std::chrono::duration<double>(now - done.sent).count(), true));
      lock.lock();
    }
    if (progress.committed > 0) committed_.notify_all();
    oldest_rows_written = progress.oldest_rows_written;
  }
}

// The engine ran commands that are not durable: drop it, answer everyone UNAVAILABLE, tell the
// tables, and rebuild from the database once it answers again.
void EngineHost::fail_and_recover(const std::string& reason) {
  std::vector<Waiter> lost;
  {
    std::lock_guard lock(mutex_);
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
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
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

std::uint64_t EngineHost::batches_sent() {
  std::lock_guard lock(mutex_);
  return batches_sent_;
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
