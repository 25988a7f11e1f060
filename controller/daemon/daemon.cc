#include "controller/daemon/daemon.h"

#include <google/protobuf/stubs/logging.h>
#include <grpc/grpc.h>
#include <grpc/support/log.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/impl/codegen/service_type.h>
#include <grpcpp/impl/server_builder_option.h>
#include <grpcpp/impl/server_builder_plugin.h>
#include <grpcpp/support/server_interceptor.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <pqxx/pqxx>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>

#include "controller/api/grpc_services.h"
#include "controller/api/roster.h"
#include "controller/api/sign_feed.h"
#include "controller/api/transport_security.h"
#include "controller/api/web_sign.h"
#include "controller/daemon/commit_log.h"
#include "controller/daemon/daemon_metrics.h"
#include "controller/daemon/log_throttle.h"
#include "controller/daemon/os_random.h"
#include "controller/daemon/refusal_tally.h"
#include "controller/durability/durable.h"
#include "controller/engine/floor_loader.h"
#include "controller/hands/paytable_loader.h"
#include "controller/limits/request_limits.h"
#include "controller/log/log.h"
#include "meters/digest.h"
#include "storage/audit.h"
#include "storage/connection.h"
#include "storage/migrations.h"

namespace jackpot {
namespace {

void log_line(const std::string& message, LogLevel level = LogLevel::info) {
  write_log({level, message, {}});
}

// Protobuf's own log lines, as jackpotd's, at protobuf's level. It writes one (as an error) for
// every request whose string field is not UTF-8 (before the adapter refuses it as
// INVALID_ARGUMENT): a client's fault, so a warning, at most one per 10 s, with how many were held
// back since the last one written; every other line as it comes.
void protobuf_log(google::protobuf::LogLevel level, const char* file, int line,
                  const std::string& message) {
  std::string text = "protobuf: " + message + " (" + file + ":" + std::to_string(line) + ")";
  LogLevel ours = level == google::protobuf::LOGLEVEL_INFO      ? LogLevel::info
                  : level == google::protobuf::LOGLEVEL_WARNING ? LogLevel::warning
                                                                : LogLevel::error;
  if (level < google::protobuf::LOGLEVEL_FATAL &&
      message.find("invalid UTF-8") != std::string::npos) {
    ours = LogLevel::warning;
    static std::mutex mutex;
    static LogThrottle throttle(std::chrono::seconds(10));
    std::lock_guard<std::mutex> lock(mutex);
    const auto verdict = throttle.offer(LogThrottle::Clock::now());
    if (!verdict.write) return;
    if (verdict.held_back > 0) {
      text += "; " + std::to_string(verdict.held_back) + " more such lines held back before it";
    }
  }
  log_line(text, ours);
}

// gRPC's own lines (a TLS handshake that failed, a connection reset), in jackpotd's log format, at
// most one per 10 s from each place in gRPC that writes them: anyone who can open connections to
// the port could otherwise write the log as fast as they connect.
void grpc_log(gpr_log_func_args* args) {
  const std::string source =
      std::string(args->file == nullptr ? "?" : args->file) + ":" + std::to_string(args->line);
  LogThrottle::Verdict verdict;
  {
    static std::mutex mutex;
    static SourceLogThrottle throttle(std::chrono::seconds(10));
    const std::lock_guard<std::mutex> lock(mutex);
    verdict = throttle.offer(source, LogThrottle::Clock::now());
  }
  if (!verdict.write) return;
  std::string text =
      "grpc: " + std::string(args->message == nullptr ? "" : args->message) + " (" + source + ")";
  if (verdict.held_back > 0) {
    text += "; " + std::to_string(verdict.held_back) + " more lines from there held back before it";
  }
  log_line(text, args->severity == GPR_LOG_SEVERITY_ERROR ? LogLevel::error : LogLevel::info);
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "unknown";
  return name;
}

// Replaces the port of "host:port" with `port` (used when port 0 asked for a free one).
std::string with_port(const std::string& address, int port) {
  return address.substr(0, address.rfind(':') + 1) + std::to_string(port);
}

std::unique_ptr<prometheus::Exposer> start_metrics(const std::string& address,
                                                   const DaemonMetrics& metrics,
                                                   std::string& bound_address) {
  auto exposer = std::make_unique<prometheus::Exposer>(address, /*num_threads=*/1);
  const std::shared_ptr<prometheus::Collectable> registry = metrics.registry();
  exposer->RegisterCollectable(registry);
  const auto ports = exposer->GetListeningPorts();
  bound_address = ports.empty() ? address : with_port(address, ports.front());
  return exposer;
}

std::optional<EngineConfig> read_floor(const std::string& file,
                                       const std::vector<Paytable>& paytables,
                                       std::string& floor_text) {
  // A directory opens as a stream that reads nothing: it would be an empty floor.
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) {
    log_line("the floor file " + file + " is not a regular file" +
                 (error ? " (" + error.message() + ")" : "") + "; not starting",
             LogLevel::error);
    return std::nullopt;
  }
  std::ifstream in(file);
  std::ostringstream text;
  if (in) text << in.rdbuf();  // An empty file inserts nothing: unservable_floor names it.
  if (!in.is_open() || in.bad()) {
    log_line("cannot read the floor file " + file + "; not starting", LogLevel::error);
    return std::nullopt;
  }
  floor_text = text.str();
  auto floor = load_floor(floor_text, file, paytables);
  if (!floor) {
    for (const std::string& problem : floor.error()) log_line(problem, LogLevel::error);
    log_line("the floor is not valid; not starting", LogLevel::error);
    return std::nullopt;
  }
  if (const auto problems = unservable_floor(*floor, file); !problems.empty()) {
    for (const std::string& problem : problems) log_line(problem, LogLevel::error);
    log_line("the floor would serve nothing; not starting", LogLevel::error);
    return std::nullopt;
  }
  return std::move(floor).value();
}

// What GetConfig answers: the floor and the shipped paytables its tables use, by id.
ConfigInForce config_in_force(const std::string& floor_file, const std::string& floor_text,
                              const EngineConfig& floor, std::uint64_t floor_version) {
  ConfigInForce config;
  config.floor_version = floor_version;
  config.floor_text = floor_text;
  config.floor_file = floor_file;
  config.floor_sha256 = to_hex(sha256(floor_text));
  std::set<std::string> used;
  for (const TableSettings& table : floor.tables) {
    for (const TableLinkSettings& link : table.links) used.insert(link.paytable_id);
  }
  for (const PaytableSource& source : embedded_paytables()) {
    const auto paytable = load_paytable(source.text, source.origin);
    if (paytable && used.count(paytable->id.str()) > 0) {
      config.paytables.push_back({paytable->id.str(), source.text});
    }
  }
  std::sort(config.paytables.begin(), config.paytables.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  config.daemon_version = JACKPOTD_VERSION;
  return config;
}

// Writes the log lines of committed batches on a thread of its own, so that a log that blocks
// (a full pipe, journald pushing back) never holds the commit's answers. At most kMaxQueued lines
// wait; past that they are counted and one line says how many were dropped.
class CommitLogWriter {
 public:
  static constexpr std::size_t kMaxQueued = 10'000;
  CommitLogWriter() : thread_([this] { run(); }) {}
  ~CommitLogWriter() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  CommitLogWriter(const CommitLogWriter&) = delete;
  CommitLogWriter& operator=(const CommitLogWriter&) = delete;

  // Returns once every line added so far is written.
  void flush() {
    std::unique_lock lock(mutex_);
    drained_.wait(lock, [&] { return queued_.empty() && dropped_ == 0 && !writing_; });
  }

  // The events of a batch committed now: their lines carry this time, however late written.
  void add(std::vector<LogEvent> events) {
    if (events.empty()) return;
    const std::int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    {
      std::lock_guard lock(mutex_);
      for (LogEvent& event : events) {
        if (queued_.size() < kMaxQueued) {
          queued_.push_back({std::move(event), now});
        } else {
          ++dropped_;
        }
      }
    }
    changed_.notify_one();
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return stopping_ || !queued_.empty() || dropped_ > 0; });
      std::deque<Queued> taking;
      taking.swap(queued_);
      const std::uint64_t dropped = std::exchange(dropped_, 0);
      const bool stop = stopping_;
      writing_ = true;
      lock.unlock();
      for (const Queued& queued : taking) write_log(queued.event, queued.unix_us);
      if (dropped > 0) {
        write_log({LogLevel::warning,
                   "log lines dropped: the log could not keep up",
                   {{"dropped", std::to_string(dropped), true}}});
      }
      lock.lock();
      writing_ = false;
      drained_.notify_all();
      if (stop && queued_.empty()) return;
    }
  }

  struct Queued {
    LogEvent event;
    std::int64_t unix_us = 0;
  };
  std::mutex mutex_;
  std::condition_variable changed_;
  std::condition_variable drained_;
  bool writing_ = false;
  std::deque<Queued> queued_;
  std::uint64_t dropped_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

