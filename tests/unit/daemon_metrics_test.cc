// The daemon's Prometheus metrics, from committed records, the floor's state and the calls:
// counted by bounded labels only (the phase a round left, where its refund came from, link,
// level, kind, the API's own method names); free text (a void's reason, a caller's made-up
// method) never becomes a label.
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
  FloorReading reading;
  reading.pending_payouts = 2;
  reading.oldest_pending_created_us = 1'000'000'000;
  reading.now_us = 1'090'500'000;
  metrics.observe_floor(reading);
  EXPECT_NE(exposition(metrics).find("jackpotd_pending_payout_oldest_age_seconds 90.5"),
            std::string::npos);
  reading.pending_payouts = 0;
  metrics.observe_floor(reading);
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

Payout payout(AwardKind kind, std::uint32_t level, const char* amount) {
  Payout out;
  out.link = LinkId("L");
  out.kind = kind;
  out.level = level;
  out.amount = *Money::parse(amount);
  return out;
}

// Awards by link and kind in currency units; progressive hits (percent, Must-Hit-By) by link,
// level and kind; an approval of a payout counted before is not counted again.
TEST(DaemonMetrics, AwardsAndHitsAreCountedOnceInCurrencyUnits) {
  DaemonMetrics metrics("test");
  Records round;
  round.payouts = {payout(AwardKind::percent, 1, "1234.56"), payout(AwardKind::fixed, 0, "10.00"),
                   payout(AwardKind::must_hit_by, 2, "187.25")};
  Records approval;
  approval.payouts = {payout(AwardKind::percent, 1, "1234.56")};
  approval.payouts[0].approved_by = {"supervisor/a"};
  metrics.observe_commit({round, approval}, 0.002, true);
  const std::string text = exposition(metrics);
  EXPECT_NE(text.find("jackpotd_awards_amount_total{kind=\"percent\",link=\"L\"} 1234.56"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("jackpotd_awards_amount_total{kind=\"fixed\",link=\"L\"} 10"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("jackpotd_hits_total{kind=\"percent\",level=\"1\",link=\"L\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("jackpotd_hits_total{kind=\"must_hit_by\",level=\"2\",link=\"L\"} 1"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("jackpotd_hits_total{kind=\"fixed\""), std::string::npos) << text;
  EXPECT_NE(text.find("jackpotd_commit_batch_commands_count 1"), std::string::npos) << text;
}

// Reserves, each link's status as one series per status, the ledger check and the database.
TEST(DaemonMetrics, FloorGaugesSayReservesLinkStatusLedgerAndDatabase) {
  DaemonMetrics metrics("test");
  FloorReading reading;
  reading.reserves = {{LinkId("L"), 1, *Money::parse("12.50")}};
  reading.links = {{LinkId("L"), LinkStatus::closed}};
  reading.ledger_balanced = false;
  metrics.observe_floor(reading);
  metrics.set_database_available(false);
  const std::string text = exposition(metrics);
  EXPECT_NE(text.find("jackpotd_reserve{level=\"1\",link=\"L\"} 12.5"), std::string::npos) << text;
  EXPECT_NE(text.find("jackpotd_link_status{link=\"L\",status=\"closed\"} 1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("jackpotd_link_status{link=\"L\",status=\"open\"} 0"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\njackpotd_ledger_balanced 0"), std::string::npos) << text;
  EXPECT_NE(text.find("\njackpotd_database_available 0"), std::string::npos) << text;
}

// Calls by the API's own service and method names and their status code; a method jackpotd
// does not serve never becomes a label value; streams are counted but not timed.
TEST(DaemonMetrics, CallsAreLabelledOnlyWithServedMethods) {
  DaemonMetrics metrics("test");
  metrics.observe_call("/jackpot.v1.TableService/OpenRound", 0, 0.003, true);
  metrics.observe_call("/jackpot.v1.TableService/OpenRound", 5, 0.001, true);
  metrics.observe_call("/jackpot.v1.TableService/WatchLinkStatus", 1, 30, false);
  metrics.observe_call("/grpc.health.v1.Health/Check", 0, 0.0001, true);
  metrics.observe_call("/jackpot.v1.TableService/MadeUp", 12, 0.0001, true);
  metrics.observe_call("/evil.Service/x{y=\"z\"}", 12, 0.0001, true);
  metrics.observe_call("not a path", 12, 0.0001, true);
  const std::string text = exposition(metrics);
  EXPECT_NE(text.find("jackpotd_grpc_calls_total{code=\"OK\",method=\"OpenRound\",service="
                      "\"jackpot.v1.TableService\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("jackpotd_grpc_calls_total{code=\"NOT_FOUND\",method=\"OpenRound\","
                      "service=\"jackpot.v1.TableService\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("jackpotd_grpc_calls_total{code=\"CANCELLED\",method=\"WatchLinkStatus\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("method=\"Check\",service=\"grpc.health.v1.Health\""), std::string::npos)
      << text;
  EXPECT_NE(text.find("jackpotd_grpc_calls_total{code=\"UNIMPLEMENTED\",method=\"unknown\","
                      "service=\"unknown\"} 3"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("MadeUp"), std::string::npos) << text;
  EXPECT_EQ(text.find("evil"), std::string::npos) << text;
  EXPECT_NE(text.find("jackpotd_grpc_call_duration_seconds_count{method=\"OpenRound\",service="
                      "\"jackpot.v1.TableService\"} 2"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("jackpotd_grpc_call_duration_seconds_count{method=\"WatchLinkStatus\""),
            std::string::npos)
      << text;
}

// Sign streams open now by transport, and the states skipped counted as they rise.
TEST(DaemonMetrics, SignStreamsAndSkippedStates) {
  DaemonMetrics metrics("test");
  metrics.observe_signs({3, 1, 10, 4});
  metrics.observe_signs({2, 1, 15, 4});
  const std::string text = exposition(metrics);
  EXPECT_NE(text.find("jackpotd_sign_streams{transport=\"grpc\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("jackpotd_sign_streams{transport=\"web\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("jackpotd_sign_states_skipped_total{transport=\"grpc\"} 15"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("jackpotd_sign_states_skipped_total{transport=\"web\"} 4"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace jackpot
