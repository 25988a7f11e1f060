#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "controller/engine/engine.h"
#include "journal/audit_chain.h"
#include "meters/reconcile.h"

namespace jackpot {

// Where the host makes records durable, and rebuilds the engine from after a failure.
class Durability {
 public:
  virtual ~Durability() = default;
  // Writes every record of the batch in one transaction; false (with the reason) if it did not
  // commit, in which case nothing of the batch may be assumed durable.
  virtual bool commit(const std::vector<Records>& batch, std::string& error) = 0;
  // The engine as the durable state describes it, or nothing (with the reason) while that
  // cannot be read.
  virtual std::unique_ptr<Engine> recover(std::string& error) = 0;

  // Optional work ahead of commit(), called with the host's lock held: stage() for each
  // command's records as it joins the gathering batch, in order; seal() when that batch becomes
  // the next to commit; discard() when it is abandoned. A durability can render a batch while the
  // one before it commits.
  virtual void stage(const Records&) {}
  virtual void seal() {}
  virtual void discard() {}

  // Asks the database whether it answers, on the path commits take, while nothing is being
  // committed; false (with the reason) when it does not, in which case the host fails stop as
  // for a failed commit.
  virtual bool probe(std::string& /*error*/) { return true; }
};

// Whether invariant checks after every command are wanted: built with JACKPOTD_CHECK_INVARIANTS
// (the sanitizer build) or the environment variable JACKPOTD_CHECK_INVARIANTS=1 (ctest sets it
// for every test). Read once.
bool invariant_checks_wanted();

// How the host notices a database that stopped answering, and how long reads wait for it. Zero
// turns each off (the default: tests and tools that do not ask for it).
struct HostTimings {
  // An idle host probes the database this often (Durability::probe).
  std::chrono::milliseconds probe_interval{0};
  // A commit or probe running longer makes the host unavailable until it ends: health and the
  // link status stream turn at once instead of when the commit's own deadline fails it.
  std::chrono::milliseconds commit_late{0};
  // The longest read_durable() waits for what it saw to be committed; nothing after it.
  std::chrono::milliseconds read_timeout{0};
  // Whether the engine's invariants (every ledger balanced, no account below zero, awards payable
  // equal to the pending payouts, ...) are checked after every command, aborting the process
  // when one is broken: on in the sanitizer build and wherever JACKPOTD_CHECK_INVARIANTS=1 (the
  // tests), off otherwise (a walk over every account per command).
  bool check_invariants = invariant_checks_wanted();
};

// One link's reconciliation over the period that two of its balance snapshots bound: the start
// and end holdings are what the sequencer held in memory then, the terms the transfers the
// journal holds between the two, so a transfer lost or doubled in between does not balance.
struct LinkReconciliation {
  LinkId link;
  // False when no snapshot of the link was taken at or before the period's end: the end cannot
  // be observed and there are no levels.
  bool end_observed = false;
  std::uint64_t start_through_transfer = 0;  // 0: the beginning of the ledger (all zero).
  std::optional<std::int64_t> start_taken_us;
  std::uint64_t end_through_transfer = 0;
  std::int64_t end_taken_us = 0;
  std::vector<LevelReconciliation> levels;
};

// One account as recovery computes it (latest snapshot + transfers after it) and as the sum of
// all of the link's transfers.
struct AccountAuditLine {
  LinkId link;
  AccountRef account;
  Money from_snapshot;
  Money full_sum;
};

// The auditor's reconciliation of levels over a period, from durable state.
class ReconciliationSource {
 public:
  virtual ~ReconciliationSource() = default;
  // One entry per link (every link when `links` is empty), bounded by the latest snapshots taken
  // at or before from_us and to_us (Unix microseconds; no from_us: the beginning of the ledger;
  // no to_us: the latest snapshot). An error says why.
  virtual Result<std::vector<LinkReconciliation>, EngineFailure> reconcile(
      const std::vector<LinkId>& links, std::optional<std::int64_t> from_us,
      std::optional<std::int64_t> to_us) = 0;
  // Every account of every link both ways; reads the whole journal. An error says why (a
  // snapshot path that is itself inconsistent is an error naming the link).
  virtual Result<std::vector<AccountAuditLine>, EngineFailure> audit_balances() = 0;

