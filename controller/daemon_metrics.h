#pragma once

#include <memory>
#include <string>

namespace prometheus {
class Registry;
class Gauge;
}  // namespace prometheus

namespace jackpot {

// The daemon's own metrics: what runs, since when, on which schema. Later modules add their
// own metrics classes to the same registry.
class DaemonMetrics {
 public:
  explicit DaemonMetrics(const std::string& version);

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  void set_schema_version(int version);
  void set_start_time_now();

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Gauge* schema_version_;
  prometheus::Gauge* start_time_seconds_;
};

}  // namespace jackpot