// What the metrics read of the engine once a second (link statuses come from the host).
FloorReading floor_reading(const Engine& engine) {
  FloorReading reading;
  reading.meters = engine.meters();
  for (const LinkSettings& settings : engine.config().links) {
    const LinkId& id = settings.meters.id;
    reading.links.push_back({id, LinkStatus::unavailable});
    if (const Link* link = engine.link(id)) {
      for (std::uint32_t level = 1; level <= link->level_count(); ++level) {
        reading.reserves.push_back({id, level, link->reserve(level)});
      }
    }
  }
  const std::vector<Payout> pending = engine.pending_payouts();
  reading.pending_payouts = pending.size();
  for (const Payout& payout : pending) {
    if (reading.oldest_pending_created_us == 0 ||
        payout.created_us < reading.oldest_pending_created_us) {
      reading.oldest_pending_created_us = payout.created_us;
    }
  }
  reading.ledger_balanced = !engine.check_invariants().has_value();
  return reading;
}

// Each call's method, status code and duration for the metrics, taken as its status is sent.
class CallMetrics : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit CallMetrics(DaemonMetrics& metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new Timed(metrics_, info->method(),
                     info->type() == grpc::experimental::ServerRpcInfo::Type::UNARY);
  }

 private:
  class Timed : public grpc::experimental::Interceptor {
   public:
    // `method` is gRPC's, alive as long as the call.
    Timed(DaemonMetrics& metrics, const char* method, bool unary)
        : metrics_(metrics), method_(method == nullptr ? "" : method), unary_(unary) {}
    void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
      if (methods->QueryInterceptionHookPoint(
              grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
        metrics_.observe_call(method_, static_cast<int>(methods->GetSendStatus().error_code()),
                              seconds, unary_);
      }
      methods->Proceed();
    }

   private:
    DaemonMetrics& metrics_;
    const std::string_view method_;
    const bool unary_;
    const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  };
  DaemonMetrics& metrics_;
};

