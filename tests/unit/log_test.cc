// The log's lines (controller/log/log.h) and what the log says of a committed batch
// (controller/daemon/commit_log.h): a level and the ids on every line, text for a person, JSON
// for a collector with every string escaped, and only the events an operator looks for.
#include "controller/log/log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/daemon/commit_log.h"

namespace jackpot {
namespace {

constexpr std::int64_t kTime = 1'796'278'800'123'456;  // 2026-12-03T06:20:00.123456Z.

struct RenderCase {
  const char* name;
  LogEvent event;
  const char* text;
  const char* json;
};

class LogRender : public ::testing::TestWithParam<RenderCase> {};

TEST_P(LogRender, TextAndJson) {
  EXPECT_EQ(render(GetParam().event, LogFormat::text, kTime), GetParam().text);
  EXPECT_EQ(render(GetParam().event, LogFormat::json, kTime), GetParam().json);
}

INSTANTIATE_TEST_SUITE_P(
    Lines, LogRender,
    ::testing::Values(
        RenderCase{
            "InfoWithoutFields",
            {LogLevel::info, "loaded 61 paytables", {}},
            "2026-12-03T06:20:00.123456Z jackpotd: loaded 61 paytables",
            R"({"time":"2026-12-03T06:20:00.123456Z","level":"info","message":"loaded 61 paytables"})"},
        RenderCase{
            "ErrorWithIds",
            {LogLevel::error,
             "progressive hit",
             {{"table", "HUH-1"}, {"round", "57", true}, {"payout", "17", true}}},
            "2026-12-03T06:20:00.123456Z jackpotd: error: progressive hit (table=HUH-1, round=57, "
            "payout=17)",
            R"({"time":"2026-12-03T06:20:00.123456Z","level":"error","message":"progressive hit","table":"HUH-1","round":57,"payout":17})"},
        RenderCase{
            "FreeTextIsQuotedAndEscaped",
            {LogLevel::warning,
             "round voided",
             {{"reason", "card \"flashed\"\nat seat 3"}, {"by", ""}}},
            R"(2026-12-03T06:20:00.123456Z jackpotd: warning: round voided (reason="card \"flashed\"\nat seat 3", by=""))",
            R"({"time":"2026-12-03T06:20:00.123456Z","level":"warning","message":"round voided","reason":"card \"flashed\"\nat seat 3","by":""})"},
        RenderCase{
            "ControlCharactersAreEscaped",
            {LogLevel::info, "a\x01z\\", {{"k", "tab\there"}}},
            // The message's control characters escaped too: no text can start a line of its own.
            R"(2026-12-03T06:20:00.123456Z jackpotd: a\u0001z\ (k="tab\there"))",
            R"({"time":"2026-12-03T06:20:00.123456Z","level":"info","message":"a\u0001z\\","k":"tab\there"})"},
        RenderCase{"Utf8IsKeptAndOtherBytesReplaced",
                   {LogLevel::error, "cannot read /tmp/caf\xc3\xa9/\xff\xfe.txt", {}},
                   "2026-12-03T06:20:00.123456Z jackpotd: error: cannot read "
                   "/tmp/caf\xc3\xa9/\xff\xfe.txt",
                   "{\"time\":\"2026-12-03T06:20:00.123456Z\",\"level\":\"error\",\"message\":"
                   "\"cannot read /tmp/caf\xc3\xa9/\\ufffd\\ufffd.txt\"}"}),
    [](const auto& test) { return std::string(test.param.name); });

Payout payout(AwardKind kind, PayoutState state) {
  Payout out;
  out.id = PayoutId(17);
  out.table = TableId("HUH-1");
  out.round = RoundId(57);
  out.seat = 3;
  out.link = LinkId("huh-royal");
  out.kind = kind;
  out.level = kind == AwardKind::fixed ? 0 : 2;
  out.amount = *Money::parse("187.25");
  out.state = state;
  return out;
}

std::vector<std::string> lines(const Records& records) {
  std::vector<std::string> out;
  for (const LogEvent& event : commit_events(records)) {
    // Each line starts with its time, the same for all here.
    std::string line = render(event, LogFormat::text, kTime);
    EXPECT_EQ(line.rfind("2026-12-03T06:20:00.123456Z ", 0), 0U) << line;
    out.push_back(line.substr(line.find(' ') + 1));
  }
  return out;
}

