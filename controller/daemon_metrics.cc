#include "controller/daemon_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>

namespace jackpot {

DaemonMetrics::DaemonMetrics(const std::string& version)
    : registry_(std::make_shared<prometheus::Registry>()) {
  prometheus::BuildGauge()
      .Name("jackpotd_build_info")
      .Help("Always 1; the labels say which jackpotd runs")
      .Register(*registry_)
      .Add({{"version", version}})
      .Set(1);
  schema_version_ = &prometheus::BuildGauge()
                         .Name("jackpotd_schema_version")
                         .Help("Highest database migration applied at start")
                         .Register(*registry_)
                         .Add({});
  commit_latency_seconds_ =
      &prometheus::BuildHistogram()
           .Name("jackpotd_commit_latency_seconds")
           .Help("Time to make one batch of commands durable in PostgreSQL")
           .Register(*registry_)
           .Add({}, prometheus::Histogram::BucketBoundaries{0.0005, 0.001, 0.002, 0.005, 0.01, 0.02,
                                                            0.05, 0.1, 0.2, 0.5, 1});
  batch_commands_ = &prometheus::BuildHistogram()
                         .Name("jackpotd_commit_batch_commands")
                         .Help("Commands made durable together in one transaction")
                         .Register(*registry_)
                         .Add({}, prometheus::Histogram::BucketBoundaries{1, 2, 4, 8, 16, 32, 64,
                                                                          128, 256, 512, 1024});
  commits_failed_ = &prometheus::BuildCounter()
                         .Name("jackpotd_commits_failed_total")
                         .Help("Batches that did not commit (each stops the daemon serving)")
                         .Register(*registry_)
                         .Add({});
  start_time_seconds_ = &prometheus::BuildGauge()
                             .Name("jackpotd_start_time_seconds")
                             .Help("Unix time at which the daemon started serving")
                             .Register(*registry_)
                             .Add({});
}

void DaemonMetrics::set_schema_version(int version) {
  schema_version_->Set(static_cast<double>(version));
}

void DaemonMetrics::observe_commit(std::size_t commands, double seconds, bool ok) {
  if (!ok) {
    commits_failed_->Increment();
    return;
  }
  commit_latency_seconds_->Observe(seconds);
  batch_commands_->Observe(static_cast<double>(commands));
}

void DaemonMetrics::set_start_time_now() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  start_time_seconds_->Set(std::chrono::duration<double>(now).count());
}

}  // namespace jackpot
