#include "controller/daemon/daemon_metrics.h"

#include <google/protobuf/descriptor.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <string>

#include "jackpot/v1/admin.pb.h"
#include "jackpot/v1/sign.pb.h"
#include "jackpot/v1/supervisor.pb.h"
#include "jackpot/v1/table.pb.h"

namespace jackpot {

namespace {

// grpc::StatusCode's names, by value.
constexpr std::array<const char*, 17> kStatusCodes = {
    "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
    "DATA_LOSS", "UNAUTHENTICATED"};

}  // namespace

struct DaemonMetrics::CallSeries {
  std::string path;  // "/jackpot.v1.TableService/OpenRound"; empty for "any other".
  std::string service;
  std::string method;
  std::array<std::atomic<prometheus::Counter*>, kStatusCodes.size()> by_code{};
  std::atomic<prometheus::Histogram*> seconds{nullptr};
};

DaemonMetrics::~DaemonMetrics() = default;

namespace {

// Every method jackpotd serves: the API's generated services and health's and reflection's.
std::vector<std::pair<std::string, std::string>> served_methods() {
  std::vector<std::pair<std::string, std::string>> methods = {
      {"grpc.health.v1.Health", "Check"},
      {"grpc.health.v1.Health", "Watch"},
      {"grpc.reflection.v1alpha.ServerReflection", "ServerReflectionInfo"},
  };
  // Each API file through one of its messages: that links the file in and builds its
  // descriptors (a lookup by name in the generated pool found nothing in the sanitizer build's
  // unit tests, where nothing else had named the file).
  for (const google::protobuf::FileDescriptor* file :
       {jackpot::v1::OpenRoundRequest::descriptor()->file(),
        jackpot::v1::ListMetersRequest::descriptor()->file(),
        jackpot::v1::ApprovePayoutRequest::descriptor()->file(),
        jackpot::v1::WatchMetersRequest::descriptor()->file()}) {
    for (int s = 0; s < file->service_count(); ++s) {
      const google::protobuf::ServiceDescriptor* service = file->service(s);
      for (int i = 0; i < service->method_count(); ++i) {
        methods.emplace_back(service->full_name(), service->method(i)->name());
      }
    }
  }
  return methods;
}

}  // namespace

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
  rounds_ = &prometheus::BuildCounter()
                 .Name("jackpotd_rounds_total")
                 .Help("Round phases made durable, by phase")
                 .Register(*registry_);
  contributions_ = &prometheus::BuildCounter()
                        .Name("jackpotd_contributions_total")
                        .Help("Contributions to meters and reserves, in currency units")
                        .Register(*registry_);
  awards_ = &prometheus::BuildCounter()
                 .Name("jackpotd_awards_total")
                 .Help("Awards decided (one payout each), by link and kind")
                 .Register(*registry_);
  awards_amount_ = &prometheus::BuildCounter()
                        .Name("jackpotd_awards_amount_total")
                        .Help("Amount of the awards decided, in currency units, by link and kind")
                        .Register(*registry_);
  hits_ = &prometheus::BuildCounter()
               .Name("jackpotd_hits_total")
               .Help(
                   "Progressive hits (awards paid from a level's meter: percent, must_hit_by), "
                   "by link, level and kind")
               .Register(*registry_);
  // Labels are bounded sets only: the void's reason is free text and stays in the journal.
  voids_ = &prometheus::BuildCounter()
                .Name("jackpotd_voids_total")
                .Help(
                    "Rounds voided, by the phase they left (open, locked) and where the refund "
                    "came from (none, levels, house: an award had paid part of it out)")
                .Register(*registry_);
  house_funded_refunds_ =
      &prometheus::BuildCounter()
           .Name("jackpotd_void_refunds_house_funded_total")
           .Help(
               "Refunds of voided rounds' contributions that an award had already paid out, "
               "funded by the house (seed_funding), in currency units")
           .Register(*registry_);
  dynamic_pays_carried_over_ =
      &prometheus::BuildCounter()
           .Name("jackpotd_dynamic_pays_carried_over_total")
           .Help(
               "Rounds that kept the Dynamic Pay selection of the table's voided round instead "
               "of drawing one, by link")
           .Register(*registry_);
  // The reason is free text and stays in the journal; the labels are bounded.
  meter_adjustments_ =
      &prometheus::BuildCounter()
           .Name("jackpotd_meter_adjustments_total")
           .Help(
               "Operators' meter adjustments made durable, by link and direction (raised, "
               "lowered)")
           .Register(*registry_);
  meters_ = &prometheus::BuildGauge()
                 .Name("jackpotd_meter")
                 .Help("Each level's meter, in currency units")
                 .Register(*registry_);
  reserves_ = &prometheus::BuildGauge()
                   .Name("jackpotd_reserve")
                   .Help("Each level's hidden reserve (funds its next reset), in currency units")
                   .Register(*registry_);
  link_status_ = &prometheus::BuildGauge()
                      .Name("jackpotd_link_status")
                      .Help(
                          "1 for each link's status as its tables hear it (open, closed, "
                          "unavailable), 0 for the others")
                      .Register(*registry_);
  ledger_balanced_ = &prometheus::BuildGauge()
                          .Name("jackpotd_ledger_balanced")
                          .Help(
                              "1 while every link's ledger balances (double entry, meters within "
                              "ceilings and Must-Hit-By amounts), 0 if one does not")
                          .Register(*registry_)
                          .Add({});
  ledger_balanced_->Set(1);
  database_available_ = &prometheus::BuildGauge()
                             .Name("jackpotd_database_available")
                             .Help(
                                 "1 while jackpotd can make changes durable in PostgreSQL, 0 "
                                 "while a commit failed or is late (the tables get UNAVAILABLE)")
                             .Register(*registry_)
                             .Add({});
  calls_ = &prometheus::BuildCounter()
                .Name("jackpotd_grpc_calls_total")
                .Help(
                    "gRPC calls ended, by service, method and status code (refusals are the "
                    "codes other than OK)")
                .Register(*registry_);
  call_seconds_ = &prometheus::BuildHistogram()
                       .Name("jackpotd_grpc_call_duration_seconds")
                       .Help(
                           "Time from a unary call's arrival to its answer, by service and "
                           "method: a round command waits for its batch's commit")
                       .Register(*registry_);
  sign_streams_ = &prometheus::BuildGauge()
                       .Name("jackpotd_sign_streams")
                       .Help("Signs watching now, by transport (grpc, web)")
                       .Register(*registry_);
  sign_skipped_ = &prometheus::BuildCounter()
                       .Name("jackpotd_sign_states_skipped_total")
                       .Help(
                           "Sign states a sign never got because a newer one superseded them "
                           "before it was sent (the pace, or a sign slower than the feed), by "
                           "transport")
                       .Register(*registry_);
  for (const char* transport : {"grpc", "web"}) {
    sign_streams_->Add({{"transport", transport}});
    sign_skipped_->Add({{"transport", transport}});
  }
  auto& refusals = prometheus::BuildCounter()
                       .Name("jackpotd_authorization_refusals_total")
                       .Help(
                           "Calls refused before any handler ran or as a table acting for "
                           "another, by reason (access_rules.h)")
                       .Register(*registry_);
  for (const AccessRefusal refusal : kAccessRefusals) {
    refusals_.push_back(&refusals.Add({{"reason", std::string(to_string(refusal))}}));
  }
  plaintext_ = &prometheus::BuildGauge()
                    .Name("jackpotd_plaintext")
                    .Help(
                        "1 while the gRPC port serves plaintext (development: callers are not "
                        "authenticated), 0 with mutual TLS")
                    .Register(*registry_)
                    .Add({});
  auto& reloads = prometheus::BuildCounter()
                      .Name("jackpotd_tls_reloads_total")
                      .Help("Re-reads of the TLS files on SIGHUP, by result (ok, failed)")
                      .Register(*registry_);
  tls_reloads_ok_ = &reloads.Add({{"result", "ok"}});
  tls_reloads_failed_ = &reloads.Add({{"result", "failed"}});
  pending_payouts_ = &prometheus::BuildGauge()
                          .Name("jackpotd_pending_payouts")
                          .Help("Payouts waiting for a supervisor")
                          .Register(*registry_)
                          .Add({});
  oldest_pending_payout_age_ =
      &prometheus::BuildGauge()
           .Name("jackpotd_pending_payout_oldest_age_seconds")
           .Help(
               "How long the oldest payout waiting for a supervisor has waited (0 when none "
               "waits): an alert when a hit is left unpaid")
           .Register(*registry_)
           .Add({});
  start_time_seconds_ = &prometheus::BuildGauge()
                             .Name("jackpotd_start_time_seconds")
                             .Help("Unix time at which the daemon started serving")
                             .Register(*registry_)
                             .Add({});
  // The served methods, once: observe_call reads this table without a lock.
  for (const auto& [service, method] : served_methods()) {
    auto series = std::make_unique<CallSeries>();
    series->path = "/" + service + "/" + method;
    series->service = service;
    series->method = method;
    call_series_.push_back(std::move(series));
  }
  auto other = std::make_unique<CallSeries>();
  other->service = "unknown";
  other->method = "unknown";
  call_series_.push_back(std::move(other));
  for (std::size_t i = 0; i + 1 < call_series_.size(); ++i) {
    call_index_.emplace(call_series_[i]->path, i);
  }
}