  // Appends events to the audit trail in one statement of their own (a report's read, refused
  // calls): nothing when all are on record, else why none is. Details are key/value text.
  struct AuditAppend {
    std::string principal;
    std::string action;
    std::vector<std::pair<std::string, std::string>> detail;
  };
  virtual std::optional<EngineFailure> append_audit_events(
      const std::vector<AuditAppend>& events) = 0;
  // Up to `limit` events of the audit trail after event `after_seq`, in chain order, and the
  // chain's head as of the same snapshot.
  struct AuditTrailPage {
    std::vector<AuditEvent> events;
    AuditChainPosition head;
  };
  virtual Result<AuditTrailPage, EngineFailure> audit_trail(std::int64_t after_seq, int limit) = 0;
};

// A link's status as its tables must hear it.
struct LinkStatusView {
  LinkStatus status = LinkStatus::unavailable;
  std::int64_t since_us = 0;  // When it entered the status (Unix microseconds); 0: unknown.
};

// The sequencer of docs/architecture.md §7. Commands run one at a time on the engine; their
// records gather in a batch that a committer thread writes in one transaction while the next
// batch gathers, so batches grow with load and an idle host commits at once. A caller is
// answered only once the batch holding its command (or, for a replay or a refusal, everything
// before it) has committed. If a commit fails the host fails stop: waiting callers and new
// commands get UNAVAILABLE, tables are told their links are unavailable, and the committer
// rebuilds the engine from durable state as soon as it can.
class EngineHost {
 public:
  // Without durability (tests, a daemon without a database) commands are answered at once.
  EngineHost(std::unique_ptr<Engine> engine, Durability* durability = nullptr,
             std::size_t batch_commands_max = 4096, HostTimings timings = {});
  ~EngineHost();
  EngineHost(const EngineHost&) = delete;
  EngineHost& operator=(const EngineHost&) = delete;

  // Runs a command that may change state; it returns Result<T, EngineFailure>.
  template <typename Command>
  auto run(Command&& command)
      -> decltype(command(std::declval<Engine&>(), std::declval<Records&>())) {
    std::unique_lock lock(mutex_);
    std::uint64_t needs = 0;
    auto answer = execute(lock, command, needs);
    if (!answer) return unavailable();
    if (!wait_durable(lock, needs)) return unavailable();
    return std::move(*answer);
  }

  // Runs a command like run() without keeping the calling thread: `done` gets the answer once
  // run() would return it (its batch committed, or UNAVAILABLE when the batch is lost). `done`
  // runs on the host's responder thread, or on the calling thread when nothing needs to wait;
  // it must not call back into the host. The caller waits only for room in a full batch.
  // For gRPC's callback API, where a blocked handler would hold a thread per call in flight.
  template <typename Command, typename Done>
  void submit(Command&& command, Done&& done) {
    using Answer = decltype(command(std::declval<Engine&>(), std::declval<Records&>()));
    std::unique_lock lock(mutex_);
    std::uint64_t needs = 0;
    auto answer = execute(lock, command, needs);
    if (!answer || committed_sequence_ >= needs) {
      lock.unlock();
      done(answer ? std::move(*answer) : Answer(unavailable()));
      return;
    }
    waiters_.push_back({needs, [answer = std::move(*answer),
                                done = std::forward<Done>(done)](bool durable) mutable {
                          done(durable ? std::move(answer) : Answer(unavailable()));
                        }});
  }

