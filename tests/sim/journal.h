#pragma once

// The simulation's durability: an in-memory journal of every committed command's records that
// fails, loses answers and crashes where the simulation tells it to, and rebuilds the engine from
// what it committed the way storage/state_loader.cc and PostgresDurability::rebuild do from
// PostgreSQL, so that the simulation exercises the real recovery (controller/durability/recovery.*,
// Engine::restore).

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "controller/engine/engine.h"
#include "controller/host/engine_host.h"
#include "storage/state_loader.h"

namespace jackpot::sim {

// What happens to the next commit.
enum class CommitFault : std::uint8_t {
  none,
  fail,               // Nothing written; the host is told so.
  answer_lost,        // Written, but the host is told it failed (the answer never arrived).
  crash,              // Nothing written, and the process dies.
  crash_after_write,  // Written, and the process dies before anyone hears of it.
};

class Journal final : public Durability {
 public:
  Journal(Clock& clock, RandomSource& random) : clock_(clock), random_(random) {}

  // The engine the journal describes on this floor, as the daemon's start builds it: a new
  // engine at its seeds on an empty journal (its opening records written first), else new links
  // opened at their seeds and written, then snapshot_from() and Engine::restore().
  Result<std::unique_ptr<Engine>, std::vector<std::string>> open(
      const EngineConfig& config, const std::vector<Paytable>& paytables);

  // The next commit's fault; reset to none once it is used.
  // The fault falls on the next batch that carries a command: a batch holding only a balance
  // snapshot (the one the host takes after every recovery, committed while the simulation may
  // already be sending its next command) neither takes it nor fails, so the seed decides which
  // command a fault hits, whatever the threads' timing.
  void arm(CommitFault fault) { armed_ = fault; }
  // True once an armed crash has happened (the simulation then restarts the process).
  bool crashed() const { return crashed_; }
  void clear_crash() { crashed_ = false; }
  // Why the last recover() failed; empty when it did not.
  std::string recovery_error() const {
    std::lock_guard lock(mutex_);
    return recovery_error_;
  }

  bool commit(const std::vector<Records>& batch, std::string& error) override;
  std::unique_ptr<Engine> recover(std::string& error) override;

  // What the database would answer to storage::load_state().
  storage::StoredState stored_state() const;
  // Every committed command's records, in commit order.
  const std::vector<Records>& commands() const { return commands_; }

 private:
  std::vector<std::string> open_new_links(const storage::StoredState& state);

  Clock& clock_;
  RandomSource& random_;
  EngineConfig config_;  // The floor the host runs; recover() rebuilds on it.
  std::vector<Paytable> paytables_;
  std::vector<std::pair<LinkId, std::uint32_t>> links_;  // The `links` table: id, levels.
  std::vector<Records> commands_;
  std::atomic<CommitFault> armed_ = CommitFault::none;
  std::atomic<bool> crashed_ = false;
  mutable std::mutex mutex_;
  std::string recovery_error_;
};

}  // namespace jackpot::sim