void DaemonMetrics::set_schema_version(int version) {
  schema_version_->Set(static_cast<double>(version));
}

void DaemonMetrics::observe_commit(const std::vector<Records>& batch, double seconds, bool ok) {
  if (!ok) {
    commits_failed_->Increment();
    return;
  }
  commit_latency_seconds_->Observe(seconds);
  batch_commands_->Observe(static_cast<double>(batch.size()));
  for (const Records& records : batch) {
    bool house_funded = false;
    bool reversed = false;
    for (const TransferRecord& record : records.transfers) {
      const Transfer& t = record.transfer;
      if (t.kind == TransferKind::house_funded_refund) {
        house_funded = true;
        house_funded_refunds_->Add({{"link", record.link.str()}})
            .Increment(static_cast<double>(t.amount.micros()) / 1e6);
      }
      reversed |= t.kind == TransferKind::contribution_reversal;
    }
    for (const RoundRecord& round : records.rounds) {
      rounds_->Add({{"phase", std::string(to_string(round.phase))}}).Increment();
      if (round.phase == RoundPhase::voided) {
        voids_
            ->Add({{"from", std::string(to_string(round.voided_from))},
                   {"refund", house_funded ? "house"
                              : reversed   ? "levels"
                                           : "none"}})
            .Increment();
      }
    }
    for (const DrawRecord& draw : records.draws) {
      if (draw.kind == DrawKind::dynamic_carried_over) {
        dynamic_pays_carried_over_->Add({{"link", draw.link.value()}}).Increment();
      }
    }
    for (const TransferRecord& record : records.transfers) {
      const Transfer& t = record.transfer;
      if (t.kind == TransferKind::contribution || t.kind == TransferKind::contribution_reversal) {
        const double sign = t.kind == TransferKind::contribution ? 1 : -1;
        // A counter only rises: reversals are counted on their own series.
        contributions_
            ->Add(
                {{"link", record.link.str()}, {"direction", sign > 0 ? "contributed" : "reversed"}})
            .Increment(static_cast<double>(t.amount.micros()) / 1e6);
      }
    }
    for (const MeterAdjustmentRecord& adjustment : records.adjustments) {
      meter_adjustments_
          ->Add({{"link", adjustment.link.value()},
                 {"direction", adjustment.amount.micros() > 0 ? "raised" : "lowered"}})
          .Increment();
    }
    for (const Payout& payout : records.payouts) {
      if (!payout_created(payout)) continue;
      const std::map<std::string, std::string> labels = {
          {"link", payout.link.value()}, {"kind", std::string(to_string(payout.kind))}};
      awards_->Add(labels).Increment();
      awards_amount_->Add(labels).Increment(static_cast<double>(payout.amount.micros()) / 1e6);
      if (payout.kind == AwardKind::percent || payout.kind == AwardKind::must_hit_by) {
        hits_
            ->Add({{"link", payout.link.value()},
                   {"level", std::to_string(payout.level)},
                   {"kind", std::string(to_string(payout.kind))}})
            .Increment();
      }
    }
  }
}

