#include "controller/durable.h"

#include <algorithm>
#include <chrono>
#include <pqxx/pqxx>
#include <stdexcept>
#include <thread>

#include "controller/floor_loader.h"
#include "controller/recovery.h"
#include "storage/connection.h"
#include "storage/record_writer.h"
#include "storage/reports.h"
#include "storage/state_loader.h"

namespace jackpot {

PostgresDurability::PostgresDurability(std::string dsn, EngineConfig config,
                                       std::vector<Paytable> paytables, Clock& clock,
                                       RandomSource& random,
                                       std::chrono::milliseconds commit_timeout)
    : dsn_(std::move(dsn)),
      commit_timeout_(commit_timeout),
      config_(std::move(config)),
      paytables_(std::move(paytables)),
      clock_(clock),
      random_(random),
      staging_(std::make_unique<storage::BatchRows>(storage::BatchRows::Format::binary)),
      sealed_(std::make_unique<storage::BatchRows>(storage::BatchRows::Format::binary)) {}

void PostgresDurability::stage(const Records& records) {
  if (!staging_error_.empty()) return;
  try {
    staging_->add(records);
  } catch (const std::exception& error) {
    // The command has run on the engine; its batch cannot commit, and the host fails stop.
    staging_error_ = std::string("a record cannot be written: ") + error.what();
  }
}

void PostgresDurability::seal() {
  std::swap(staging_, sealed_);
  staging_->clear();
  sealed_error_ = std::move(staging_error_);
  staging_error_.clear();
}

void PostgresDurability::discard() {
  staging_->clear();
  staging_error_.clear();
}

pqxx::connection& PostgresDurability::connection() {
  if (!connection_ || !connection_->is_open()) {
    connection_ = storage::connect(dsn_);
    // The opening writes, too: an answer means its commit is on disk, whatever the server's
    // default says.
    pqxx::nontransaction(*connection_, "durable_session").exec("SET synchronous_commit TO on");
  }
  return *connection_;
}

// How long the daemon waits for a commit's answer before it gives the connection up: twice the
// statement timeout, so that the server reports what it can (a lock wait, a failed statement)
// and the daemon's own deadline catches a server process that stopped answering.
std::chrono::milliseconds PostgresDurability::answer_deadline() const {
  return 2 * commit_timeout_;
}

storage::CommitConnection& PostgresDurability::committer() {
  if (!committer_ || !committer_->is_open()) {
    committer_.reset();
    auto fresh = std::make_unique<storage::CommitConnection>(dsn_);
    // The connection only ever commits batches: the statement timeout binds every statement.
    const std::string started = fresh->exec(
        "SET synchronous_commit TO on;\nSET statement_timeout = " +
            std::to_string(commit_timeout_.count()) +
            ";\nSELECT backend_start::text FROM pg_stat_activity WHERE pid = pg_backend_pid();",
        answer_deadline());
    // The binary arrays name their element types; the server chose the enums' OIDs.
    enum_oids_.clear();
    for (const char* type : {"account_kind", "transfer_kind"}) {
      const std::string oid =
          fresh->exec(std::string("SELECT '") + type + "'::regtype::oid::text", answer_deadline());
      enum_oids_.emplace(type, static_cast<std::uint32_t>(std::stoul(oid)));
    }
    backend_ = Backend{fresh->backend_pid(), started};
    committer_ = std::move(fresh);
  }
  return *committer_;
}

// A commit whose answer never came (the connection broke, or the commit timed out on our side)
// may still be running in its server process and commit later. Before the state is read, that
// process is ended and gone: what it committed is then in the state, and it commits nothing more.
void PostgresDurability::end_orphan() {
  if (!orphan_) return;
  pqxx::connection& db = connection();
  const auto alive = [&] {
    pqxx::nontransaction tx(db, "orphan");
    return tx.exec_params1(
                 "SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND "
                 "backend_start::text = $2",
                 orphan_->pid, orphan_->started)[0]
               .as<int>() > 0;
  };
  if (alive()) {
    pqxx::nontransaction(db, "orphan")
        .exec_params(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND "
            "backend_start::text = $2",
            orphan_->pid, orphan_->started);
    for (int waited = 0; alive(); ++waited) {
      if (waited >= 200) {  // 10 s; recovery tries again.
        throw std::runtime_error("the server process of the failed commit (pid " +
                                 std::to_string(orphan_->pid) + ") has not ended yet");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  orphan_.reset();
}

Result<std::unique_ptr<Engine>, std::vector<std::string>> PostgresDurability::rebuild() {
  const storage::StoredState state = storage::load_state(connection());
  if (is_empty(state)) {
    Records opening;
    auto engine = Engine::create(config_, paytables_, clock_, random_, opening);
    if (!engine) return engine.error();
    pqxx::work tx(connection(), "open_floor");
    std::vector<storage::LinkRow> links;
    for (const LinkSettings& link : config_.links) {
      links.push_back(
          {link.meters.id.value(), static_cast<std::uint32_t>(link.meters.levels.size())});
    }
    storage::write_links(tx, links);
    storage::write_records(tx, opening);
    tx.commit();
    return engine;
  }
  if (auto problems = live_rounds_against_last_floor(state); !problems.empty()) return problems;
  bool opened_links = false;
  if (auto problems = open_new_links(state, opened_links); !problems.empty()) return problems;
  // The state is read again only when links were just written to it: a start with the floor
  // it had reads the database once.
  std::optional<storage::StoredState> reread;
  if (opened_links) reread = storage::load_state(connection());
  auto snapshot = snapshot_from(reread ? *reread : state, config_);
  if (!snapshot) return snapshot.error();
  return Engine::restore(config_, paytables_, clock_, random_, *snapshot);
}

// A live round was opened (and locked) under the floor of the last start: the one the latest
// `daemon.start` audit event names (a daemon records it only once its engine is open). Its
// paytables are compared with this floor's; the journal itself does not record a round's
// paytable. Nothing to compare when no round is live, or no daemon has started on the database.
std::vector<std::string> PostgresDurability::live_rounds_against_last_floor(
    const storage::StoredState& state) {
  const bool any_live = std::any_of(state.rounds.begin(), state.rounds.end(), [](const auto& r) {
    return r.phase == RoundPhase::open || r.phase == RoundPhase::locked;
  });
  if (!any_live) return {};
  pqxx::read_transaction tx(connection(), "last_floor");
  const auto rows = tx.exec(
      "SELECT f.version, f.floor_text FROM audit_log a JOIN floor_versions f ON f.version::text = "
      "a.detail->>'floor_version' WHERE a.action = 'daemon.start' ORDER BY a.id DESC LIMIT 1");
  if (rows.empty()) return {};
  const std::string origin = "floor version " + rows[0][0].as<std::string>();
  const auto previous = load_floor(rows[0][1].as<std::string>(), origin, paytables_);
  if (!previous) {
    return {"the floor of the last start (" + origin +
            ") does not load with this build, so the OPEN and LOCKED rounds cannot be checked "
            "against it: " +
            previous.error().front()};
  }
  return live_rounds_changed(state, *previous, config_);
}

// A link added to the floor since the last start opens at its seeds, in the database first.
std::vector<std::string> PostgresDurability::open_new_links(const storage::StoredState& state,
                                                            bool& opened) {
  std::vector<storage::LinkRow> rows;
  Records opening;
  std::uint64_t draw_id = state.last_draw_id;
  const std::int64_t now = clock_.now_us();
  for (const LinkSettings& settings : config_.links) {
    const bool stored = std::any_of(state.links.begin(), state.links.end(), [&](const auto& link) {
      return link.id == settings.meters.id;
    });
    if (stored) continue;
    std::vector<Transfer> transfers;
    auto link = Link::open(settings.meters, random_, transfers);
    if (!link) return link.error();
    rows.push_back(
        {settings.meters.id.value(), static_cast<std::uint32_t>(settings.meters.levels.size())});
    for (const Transfer& transfer : transfers) {
      opening.transfers.push_back({Name(settings.meters.id.value()), transfer});
    }
    for (std::uint32_t level = 1; level <= link->level_count(); ++level) {
      if (const auto& trigger = link->hidden_trigger(level)) {
        opening.draws.push_back({++draw_id, 0, settings.meters.id, level, DrawKind::hidden_trigger,
                                 "above=" + trigger->range_above.to_string() +
                                     " up_to=" + trigger->range_up_to.to_string(),
                                 "committed " + to_hex(trigger->commitment), trigger, now});
      }
    }
  }
  if (rows.empty()) return {};
  pqxx::work tx(connection(), "open_new_links");
  storage::write_links(tx, rows);
  storage::write_records(tx, opening);
  tx.commit();
  opened = true;
  return {};
}

Result<std::unique_ptr<Engine>, std::vector<std::string>> PostgresDurability::open() {
  try {
    return rebuild();
  } catch (const std::exception& error) {
    connection_.reset();
    return std::vector<std::string>{std::string("cannot read the engine state: ") + error.what()};
  }
}

bool PostgresDurability::commit(const std::vector<Records>& batch, std::string& error) {
  try {
    if (!sealed_error_.empty()) {
      error = sealed_error_;
      return false;
    }
    if (sealed_->commands() != batch.size()) {
      error = "internal error: " + std::to_string(sealed_->commands()) +
              " commands staged for a batch of " + std::to_string(batch.size());
      return false;
    }
    if (!sealed_->has_rows()) return true;  // Nothing to write (no statement has no tables).
    storage::CommitConnection& connection = committer();
    const storage::BinaryParameters parameters =
        sealed_->finish_binary([this](const std::string& type) {
          const auto found = enum_oids_.find(type);
          if (found == enum_oids_.end()) throw std::logic_error("no OID for type " + type);
          return found->second;
        });
    // One round trip and one statement, committed when it succeeds and rolled back whole when
    // any of its inserts or checks fails.
    const std::string statement = sealed_->statement_name();
    if (!connection.prepared(statement)) {
      connection.prepare(statement, sealed_->statement_sql(), answer_deadline());
    }
    connection.exec_prepared(statement, parameters.values, parameters.lengths, parameters.formats,
                             answer_deadline());
    return true;
  } catch (const std::exception& failure) {
    error = failure.what();
    if (backend_) orphan_ = backend_;  // Recovery waits until it is gone (end_orphan).
    backend_.reset();
    committer_.reset();
    return false;
  }
}

Result<std::vector<LinkReconciliation>, EngineFailure> PostgresDurability::reconcile(
    const std::vector<LinkId>& links, std::optional<std::int64_t> from_us,
    std::optional<std::int64_t> to_us) {
  std::vector<LinkReconciliation> report;
  for (const LinkId& id : links) {
    const bool known = std::any_of(config_.links.begin(), config_.links.end(),
                                   [&](const LinkSettings& link) { return link.meters.id == id; });
    if (!known) return EngineFailure{EngineError::unknown_link, "no link '" + id.value() + "'"};
  }
  try {
    auto connection = storage::connect(dsn_);
    for (const LinkSettings& link : config_.links) {
      if (!links.empty() && std::find(links.begin(), links.end(), link.meters.id) == links.end()) {
        continue;
      }
      const auto levels = static_cast<std::uint32_t>(link.meters.levels.size());
      LinkReconciliation& out = report.emplace_back();
      out.link = link.meters.id;
      const auto period =
          storage::load_period(*connection, link.meters.id.value(), levels, from_us, to_us);
      if (!period) continue;
      out.end_observed = true;
      out.start_through_transfer = period->start.through_transfer_id;
      out.start_taken_us = period->start.taken_us;
      out.end_through_transfer = period->end.through_transfer_id;
      out.end_taken_us = period->end.taken_us.value_or(0);
      for (std::uint32_t level = 1; level <= levels; ++level) {
        out.levels.push_back(reconcile_level(level, period->start.holdings[level - 1],
                                             period->end.holdings[level - 1], period->transfers));
      }
    }
  } catch (const std::exception& error) {
    return EngineFailure{EngineError::link_unavailable,
                         std::string("cannot read the ledger: ") + error.what()};
  }
  return report;
}

Result<std::vector<AccountAuditLine>, EngineFailure> PostgresDurability::audit_balances() {
  std::vector<AccountAuditLine> lines;
  try {
    auto connection = storage::connect(dsn_);
    for (const storage::AccountAudit& account : storage::audit_balances(*connection).accounts) {
      lines.push_back(
          {LinkId(account.link_id), account.account, account.from_snapshot, account.full_sum});
    }
  } catch (const pqxx::failure& error) {
    return EngineFailure{EngineError::link_unavailable,
                         std::string("cannot read the ledger: ") + error.what()};
  } catch (const std::exception& error) {
    // The snapshot path itself does not hold together (storage::balances_from_snapshots).
    return EngineFailure{EngineError::ledger_refused, error.what()};
  }
  return lines;
}

std::unique_ptr<Engine> PostgresDurability::recover(std::string& error) {
  try {
    end_orphan();
  } catch (const std::exception& failure) {
    error = failure.what();
    connection_.reset();
    return nullptr;
  }
  auto engine = open();
  if (engine) return std::move(engine).value();
  error = engine.error().front();
  return nullptr;
}

}  // namespace jackpot
