#include "controller/daemon.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/impl/codegen/service_type.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <pqxx/pqxx>
#include <sstream>
#include <string>
#include <thread>

#include "controller/daemon_metrics.h"
#include "controller/durable.h"
#include "controller/floor_loader.h"
#include "controller/grpc_services.h"
#include "controller/os_random.h"
#include "controller/paytable_loader.h"
#include "storage/audit.h"
#include "storage/connection.h"
#include "storage/migrations.h"

namespace jackpot {
namespace {

void log_line(const std::string& message) {
  std::fprintf(stderr, "jackpotd: %s\n", message.c_str());
  std::fflush(stderr);
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
  std::ifstream in(file);
  if (!in) {
    log_line("cannot read the floor file " + file + "; not starting");
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  floor_text = text.str();
  auto floor = load_floor(floor_text, file, paytables);
  if (!floor) {
    for (const std::string& problem : floor.error()) log_line(problem);
    log_line("the floor is not valid; not starting");
    return std::nullopt;
  }
  return std::move(floor).value();
}

int wait_for_signal(const sigset_t& signals) {
  int signal_number = 0;
  while (sigwait(&signals, &signal_number) != 0) {
  }
  return signal_number;
}

}  // namespace

int run_daemon(const DaemonOptions& options, const sigset_t& signals) {
  const std::string principal = "daemon/" + host_name();
  DaemonMetrics metrics(JACKPOTD_VERSION);

  const auto paytables = load_paytables(embedded_paytables());
  if (!paytables) {
    for (const PaytableError& error : paytables.error()) log_line(error.message);
    log_line("the paytables are not valid; not starting");
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

  std::unique_ptr<pqxx::connection> db;
  try {
    db = storage::connect(options.database_dsn);
    const auto report = storage::apply_migrations(*db);
    metrics.set_schema_version(report.schema_version);
    log_line("database schema at version " + std::to_string(report.schema_version) + " (" +
             std::to_string(report.applied) + " migration(s) applied now)");
  } catch (const storage::ConnectError& error) {
    log_line(std::string(error.what()) + "; not starting");
    return kExitStartupFailed;
  } catch (const std::exception& error) {
    log_line(std::string("schema migration failed: ") + error.what() + "; not starting");
    return kExitStartupFailed;
  }

  // The floor the daemon runs is on record before it changes anything.
  std::string floor_version = "none";
  if (floor) {
    try {
      floor_version = std::to_string(storage::record_floor_version(*db, floor_text));
    } catch (const std::exception& error) {
      log_line(std::string("cannot record the floor configuration: ") + error.what() +
               "; not starting");
      return kExitStartupFailed;
    }
  }

  std::unique_ptr<PostgresDurability> durability;
  std::unique_ptr<EngineHost> host;
  if (floor) {
    durability = std::make_unique<PostgresDurability>(options.database_dsn, *floor, *paytables,
                                                      clock, random, options.commit_timeout);
    auto engine = durability->open();
    if (!engine) {
      for (const std::string& problem : engine.error()) log_line(problem);
      log_line("the engine state cannot be rebuilt; not starting");
      return kExitStartupFailed;
    }
    log_line("floor " + options.floor_file + " (version " + floor_version +
             "): " + std::to_string(floor->links.size()) + " links, " +
             std::to_string(floor->tables.size()) + " tables; state from the database");
    host = std::make_unique<EngineHost>(std::move(engine).value(), durability.get());
    host->observe_commits([&metrics](const std::vector<Records>& batch, double seconds, bool ok) {
      metrics.observe_commit(batch, seconds, ok);
    });
    // The balances recovery rebuilt, on record before the first command: a period boundary.
    if (!host->snapshot_balances(SnapshotReason::start)) {
      log_line("could not record the start's balance snapshot; the database is failing");
    }
  }

  std::unique_ptr<prometheus::Exposer> exposer;
  std::string metrics_address = "off";
  if (options.metrics_address != "off") {
    try {
      exposer = start_metrics(options.metrics_address, metrics, metrics_address);
    } catch (const std::exception& error) {
      log_line("cannot serve metrics on " + options.metrics_address + ": " + error.what() +
               "; not starting");
      return kExitStartupFailed;
    }
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default; two daemons silently sharing one port would split the
  // tables between two sequencers, so a taken port must be an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  std::vector<std::unique_ptr<grpc::Service>> services;
  if (host) {
    services.push_back(make_table_service(*host));
    services.push_back(make_admin_service(*host, durability.get()));
  }
  for (const auto& service : services) builder.RegisterService(service.get());
  int grpc_port = 0;
  builder.AddListeningPort(options.listen_address, grpc::InsecureServerCredentials(), &grpc_port);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || grpc_port == 0) {
    log_line("cannot serve gRPC on " + options.listen_address + "; not starting");
    return kExitStartupFailed;
  }
  server->GetHealthCheckService()->SetServingStatus(true);
  const std::string grpc_address = with_port(options.listen_address, grpc_port);

  try {
    storage::append_audit_event(
        *db, principal, "daemon.start",
        {{"version", JACKPOTD_VERSION}, {"grpc", grpc_address}, {"floor_version", floor_version}});
  } catch (const std::exception& error) {
    log_line(std::string("cannot record the start in the audit trail: ") + error.what() +
             "; not starting");
    server->Shutdown();
    return kExitStartupFailed;
  }
  metrics.set_start_time_now();
  std::printf("jackpotd %s: serving gRPC on %s, metrics on %s\n", JACKPOTD_VERSION,
              grpc_address.c_str(),
              exposer ? ("http://" + metrics_address + "/metrics").c_str() : "off");
  std::fflush(stdout);

  // Meters and pending payouts for the metrics endpoint, read once a second.
  std::mutex poll_mutex;
  std::condition_variable poll_stop;
  bool stopping = false;
  std::thread poller;
  if (host) {
    poller = std::thread([&] {
      std::unique_lock lock(poll_mutex);
      auto last_snapshot = std::chrono::steady_clock::now();
      do {
        lock.unlock();
        // A period boundary for reports, and where the next recovery starts summing.
        if (options.snapshot_interval.count() > 0 &&
            std::chrono::steady_clock::now() - last_snapshot >= options.snapshot_interval) {
          last_snapshot = std::chrono::steady_clock::now();
          host->snapshot_balances(SnapshotReason::interval);
        }
        // Load balancers and monitors hear of a fail-stop through health: NOT_SERVING while
        // the database cannot commit, SERVING again once the state is rebuilt.
        server->GetHealthCheckService()->SetServingStatus(!host->failed());
        // While the database is down the gauges keep their last durable values.
        if (const auto state = host->read_durable([](const Engine& engine) {
              return std::pair{engine.meters(), engine.pending_payouts().size()};
            })) {
          metrics.observe_state(state->first, state->second);
        }
        lock.lock();
      } while (!poll_stop.wait_for(lock, std::chrono::seconds(1), [&] { return stopping; }));
    });
  }

  const int signal_number = wait_for_signal(signals);
  if (poller.joinable()) {
    {
      std::lock_guard lock(poll_mutex);
      stopping = true;
    }
    poll_stop.notify_all();
    poller.join();
  }
  const std::string signal_name = std::string("SIG") + sigabbrev_np(signal_number);
  log_line("received " + signal_name + ", stopping");
  server->GetHealthCheckService()->SetServingStatus(false);
  if (host) host->stop_watches();
  server->Shutdown(std::chrono::system_clock::now() + options.shutdown_grace);
  server->Wait();
  if (host) host->stop();  // Writes what the last calls gathered.
  try {
    // The start's connection may have broken during an outage since; a fresh one records it.
    if (!db->is_open()) db = storage::connect(options.database_dsn);
    storage::append_audit_event(*db, principal, "daemon.stop", {{"signal", signal_name}});
  } catch (const std::exception& error) {
    log_line(std::string("could not record the stop in the audit trail: ") + error.what());
  }
  log_line("stopped");
  return kExitOk;
}

}  // namespace jackpot