void DaemonMetrics::observe_floor(const FloorReading& reading) {
  for (const LevelMeterView& view : reading.meters) {
    meters_->Add({{"link", view.link.value()}, {"level", std::to_string(view.level)}})
        .Set(static_cast<double>(view.meter.micros()) / 1e6);
  }
  for (const FloorReading::Reserve& reserve : reading.reserves) {
    reserves_->Add({{"link", reserve.link.value()}, {"level", std::to_string(reserve.level)}})
        .Set(static_cast<double>(reserve.amount.micros()) / 1e6);
  }
  for (const FloorReading::Status& link : reading.links) {
    for (const LinkStatus status :
         {LinkStatus::open, LinkStatus::closed, LinkStatus::unavailable}) {
      link_status_->Add({{"link", link.link.value()}, {"status", std::string(to_string(status))}})
          .Set(link.status == status ? 1 : 0);
    }
  }
  pending_payouts_->Set(static_cast<double>(reading.pending_payouts));
  oldest_pending_payout_age_->Set(
      reading.pending_payouts == 0 ? 0.0
                                   : static_cast<double>(std::max<std::int64_t>(
                                         0, reading.now_us - reading.oldest_pending_created_us)) /
                                         1e6);
  ledger_balanced_->Set(reading.ledger_balanced ? 1 : 0);
}

