#include "controller/durability/durable.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <pqxx/pqxx>
#include <stdexcept>
#include <thread>

#include "controller/durability/recovery.h"
#include "controller/engine/floor_loader.h"
#include "controller/limits/request_limits.h"
#include "controller/log/log.h"
#include "storage/audit.h"
#include "storage/connection.h"
#include "storage/record_writer.h"
#include "storage/reports.h"
#include "storage/state_loader.h"

namespace jackpot {

namespace {

std::uint64_t u64_of(const pqxx::field& field) {
  return static_cast<std::uint64_t>(field.as<std::int64_t>());
}

// The batch statement with the batch's commit mark as one more insert, so that the mark is in
// the database exactly when the batch is. `parameter` is the mark's parameter number.
std::string with_commit_mark(const std::string& sql, std::size_t parameter) {
  const std::string mark = "jackpot_mark AS (INSERT INTO commit_marks (batch) VALUES ($" +
                           std::to_string(parameter) + "::bigint))";
  if (sql.rfind("WITH ", 0) == 0) return "WITH " + mark + ", " + sql.substr(5);
  if (sql.rfind("INSERT ", 0) == 0) return "WITH " + mark + " " + sql;
  throw std::logic_error("a batch statement that is neither WITH nor INSERT");
}

}  // namespace

PostgresDurability::PostgresDurability(std::string dsn, EngineConfig config,
                                       std::vector<Paytable> paytables, Clock& clock,
                                       RandomSource& random, DurabilityOptions options)
    : dsn_(std::move(dsn)),
      options_(std::move(options)),
      limits_{options_.query_timeout, options_.commit_timeout},
      config_(std::move(config)),
      paytables_(std::move(paytables)),
      clock_(clock),
      random_(random),
      staging_(std::make_unique<storage::BatchRows>(storage::BatchRows::Format::binary)),
      sealed_(std::make_unique<storage::BatchRows>(storage::BatchRows::Format::binary)) {
  if (!options_.state_file.empty()) {
    state_file_ = std::make_unique<StateFileWriter>(options_.state_file);
  }
}

PostgresDurability::~PostgresDurability() = default;

void PostgresDurability::claim() {
  if (!options_.state_file.empty()) {
    auto stored = read_state_file(options_.state_file);
    if (const auto* error = std::get_if<std::string>(&stored)) throw std::runtime_error(*error);
    mark_ = std::get<std::optional<CommitMark>>(stored);
  }
  committer();
}

void PostgresDurability::noted(std::uint64_t batch) {
  mark_->batch = batch;
  if (state_file_) state_file_->note(*mark_);
}

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
    connection_ = storage::connect(dsn_, limits_, "jackpotd-recovery");
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
  return 2 * options_.commit_timeout;
}

// How long the daemon waits for recovery's or a report's answers: twice the statement timeout
// the server enforces, for a server process that stopped answering.
std::chrono::milliseconds PostgresDurability::query_deadline() const {
  return 2 * options_.query_timeout;
}

// Who holds the floor (floor_owner), for the refusal's message.
std::string PostgresDurability::holder_of_the_lock() {
  try {
    auto db = storage::connect(dsn_, limits_, "jackpotd-lock-check");
    auto guard = storage::DatabaseWaits::instance().guard(*db, query_deadline());
    pqxx::nontransaction tx(*db, "lock_holder");
    const auto rows = tx.exec(
        "SELECT backend_pid, application_name, client_addr, backend_start::text FROM floor_owner "
        "o WHERE EXISTS (SELECT FROM pg_stat_activity a WHERE a.pid = o.backend_pid AND "
        "(a.backend_start IS NULL OR a.backend_start = o.backend_start))");
    if (rows.empty()) return "a session that has just ended";
    return "server process " + rows[0][0].as<std::string>() + ", application_name '" +
           rows[0][1].as<std::string>() + "', client " + rows[0][2].as<std::string>() +
           ", connected since " + rows[0][3].as<std::string>();
  } catch (const std::exception& error) {
    return std::string("a session this daemon could not look up: ") + error.what();
  }
}