  // Reads engine state and answers it once everything the read saw is durable: nothing while
  // the host cannot commit, when what it saw was lost, or when it is not durable within the
  // read timeout. Operators and signs never see a meter that a failed commit takes back.
  template <typename Query>
  auto read_durable(Query&& query)
      -> std::optional<decltype(query(std::declval<const Engine&>()))> {
    std::unique_lock lock(mutex_);
    if (failed_ || committer_done_) return std::nullopt;
    auto answer = query(static_cast<const Engine&>(*engine_));
    if (durability_ == nullptr) return answer;
    std::optional<std::chrono::steady_clock::time_point> until;
    if (timings_.read_timeout.count() > 0) {
      until = std::chrono::steady_clock::now() + timings_.read_timeout;
    }
    if (!wait_durable(lock, sequence_seen(), until)) return std::nullopt;
    return answer;
  }

  // Records every link's balances as the engine holds them now, between two commands: the
  // snapshot joins the gathering batch, so it commits in the same transaction as the commands
  // before it and includes exactly their transfers. Answers once that batch has committed, one
  // record per link; nothing while the host cannot commit, when the batch was lost, or (for a
  // client's request) when it is not durable within the read timeout. Without durability the
  // snapshot is only returned.
  std::optional<std::vector<BalanceSnapshotRecord>> snapshot_balances(SnapshotReason reason);

  // Runs a command that a status watcher must hear about (an operator closing a link).
  template <typename Command>
  auto change_status(Command&& command) {
    auto result = run(std::forward<Command>(command));
    bump_status();
    return result;
  }

  // The statuses of `links` as committed (an operator's change counts once its batch has
  // committed), every one UNAVAILABLE while the host is not available(); without waiting, for
  // the link status streams. An unknown link is UNAVAILABLE.
  std::vector<LinkStatusView> link_statuses(const std::vector<LinkId>& links);

  // Reads engine state without changing it, durable or not: for configuration, which only a
  // restart changes. Meters and statuses go through read_durable.
  template <typename Query>
  auto read(Query&& query) {
    std::lock_guard lock(mutex_);
    return query(static_cast<const Engine&>(*engine_));
  }

  // True while the host cannot make changes durable.
  bool failed() {
    std::lock_guard lock(mutex_);
    return failed_;
  }
  // False while the host cannot make changes durable, or a commit or probe is late
  // (HostTimings::commit_late): what health and the link status stream say.
  bool available() {
    std::lock_guard lock(mutex_);
    return !failed_ && !late_;
  }
  // Since when it is not (Unix microseconds): the late commit's or the failure's time.
  std::int64_t unavailable_since_us() {
    std::lock_guard lock(mutex_);
    return unavailable_since_us_;
  }
  // Called after every status change (bump_status: an operator's change, a failure, a recovery,
  // a commit turning late or ending), never with the host's lock held; it may call the host's
  // reads.
  void on_status_change(std::function<void()> listener) {
    std::lock_guard lock(status_mutex_);
    status_listeners_.push_back(std::move(listener));
  }

  std::uint64_t wait_for_status_change(std::uint64_t seen, std::chrono::milliseconds timeout);
  std::uint64_t status_version();
  void bump_status();

  // Ends every status watch: first step of a shutdown, so that the server's streams finish. The
  // status listeners hear it once (stopping() is then true).
  void stop_watches();
  bool stopping();
  // Writes what is gathered and stops the committer: last step, once no call is in flight.
  void stop();

  // Figures for metrics and tests.
  std::uint64_t batches_committed();
  std::uint64_t commands_committed();

