#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <pqxx/connection>
#include <string>
#include <vector>

#include "controller/engine.h"
#include "controller/engine_host.h"
#include "storage/commit_connection.h"
#include "storage/record_writer.h"
#include "storage/state_loader.h"

namespace jackpot {

// Durability on PostgreSQL: each batch of records in one transaction; the engine rebuilt from the
// database at start and after a failure.
class PostgresDurability final : public Durability, public ReconciliationSource {
 public:
  // A batch whose statements run longer than `commit_timeout` fails to commit.
  PostgresDurability(std::string dsn, EngineConfig config, std::vector<Paytable> paytables,
                     Clock& clock, RandomSource& random,
                     std::chrono::milliseconds commit_timeout = std::chrono::seconds(10));

  // At start: the engine the database describes, or, on a database without engine state, a new
  // engine at its seeds whose opening records are written before it serves. Links and tables
  // added to the floor since the last start open at their seeds; any other edit of the floor
  // must fit the kept state or the start is refused, naming why (docs/architecture.md §7b).
  Result<std::unique_ptr<Engine>, std::vector<std::string>> open();

  // Each command's rows are rendered as it joins the gathering batch (stage), so that the
  // committer only sends them; commit() refuses a batch that was not staged.
  void stage(const Records& records) override;
  void seal() override;
  void discard() override;
  bool commit(const std::vector<Records>& batch, std::string& error) override;
  std::unique_ptr<Engine> recover(std::string& error) override;

  // Reads on a connection of its own, so that reports never wait for or disturb commits.
  Result<std::vector<LinkReconciliation>, EngineFailure> reconcile(
      const std::vector<LinkId>& links, std::optional<std::int64_t> from_us,
      std::optional<std::int64_t> to_us) override;
  Result<std::vector<AccountAuditLine>, EngineFailure> audit_balances() override;

 private:
  pqxx::connection& connection();
  storage::CommitConnection& committer();
  std::chrono::milliseconds answer_deadline() const;
  Result<std::unique_ptr<Engine>, std::vector<std::string>> rebuild();
  // Sets `opened` when it wrote a new link to the database.
  std::vector<std::string> open_new_links(const storage::StoredState& state, bool& opened);
  std::vector<std::string> live_rounds_against_last_floor(const storage::StoredState& state);

  std::string dsn_;
  std::chrono::milliseconds commit_timeout_;
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