TEST(CommitLog, HitsAndPayoutsThatWaitAreLoggedWithTheirIds) {
  Records records;
  records.payouts = {payout(AwardKind::must_hit_by, PayoutState::pending),
                     payout(AwardKind::percent, PayoutState::paid),
                     payout(AwardKind::fixed, PayoutState::paid),  // An ordinary pay: not logged.
                     payout(AwardKind::fixed, PayoutState::pending)};
  EXPECT_THAT(
      lines(records),
      ::testing::ElementsAre(
          "jackpotd: progressive hit; the payout waits for a supervisor (table=HUH-1, round=57, "
          "seat=3, link=huh-royal, meter_level=2, payout=17, kind=must_hit_by, amount=187.25)",
          "jackpotd: progressive hit paid (table=HUH-1, round=57, seat=3, link=huh-royal, "
          "meter_level=2, payout=17, kind=percent, amount=187.25)",
          "jackpotd: payout waits for a supervisor (table=HUH-1, round=57, seat=3, "
          "link=huh-royal, payout=17, kind=fixed, amount=187.25)"));
}

TEST(CommitLog, DecisionsVoidsLinksAdjustmentsAndRebases) {
  Records records;
  Payout approved = payout(AwardKind::percent, PayoutState::paid);
  approved.approved_by = {"supervisor/ann"};
  approved.approvals_required = 1;
  Payout rejected = payout(AwardKind::fixed, PayoutState::rejected);
  rejected.rejected_by = "supervisor/bo";
  rejected.rejected_reason = "sensor fault";
  records.payouts = {approved, rejected};
  RoundRecord voided;
  voided.table = TableId("MS-1");
  voided.round = RoundId(9);
  voided.phase = RoundPhase::voided;
  voided.voided_from = RoundPhase::locked;
  voided.reason = "misdeal";
  RoundRecord settled = voided;
  settled.phase = RoundPhase::settled;  // Not logged.
  records.rounds = {settled, voided};
  records.link_statuses = {
      {LinkId("five-card-link"), LinkStatus::closed, 0, "admin/ops", "sign maintenance"}};
  MeterAdjustmentRecord adjustment;
  adjustment.link = LinkId("huh-royal");
  adjustment.level = 1;
  adjustment.amount = *Money::parse("-1.00");
  adjustment.meter_after = *Money::parse("1234.00");
  adjustment.requested_by = "admin/ops";
  adjustment.reason = "double lock";
  records.adjustments = {adjustment};
  RoundCounterRebaseRecord rebase;
  rebase.table = TableId("HUH-2");
  rebase.last_round = RoundId(5000);
  rebase.next_round = RoundId(1);
  rebase.epoch = 1;
  rebase.requested_by = "supervisor/ann";
  rebase.reason = "controller card swapped";
  records.rebases = {rebase};
  EXPECT_THAT(
      lines(records),
      ::testing::ElementsAre(
          "jackpotd: round voided (table=MS-1, round=9, from=locked, reason=misdeal)",
          "jackpotd: payout approved and paid (table=HUH-1, round=57, seat=3, link=huh-royal, "
          "meter_level=2, payout=17, kind=percent, amount=187.25, by=supervisor/ann, approvals=1, "
          "required=1)",
          "jackpotd: warning: payout rejected: the award returned to its level (table=HUH-1, "
          "round=57, seat=3, link=huh-royal, payout=17, kind=fixed, amount=187.25, "
          "by=supervisor/bo, reason=\"sensor fault\")",
          "jackpotd: warning: link closed (link=five-card-link, by=admin/ops, reason=\"sign "
          "maintenance\")",
          "jackpotd: warning: meter adjusted (link=huh-royal, meter_level=1, amount=-1.00, "
          "meter_after=1234.00, by=admin/ops, reason=\"double lock\")",
          "jackpotd: warning: round counter re-based (table=HUH-2, last_round=5000, "
          "next_round=1, epoch=1, by=supervisor/ann, reason=\"controller card swapped\")"));
}

// As JSON: the line's own "level" is the log level; ids that may pass 2^53 are strings.
TEST(CommitLog, JsonKeepsTheLogLevelKeyAndIdsAsStrings) {
  Records records;
  records.payouts = {payout(AwardKind::must_hit_by, PayoutState::pending)};
  const std::vector<LogEvent> events = commit_events(records);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(render(events[0], LogFormat::json, kTime),
            R"({"time":"2026-12-03T06:20:00.123456Z","level":"info","message":"progressive hit; )"
            R"(the payout waits for a supervisor","table":"HUH-1","round":"57","seat":3,"link":)"
            R"("huh-royal","meter_level":2,"payout":"17","kind":"must_hit_by","amount":"187.25"})");
}

TEST(CommitLog, AnOrdinaryRoundSaysNothing) {
  Records records;
  RoundRecord settled;
  settled.phase = RoundPhase::settled;
  records.rounds = {settled};
  records.payouts = {payout(AwardKind::fixed, PayoutState::paid)};
  EXPECT_THAT(commit_events(records), ::testing::IsEmpty());
}

}  // namespace
}  // namespace jackpot
