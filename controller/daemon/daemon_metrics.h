#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
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

// What the daemon reads of the floor once a second for the gauges.
struct FloorReading {
  struct Reserve {
    LinkId link;
    std::uint32_t level = 0;
    Money amount;
  };
  struct Status {
    LinkId link;
    LinkStatus status = LinkStatus::unavailable;
  };
  std::vector<LevelMeterView> meters;
  std::vector<Reserve> reserves;
  std::vector<Status> links;  // As the tables hear them (UNAVAILABLE while the database is not).
  std::size_t pending_payouts = 0;
  std::int64_t oldest_pending_created_us = 0;  // Unix microseconds; 0 when none waits.
  std::int64_t now_us = 0;
  bool ledger_balanced = true;  // Every link's ledger invariants hold (Engine::check_invariants).
};

// What the signs' streams did since the start, and how many are open (SignFeedCounts, WebSign).
struct SignReading {
  std::int64_t grpc_streams = 0;
  std::int64_t web_streams = 0;
  std::uint64_t grpc_skipped = 0;
  std::uint64_t web_skipped = 0;
};

// The daemon's metrics, named by Prometheus conventions: base units (seconds; amounts in the
// currency's units), `_total` counters, `_seconds` histograms, and bounded labels only (link,
// level, kind, phase, the API's own method names and status codes; never a table's free text).
// docs/operations.md lists them.
class DaemonMetrics {
 public:
  explicit DaemonMetrics(const std::string& version);
  ~DaemonMetrics();

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  void set_schema_version(int version);
  void set_start_time_now();
  // One commit of the group committer: its commands' records, its latency, whether it
  // committed. Rounds, contributions and awards are counted from committed records only.
  void observe_commit(const std::vector<Records>& batch, double seconds, bool ok);
  // The floor now: meters, reserves, link statuses, payouts waiting, whether the ledger balances.
  void observe_floor(const FloorReading& reading);
  // Whether jackpotd can make changes durable now (EngineHost::available()).
  void set_database_available(bool available);
  // One gRPC call at its end: its method ("/jackpot.v1.TableService/OpenRound"), its status
  // code (grpc::StatusCode), how long it took, and whether it was unary (only unary calls go into
  // the latency histogram: a stream's lifetime is not a latency). A method jackpotd does not
  // serve is counted as "unknown": a caller cannot make up label values.
  void observe_call(std::string_view method, int code, double seconds, bool unary);
  void observe_signs(const SignReading& reading);
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
  prometheus::Family<prometheus::Counter>* awards_amount_;
  prometheus::Family<prometheus::Counter>* hits_;
  prometheus::Family<prometheus::Counter>* voids_;
  prometheus::Family<prometheus::Counter>* house_funded_refunds_;
  prometheus::Family<prometheus::Counter>* dynamic_pays_carried_over_;
  prometheus::Family<prometheus::Counter>* meter_adjustments_;
  prometheus::Family<prometheus::Gauge>* meters_;
  prometheus::Family<prometheus::Gauge>* reserves_;
  prometheus::Family<prometheus::Gauge>* link_status_;
  prometheus::Gauge* ledger_balanced_;
  prometheus::Gauge* database_available_;
  prometheus::Family<prometheus::Counter>* calls_;
  prometheus::Family<prometheus::Histogram>* call_seconds_;
  // The methods jackpotd serves ("/jackpot.v1.TableService/OpenRound", ...; the last one stands
  // for any other), found once; each call finds its series without a lock or a label map, the
  // series of a method and code made at its first call.
  struct CallSeries;
  std::vector<std::unique_ptr<CallSeries>> call_series_;
  std::unordered_map<std::string_view, std::size_t> call_index_;
  std::mutex call_series_mutex_;  // Making a series.
  prometheus::Family<prometheus::Gauge>* sign_streams_;
  prometheus::Family<prometheus::Counter>* sign_skipped_;
  SignReading signs_seen_;  // What observe_signs counted so far (counters only rise).
  prometheus::Gauge* pending_payouts_;
  prometheus::Gauge* oldest_pending_payout_age_;
  std::vector<prometheus::Counter*> refusals_;  // By AccessRefusal.
  prometheus::Gauge* plaintext_;
  prometheus::Counter* tls_reloads_ok_;
  prometheus::Counter* tls_reloads_failed_;
};

}  // namespace jackpot
