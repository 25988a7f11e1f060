// The daemon's Prometheus metrics of voids, from committed records: counted by bounded labels
// only (the phase a round left, where its refund came from); the void's reason, free text, never
// becomes a label. Rounds that kept a voided round's Dynamic Pays are counted by link.
#include "controller/daemon/daemon_metrics.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <string>
#include <vector>

namespace jackpot {
namespace {

std::string exposition(const DaemonMetrics& metrics) {
  return prometheus::TextSerializer().Serialize(metrics.registry()->Collect());
}

Records voided(RoundPhase from, std::vector<TransferKind> kinds) {
  Records records;
  RoundRecord round;
  round.round_key = 7;
  round.phase = RoundPhase::voided;
  round.reason = "misdeal: a card flashed at seat 3";
  round.voided_from = from;
  records.rounds.push_back(round);
  for (const TransferKind kind : kinds) {
    Transfer transfer;
    transfer.kind = kind;
    transfer.amount = *Money::parse("1.75");
    records.transfers.push_back({Name("L"), transfer});
  }
  return records;
}

TEST(DaemonMetrics, VoidsAreCountedByPhaseAndRefundNeverByReason) {
  DaemonMetrics metrics("test");
  Records kept;
  DrawRecord draw;
  draw.link = LinkId("L");
  draw.kind = DrawKind::dynamic_carried_over;
  kept.draws.push_back(draw);
  metrics.observe_commit({voided(RoundPhase::open, {}),
                          voided(RoundPhase::locked, {TransferKind::contribution_reversal}),
                          voided(RoundPhase::locked, {TransferKind::contribution_reversal,
                                                      TransferKind::house_funded_refund}),
                          voided(RoundPhase::locked, {TransferKind::house_funded_refund}), kept},
                         0.001, true);
  const std::string text = exposition(metrics);
  EXPECT_NE(text.find("jackpotd_voids_total{from=\"open\",refund=\"none\"} 1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("jackpotd_voids_total{from=\"locked\",refund=\"levels\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("jackpotd_voids_total{from=\"locked\",refund=\"house\"} 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("jackpotd_void_refunds_house_funded_total{link=\"L\"} 3.5"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("jackpotd_dynamic_pays_carried_over_total{link=\"L\"} 1"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("misdeal"), std::string::npos) << "a reason became a label";
}

// Adjustments are counted by link and direction; their reason, free text, never becomes a label;
// a batch that did not commit counts none.
TEST(DaemonMetrics, MeterAdjustmentsAreCountedByLinkAndDirection) {
  DaemonMetrics metrics("test");
  const auto adjusted = [](const char* amount) {
    Records records;
    MeterAdjustmentRecord adjustment;
    adjustment.link = LinkId("L");
    adjustment.level = 1;
    adjustment.amount = *Money::parse(amount);
    adjustment.reason = "sensor missed a lock at seat 4";
    records.adjustments.push_back(adjustment);
    return records;
  };
  metrics.observe_commit({adjusted("25.00"), adjusted("-1.00"), adjusted("3.00")}, 0.001, true);
  metrics.observe_commit({adjusted("7.00")}, 0.001, false);
  const std::string text = exposition(metrics);
  EXPECT_NE(text.find("jackpotd_meter_adjustments_total{direction=\"raised\",link=\"L\"} 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("jackpotd_meter_adjustments_total{direction=\"lowered\",link=\"L\"} 1"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("sensor"), std::string::npos) << text;
}

// How long the oldest pending payout has waited, for an alert on a hit left unpaid; every
// access refusal counted under its own reason, and the transport in force.
TEST(DaemonMetrics, PayoutAgeRefusalsAndTransport) {
  DaemonMetrics metrics("test");
  metrics.observe_state({}, 2, 1'000'000'000, 1'090'500'000);
  EXPECT_NE(exposition(metrics).find("jackpotd_pending_payout_oldest_age_seconds 90.5"),
            std::string::npos);
  metrics.observe_state({}, 0, 0, 1'090'500'000);
  EXPECT_NE(exposition(metrics).find("jackpotd_pending_payout_oldest_age_seconds 0\n"),
            std::string::npos);

  metrics.count_refusal(AccessRefusal::acts_for_another);
  metrics.count_refusal(AccessRefusal::acts_for_another);
  metrics.count_refusal(AccessRefusal::no_certificate);
  const std::string text = exposition(metrics);
  EXPECT_NE(text.find("jackpotd_authorization_refusals_total{reason=\"acts_for_another\"} 2"),
            std::string::npos);
  EXPECT_NE(text.find("jackpotd_authorization_refusals_total{reason=\"no_certificate\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("jackpotd_authorization_refusals_total{reason=\"role_not_allowed\"} 0"),
            std::string::npos);
  metrics.set_plaintext(true);
  EXPECT_NE(exposition(metrics).find("\njackpotd_plaintext 1"), std::string::npos);
}

}  // namespace
}  // namespace jackpot