// Counts the calls the server holds, from their start to their end, so that a stop knows when
// the last one has finished.
class CallCounter : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo*) override {
    return new Counted(calls_);
  }
  std::int64_t calls() const { return calls_.load(); }

 private:
  class Counted : public grpc::experimental::Interceptor {
   public:
    explicit Counted(std::atomic<std::int64_t>& calls) : calls_(calls) { ++calls_; }
    ~Counted() override { --calls_; }
    Counted(const Counted&) = delete;
    Counted& operator=(const Counted&) = delete;
    void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
      methods->Proceed();
    }

   private:
    std::atomic<std::int64_t>& calls_;
  };
  std::atomic<std::int64_t> calls_{0};
};

// The deadlines of a stop. At `abandon` every database wait still in progress is given up
// (DatabaseWaits::abort_all): a commit or a recovery that PostgreSQL does not answer cannot hold
// the stop. At `give_up`, should anything still hold it, the process exits on its own.
class StopDeadlines {
 public:
  StopDeadlines(std::chrono::steady_clock::time_point abandon,
                std::chrono::steady_clock::time_point give_up)
      : thread_([this, abandon, give_up] {
          std::unique_lock lock(mutex_);
          if (done_changed_.wait_until(lock, abandon, [&] { return done_; })) return;
          log_line("PostgreSQL has not answered within the shutdown grace; abandoning its waits",
                   LogLevel::error);
          storage::DatabaseWaits::instance().abort_all();
          if (done_changed_.wait_until(lock, give_up, [&] { return done_; })) return;
          log_line("the stop did not complete within the shutdown grace; exiting now",
                   LogLevel::error);
          std::_Exit(kExitStopForced);
        }) {}
  ~StopDeadlines() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_changed_.notify_all();
    thread_.join();
  }
  StopDeadlines(const StopDeadlines&) = delete;
  StopDeadlines& operator=(const StopDeadlines&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;
  std::thread thread_;
};

// Takes server reflection off a builder: linking gRPC's reflection library registers its plugin
// with every builder, whether InitProtoReflectionServerBuilderPlugin() ran or not.
class WithoutReflection final : public grpc::ServerBuilderOption {
 public:
  void UpdateArguments(grpc::ChannelArguments*) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override {
    plugins->erase(std::remove_if(plugins->begin(), plugins->end(),
                                  [](const auto& plugin) {
                                    return plugin->name().find("reflection") != std::string::npos;
                                  }),
                   plugins->end());
  }
};

int wait_for_signal(const sigset_t& signals) {
  int signal_number = 0;
  while (sigwait(&signals, &signal_number) != 0) {
  }
  return signal_number;
}

std::int64_t unix_now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Every refused call is counted, and tallied for the audit trail (refusal_tally.h); and logged,
// at most one line per 10 s with how many were held back, so that a caller cannot fill the log
// (the count says how many there were).
RefusalObserver refusal_observer(DaemonMetrics& metrics, RefusalTally& tally) {
  return [&metrics, &tally](AccessRefusal refusal, std::string_view detail) {
    metrics.count_refusal(refusal);
    tally.add(to_string(refusal), detail, unix_now_us());
    static std::mutex mutex;
    static LogThrottle throttle(std::chrono::seconds(10));
    const std::lock_guard lock(mutex);
    const auto verdict = throttle.offer(LogThrottle::Clock::now());
    if (!verdict.write) return;
    log_line("refused a call: " + std::string(detail) +
                 (verdict.held_back > 0 ? " (and " + std::to_string(verdict.held_back) +
                                              " refusals not logged before it)"
                                        : ""),
             LogLevel::warning);
  };
}

std::string join_principals(const std::vector<std::string>& principals) {
  std::string text;
  for (const std::string& principal : principals) text += (text.empty() ? "" : " ") + principal;
  return text;
}

// The roster of supervisors and admins (--roster, controller/api/roster.h), or nothing after
// logging why it cannot be used; nothing, without a word, when none was given.
std::optional<Roster> read_roster(const std::string& file, bool& failed) {
  failed = false;
  if (file.empty()) return std::nullopt;
  // Whoever may write the roster decides who approves: not the group, not everyone.
  const auto text = read_owner_written(file, kMaxRosterBytes, "the roster");
  if (!text.ok()) {
    log_line(text.error().message + "; not starting", LogLevel::error);
    failed = true;
    return std::nullopt;
  }
  auto roster = Roster::parse(*text);
  if (!roster) {
    log_line("the roster " + file + " is refused: " + roster.error() + "; not starting",
             LogLevel::error);
    failed = true;
    return std::nullopt;
  }
  log_line("roster " + file + ": " + std::to_string(roster->principals().size()) +
           " supervisors and admins may act (sha256 " + roster->sha256_hex() + ")");
  return std::move(roster).value();
}