storage::CommitConnection& PostgresDurability::committer() {
  if (!committer_ || !committer_->is_open()) {
    committer_.reset();
    auto fresh = std::make_unique<storage::CommitConnection>(dsn_);
    // The connection only ever commits batches: the statement timeout binds every statement.
    const std::string started = fresh->exec(
        "SET synchronous_commit TO on;\nSET statement_timeout = " +
            std::to_string(options_.commit_timeout.count()) +
            ";\nSET lock_timeout = " + std::to_string(options_.commit_timeout.count()) +
            ";\nSELECT backend_start::text FROM pg_stat_activity WHERE pid = pg_backend_pid();",
        answer_deadline());
    floor_token_.clear();
    enum_oids_.clear();  // Looked up at the first commit, once the schema is there.
    backend_ = Backend{fresh->backend_pid(), started};
    committer_ = std::move(fresh);
  }
  if (floor_token_.empty()) claim_floor(*committer_);
  return *committer_;
}

// Only the session that commits may hold the floor: a claim by a session of its own could outlive
// this one's server process, or this one outlive it, and a second daemon could then commit beside
// a session still committing. The floor is the row floor_owner (migration 0025), claimed when its
// holder's session is gone, its token kept in this session, which every commit mark checks; only
// jackpotd's own role may lock or change it. A schema older than that (a first start, before its
// migrations) has nothing to claim yet: the claim is made once they ran, before the state is read.
void PostgresDurability::claim_floor(storage::CommitConnection& session) {
  // A daemon killed in the middle of a commit leaves its server process alive until that
  // statement ends (within the commit timeout) and it finds its client gone; a restart waits that
  // long before it takes the holder for a live daemon.
  const auto give_up_at =
      std::chrono::steady_clock::now() + options_.commit_timeout + std::chrono::seconds(1);
  if (session.exec("SELECT (to_regprocedure('jackpot_claim_floor()') IS NOT NULL)::text",
                   answer_deadline()) != "true") {
    // A schema from before: a jackpotd of that time holds the floor by the advisory lock its
    // commit session took (only one of jackpotd's own role counts: anyone may take the key).
    const std::string held =
        "SELECT EXISTS (SELECT FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE "
        "l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.database = (SELECT oid "
        "FROM pg_database WHERE datname = current_database()) AND l.classid::bigint = (" +
        std::to_string(kLegacyFloorLockKey) + "::bigint >> 32) AND l.objid::bigint = (" +
        std::to_string(kLegacyFloorLockKey) +
        "::bigint & 4294967295) AND a.usename = "
        "current_user AND a.pid <> pg_backend_pid())::text";
    while (session.exec(held, answer_deadline()) == "true") {
      if (std::chrono::steady_clock::now() >= give_up_at ||
          storage::DatabaseWaits::instance().aborted()) {
        throw FloorLocked(
            "another jackpotd (of an earlier version) holds this database's floor lock: two "
            "daemons must never write one floor; not serving while it does");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return;
  }
  std::string token;
  while (
      (token = session.exec("SELECT coalesce(jackpot_claim_floor()::text, '')", answer_deadline()))
          .empty()) {
    if (std::chrono::steady_clock::now() >= give_up_at ||
        storage::DatabaseWaits::instance().aborted()) {
      throw FloorLocked("another jackpotd holds this database's floor lock (" +
                        holder_of_the_lock() +
                        "): two daemons must never write one floor; not serving while it does");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  floor_token_ = token;
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
      if (storage::DatabaseWaits::instance().aborted()) {
        throw std::runtime_error("the daemon is stopping");
      }
      if (waited >= 200) {  // 10 s; recovery tries again.
        throw std::runtime_error("the server process of the failed commit (pid " +
                                 std::to_string(orphan_->pid) + ") has not ended yet");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  orphan_.reset();
}

// The database's commit mark against the last one this daemon saw committed: a database behind
// it (a standby promoted without the last transactions, an older backup) would serve a state
// without rounds and payouts the daemon already answered.
std::vector<std::string> PostgresDurability::check_mark() {
  CommitMark database;
  {
    pqxx::nontransaction tx(connection(), "commit_mark");
    const auto row = tx.exec1(
        "SELECT (SELECT journal_id::text FROM journal_identity), "
        "(SELECT coalesce(max(batch), 0) FROM commit_marks)");
    database = {row[0].as<std::string>(), u64_of(row[1])};
  }
  const bool at_start = !started_;
  const std::string where =
      at_start ? (options_.state_file.empty() ? std::string("this daemon")
                                              : "the state file " + options_.state_file)
               : std::string("this daemon");
  const MarkJudgement judgement = judge_database(
      mark_, database, at_start ? options_.accept_database_batch : std::nullopt, where);
  if (!judgement.serving()) return {judgement.message};
  if (judgement.verdict == MarkVerdict::serve_restored) {
    log_warning(judgement.message);
    storage::append_audit_event(connection(), options_.principal, "daemon.restore_accepted",
                                {{"database_journal", database.journal},
                                 {"database_batch", std::to_string(database.batch)},
                                 {"known_journal", mark_->journal},
                                 {"known_batch", std::to_string(mark_->batch)},
                                 {"state_file", options_.state_file}});
  } else if (at_start && options_.accept_database_batch) {
    log_warning("--accept-database-batch " + std::to_string(*options_.accept_database_batch) +
                " ignored: the database is not behind");
  }
  started_ = true;
  mark_ = database;
  if (state_file_) {
    state_file_->note(*mark_);
    state_file_->flush();
  }
  return {};
}

void PostgresDurability::write_mark(pqxx::work& tx) {
  // Written by the recovery session, in the name of the commit session's claim of the floor.
  committer();
  tx.exec_params("SELECT set_config('jackpot.floor_token', $1, true)", floor_token_);
  tx.exec_params("INSERT INTO commit_marks (batch) VALUES ($1)",
                 static_cast<std::int64_t>(mark_->batch + 1));
}

Result<std::unique_ptr<Engine>, std::vector<std::string>> PostgresDurability::rebuild() {
  if (auto problems = check_mark(); !problems.empty()) return problems;
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
    write_mark(tx);
    tx.commit();
    noted(mark_->batch + 1);
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
// `daemon.start` audit event names (recorded once the server started, before it answers any
// call; `daemon.floor`, which daemons before issue #14 recorded before serving, counts too). Its
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
      "a.detail->>'floor_version' WHERE a.action IN ('daemon.floor', 'daemon.start') "
      "ORDER BY a.id DESC LIMIT 1");
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
  auto links = jackpot::open_new_links(state, config_, random_, clock_.now_us());
  if (!links) return links.error();
  std::vector<storage::LinkRow> rows;
  for (const auto& [id, levels] : links->added) rows.push_back({id.value(), levels});
  if (rows.empty()) return {};
  pqxx::work tx(connection(), "open_new_links");
  storage::write_links(tx, rows);
  storage::write_records(tx, links->opening);
  write_mark(tx);
  tx.commit();
  opened = true;
  noted(mark_->batch + 1);
  return {};
}

Result<std::unique_ptr<Engine>, std::vector<std::string>> PostgresDurability::open() {
  std::optional<storage::DatabaseWaits::Guard> guard;
  try {
    // The commit session holds the floor's lock before anything is read or written.
    committer();
    guard.emplace(storage::DatabaseWaits::instance().guard(connection(), query_deadline()));
    auto rebuilt = rebuild();
    if (!rebuilt) {
      guard.reset();  // Before the socket it watches closes: its number may be reused at once.
      connection_.reset();
    }
    return rebuilt;
  } catch (const std::exception& error) {
    const std::string why = guard && guard->fired() ? guard->reason() : error.what();
    guard.reset();
    connection_.reset();
    return std::vector<std::string>{std::string("cannot read the engine state: ") + why};
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
    if (enum_oids_.empty()) {
      // The binary arrays name their element types; the server chose the enums' OIDs.
      for (const char* type : {"account_kind", "transfer_kind"}) {
        const std::string oid = connection.exec(
            std::string("SELECT '") + type + "'::regtype::oid::text", answer_deadline());
        enum_oids_.emplace(type, static_cast<std::uint32_t>(std::stoul(oid)));
      }
    }
    storage::BinaryParameters parameters = sealed_->finish_binary([this](const std::string& type) {
      const auto found = enum_oids_.find(type);
      if (found == enum_oids_.end()) throw std::logic_error("no OID for type " + type);
      return found->second;
    });
    // The batch carries the next commit mark: one more row in the same statement.
    const std::uint64_t number = mark_->batch + 1;
    for (int byte = 0; byte < 8; ++byte) {
      batch_parameter_[static_cast<std::size_t>(byte)] =
          static_cast<char>((number >> (8 * (7 - byte))) & 0xff);
    }
    parameters.values.push_back(batch_parameter_.data());
    parameters.lengths.push_back(8);
    parameters.formats.push_back(1);
    // One round trip and one statement, committed when it succeeds and rolled back whole when
    // any of its inserts or checks fails.
    const std::string statement = sealed_->statement_name() + "_marked";
    if (!connection.prepared(statement)) {
      connection.prepare(statement,
                         with_commit_mark(sealed_->statement_sql(), parameters.values.size()),
                         answer_deadline());
    }
    const std::string secrets = sealed_->trigger_secrets_copy();
    if (secrets.empty()) {
      connection.exec_prepared(statement, parameters.values, parameters.lengths, parameters.formats,
                               answer_deadline());
    } else {
      // A batch that drew hidden points (a reset, rare) writes them through COPY, in one
      // transaction with the statement: never in a statement's text or parameters, which
      // pg_stat_activity and a statement log show (BatchRows::trigger_secrets_copy). COPY
      // first, so that the statement's triggers see the points (a hit's reveal on the audit
      // trail, when its point was drawn earlier in the same batch); their draws' references are
      // checked at the commit (migration 0023).
      connection.exec("BEGIN", answer_deadline());
      connection.copy_in(storage::kTriggerSecretsCopy, secrets, answer_deadline());
      connection.exec_prepared(statement, parameters.values, parameters.lengths, parameters.formats,
                               answer_deadline());
      connection.exec("COMMIT", answer_deadline());
    }
    noted(number);
    return true;
  } catch (const std::exception& failure) {
    error = failure.what();
    if (backend_) orphan_ = backend_;  // Recovery waits until it is gone (end_orphan).
    backend_.reset();
    committer_.reset();
    return false;
  }
}

bool PostgresDurability::probe(std::string& error) {
  try {
    committer().exec("SELECT 1", answer_deadline());
    return true;
  } catch (const std::exception& failure) {
    error = failure.what();
    if (backend_) orphan_ = backend_;  // As for a failed commit: recovery waits until it is gone.
    backend_.reset();
    committer_.reset();
    return false;
  }
}

namespace {

// A report's or an audit's read that failed: the reason (PostgreSQL's text, which may quote SQL,
// or a deadline's) goes to the daemon's log; the client gets a fixed message and retries.
EngineFailure ledger_unreadable(const char* what, const std::string& reason) {
  log_error(std::string(what) + " cannot read the ledger: " + reason);
  return EngineFailure{EngineError::database_unavailable,
                       "cannot read the ledger now (the daemon's log says why); retry"};
}

}  // namespace

Result<std::vector<LinkReconciliation>, EngineFailure> PostgresDurability::reconcile(
    const std::vector<LinkId>& links, std::optional<std::int64_t> from_us,
    std::optional<std::int64_t> to_us) {
  std::vector<LinkReconciliation> report;
  for (const LinkId& id : links) {
    const bool known = std::any_of(config_.links.begin(), config_.links.end(),
                                   [&](const LinkSettings& link) { return link.meters.id == id; });
    if (!known)
      return EngineFailure{EngineError::unknown_link, "no link " + quote_prefix(id.value())};
  }
  // The connection outlives the guard watching its socket, whose number a closed socket frees.
  std::unique_ptr<pqxx::connection> connection;
  std::optional<storage::DatabaseWaits::Guard> guard;
  try {
    connection = storage::connect(dsn_, limits_, "jackpotd-report");
    guard.emplace(storage::DatabaseWaits::instance().guard(*connection, query_deadline()));
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
    return ledger_unreadable("the reconciliation report",
                             guard && guard->fired() ? guard->reason() : error.what());
  }
  return report;
}

Result<std::vector<AccountAuditLine>, EngineFailure> PostgresDurability::audit_balances() {
  std::vector<AccountAuditLine> lines;
  // The full re-sum reads the whole journal: it gets the report's deadlines, so that a lock on
  // the transfers or a stopped server process can neither hold the call nor the daemon's stop.
  // The connection outlives the guard watching its socket, whose number a closed socket frees.
  std::unique_ptr<pqxx::connection> connection;
  std::optional<storage::DatabaseWaits::Guard> guard;
  try {
    connection = storage::connect(dsn_, limits_, "jackpotd-audit");
    guard.emplace(storage::DatabaseWaits::instance().guard(*connection, query_deadline()));
    for (const storage::AccountAudit& account : storage::audit_balances(*connection).accounts) {
      lines.push_back(
          {LinkId(account.link_id), account.account, account.from_snapshot, account.full_sum});
    }
  } catch (const storage::ConnectError& error) {
    return ledger_unreadable("the balance audit", error.what());
  } catch (const pqxx::failure& error) {
    return ledger_unreadable("the balance audit",
                             guard && guard->fired() ? guard->reason() : error.what());
  } catch (const storage::SnapshotMismatch& error) {
    // The snapshot path itself does not hold together: the daemon's own words, naming the link.
    return EngineFailure{EngineError::balances_disagree, error.what()};
  } catch (const std::exception& error) {
    // Anything else (a libpqxx conversion or usage error, ...): library text stays in the log.
    return ledger_unreadable("the balance audit", error.what());
  }
  return lines;
}

std::optional<EngineFailure> PostgresDurability::append_audit_events(
    const std::vector<AuditAppend>& events) {
  std::vector<storage::AuditAppend> rows;
  for (const AuditAppend& event : events) {
    rows.push_back({event.principal, event.action, event.detail});
  }
  std::unique_ptr<pqxx::connection> connection;
  std::optional<storage::DatabaseWaits::Guard> guard;
  try {
    connection = storage::connect(dsn_, limits_, "jackpotd-audit");
    guard.emplace(storage::DatabaseWaits::instance().guard(*connection, query_deadline()));
    storage::append_audit_events(*connection, rows);
  } catch (const std::exception& error) {
    const std::string reason = guard && guard->fired() ? guard->reason() : error.what();
    log_error("cannot append to the audit trail: " + reason);
    return EngineFailure{EngineError::database_unavailable,
                         "cannot record it in the audit trail now (the daemon's log says why); "
                         "retry"};
  }
  return std::nullopt;
}

Result<ReconciliationSource::AuditTrailPage, EngineFailure> PostgresDurability::audit_trail(
    std::int64_t after_seq, int limit) {
  std::unique_ptr<pqxx::connection> connection;
  std::optional<storage::DatabaseWaits::Guard> guard;
  try {
    connection = storage::connect(dsn_, limits_, "jackpotd-audit");
    guard.emplace(storage::DatabaseWaits::instance().guard(*connection, query_deadline()));
    storage::AuditPage page = storage::read_audit_page(*connection, after_seq, limit);
    return AuditTrailPage{std::move(page.events), page.head};
  } catch (const storage::AuditTrailAltered& error) {
    return EngineFailure{EngineError::audit_trail_altered, error.what()};
  } catch (const std::exception& error) {
    return ledger_unreadable("the audit trail's read",
                             guard && guard->fired() ? guard->reason() : error.what());
  }
}

std::unique_ptr<Engine> PostgresDurability::recover(std::string& error) {
  std::optional<storage::DatabaseWaits::Guard> guard;
  try {
    guard.emplace(storage::DatabaseWaits::instance().guard(connection(), query_deadline()));
    end_orphan();
  } catch (const std::exception& failure) {
    error = guard && guard->fired() ? guard->reason() : failure.what();
    guard.reset();  // Before the socket it watches closes: its number may be reused at once.
    connection_.reset();
    return nullptr;
  }
  guard.reset();
  auto engine = open();
  if (engine) return std::move(engine).value();
  error = engine.error().front();
  return nullptr;
}

}  // namespace jackpot