  // Called after every commit attempt, in commit order, on the host's responder thread: the
  // batch's records (one entry per command), how long the commit took, whether it committed.
  // Observers (metrics, the payout streams) may be added at any time and see the commits after
  // it; they are called in the order they were added and must not call the host's commands.
  using CommitObserver =
      std::function<void(const std::vector<Records>& batch, double seconds, bool ok)>;
  // Called when recovery has rebuilt the engine from the database after a failure, with the
  // host's lock held and the engine exactly as the database holds it (no command applied yet):
  // for views that follow commits (the payout streams) and must start again from it, since a
  // batch reported failed may have landed. Must only copy what it needs; never call the host.
  using RecoveryObserver = std::function<void(const Engine& rebuilt)>;
  void observe_recoveries(RecoveryObserver observer) {
    std::lock_guard lock(mutex_);
    recovery_observers_.push_back(std::move(observer));
  }

  // For a view kept from the commit observer's batches (the sign feed), which must start again
  // from the rebuilt engine at the point of the commit order where the failure was: `capture`
  // runs as a recovery observer does (the host's lock held, the engine as the database holds it;
  // copy what is needed) and returns what to do, which runs on the responder thread after the
  // commit observers heard every batch before the failure and before they hear any after it.
  using OrderedRecoveryObserver = std::function<std::function<void()>(const Engine& rebuilt)>;
  void observe_recoveries_in_commit_order(OrderedRecoveryObserver capture) {
    std::lock_guard lock(mutex_);
    ordered_recovery_observers_.push_back(std::move(capture));
  }

  void observe_commits(CommitObserver observer) {
    std::lock_guard lock(observers_mutex_);
    observers_.push_back(std::move(observer));
  }

 private:
  static EngineFailure unavailable() {
    return EngineFailure{EngineError::link_unavailable,
                         "the controller cannot record changes now; retry with the same ids"};
  }
  void commit_loop();

  // The part of run() and submit() under the lock: waits for room in the gathering batch, runs
  // the command and gathers its records. Nothing when the host takes no commands. `needs` is the
  // batch the answer waits for: its own, or for a command that changed nothing (a replay, a
  // refusal) the last one it saw; 0 without durability, where nothing waits.
  template <typename Command>
  auto execute(std::unique_lock<std::mutex>& lock, Command& command, std::uint64_t& needs)
      -> std::optional<decltype(command(std::declval<Engine&>(), std::declval<Records&>()))> {
    space_.wait(lock, [&] {
      return failed_ || committer_done_ || gathering_.size() < batch_commands_max_;
    });
    if (failed_ || committer_done_) return std::nullopt;
    Records records;
    auto answer = command(*engine_, records);
    if (timings_.check_invariants) verify_invariants();
    needs = 0;
    if (durability_ == nullptr) {
      apply_statuses(records);
      return answer;
    }
    needs = records.empty() ? sequence_seen() : gathering_sequence_;
    if (!records.empty()) {
      durability_->stage(records);
      gathering_.push_back(std::move(records));
      work_.notify_one();
    }
    return answer;
  }
  void fail_and_recover(const std::string& reason);
  // Aborts, naming what is broken, when the engine's invariants do not hold.
  void verify_invariants() const;
  // Adds a snapshot of every link's balances to the gathering batch; with mutex_ held.
  std::vector<BalanceSnapshotRecord> gather_snapshot(SnapshotReason reason);

  std::mutex mutex_;
  std::unique_ptr<Engine> engine_;
  Durability* durability_;
  std::size_t batch_commands_max_;
  std::vector<Records> gathering_;
  std::uint64_t gathering_sequence_ = 1;  // The number of the batch now gathering.
  std::uint64_t in_flight_ = 0;           // The batch being written, or the last one.
  std::uint64_t committed_sequence_ = 0;  // The last batch written durably.
  // The batch holding the last change a command could have seen: the gathering one, or else the
  // one being committed.
  std::uint64_t sequence_seen() const {
    return gathering_.empty() ? in_flight_ : gathering_sequence_;
  }

