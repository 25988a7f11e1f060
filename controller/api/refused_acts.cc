#include "controller/api/refused_acts.h"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "controller/log/log.h"

namespace jackpot {

RefusedActs::RefusedActs(ReconciliationSource& audit) : audit_(audit) {
  thread_ = std::thread([this] { run(); });
}

void RefusedActs::add(ReconciliationSource::AuditAppend act) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    if (queued_.size() >= kMaxQueued) {
      ++unrecorded_;
      return;
    }
    queued_.push_back(std::move(act));
  }
  changed_.notify_all();
}

void RefusedActs::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RefusedActs::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queued_.empty() || unrecorded_ > 0; });
    if (queued_.empty() && unrecorded_ == 0) return;  // Stopping, and all is written.
    std::vector<ReconciliationSource::AuditAppend> acts(queued_.begin(), queued_.end());
    queued_.clear();
    const std::uint64_t unrecorded = std::exchange(unrecorded_, 0);
    lock.unlock();
    if (unrecorded > 0) {
      acts.push_back({"daemon/jackpotd",
                      "refused_acts.unrecorded",
                      {{"count", std::to_string(unrecorded)},
                       {"why", "more refused supervisor acts came than the queue holds"}}});
    }
    const auto failed = audit_.append_audit_events(acts);
    if (failed) {
      // Not kept for another try: the log says what was lost (a database that takes no writes
      // fails the floor stop anyway).
      log_error("could not record " + std::to_string(acts.size()) +
                " refused supervisor acts in the audit trail: " + failed->message);
    }
    lock.lock();
    if (failed) {
      if (stopping_) return;
      changed_.wait_for(lock, std::chrono::seconds(1));  // No busy loop on a dead database.
    }
  }
}

}  // namespace jackpot