// How the gRPC port is secured (transport_security.h), from the files given; null after logging
// why when they cannot be used. Plaintext is announced loudly: no caller is authenticated.
std::unique_ptr<ServerTransport> make_transport(const DaemonOptions& options,
                                                const std::optional<Roster>& roster,
                                                DaemonMetrics& metrics, RefusalTally& tally) {
  RefusalObserver refused = refusal_observer(metrics, tally);
  metrics.set_plaintext(options.plaintext);
  if (options.plaintext) {
    log_line(
        "WARNING: --plaintext on: the gRPC port serves WITHOUT TLS and authenticates NO caller; "
        "any process on this machine may act as any table, supervisor or admin by naming it. "
        "For development only (metric jackpotd_plaintext 1)");
    return ServerTransport::plaintext_loopback(roster, std::move(refused));
  }
  JACKPOT_INVARIANT(roster.has_value(), "daemon options require a roster with mutual TLS");
  auto transport =
      ServerTransport::mutual_tls(TlsFiles{options.tls_certificate_file, options.tls_key_file,
                                           options.tls_client_ca_file, options.revoked_file},
                                  *roster, std::move(refused));
  if (!transport.ok()) {
    log_line(transport.error() + "; not starting", LogLevel::error);
    return nullptr;
  }
  log_line("mutual TLS: clients need a certificate of the CA in " + options.tls_client_ca_file);
  return std::move(transport).value();
}

// The gRPC server, started, not yet serving (health NOT_SERVING until the start is on record):
// the services of the floor (none without a host: health and reflection only), bounded threads
// for the synchronous calls, keepalive pings that find vanished clients, a port no other process
// shares. `server` is null, or `port` 0, when it could not listen.
struct GrpcServer {
  std::vector<std::unique_ptr<grpc::Service>> services;  // Outlive the server, declared first.
  std::unique_ptr<grpc::Server> server;
  const CallCounter* calls = nullptr;  // Owned by the server; null when it did not start.
  int port = 0;
};

GrpcServer start_grpc_server(const DaemonOptions& options, ServerTransport& transport,
                             RefusalObserver refused, EngineHost* host, SignFeed* signs,
                             ReconciliationSource* durability, RefusedActs* refused_acts,
                             const StartGate& gate, DaemonMetrics& metrics) {
  GrpcServer made;
  grpc::EnableDefaultHealthCheckService(true);
  // Reflection answers on a synchronous stream per call: off unless asked for, so that no tool
  // can hold the threads the admin and health calls need.
  // A daemon without a floor serves health only, and gRPC needs one synchronous service to
  // start: reflection is that one there.
  const bool reflection = options.reflection || host == nullptr;
  if (reflection) grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  if (!reflection) builder.SetOption(std::make_unique<WithoutReflection>());
  // gRPC sets SO_REUSEPORT by default; two daemons silently sharing one port would split the
  // tables between two sequencers, so a taken port must be an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // A larger request is RESOURCE_EXHAUSTED before it is read (docs/limits.md).
  builder.SetMaxReceiveMessageSize(kMaxReceiveMessageBytes);
  // The synchronous RPCs share a bounded number of threads; the round commands and the link
  // status streams run on the callback API and hold none.
  grpc::ResourceQuota quota("jackpotd");
  quota.SetMaxThreads(options.grpc_threads_max);
  builder.SetResourceQuota(quota);
  // Pings on idle connections find clients that vanished (a table switched off, a cable pulled),
  // so that their streams end and give their slot back; clients may ping every 10 s.
  const int keepalive_ms = static_cast<int>(options.keepalive.count());
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, keepalive_ms);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, std::min(keepalive_ms, 10000));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // A connection that has not finished its TLS handshake within 10 s is closed (gRPC's default
  // is 120 s): idle connections anyone opens cannot hold file descriptors for long (#33).
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, 10000);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> counters;
  counters.push_back(std::make_unique<CallMetrics>(metrics));
  counters.push_back(std::make_unique<CallCounter>());
  made.calls = static_cast<const CallCounter*>(counters.back().get());
  counters.push_back(transport.stream_tracker());  // A SIGHUP ends the revoked ones.
  builder.experimental().SetInterceptorCreators(std::move(counters));
  if (host != nullptr) {
    made.services.push_back(make_table_service(
        *host, gate, StreamLimits{options.streams_max, options.streams_per_peer_max}, refused));
    made.services.push_back(make_admin_service(*host, durability, gate));
    made.services.push_back(
        make_supervisor_service(*host, gate,
                                StreamLimits{options.streams_max, options.streams_per_peer_max,
                                             "payout watches", "--streams"},
                                refused_acts));
  }
  if (signs != nullptr) {
    made.services.push_back(
        make_sign_service(*signs, gate,
                          StreamLimits{options.sign_streams_max, options.sign_streams_per_peer_max,
                                       "sign streams", "--sign-streams"},
                          std::move(refused)));
  }
  for (const auto& service : made.services) builder.RegisterService(service.get());
  builder.AddListeningPort(options.listen_address, transport.credentials(), &made.port);
  made.server = builder.BuildAndStart();
  if (made.server == nullptr) made.calls = nullptr;  // Went with the builder.
  return made;
}

// How often refused calls go to the audit trail.
constexpr std::chrono::seconds kRefusalInterval{60};

// A kind of refused call as the audit trail's access.refused event tells it.
storage::AuditDetail refused_detail(const RefusalTally::Kind& kind) {
  return {{"reason", kind.reason},
          {"detail", kind.detail},
          {"count", std::to_string(kind.count)},
          {"first_us", std::to_string(kind.first_us)},
          {"last_us", std::to_string(kind.last_us)}};
}

