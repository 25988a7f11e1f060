#include "controller/daemon_metrics.h"

#include <prometheus/gauge.h>
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
  start_time_seconds_ = &prometheus::BuildGauge()
                             .Name("jackpotd_start_time_seconds")
                             .Help("Unix time at which the daemon started serving")
                             .Register(*registry_)
                             .Add({});
}

void DaemonMetrics::set_schema_version(int version) {
  schema_version_->Set(static_cast<double>(version));
}

void DaemonMetrics::set_start_time_now() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  start_time_seconds_->Set(std::chrono::duration<double>(now).count());
}

}  // namespace jackpot