  // Waits until batch `needs` is committed; false when a failure abandoned it first, or `until`
  // passed.
  bool wait_durable(std::unique_lock<std::mutex>& lock, std::uint64_t needs,
                    std::optional<std::chrono::steady_clock::time_point> until = std::nullopt) {
    const std::size_t epoch = committed_at_failure_.size();
    // The first failure after the caller's command abandoned every batch after the last
    // committed one; later failures cannot bring it back, so only that one decides.
    const auto lost = [&] {
      return committed_at_failure_.size() > epoch && needs > committed_at_failure_[epoch];
    };
    const auto done = [&] { return lost() || committed_sequence_ >= needs || committer_done_; };
    if (until) {
      committed_.wait_until(lock, *until, done);
    } else {
      committed_.wait(lock, done);
    }
    return !lost() && committed_sequence_ >= needs;
  }

  // Callers of submit() waiting for batch `needs`; answered by the committer.
  struct Waiter {
    std::uint64_t needs = 0;
    std::function<void(bool durable)> answer;
  };
  std::vector<Waiter> waiters_;
  // Takes the waiters that may be answered now: all of them when `all`, else those whose batch
  // has committed. Called with mutex_ held; the caller answers them after releasing it.
  std::vector<Waiter> take_waiters(bool all);

  // committed_sequence_ at each failed commit, in order; its size counts them.
  std::vector<std::uint64_t> committed_at_failure_;
  bool failed_ = false;
  std::int64_t unavailable_since_us_ = 0;
  bool stopping_ = false;
  HostTimings timings_;
  // The commit or probe the committer is waiting for, numbered; late_ once it ran longer than
  // timings_.commit_late (the watchdog's finding).
  std::optional<std::chrono::steady_clock::time_point> flight_started_;
  std::uint64_t flight_ = 0;
  bool late_ = false;
  std::condition_variable flight_changed_;
  std::thread watchdog_;
  void watch_loop();
  // Around the committer's wait for the database; with mutex_ held. end_flight() answers
  // whether the flight had been late (the caller tells the watchers, without the lock).
  void begin_flight();
  bool end_flight(bool ok);
  void mark_unavailable_now();
  std::vector<std::function<void()>> status_listeners_;
  // Each link's status as committed: from the engine when it is built or rebuilt, then from the
  // records of each committed batch. With mutex_ held.
  std::map<std::string, LinkStatusView> durable_statuses_;
  void reset_statuses();
  void apply_statuses(const Records& records);
  bool committer_done_ = false;
  std::uint64_t batches_committed_ = 0;
  std::uint64_t commands_committed_ = 0;
  std::condition_variable work_;
  std::condition_variable committed_;
  std::condition_variable space_;

  std::mutex status_mutex_;
  std::condition_variable status_changed_;
  std::uint64_t status_version_ = 0;
  bool status_stopping_ = false;

  std::vector<RecoveryObserver> recovery_observers_;                 // Guarded by mutex_.
  std::vector<OrderedRecoveryObserver> ordered_recovery_observers_;  // Guarded by mutex_.
  std::mutex observers_mutex_;  // Guards observers_; held while they are called.
  std::vector<CommitObserver> observers_;
  std::thread committer_;

  // What the committer hands over after a commit attempt, so that it can start the next commit
  // at once: the callers to answer, and the batch for the observer.
  struct Delivery {
    std::vector<Waiter> waiters;
    bool durable = false;  // How to answer them.
    std::vector<Records> batch;
    double seconds = 0;
    bool observe = false;  // A commit attempt, for the observer.
    bool ok = false;
    // What ordered recovery observers asked for, in the commit order (a recovery's delivery).
    std::vector<std::function<void()>> restarts;
  };
  static Delivery answering(std::vector<Waiter> waiters, bool durable);
  static Delivery after_commit(std::vector<Waiter> waiters, std::vector<Records> batch,
                               double seconds, bool ok);
  void deliver(Delivery delivery);
  void respond_loop();
  std::mutex deliveries_mutex_;
  std::condition_variable deliveries_ready_;
  std::vector<Delivery> deliveries_;
  bool deliveries_done_ = false;
  std::thread responder_;
};

}  // namespace jackpot
