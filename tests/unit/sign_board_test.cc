// The sign board (sign/sign_board.h): what the signs show after each committed command's
// records. Table-driven: each case starts from the same floor, applies a list of records and
// checks what a sign shows.
#include "sign/sign_board.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace jackpot::sign {
namespace {

Money usd(const char* text) { return *Money::parse(text); }

// Link L: level 1 "Royal Flush" (ceiling $1,000), level 2 "Must-Hit-By" by $250. Table T1 plays
// L on paytable P: file row 0 pays 100% of level 1, row 1 $500 fixed, row 2 is not shown (a
// loss), row 3 a Dynamic Pay of $50 by default with options $60..$150. Table T2 plays L too.
SignFloor floor_of_one_link() {
  SignFloor floor;
  floor.links.push_back({"L",
                         {{1, "Royal Flush", std::nullopt, usd("1000")},
                          {2, "Must-Hit-By", usd("250"), std::nullopt}}});
  TableLinkFacts link{"L", "P", {}, {}};
  link.rows.push_back({"Royal Flush", RowKind::percent, 1, 100, 0, {}, 0});
  link.rows.push_back({"Straight Flush", RowKind::fixed, 0, 0, 50000, {}, 5000});
  PaytableRowShown dynamic{"Four of a Kind", RowKind::dynamic, 0, 0, 5000, {}, 0};
  for (std::int64_t option = 1; option <= 10; ++option) {
    dynamic.option_cents.push_back(5000 + option * 1000);
  }
  link.rows.push_back(dynamic);
  link.row_of = {0, 1, static_cast<std::size_t>(-1), 2};
  floor.tables.push_back({"T1", {link}});
  floor.tables.push_back({"T2", {link}});
  return floor;
}

BoardStart start_of_one_link() {
  BoardStart start;
  start.links.push_back({LinkStatus::open, {usd("500"), usd("200")}, {std::nullopt, std::nullopt}});
  start.tables.resize(2);
  return start;
}

constexpr std::int64_t kShownUs = 30'000'000;

Transfer transfer(AccountRef debit, AccountRef credit, const char* amount) {
  Transfer made;
  made.debit = debit;
  made.credit = credit;
  made.amount = usd(amount);
  return made;
}

Records contribution(const char* link, std::uint32_t level, const char* amount) {
  Records records;
  records.transfers.push_back(
      {Name(std::string_view(link)),
       transfer(AccountRef::link(AccountKind::wagers), AccountRef::meter(level), amount)});
  return records;
}

Records round_record(const char* table, std::uint64_t key, std::uint64_t round, RoundPhase phase) {
  Records records;
  RoundRecord made;
  made.round_key = key;
  made.table = TableId(table);
  made.round = RoundId(round);
  made.phase = phase;
  records.rounds.push_back(made);
  return records;
}

Payout payout(std::uint64_t id, AwardKind kind, std::uint32_t level, const char* amount,
              std::int64_t created_us) {
  Payout made;
  made.id = PayoutId(id);
  made.table = TableId("T1");
  made.round = RoundId(7);
  made.seat = 3;
  made.link = LinkId("L");
  made.kind = kind;
  made.level = level;
  made.hand = Name(kind == AwardKind::must_hit_by ? "Must-Hit-By" : "Royal Flush");
  made.amount = usd(amount);
  made.created_us = created_us;
  return made;
}

// A royal flush on T1 taking level 1's meter of $500 and the reset to $100 from the reserve.
Records royal_hit(std::uint64_t payout_id, std::int64_t at_us) {
  Records records;
  records.transfers.push_back(
      {"L", transfer(AccountRef::meter(1), AccountRef::link(AccountKind::awards_payable), "500")});
  records.transfers.push_back({"L", transfer(AccountRef::reserve(1), AccountRef::meter(1), "100")});
  records.payouts.push_back(payout(payout_id, AwardKind::percent, 1, "500", at_us));
  return records;
}

std::int64_t meter(const SignState& state, std::uint32_t level) {
  return state.links.at(0).levels.at(level - 1).amount_cents;
}

TEST(SignBoard, StartsFromTheCommittedFloor) {
  const SignBoard board(floor_of_one_link(), start_of_one_link(), kShownUs);
  const SignState state = board.state(0, true);
  ASSERT_EQ(state.links.size(), 1u);
  EXPECT_EQ(state.links[0].link, "L");
  EXPECT_EQ(state.links[0].status, LinkShownStatus::open);
  ASSERT_EQ(state.links[0].levels.size(), 2u);
  EXPECT_EQ(state.links[0].levels[0],
            (LevelShown{1, "Royal Flush", 50000, 0, 100000, std::nullopt}));
  EXPECT_EQ(state.links[0].levels[1],
            (LevelShown{2, "Must-Hit-By", 20000, 25000, 0, std::nullopt}));
  ASSERT_EQ(state.tables.size(), 2u);
  EXPECT_EQ(state.tables[0].table, "T1");
  EXPECT_EQ(state.tables[0].round, 0u);
  ASSERT_EQ(state.tables[0].links.size(), 1u);
  EXPECT_TRUE(state.tables[0].links[0].pays.empty());
  EXPECT_TRUE(state.hits.empty());
}

TEST(SignBoard, MetersFollowTheTransfersOnMeterAccountsOnly) {
  struct Case {
    const char* what;
    std::vector<Records> records;
    std::int64_t level1_cents;
    std::int64_t level2_cents;
  };
  const auto reserve_only = [] {
    Records records;
    records.transfers.push_back(
        {"L", transfer(AccountRef::link(AccountKind::wagers), AccountRef::reserve(1), "5")});
    return records;
  };
  const auto other_link = [] { return contribution("M", 1, "5"); };
  const Case cases[] = {
      {"a contribution, shown rounded down", {contribution("L", 1, "0.123456")}, 50012, 20000},
      {"two contributions add up",
       {contribution("L", 1, "0.005"), contribution("L", 1, "0.005")},
       50001,
       20000},
      {"never above the ceiling", {contribution("L", 1, "600")}, 100000, 20000},
      {"never above the Must-Hit-By amount", {contribution("L", 2, "60")}, 50000, 25000},
      {"the reserve is not shown", {reserve_only()}, 50000, 20000},
      {"another link's transfer is not this link's", {other_link()}, 50000, 20000},
      {"an award takes the meter, the reset refills it", {royal_hit(1, 10)}, 10000, 20000},
  };
  for (const Case& c : cases) {
    SignBoard board(floor_of_one_link(), start_of_one_link(), kShownUs);
    for (const Records& records : c.records) board.apply(records);
    const SignState state = board.state(10, true);
    EXPECT_EQ(state.built_us, 10);  // What a sign is told as the snapshot's time.
    EXPECT_EQ(meter(state, 1), c.level1_cents) << c.what;
    EXPECT_EQ(meter(state, 2), c.level2_cents) << c.what;
  }
}

TEST(SignBoard, ShowsTheDynamicPaysOfTheRoundInPlayOnly) {
  const auto open_with_pays = [](const char* table, std::uint64_t key, std::uint64_t round) {
    Records records = round_record(table, key, round, RoundPhase::open);
    records.dynamic_pays.push_back({key, LinkId("L"), 3, 2});
    return records;
  };
  struct Case {
    const char* what;
    std::vector<Records> records;
    std::uint64_t t1_round;
    std::vector<DynamicPayShown> t1_pays;
  };
  const std::vector<DynamicPayShown> option2 = {{"Four of a Kind", 2, 7000}};
  const Case cases[] = {
      {"a round opens with a Dynamic Pay", {open_with_pays("T1", 11, 7)}, 7, option2},
      {"kept while locked",
       {open_with_pays("T1", 11, 7), round_record("T1", 11, 7, RoundPhase::locked)},
       7,
       option2},
      {"ended at the settlement",
       {open_with_pays("T1", 11, 7), round_record("T1", 11, 7, RoundPhase::settled)},
       7,
       {}},
      {"ended by a void",
       {open_with_pays("T1", 11, 7), round_record("T1", 11, 7, RoundPhase::voided)},
       7,
       {}},
      {"the next round without one shows none",
       {open_with_pays("T1", 11, 7), round_record("T1", 11, 7, RoundPhase::settled),
        round_record("T1", 12, 8, RoundPhase::open)},
       8,
       {}},
      {"another table's round is not this table's", {open_with_pays("T2", 11, 7)}, 0, {}},
  };
  for (const Case& c : cases) {
    SignBoard board(floor_of_one_link(), start_of_one_link(), kShownUs);
    for (const Records& records : c.records) board.apply(records);
    const SignState state = board.state(0, true);
    EXPECT_EQ(state.tables[0].round, c.t1_round) << c.what;
    EXPECT_EQ(state.tables[0].links[0].link, "L") << c.what;
    EXPECT_EQ(state.tables[0].links[0].paytable, "P") << c.what;
    EXPECT_EQ(state.tables[0].links[0].pays, c.t1_pays) << c.what;
  }
}

TEST(SignBoard, AnnouncesProgressiveHitsWithTheValueAfterTheReset) {
  SignBoard board(floor_of_one_link(), start_of_one_link(), kShownUs);
  board.apply(royal_hit(1, 1'000'000));
  SignState state = board.state(1'000'000, true);
  ASSERT_EQ(state.hits.size(), 1u);
  EXPECT_EQ(state.hits[0],
            (HitShown{"L", 1, "T1", 7, 3, "Royal Flush", 50000, 10000, 1'000'000, 1}));

  // Not hits: a fixed pay, an Envy pay, and a supervisor's approval of the payout.
  Records fixed;
  fixed.payouts.push_back(payout(2, AwardKind::fixed, 0, "500", 2'000'000));
  fixed.payouts.push_back(payout(3, AwardKind::envy, 0, "50", 2'000'000));
  board.apply(fixed);
  Records approval;
  Payout paid = payout(1, AwardKind::percent, 1, "500", 1'000'000);
  paid.state = PayoutState::paid;
  paid.approved_by = {"s"};
  approval.payouts.push_back(paid);
  approval.payout_decisions.push_back({"r1", PayoutId(1), PayoutDecision::approve, "s", "", paid});
  board.apply(approval);
  EXPECT_EQ(board.state(2'000'000, true).hits.size(), 1u);

  // A Must-Hit-By hit.
  Records must_hit;
  must_hit.transfers.push_back(
      {"L", transfer(AccountRef::meter(2), AccountRef::link(AccountKind::awards_payable), "200")});
  must_hit.payouts.push_back(payout(4, AwardKind::must_hit_by, 2, "200", 3'000'000));
  board.apply(must_hit);
  state = board.state(3'000'000, true);
  ASSERT_EQ(state.hits.size(), 2u);
  EXPECT_EQ(state.hits[1].level, 2u);
  EXPECT_EQ(state.hits[1].reset_cents, 0);

  // Each is shown for its time and then no longer.
  EXPECT_EQ(board.state(1'000'000 + kShownUs - 1, true).hits.size(), 2u);
  EXPECT_EQ(board.state(1'000'000 + kShownUs, true).hits.size(), 1u);
  EXPECT_EQ(board.state(3'000'000 + kShownUs, true).hits.size(), 0u);
}

TEST(SignBoard, ARejectedPayoutTakesItsHitOffTheSigns) {
  SignBoard board(floor_of_one_link(), start_of_one_link(), kShownUs);
  board.apply(royal_hit(1, 1'000'000));
  board.apply(royal_hit(2, 1'000'001));
  Records rejection;
  Payout rejected = payout(1, AwardKind::percent, 1, "500", 1'000'000);
  rejected.state = PayoutState::rejected;
  rejection.payouts.push_back(rejected);
  rejection.payout_decisions.push_back(
      {"r1", PayoutId(1), PayoutDecision::reject, "s", "misdeal", rejected});
  board.apply(rejection);
  const SignState state = board.state(1'000'001, true);
  ASSERT_EQ(state.hits.size(), 1u);
  EXPECT_EQ(state.hits[0].payout, 2u);
}

// The first of the two rejections a payout above the dual threshold needs only asks: the payout
// still waits, and its hit stays on the signs (#32: one supervisor took it off).
TEST(SignBoard, ARequestToRejectLeavesTheHitOnTheSigns) {
  SignBoard board(floor_of_one_link(), start_of_one_link(), kShownUs);
  board.apply(royal_hit(1, 1'000'000));
  Records request;
  Payout waiting = payout(1, AwardKind::percent, 1, "500", 1'000'000);
  waiting.approvals_required = 2;
  waiting.rejection_requested_by = {"supervisor/ann"};
  request.payouts.push_back(waiting);
  request.payout_decisions.push_back(
      {"r1", PayoutId(1), PayoutDecision::reject, "supervisor/ann", "misdeal", waiting});
  board.apply(request);
  EXPECT_EQ(board.state(1'000'001, true).hits.size(), 1u);
}

// A supervisor's void of the hit's round (SupervisorService.VoidRound) writes the payout with no
// decision record: a requested void leaves the hit shown (once, not twice), the void takes it off.
TEST(SignBoard, ASupervisorsVoidTakesTheHitOffOnlyWhenItRejectsThePayout) {
  SignBoard board(floor_of_one_link(), start_of_one_link(), kShownUs);
  board.apply(royal_hit(1, 1'000'000));
  Records requested;
  Payout waiting = payout(1, AwardKind::percent, 1, "500", 1'000'000);
  waiting.approvals_required = 2;
  waiting.rejection_requested_by = {"supervisor/ann"};
  requested.payouts.push_back(waiting);
  requested.supervisor_voids.push_back({"v1",
                                        TableId("T1"),
                                        0,
                                        RoundId(1),
                                        "misdeal",
                                        "supervisor/ann",
                                        SupervisorVoidOutcome::requested,
                                        Money(),
                                        {PayoutId(1)},
                                        {},
                                        1'000'000});
  board.apply(requested);
  EXPECT_EQ(board.state(1'000'001, true).hits.size(), 1u);
  Records voided;
  Payout rejected = waiting;
  rejected.state = PayoutState::rejected;
  rejected.rejected_by = "supervisor/bob";
  voided.payouts.push_back(rejected);
  voided.supervisor_voids.push_back({"v2",
                                     TableId("T1"),
                                     0,
                                     RoundId(1),
                                     "misdeal",
                                     "supervisor/bob",
                                     SupervisorVoidOutcome::voided,
                                     Money(),
                                     {PayoutId(1)},
                                     {PayoutId(1)},
                                     1'000'000});
  board.apply(voided);
  EXPECT_EQ(board.state(1'000'001, true).hits.size(), 0u);
}

// A batch reported failed shows nothing; after the rebuild its hit shows when its payout landed
// (its id is within the rebuilt engine's), with the level's value as rebuilt.
TEST(SignBoard, AHitOfABatchReportedFailedShowsOnceItIsKnownToHaveLanded) {
  struct Case {
    const char* what;
    std::uint64_t last_payout_id;
    std::size_t hits;
  };
  const Case cases[] = {{"landed", 7, 1}, {"lost", 6, 0}};
  for (const Case& c : cases) {
    SignBoard board(floor_of_one_link(), start_of_one_link(), kShownUs);
    board.failed(royal_hit(7, 1'000'000));
    EXPECT_EQ(board.state(1'000'000, true).hits.size(), 0u) << c.what;
    EXPECT_EQ(meter(board.state(1'000'000, true), 1), 50000) << c.what;
    BoardStart rebuilt = start_of_one_link();
    rebuilt.links[0].meters = {usd("100.00"), usd("200")};
    rebuilt.last_payout_id = c.last_payout_id;
    board.reset(rebuilt);
    const SignState state = board.state(1'000'000, true);
    ASSERT_EQ(state.hits.size(), c.hits) << c.what;
    if (c.hits == 1) {
      EXPECT_EQ(state.hits[0].reset_cents, 10000) << c.what;
    }
    board.reset(rebuilt);  // Kept aside once only.
    EXPECT_EQ(board.state(1'000'000, true).hits.size(), c.hits) << c.what;
  }
}

// A rejection in a batch reported failed that landed after all: the restart takes the hit off.
TEST(SignBoard, ARejectionThatLandedInAFailedBatchTakesTheHitOffAtTheRestart) {
  SignBoard board(floor_of_one_link(), start_of_one_link(), kShownUs);
  board.apply(royal_hit(3, 1'000'000));
  Records rejection;
  Payout rejected = payout(3, AwardKind::percent, 1, "500", 1'000'000);
  rejected.state = PayoutState::rejected;
  rejection.payouts.push_back(rejected);
  rejection.payout_decisions.push_back(
      {"r3", PayoutId(3), PayoutDecision::reject, "s", "misdeal", rejected});
  board.failed(rejection);
  EXPECT_EQ(board.state(1'000'000, true).hits.size(), 1u);  // Not known yet.
  BoardStart rebuilt = start_of_one_link();
  rebuilt.last_payout_id = 3;
  rebuilt.rejected_payouts = {3};
  board.reset(rebuilt);
  EXPECT_EQ(board.state(1'000'000, true).hits.size(), 0u);
}

TEST(SignBoard, KeepsOnlyTheLatestHits) {
  SignBoard board(floor_of_one_link(), start_of_one_link(), kShownUs);
  for (std::uint64_t i = 1; i <= SignBoard::kMaxHitsShown + 5; ++i) {
    Records records;
    records.payouts.push_back(payout(i, AwardKind::percent, 1, "1", static_cast<std::int64_t>(i)));
    board.apply(records);
  }
  const SignState state = board.state(100, true);
  ASSERT_EQ(state.hits.size(), SignBoard::kMaxHitsShown);
  EXPECT_EQ(state.hits.back().hit_us, static_cast<std::int64_t>(SignBoard::kMaxHitsShown + 5));
  EXPECT_EQ(state.hits.front().hit_us, 6);
}

TEST(SignBoard, PublishesEachHiddenTriggersCommitmentAndNeverItsPoint) {
  const auto drawn = [](std::uint8_t mark, const char* point) {
    Records records;
    DrawRecord draw;
    draw.link = LinkId("L");
    draw.level = 2;
    draw.kind = DrawKind::hidden_trigger;
    HiddenTrigger trigger;
    trigger.point = usd(point);
    trigger.salt.fill(0xAB);
    trigger.commitment.fill(mark);
    trigger.range_above = usd("200");
    trigger.range_up_to = usd("250");
    draw.trigger = trigger;
    records.draws.push_back(draw);
    return records;
  };
  SignBoard board(floor_of_one_link(), start_of_one_link(), kShownUs);
  board.apply(drawn(1, "231.17"));
  std::optional<TriggerShown> shown = board.state(0, true).links[0].levels[1].trigger;
  ASSERT_TRUE(shown);
  EXPECT_EQ(shown->commitment[0], 1);
  EXPECT_EQ(shown->above, usd("200"));
  EXPECT_EQ(shown->up_to, usd("250"));

  // The hit ends it; the point drawn with the reset publishes the next.
  Records hit;
  hit.hits.push_back({1, LinkId("L"), 2, 3, usd("231.17"), TransferId(9), 4, PayoutId(5)});
  board.apply(hit);
  EXPECT_FALSE(board.state(0, true).links[0].levels[1].trigger);
  Records hit_and_next = drawn(2, "240.00");
  hit_and_next.hits = hit.hits;
  board.apply(hit_and_next);
  shown = board.state(0, true).links[0].levels[1].trigger;
  ASSERT_TRUE(shown);
  EXPECT_EQ(shown->commitment[0], 2);
}

TEST(SignBoard, ShowsTheStatusAndUnavailableWhileTheControllerCannotRecord) {
  SignBoard board(floor_of_one_link(), start_of_one_link(), kShownUs);
  Records closed;
  closed.link_statuses.push_back({LinkId("L"), LinkStatus::closed, 0, "admin/a", "night"});
  board.apply(closed);
  EXPECT_EQ(board.state(0, true).links[0].status, LinkShownStatus::closed);
  EXPECT_EQ(board.state(0, false).links[0].status, LinkShownStatus::unavailable);
  EXPECT_EQ(meter(board.state(0, false), 1), 50000);  // The meters as last committed.
  Records opened;
  opened.link_statuses.push_back({LinkId("L"), LinkStatus::open, 0, "admin/a", "morning"});
  board.apply(opened);
  EXPECT_EQ(board.state(0, true).links[0].status, LinkShownStatus::open);
}

TEST(SignBoard, StartsAgainFromTheDatabaseAfterARecoveryAndKeepsTheHits) {
  SignBoard board(floor_of_one_link(), start_of_one_link(), kShownUs);
  board.apply(royal_hit(1, 1'000'000));
  board.apply(contribution("L", 2, "10"));
  BoardStart recovered = start_of_one_link();
  recovered.links[0].meters = {usd("100.10"), usd("205")};
  board.reset(recovered);
  const SignState state = board.state(1'000'000, true);
  EXPECT_EQ(meter(state, 1), 10010);
  EXPECT_EQ(meter(state, 2), 20500);
  EXPECT_EQ(state.hits.size(), 1u);
}

}  // namespace
}  // namespace jackpot::sign
