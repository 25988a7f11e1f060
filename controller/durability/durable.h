#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <pqxx/connection>
#include <stdexcept>
#include <string>
#include <vector>

#include "controller/durability/commit_mark.h"
#include "controller/engine/engine.h"
#include "controller/host/engine_host.h"
#include "storage/commit_connection.h"
#include "storage/connection.h"
#include "storage/record_writer.h"
#include "storage/state_loader.h"

namespace jackpot {

// One daemon is the only writer of a database's floor: its commit session claims the row
// floor_owner (migration 0025) when no live session holds it, and every commit mark checks the
// session's token. Only jackpotd's own role may lock or change that row.

// The advisory lock by which a jackpotd older than migration 0025 held the floor: a start on such a
// schema refuses while a session of jackpotd's own role holds it.
inline constexpr std::int64_t kLegacyFloorLockKey = 0x6a61636b706f7464;  // "jackpotd"

// Another daemon holds the floor.
class FloorLocked : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct DurabilityOptions {
  // A batch whose statements run longer fails to commit; its answer is awaited twice as long.
  // Also every session's lock_timeout.
  std::chrono::milliseconds commit_timeout{10000};
  // The statement_timeout of recovery's and reports' sessions; the daemon gives up on their
  // answer after twice that.
  std::chrono::milliseconds query_timeout{60000};
  // Where the last commit mark is kept outside the database; empty: in memory only.
  std::string state_file;
  // The operator's override for a deliberate restore: accept, at start, a database whose last
  // batch is exactly this although it is behind the state file.
  std::optional<std::uint64_t> accept_database_batch;
  // Who records the override in the audit trail (daemon/<host>).
  std::string principal = "daemon/unknown";
};

// Durability on PostgreSQL: each batch of records in one transaction; the engine rebuilt from the
// database at start and after a failure.
class PostgresDurability final : public Durability, public ReconciliationSource {
 public:
  PostgresDurability(std::string dsn, EngineConfig config, std::vector<Paytable> paytables,
                     Clock& clock, RandomSource& random, DurabilityOptions options = {});
  ~PostgresDurability() override;

  // Opens the commit session and claims the floor (floor_owner), before the daemon writes
  // anything; throws FloorLocked (naming the holder) when another daemon has it, ConnectError
  // when the database cannot be reached, and std::runtime_error for an unreadable state file.
  void claim();

  // At start: the engine the database describes, or, on a database without engine state, a new
  // engine at its seeds whose opening records are written before it serves. Links and tables
  // added to the floor since the last start open at their seeds; any other edit of the floor
  // must fit the kept state or the start is refused, naming why (docs/architecture.md §7b).
  // Before it serves a state, the database's commit mark is compared with the last one this
  // daemon saw committed (judge_database); a database behind it is refused, naming both marks.
  Result<std::unique_ptr<Engine>, std::vector<std::string>> open();

  // Each command's rows are rendered as it joins the gathering batch (stage), so that the
  // committer only sends them; commit() refuses a batch that was not staged.
  void stage(const Records& records) override;
  void seal() override;
  void discard() override;
  bool commit(const std::vector<Records>& batch, std::string& error) override;
  // A trivial statement on the commit session, with a commit's deadline.
  bool probe(std::string& error) override;
  std::unique_ptr<Engine> recover(std::string& error) override;

  // Reads on a connection of its own, so that reports never wait for or disturb commits.
  Result<std::vector<LinkReconciliation>, EngineFailure> reconcile(
      const std::vector<LinkId>& links, std::optional<std::int64_t> from_us,
      std::optional<std::int64_t> to_us) override;
  Result<std::vector<AccountAuditLine>, EngineFailure> audit_balances() override;
  std::optional<EngineFailure> append_audit_events(const std::vector<AuditAppend>& events) override;
  Result<AuditTrailPage, EngineFailure> audit_trail(std::int64_t after_seq, int limit) override;

 private:
  pqxx::connection& connection();
  storage::CommitConnection& committer();
  // Claims the floor for `session` (floor_owner), waiting out a holder that may be ending; throws
  // FloorLocked when another live session holds it. Nothing when the schema has no floor_owner yet.
  void claim_floor(storage::CommitConnection& session);
  std::chrono::milliseconds answer_deadline() const;
  std::chrono::milliseconds query_deadline() const;
  Result<std::unique_ptr<Engine>, std::vector<std::string>> rebuild();
  // Sets `opened` when it wrote a new link to the database.
  std::vector<std::string> open_new_links(const storage::StoredState& state, bool& opened);
  std::vector<std::string> live_rounds_against_last_floor(const storage::StoredState& state);
  // The database's mark against the daemon's; problems when it may not be served.
  std::vector<std::string> check_mark();
  // Records a write outside the batches (the opening records) as the next batch.
  void write_mark(pqxx::work& tx);
  void noted(std::uint64_t batch);
  std::string holder_of_the_lock();

  std::string dsn_;
  DurabilityOptions options_;
  storage::SessionLimits limits_;
  // The last batch this daemon saw committed, and its journal; empty before the first check.
  std::optional<CommitMark> mark_;
  bool started_ = false;  // The first rebuild (at start) is the only one the override applies to.
  std::unique_ptr<StateFileWriter> state_file_;
  std::array<char, 8> batch_parameter_{};  // The batch's number, as a binary int8 parameter.
  EngineConfig config_;
  std::vector<Paytable> paytables_;
  Clock& clock_;
  RandomSource& random_;
  std::unique_ptr<pqxx::connection> connection_;  // Recovery's reads and the opening writes.
  std::unique_ptr<storage::CommitConnection> committer_;
  // committer_'s server process, and the one of a connection dropped after a failed commit.
  struct Backend {
    std::int64_t pid = 0;
    std::string started;  // Its backend_start: pids are reused.
  };
  std::optional<Backend> backend_;
  std::map<std::string, std::uint32_t> enum_oids_;  // On committer_'s database, by type name.
  std::string floor_token_;  // The commit session's claim of the floor (floor_owner.token).
  std::optional<Backend> orphan_;
  void end_orphan();
  // The gathering batch's rows, and the sealed batch's that commit() sends; each with the
  // reason it cannot be written, if a record could not be rendered.
  std::unique_ptr<storage::BatchRows> staging_;
  std::unique_ptr<storage::BatchRows> sealed_;
  std::string staging_error_;
  std::string sealed_error_;
};

}  // namespace jackpot