// The refused calls since the last time, on the audit trail: at most once a minute (and at the
// stop, record_stop), one event per kind, all in one statement. What cannot be recorded goes
// back into the tally for the next time.
void record_refusals(RefusalTally& refusals, ReconciliationSource& audit,
                     const std::string& principal) {
  const std::vector<RefusalTally::Kind> kinds = refusals.drain();
  if (kinds.empty()) return;
  std::vector<ReconciliationSource::AuditAppend> events;
  for (const RefusalTally::Kind& kind : kinds) {
    events.push_back({principal, "access.refused", refused_detail(kind)});
  }
  if (const auto failure = audit.append_audit_events(events)) {
    refusals.restore(kinds);
    log_line("could not record refused calls in the audit trail (kept for the next try): " +
                 failure->message,
             LogLevel::error);
  }
}

// The audit chain's head as a log line of its own, "audit chain head (seq=N, hash=HEX)" or its
// JSON form (tools/ctl_text.h anchors_in_log): kept outside the database, it anchors
// `jackpotctl audit verify --anchors-from`, so that a rewritten chain (every hash recomputed by
// someone with the tables' owner's rights) is still found out.
void log_anchor(const AuditChainPosition& head) {
  write_log({LogLevel::info,
             "audit chain head",
             {{"seq", std::to_string(head.seq), true}, {"hash", to_hex(head.hash)}}});
}

// The stop on the audit trail, with what is left of the grace (at least a quarter of a second):
// the one wait a stop does not abandon early. The start's connection may have broken during an
// outage since; a fresh one records it, unless the database has already let the stop down.
void record_stop(std::unique_ptr<pqxx::connection>& db, const DaemonOptions& options,
                 const storage::SessionLimits& limits, const std::string& principal,
                 const std::string& signal_name, std::chrono::steady_clock::time_point stop_by,
                 RefusalTally& refusals) {
  std::uint64_t unrecorded_refusals = 0;
  try {
    const auto left =
        std::max<std::chrono::milliseconds>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                stop_by - std::chrono::steady_clock::now()),
                                            std::chrono::milliseconds(250));
    if (!db->is_open()) {
      if (storage::DatabaseWaits::instance().aborted()) {
        throw std::runtime_error("PostgreSQL did not answer within the shutdown grace");
      }
      db = storage::connect(options.database_dsn, limits, "jackpotd");
    }
    auto guard = storage::DatabaseWaits::instance().guard(*db, left, /*abortable=*/false);
    // The refusals not yet on record and the stop, in one statement: both or neither.
    std::vector<storage::AuditAppend> events;
    for (const RefusalTally::Kind& kind : refusals.drain()) {
      unrecorded_refusals += kind.count;
      events.push_back({principal, "access.refused", refused_detail(kind)});
    }
    events.push_back({principal, "daemon.stop", {{"signal", signal_name}}});
    storage::append_audit_events(*db, events);
    // The chain's head after the stop, in the log: an anchor outside the database.
    try {
      log_anchor(storage::read_audit_page(*db, std::numeric_limits<std::int64_t>::max(), 1).head);
    } catch (const std::exception& error) {
      log_line(std::string("the stop is on the audit trail, but its head could not be read for "
                           "the log: ") +
                   error.what(),
               LogLevel::warning);
    }
  } catch (const std::exception& error) {
    log_line(std::string("could not record the stop in the audit trail") +
                 (unrecorded_refusals > 0
                      ? " (nor " + std::to_string(unrecorded_refusals) + " refused calls)"
                      : "") +
                 ": " + error.what(),
             LogLevel::error);
  }
}

}  // namespace

