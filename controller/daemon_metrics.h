#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace prometheus {
class Registry;
class Gauge;
class Histogram;
class Counter;
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
  // One commit of the group committer: its commands, its latency, whether it committed.
  void observe_commit(std::size_t commands, double seconds, bool ok);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Gauge* schema_version_;
  prometheus::Gauge* start_time_seconds_;
  prometheus::Histogram* commit_latency_seconds_;
  prometheus::Histogram* batch_commands_;
  prometheus::Counter* commits_failed_;
};

}  // namespace jackpot
