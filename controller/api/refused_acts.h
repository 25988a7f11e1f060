#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

#include "controller/host/engine_host.h"

namespace jackpot {

// Supervisors' refused acts on their way to the audit trail (payout.refused,
// round_counter.rebase_refused, round.void_refused): a bounded queue that a thread of its own
// writes, as many as wait in one statement, so that a supervisor who sends refused requests by the
// thousand neither holds a gRPC thread on the database nor opens a connection a request. Past
// kMaxQueued the acts are counted, and the count goes on the trail when there is room
// (refused_acts.unrecorded, by daemon/jackpotd). A component of the daemon: stop() writes what
// waits and ends the thread, before the daemon's last audit record (the stop) and while the
// database may still be waited for.
class RefusedActs {
 public:
  static constexpr std::size_t kMaxQueued = 1000;

  explicit RefusedActs(ReconciliationSource& audit);
  ~RefusedActs() { stop(); }
  RefusedActs(const RefusedActs&) = delete;
  RefusedActs& operator=(const RefusedActs&) = delete;

  void add(ReconciliationSource::AuditAppend act);
  // Writes what waits (one attempt) and ends the thread; later acts are dropped. Idempotent.
  void stop();

 private:
  void run();

  ReconciliationSource& audit_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<ReconciliationSource::AuditAppend> queued_;
  std::uint64_t unrecorded_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace jackpot