int run_daemon(const DaemonOptions& options, const sigset_t& signals) {
  set_log_format(options.log_json ? LogFormat::json : LogFormat::text);
  google::protobuf::SetLogHandler(&protobuf_log);
  gpr_set_log_function(&grpc_log);
  const std::string principal = "daemon/" + host_name();
  RefusalTally refusals;  // Outlives the transport and the services that add to it.
  DaemonMetrics metrics(JACKPOTD_VERSION);

  const auto paytables = load_paytables(embedded_paytables());
  if (!paytables) {
    for (const PaytableError& error : paytables.error()) log_line(error.message, LogLevel::error);
    log_line("the paytables are not valid; not starting", LogLevel::error);
    return kExitStartupFailed;
  }
  log_line("loaded " + std::to_string(paytables->size()) + " paytables");

  // The engine's random source and clock live as long as the daemon.
  static OsRandom random;
  static SystemClock clock;
  std::optional<EngineConfig> floor;
  std::string floor_text;
  if (!options.floor_file.empty()) {
    floor = read_floor(options.floor_file, *paytables, floor_text);
    if (!floor) return kExitStartupFailed;
  } else {
    log_line("no --floor given: serving health and metrics only");
  }
  // Before the database: a TLS file that cannot be used stops the start before it claims
  // anything.
  bool roster_failed = false;
  const std::optional<Roster> roster = read_roster(options.roster_file, roster_failed);
  if (roster_failed) return kExitStartupFailed;
  const std::unique_ptr<ServerTransport> transport =
      make_transport(options, roster, metrics, refusals);
  if (!transport) return kExitStartupFailed;

  const storage::SessionLimits limits{options.query_timeout, options.commit_timeout};
  const auto query_deadline = 2 * options.query_timeout;
  std::unique_ptr<PostgresDurability> durability;
  if (floor) {
    // The floor's lock first, before this daemon writes anything: a second daemon on the same
    // database stops here, naming the one that holds it.
    durability = std::make_unique<PostgresDurability>(
        options.database_dsn, *floor, *paytables, clock, random,
        DurabilityOptions{options.commit_timeout, options.query_timeout, options.state_file,
                          options.accept_database_batch, principal});
    try {
      durability->claim();
    } catch (const std::exception& error) {
      log_line(std::string(error.what()) + "; not starting", LogLevel::error);
      return kExitStartupFailed;
    }
    if (options.state_file.empty()) {
      log_line("no --state-file: a restart cannot tell a database that lost acknowledged batches",
               LogLevel::error);
    }
  }

  std::unique_ptr<pqxx::connection> db;
  try {
    db = storage::connect(options.database_dsn, limits, "jackpotd");
    auto guard = storage::DatabaseWaits::instance().guard(*db, query_deadline);
    const auto report = storage::apply_migrations(*db);
    metrics.set_schema_version(report.schema_version);
    log_line("database schema at version " + std::to_string(report.schema_version) + " (" +
             std::to_string(report.applied) + " migration(s) applied now)");
  } catch (const storage::ConnectError& error) {
    log_line(std::string(error.what()) + "; not starting", LogLevel::error);
    return kExitStartupFailed;
  } catch (const std::exception& error) {
    log_line(std::string("schema migration failed: ") + error.what() + "; not starting",
             LogLevel::error);
    return kExitStartupFailed;
  }

  CommitLogWriter commit_log;  // Outlives the host, whose commits it logs.
  std::unique_ptr<EngineHost> host;
  std::unique_ptr<SignFeed> signs;    // Goes before the host (declared after it).
  StartGate gate;                     // Outlives the services and the web sign, which read it.
  std::unique_ptr<WebSign> web_sign;  // Goes before the feed and the gate.
  if (floor) {
    auto engine = durability->open();
    if (!engine) {
      for (const std::string& problem : engine.error()) log_line(problem, LogLevel::error);
      log_line("the engine state cannot be rebuilt; not starting", LogLevel::error);
      return kExitStartupFailed;
    }
    log_line("floor " + options.floor_file + ": " + std::to_string(floor->links.size()) +
             " links, " + std::to_string(floor->tables.size()) +
             " tables; state from the database");
    host = std::make_unique<EngineHost>(
        std::move(engine).value(), durability.get(), 4096,
        HostTimings{options.probe_interval, options.commit_late, options.read_timeout});
    // Recovery read the database just now: available, from the first scrape on.
    metrics.set_database_available(host->available());
    host->observe_commits(
        [&metrics, &commit_log](const std::vector<Records>& batch, double seconds, bool ok) {
          metrics.observe_commit(batch, seconds, ok);
          if (!ok) return;
          for (const Records& records : batch) commit_log.add(commit_events(records));
        });
    // The balances recovery rebuilt, on record before the first command: a period boundary.
    if (!host->snapshot_balances(SnapshotReason::start)) {
      log_line("could not record the start's balance snapshot; the database is failing",
               LogLevel::error);
    }
    SignFeedOptions sign_options;
    sign_options.pace.min_interval_us = 1'000'000 / options.sign_updates_per_second;
    sign_options.hit_shown_us =
        std::chrono::duration_cast<std::chrono::microseconds>(options.sign_hit_shown).count();
    sign_options.first_sequence =
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
    signs = std::make_unique<SignFeed>(*host, *paytables, sign_options);
  }

  std::unique_ptr<prometheus::Exposer> exposer;
  std::string metrics_address = "off";
  if (options.metrics_address != "off") {
    try {
      exposer = start_metrics(options.metrics_address, metrics, metrics_address);
    } catch (const std::exception& error) {
      log_line("cannot serve metrics on " + options.metrics_address + ": " + error.what() +
                   "; not starting",
               LogLevel::error);
      return kExitStartupFailed;
    }
  }

  std::string signs_url;
  if (signs && options.sign_http_address != "off") {
    std::string error;
    web_sign =
        WebSign::start(*signs,
                       WebSignOptions{options.sign_http_address, options.sign_http_clients_max,
                                      options.sign_http_clients_per_peer_max,
                                      [&gate] { return gate.config() != nullptr; }},
                       error);
    if (!web_sign) {
      log_line("cannot serve the web sign on " + options.sign_http_address + ": " + error +
                   "; not starting",
               LogLevel::error);
      return kExitStartupFailed;
    }
    signs_url = "http://" + web_sign->address() + "/sign/";
  }

  // Supervisors' refused acts, on their way to the audit trail; stopped (what waits written)
  // after the last call and before the stop's own record.
  std::optional<RefusedActs> refused_acts;
  if (durability) refused_acts.emplace(*durability);
  GrpcServer serving = start_grpc_server(options, *transport, refusal_observer(metrics, refusals),
                                         host.get(), signs.get(), durability.get(),
                                         refused_acts ? &*refused_acts : nullptr, gate, metrics);
  if (serving.server == nullptr || serving.port == 0) {
    log_line("cannot serve gRPC on " + options.listen_address + "; not starting", LogLevel::error);
    return kExitStartupFailed;
  }
  grpc::Server* const server = serving.server.get();
  const CallCounter* const calls = serving.calls;
  const int grpc_port = serving.port;
  server->GetHealthCheckService()->SetServingStatus(false);
  const std::string grpc_address = with_port(options.listen_address, grpc_port);

  // The start goes on record once nothing can fail it any more, the floor's version with it, in
  // one transaction: a start that failed leaves no record of a floor that never served (links it
  // opened above, with their seeds and draws, and the start's snapshot stay: README). Until
  // then the services answer UNAVAILABLE (StartGate), so no round is opened under a floor that is
  // not on record; the next start compares the rounds still live with the floor the latest
  // daemon.start names (docs/architecture.md §7b).
  std::int64_t floor_version = 0;
  try {
    auto guard = storage::DatabaseWaits::instance().guard(*db, query_deadline);
    floor_version = storage::record_start(
        *db, principal, floor ? std::optional<std::string>(floor_text) : std::nullopt,
        {{"version", JACKPOTD_VERSION},
         {"grpc", grpc_address},
         {"transport", transport->plaintext() ? "plaintext" : "mutual-tls"},
         // The roster in force, on the hash-chained trail: who could approve from this start.
         {"roster_sha256", roster ? roster->sha256_hex() : "none"},
         {"roster", roster ? join_principals(roster->principals()) : "none"}});
  } catch (const std::exception& error) {
    log_line(std::string("cannot record the start in the audit trail: ") + error.what() +
                 "; not starting",
             LogLevel::error);
    server->Shutdown();
    return kExitStartupFailed;
  }
  if (floor) {
    gate.open(config_in_force(options.floor_file, floor_text, *floor,
                              static_cast<std::uint64_t>(floor_version)));
    log_line("floor " + options.floor_file + " on record as version " +
             std::to_string(floor_version));
    // A decision already recorded by someone the roster does not name still counts towards the
    // two-person rule: said, so that an operator reviews it before a second supervisor decides.
    if (roster) {
      for (const Payout& payout :
           host->read([](const Engine& engine) { return engine.pending_payouts(); })) {
        for (const auto* names : {&payout.approved_by, &payout.rejection_requested_by}) {
          for (const std::string& name : *names) {
            const auto decided_by = principal_from_common_name(name);
            if (decided_by && roster->admits(*decided_by)) continue;
            log_line("pending payout " + std::to_string(payout.id.value()) + " has a decision by " +
                         name +
                         ", who is not on the roster: review it before a second "
                         "supervisor decides it",
                     LogLevel::warning);
          }
        }
      }
    }
  }
  server->GetHealthCheckService()->SetServingStatus(true);
  metrics.set_start_time_now();
  // One line on stdout that scripts wait for: "jackpotd VERSION: serving gRPC on ADDR, metrics
  // on URL|metrics off, signs on URL|signs off"; with --log-format json, that text is the message
  // of a JSON line whose fields say the same, like jackpotd's lines on stderr (gRPC's own lines
  // there stay text).
  const std::string metrics_url =
      exposer ? "http://" + metrics_address + "/metrics" : std::string("off");
  const std::string signs_at = web_sign ? signs_url : std::string("off");
  const std::string banner = std::string("jackpotd ") + JACKPOTD_VERSION + ": serving gRPC on " +
                             grpc_address + ", " +
                             (exposer ? "metrics on " + metrics_url : "metrics off") + ", " +
                             (web_sign ? "signs on " + signs_at : "signs off");
  std::string line;
  if (options.log_json) {
    line = render_now({LogLevel::info,
                       banner,
                       {{"version", JACKPOTD_VERSION},
                        {"grpc", grpc_address},
                        {"metrics", metrics_url},
                        {"signs", signs_at}}});
  } else {
    line = banner;
  }
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);

  // Meters and pending payouts for the metrics endpoint, read once a second.
  std::mutex poll_mutex;
  std::condition_variable poll_stop;
  bool stopping = false;
  std::thread poller;
  // Load balancers and monitors hear of a fail-stop, or of a database that stopped answering,
  // through health: NOT_SERVING as soon as the host is unavailable, SERVING again once it is
  // back; a stop's NOT_SERVING stays. Set under poll_mutex, so that the latest finding wins.
  const auto refresh_health = [&] {
    std::lock_guard lock(poll_mutex);
    const bool available = host->available();
    metrics.set_database_available(available);
    if (!stopping) server->GetHealthCheckService()->SetServingStatus(available);
  };
  if (host) {
    host->on_status_change(refresh_health);
    refresh_health();
    poller = std::thread([&] {
      std::unique_lock lock(poll_mutex);
      auto last_snapshot = std::chrono::steady_clock::now();
      auto last_refusals = last_snapshot;
      auto last_anchor = last_snapshot;
      std::int64_t anchored_seq = -1;
      // A first reading of the state recovery rebuilt (all of it committed), so that the links
      // are known even if the database fails before the first durable read.
      std::optional<FloorReading> last_reading = host->read(floor_reading);
      do {
        lock.unlock();
        // A period boundary for reports, and where the next recovery starts summing.
        if (options.snapshot_interval.count() > 0 &&
            std::chrono::steady_clock::now() - last_snapshot >= options.snapshot_interval) {
          last_snapshot = std::chrono::steady_clock::now();
          host->snapshot_balances(SnapshotReason::interval);
        }
        if (durability && std::chrono::steady_clock::now() - last_refusals >= kRefusalInterval) {
          last_refusals = std::chrono::steady_clock::now();
          record_refusals(refusals, *durability, principal);
        }
        if (durability && options.audit_anchor_interval.count() > 0 &&
            std::chrono::steady_clock::now() - last_anchor >= options.audit_anchor_interval) {
          last_anchor = std::chrono::steady_clock::now();
          // The head, when it moved since the last line (a database that does not answer now
          // gets its line at the next interval).
          const auto page = durability->audit_trail(std::numeric_limits<std::int64_t>::max(), 1);
          if (page && page->head.seq != anchored_seq) {
            anchored_seq = page->head.seq;
            log_anchor(page->head);
          } else if (!page && page.error().code == EngineError::audit_trail_altered) {
            // A head that does not read as the chain's is news for the log at once; a database
            // that does not answer is logged where that is found out.
            log_line(
                "the audit chain's head could not be read for the log: " + page.error().message,
                LogLevel::error);
          }
        }
        refresh_health();  // Besides each change: a backstop.
        // While the database is down, meters, reserves and the payouts waiting keep their last
        // durable values; the links' statuses (UNAVAILABLE then) and the oldest payout's age
        // (it goes on waiting) are read now, so that their alerts fire during the outage.
        if (auto reading = host->read_durable(floor_reading)) last_reading = std::move(*reading);
        if (last_reading) {
          std::vector<LinkId> links;
          for (const FloorReading::Status& link : last_reading->links) links.push_back(link.link);
          const std::vector<LinkStatusView> statuses = host->link_statuses(links);
          for (std::size_t i = 0; i < statuses.size(); ++i) {
            last_reading->links[i].status = statuses[i].status;
          }
          last_reading->now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
          metrics.observe_floor(*last_reading);
        }
        if (signs) {
          SignFeedCounts& counts = signs->counts();
          metrics.observe_signs({counts.grpc_streams.load(),
                                 web_sign ? static_cast<std::int64_t>(web_sign->clients()) : 0,
                                 counts.grpc_skipped.load(), counts.web_skipped.load()});
        }
        lock.lock();
      } while (!poll_stop.wait_for(lock, std::chrono::seconds(1), [&] { return stopping; }));
    });
  }

  int signal_number = wait_for_signal(signals);
  // SIGHUP re-reads the TLS files (a rotation); the others stop.
  while (signal_number == SIGHUP) {
    if (transport->plaintext()) {
      log_line("received SIGHUP: plaintext mode has no TLS files to read", LogLevel::warning);
    } else if (const auto reloaded = transport->reload(); reloaded.ok()) {
      metrics.count_tls_reload(true);
      log_line(
          "received SIGHUP: read the TLS files again, with the revocation list; new "
          "connections use them; " +
          std::to_string(*reloaded) +
          " open streams of revoked certificates ended (the roster is read at start only: "
          "restart jackpotd to apply an edit of it)");
    } else {
      metrics.count_tls_reload(false);
      log_line("received SIGHUP: " + reloaded.error() + "; the files in force stay");
    }
    signal_number = wait_for_signal(signals);
  }
  // The stop completes within the grace whatever PostgreSQL does: calls in flight get the grace
  // less a reserve for the stop's audit record; then every database wait still in progress is
  // abandoned, and should anything hold the stop two seconds past the grace, the process exits.
  const auto stop_began = std::chrono::steady_clock::now();
  const auto stop_by = stop_began + options.shutdown_grace;
  const auto reserve =
      std::min<std::chrono::milliseconds>(options.shutdown_grace / 4, std::chrono::seconds(1));
  const StopDeadlines deadlines(stop_by - reserve, stop_by + std::chrono::seconds(2));
  const std::string signal_name = std::string("SIG") + sigabbrev_np(signal_number);
  log_line("received " + signal_name + ", stopping");
  {
    std::lock_guard lock(poll_mutex);
    stopping = true;
    server->GetHealthCheckService()->SetServingStatus(false);
  }
  poll_stop.notify_all();
  if (host) host->stop_watches();
  if (signs) signs->stop();
  web_sign.reset();  // Its pages' event streams end with the feed.
  // gRPC's graceful shutdown ends only when every client has closed its connection, and a client
  // that holds an idle one keeps it open: the stop would wait the whole grace for nothing. Once
  // no call is left, the server's connections are closed from here (at once if none is running).
  std::atomic<bool> shut_down{false};
  std::thread closer([&] {
    while (!shut_down.load() && std::chrono::steady_clock::now() < stop_by - reserve) {
      if (calls->calls() == 0) grpc_server_cancel_all_calls(server->c_server());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  server->Shutdown(std::chrono::system_clock::now() +
                   std::chrono::duration_cast<std::chrono::system_clock::duration>(
                       stop_by - reserve - std::chrono::steady_clock::now()));
  server->Wait();
  shut_down = true;
  closer.join();
  if (host) host->stop();                  // Writes what the last calls gathered.
  if (refused_acts) refused_acts->stop();  // And the refused acts that wait.
  commit_log.flush();                      // Their log lines before the stop's.
  if (poller.joinable()) poller.join();
  // Nothing after the stop's audit record waits for the database.
  record_stop(db, options, limits, principal, signal_name, stop_by, refusals);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - stop_began);
  log_line("stopped in " + std::to_string(took.count()) + " ms");
  return kExitOk;
}
}  // namespace jackpot
