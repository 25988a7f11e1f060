#include "controller/daemon/daemon_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>

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
  awards_cents_ = &prometheus::BuildCounter()
                       .Name("jackpotd_awards_cents_total")
                       .Help("Amount of the awards decided, in cents")
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
      if (!payout.approved_by.empty() || payout.state == PayoutState::rejected) continue;
      const std::map<std::string, std::string> labels = {
          {"link", payout.link.value()}, {"kind", std::string(to_string(payout.kind))}};
      awards_->Add(labels).Increment();
      awards_cents_->Add(labels).Increment(static_cast<double>(payout.amount.cents_floor()));
    }
  }
}

void DaemonMetrics::observe_state(const std::vector<LevelMeterView>& meters,
                                  std::size_t pending_payouts,
                                  std::int64_t oldest_pending_created_us, std::int64_t now_us) {
  for (const LevelMeterView& view : meters) {
    meters_->Add({{"link", view.link.value()}, {"level", std::to_string(view.level)}})
        .Set(static_cast<double>(view.meter.micros()) / 1e6);
  }
  pending_payouts_->Set(static_cast<double>(pending_payouts));
  oldest_pending_payout_age_->Set(
      pending_payouts == 0
          ? 0.0
          : static_cast<double>(std::max<std::int64_t>(0, now_us - oldest_pending_created_us)) /
                1e6);
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
