#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "controller/api/access_rules.h"
#include "controller/engine/engine_types.h"

namespace prometheus {
class Registry;
class Gauge;
class Histogram;
class Counter;
template <typename T>
class Family;
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
  // One commit of the group committer: its commands' records, its latency, whether it
  // committed. Rounds, contributions and awards are counted from committed records only.
  void observe_commit(const std::vector<Records>& batch, double seconds, bool ok);
  // The engine's state now: every level's meter, and the payouts waiting for a supervisor with
  // when the oldest of them was created (Unix microseconds; 0 when none waits) and now.
  void observe_state(const std::vector<LevelMeterView>& meters, std::size_t pending_payouts,
                     std::int64_t oldest_pending_created_us = 0, std::int64_t now_us = 0);
  // A call refused by the authorisation (any thread).
  void count_refusal(AccessRefusal refusal);
  // Whether the port serves plaintext (development) rather than mutual TLS.
  void set_plaintext(bool plaintext);
  // A re-read of the TLS files on SIGHUP, taken up or refused.
  void count_tls_reload(bool ok);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Gauge* schema_version_;
  prometheus::Gauge* start_time_seconds_;
  prometheus::Histogram* commit_latency_seconds_;
  prometheus::Histogram* batch_commands_;
  prometheus::Counter* commits_failed_;
  prometheus::Family<prometheus::Counter>* rounds_;
  prometheus::Family<prometheus::Counter>* contributions_;
  prometheus::Family<prometheus::Counter>* awards_;
  prometheus::Family<prometheus::Counter>* awards_cents_;
  prometheus::Family<prometheus::Counter>* voids_;
  prometheus::Family<prometheus::Counter>* house_funded_refunds_;
  prometheus::Family<prometheus::Counter>* dynamic_pays_carried_over_;
  prometheus::Family<prometheus::Counter>* meter_adjustments_;
  prometheus::Family<prometheus::Gauge>* meters_;
  prometheus::Gauge* pending_payouts_;
  prometheus::Gauge* oldest_pending_payout_age_;
  std::vector<prometheus::Counter*> refusals_;  // By AccessRefusal.
  prometheus::Gauge* plaintext_;
  prometheus::Counter* tls_reloads_ok_;
  prometheus::Counter* tls_reloads_failed_;
};

}  // namespace jackpot