void DaemonMetrics::set_database_available(bool available) {
  database_available_->Set(available ? 1 : 0);
}

void DaemonMetrics::observe_call(std::string_view path, int code, double seconds, bool unary) {
  const auto found = call_index_.find(path);
  CallSeries& series =
      *call_series_[found == call_index_.end() ? call_series_.size() - 1 : found->second];
  const std::size_t index = static_cast<std::size_t>(code) < kStatusCodes.size()
                                ? static_cast<std::size_t>(code)
                                : 2;  // UNKNOWN.
  prometheus::Counter* counter = series.by_code[index].load(std::memory_order_acquire);
  if (counter == nullptr) {
    const std::lock_guard lock(call_series_mutex_);
    counter = &calls_->Add(
        {{"service", series.service}, {"method", series.method}, {"code", kStatusCodes[index]}});
    series.by_code[index].store(counter, std::memory_order_release);
  }
  counter->Increment();
  if (!unary) return;
  prometheus::Histogram* histogram = series.seconds.load(std::memory_order_acquire);
  if (histogram == nullptr) {
    const std::lock_guard lock(call_series_mutex_);
    histogram = &call_seconds_->Add(
        {{"service", series.service}, {"method", series.method}},
        prometheus::Histogram::BucketBoundaries{0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1,
                                                0.2, 0.5, 1, 2, 5});
    series.seconds.store(histogram, std::memory_order_release);
  }
  histogram->Observe(seconds);
}

void DaemonMetrics::observe_signs(const SignReading& reading) {
  sign_streams_->Add({{"transport", "grpc"}}).Set(static_cast<double>(reading.grpc_streams));
  sign_streams_->Add({{"transport", "web"}}).Set(static_cast<double>(reading.web_streams));
  // The feed's counts only rise; the counters take what came since the last reading.
  sign_skipped_->Add({{"transport", "grpc"}})
      .Increment(static_cast<double>(reading.grpc_skipped - signs_seen_.grpc_skipped));
  sign_skipped_->Add({{"transport", "web"}})
      .Increment(static_cast<double>(reading.web_skipped - signs_seen_.web_skipped));
  signs_seen_ = reading;
}

void DaemonMetrics::set_start_time_now() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  start_time_seconds_->Set(std::chrono::duration<double>(now).count());
}

}  // namespace jackpot

namespace jackpot {

void DaemonMetrics::count_refusal(AccessRefusal refusal) {
  for (std::size_t index = 0; index < kAccessRefusals.size(); ++index) {
    if (kAccessRefusals[index] == refusal) refusals_[index]->Increment();
  }
}

void DaemonMetrics::set_plaintext(bool plaintext) { plaintext_->Set(plaintext ? 1 : 0); }

void DaemonMetrics::count_tls_reload(bool ok) {
  (ok ? tls_reloads_ok_ : tls_reloads_failed_)->Increment();
}

}  // namespace jackpot
