// SupervisorService.VoidRound in the engine (issue #32): a supervisor voids a round whose lock
// hit a Must-Hit-By level, two supervisors where the hit's payout needs two, and the level's fresh
// hidden point stays as secret as a rejection leaves it.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "controller/engine/engine.h"
#include "controller/hands/paytable_loader.h"
#include "tests/support/fixed_clock.h"
#include "tests/support/payout_decisions.h"

namespace jackpot {
namespace {

using testing::FixedClock;

Money usd(const char* text) { return *Money::parse(text); }

// A Royal Flush level and a Must-Hit-By level ($100 seed, $250 amount, 30% of the wagers), hidden
// or at its amount; six seats of at most $10 keep a round's contribution within the room.
EngineConfig must_hit_by_floor(TriggerMode trigger, const char* approval, const char* dual) {
  EngineConfig config;
  LinkSettings link;
  link.meters.id = LinkId("L");
  LevelConfig royal;
  royal.level = 1;
  royal.name = Name("Royal Flush");
  royal.seed = usd("1000.00");
  royal.meter_rate_ppm = 10'000;
  LevelConfig mhb;
  mhb.level = 2;
  mhb.name = Name("Must-Hit-By");
  mhb.seed = usd("100.00");
  mhb.meter_rate_ppm = 300'000;
  mhb.must_hit_by = usd("250.00");
  mhb.trigger = trigger;
  link.meters.levels = {royal, mhb};
  link.max_wager_units = 10;
  link.approval_threshold = usd(approval);
  if (dual != nullptr) link.dual_approval_threshold = usd(dual);
  config.links.push_back(link);
  TableSettings table;
  table.id = TableId("T");
  table.seats = 6;
  table.links.push_back({LinkId("L"), "PT-BJS-HUH-5CP-12", CommunitySource::board});
  config.tables.push_back(table);
  return config;
}

const std::vector<std::string> kQuietBoard = {"2h", "7s", "9d", "Jc", "Ks"};

struct Floor {
  FixedClock clock;
  SplitMix64 random{17};
  Records records;
  std::unique_ptr<Engine> engine;

  explicit Floor(EngineConfig config) {
    auto created =
        Engine::create(std::move(config), std::move(load_paytables(embedded_paytables())).value(),
                       clock, random, records);
    if (!created) throw std::runtime_error(created.error().front());
    engine = std::move(created).value();
  }

  Money account(AccountKind kind, std::uint32_t level = 0) const {
    return engine->link(LinkId("L"))->ledger().balance({kind, level});
  }

  // Plays rounds of three $10 wagers (seats 1, 3, 5), settling quiet hands, until one's lock hits
  // the Must-Hit-By level: that round is left LOCKED and its id returned.
  std::uint64_t play_until_hit() {
    for (std::uint64_t round = next_round;; ++round) {
      Records out;
      EXPECT_TRUE(engine->open_round({TableId("T"), RoundId(round)}, out).ok());
      const auto locked = engine->lock_wagers(
          {TableId("T"),
           RoundId(round),
           {{1, LinkId("L"), 1000}, {3, LinkId("L"), 1000}, {5, LinkId("L"), 1000}}},
          out);
      EXPECT_TRUE(locked.ok());
      if (!locked->must_hit_by_hits.empty()) {
        next_round = round + 1;
        return round;
      }
      const auto settled = engine->settle_round({TableId("T"),
                                                 RoundId(round),
                                                 {{1, {"3c", "4d"}, std::nullopt},
                                                  {3, {"8h", "Qc"}, std::nullopt},
                                                  {5, {"5h", "6s"}, std::nullopt}},
                                                 kQuietBoard,
                                                 {}},
                                                out);
      EXPECT_TRUE(settled.ok()) << settled.error().message;
      EXPECT_LT(round, 100U) << "no hit in 100 rounds";
      if (round >= 100) return 0;
    }
  }

  Result<SupervisorVoidRecord, EngineFailure> supervisor_void(
      const std::string& request_id, std::uint64_t round, const std::string& supervisor,
      Records& out, const std::string& reason = "misdeal") {
    return engine->supervisor_void_round({request_id, TableId("T"), RoundId(round), reason},
                                         supervisor, out);
  }

  std::uint64_t next_round = 1;
};

// Every account of the link, and every pending payout: what a refused void must leave as it was.
std::string state_of(const Floor& floor) {
  std::string text;
  for (const auto& [account, amount] : floor.engine->link(LinkId("L"))->ledger().balances()) {
    text += to_string(account) + "=" + amount.to_string() + " ";
  }
  for (const Payout& payout : floor.engine->pending_payouts()) {
    text += "payout " + std::to_string(payout.id.value()) + " requests " +
            std::to_string(payout.rejection_requested_by.size()) + " ";
  }
  return text;
}

TEST(SupervisorVoid, VoidsAHitRoundRejectingItsPayoutAndRefundingItsContributions) {
  Floor floor(must_hit_by_floor(TriggerMode::hidden_uniform, "0.00", nullptr));
  const std::uint64_t round = floor.play_until_hit();
  ASSERT_NE(round, 0U);
  const std::vector<Payout> pending = floor.engine->pending_payouts();
  ASSERT_EQ(pending.size(), 1U);
  const Payout hit = pending[0];
  EXPECT_EQ(hit.kind, AwardKind::must_hit_by);

  // The table cannot void it; a supervisor can.
  Records out;
  const auto by_table = floor.engine->void_round({TableId("T"), RoundId(round), "misdeal"}, out);
  ASSERT_FALSE(by_table.ok());
  EXPECT_EQ(by_table.error().code, EngineError::must_hit_by_needs_supervisor);

  const auto voided = floor.supervisor_void("v-1", round, "supervisor/ann", out);
  ASSERT_TRUE(voided.ok()) << voided.error().message;
  EXPECT_EQ(voided->outcome, SupervisorVoidOutcome::voided);
  EXPECT_EQ(voided->payouts, std::vector<PayoutId>{hit.id});
  EXPECT_EQ(voided->supervisor, "supervisor/ann");
  EXPECT_EQ(voided->reversed, usd("9.30")) << "1% and 30% of three $10 wagers";
  EXPECT_FALSE(floor.engine->check_invariants());
  EXPECT_TRUE(floor.engine->pending_payouts().empty());
  EXPECT_EQ(floor.account(AccountKind::awards_payable), Money());
  // The records: the payout rejected by the supervisor, the round voided, the void journaled.
  ASSERT_EQ(out.payouts.size(), 1U);
  EXPECT_EQ(out.payouts[0].state, PayoutState::rejected);
  EXPECT_EQ(out.payouts[0].rejected_by, "supervisor/ann");
  EXPECT_EQ(out.payouts[0].rejected_reason, "misdeal");
  ASSERT_EQ(out.supervisor_voids.size(), 1U);
  EXPECT_EQ(out.supervisor_voids[0], *voided);
  ASSERT_EQ(out.rounds.size(), 1U);
  EXPECT_EQ(out.rounds[0].phase, RoundPhase::voided);
  EXPECT_EQ(out.rounds[0].reason, "misdeal");

  // Secret kept: the returned award lifts the hidden level no further than its point's range.
  const Link& link = *floor.engine->link(LinkId("L"));
  ASSERT_TRUE(link.hidden_trigger(2).has_value());
  EXPECT_LE(link.meter(2), link.hidden_trigger(2)->range_above);

  // The table sees a VOIDED round: settling is refused, its own void with the supervisor's reason
  // answers as a repeat.
  Records after;
  const auto settle = floor.engine->settle_round(
      {TableId("T"), RoundId(round), {{1, {"3c", "4d"}, std::nullopt}}, kQuietBoard, {}}, after);
  ASSERT_FALSE(settle.ok());
  EXPECT_EQ(settle.error().code, EngineError::wrong_round_state);
  const auto table_void =
      floor.engine->void_round({TableId("T"), RoundId(round), "misdeal"}, after);
  ASSERT_TRUE(table_void.ok());
  EXPECT_EQ(table_void->reversed, usd("9.30"));
  EXPECT_TRUE(after.empty());
  const auto other_reason =
      floor.engine->void_round({TableId("T"), RoundId(round), "dealer error"}, after);
  ASSERT_FALSE(other_reason.ok());
  EXPECT_EQ(other_reason.error().code, EngineError::replay_differs);

  // A repeat answers the first answer; the same id for anything else is refused.
  const auto again = floor.supervisor_void("v-1", round, "supervisor/ann", after);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *voided);
  EXPECT_TRUE(after.empty());
  const auto other = floor.supervisor_void("v-1", round, "supervisor/ann", after, "other");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, EngineError::replay_differs);
  const auto twice = floor.supervisor_void("v-2", round, "supervisor/bob", after);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().code, EngineError::wrong_round_state);
  EXPECT_TRUE(after.empty());
}

TEST(SupervisorVoid, AHitPayoutNeedingTwoSupervisorsNeedsTwoVoids) {
  Floor floor(must_hit_by_floor(TriggerMode::at_amount, "0.00", "200.00"));
  const std::uint64_t round = floor.play_until_hit();
  ASSERT_NE(round, 0U);
  const Payout hit = floor.engine->pending_payouts().at(0);
  ASSERT_EQ(hit.approvals_required, 2U);

  Records out;
  const std::string before = state_of(floor);
  const auto first = floor.supervisor_void("v-ann", round, "supervisor/ann", out);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->outcome, SupervisorVoidOutcome::requested);
  EXPECT_EQ(first->reversed, Money());
  EXPECT_EQ(first->payouts, std::vector<PayoutId>{hit.id});
  EXPECT_TRUE(out.transfers.empty()) << "a requested void moves no money";
  EXPECT_TRUE(out.rounds.empty()) << "the round stays LOCKED";
  ASSERT_EQ(out.payouts.size(), 1U);
  EXPECT_EQ(out.payouts[0].state, PayoutState::pending);
  EXPECT_EQ(out.payouts[0].rejection_requested_by, std::vector<std::string>{"supervisor/ann"});
  EXPECT_EQ(floor.engine->payout(hit.id)->rejection_requested_by,
            std::vector<std::string>{"supervisor/ann"});

  // The same supervisor again, under any spelling or request id, is not a second person.
  Records refused;
  const std::string requested = state_of(floor);
  EXPECT_NE(requested, before);
  const auto same = floor.supervisor_void("v-ann-2", round, "supervisor/ANN", refused);
  ASSERT_FALSE(same.ok());
  EXPECT_EQ(same.error().code, EngineError::already_approved);
  EXPECT_TRUE(refused.empty());
  EXPECT_EQ(state_of(floor), requested);

  const auto second = floor.supervisor_void("v-bob", round, "supervisor/bob", out);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->outcome, SupervisorVoidOutcome::voided);
  EXPECT_EQ(second->reversed, usd("9.30"));
  EXPECT_TRUE(floor.engine->pending_payouts().empty());
  EXPECT_EQ(floor.account(AccountKind::awards_payable), Money());
  EXPECT_FALSE(floor.engine->check_invariants());
  // The first void's answer stays what it was.
  const auto replay = floor.supervisor_void("v-ann", round, "supervisor/ann", refused);
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ(*replay, *first);
}

TEST(SupervisorVoid, AnApprovalAndAVoidWaitForAThirdSupervisor) {
  Floor floor(must_hit_by_floor(TriggerMode::at_amount, "0.00", "200.00"));
  const std::uint64_t round = floor.play_until_hit();
  const Payout hit = floor.engine->pending_payouts().at(0);
  Records out;
  ASSERT_TRUE(testing::approve_payout(*floor.engine, hit.id, "supervisor/ann", out));
  const auto by_approver = floor.supervisor_void("v-1", round, "supervisor/ann", out);
  ASSERT_FALSE(by_approver.ok());
  EXPECT_EQ(by_approver.error().code, EngineError::already_approved);
  const auto requested = floor.supervisor_void("v-2", round, "supervisor/bob", out);
  ASSERT_TRUE(requested.ok());
  EXPECT_EQ(requested->outcome, SupervisorVoidOutcome::requested);
  const auto voided = floor.supervisor_void("v-3", round, "supervisor/cy", out);
  ASSERT_TRUE(voided.ok());
  EXPECT_EQ(voided->outcome, SupervisorVoidOutcome::voided);
  EXPECT_FALSE(floor.engine->check_invariants());
}

TEST(SupervisorVoid, ARejectionCompletesARequestedVoidsPayoutAndTheRoundCanThenBeVoided) {
  Floor floor(must_hit_by_floor(TriggerMode::at_amount, "0.00", "200.00"));
  const std::uint64_t round = floor.play_until_hit();
  const Payout hit = floor.engine->pending_payouts().at(0);
  Records out;
  ASSERT_TRUE(floor.supervisor_void("v-1", round, "supervisor/ann", out));
  const auto rejected =
      testing::reject_payout(*floor.engine, hit.id, "supervisor/bob", "misdeal", out);
  ASSERT_TRUE(rejected.ok()) << rejected.error().message;
  EXPECT_EQ(rejected->state, PayoutState::rejected);
  // The hit's payout is back on the ledger: one supervisor voids the round.
  const auto voided = floor.supervisor_void("v-2", round, "supervisor/ann", out);
  ASSERT_TRUE(voided.ok()) << voided.error().message;
  EXPECT_EQ(voided->outcome, SupervisorVoidOutcome::voided);
  EXPECT_TRUE(voided->payouts.empty());
  EXPECT_EQ(voided->reversed, usd("9.30"));
  EXPECT_FALSE(floor.engine->check_invariants());
}

// The floor with a second link "D" beside "L", alike but for its hits needing two supervisors.
EngineConfig two_links_floor() {
  EngineConfig config = must_hit_by_floor(TriggerMode::at_amount, "0.00", nullptr);
  LinkSettings dual = config.links[0];
  dual.meters.id = LinkId("D");
  dual.dual_approval_threshold = usd("200.00");
  config.links.push_back(dual);
  config.tables[0].links.push_back({LinkId("D"), "PT-BJS-HUH-5CP-12", CommunitySource::board});
  return config;
}

// Plays $10 at seat 1 on both links until a lock hits both Must-Hit-By levels: that round is left
// LOCKED and its id returned (0 when none did in 80 rounds).
std::uint64_t play_until_both_hit(Floor& floor) {
  for (std::uint64_t id = 1; id <= 80; ++id) {
    Records out;
    EXPECT_TRUE(floor.engine->open_round({TableId("T"), RoundId(id)}, out).ok());
    const auto locked = floor.engine->lock_wagers(
        {TableId("T"), RoundId(id), {{1, LinkId("L"), 1000}, {1, LinkId("D"), 1000}}}, out);
    EXPECT_TRUE(locked.ok());
    if (!locked.ok()) return 0;
    if (!locked->must_hit_by_hits.empty()) {
      EXPECT_EQ(locked->must_hit_by_hits.size(), 2U);
      return id;
    }
    EXPECT_TRUE(
        floor.engine
            ->settle_round(
                {TableId("T"), RoundId(id), {{1, {"3c", "4d"}, std::nullopt}}, kQuietBoard, {}},
                out)
            .ok());
  }
  return 0;
}

// Two links whose Must-Hit-By levels hit in the same lock: on "L" a hit needs one supervisor, on
// "D" two. The first void rejects L's payout (its say is enough) and asks to reject D's; the
// round stays LOCKED, and its settlement shows L's hit REJECTED and D's PENDING.
TEST(SupervisorVoid, EachHitPayoutOfTheRoundIsDecidedAsItsOwnRejectionWouldBe) {
  Floor floor(two_links_floor());
  const std::uint64_t round = play_until_both_hit(floor);
  ASSERT_NE(round, 0U);
  std::map<std::string, Payout> hit;
  for (const Payout& payout : floor.engine->pending_payouts()) hit[payout.link.value()] = payout;
  ASSERT_EQ(hit.size(), 2U);
  ASSERT_EQ(hit["L"].approvals_required, 1U);
  ASSERT_EQ(hit["D"].approvals_required, 2U);

  Records out;
  const auto first = floor.supervisor_void("v-1", round, "supervisor/ann", out);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->outcome, SupervisorVoidOutcome::requested);
  EXPECT_EQ(first->rejected, std::vector<PayoutId>{hit["L"].id});
  EXPECT_EQ(first->payouts.size(), 2U);
  EXPECT_EQ(floor.engine->payout(hit["L"].id), nullptr) << "L's payout was rejected";
  ASSERT_NE(floor.engine->payout(hit["D"].id), nullptr);
  EXPECT_EQ(floor.engine->payout(hit["D"].id)->rejection_requested_by,
            std::vector<std::string>{"supervisor/ann"});
  EXPECT_FALSE(floor.engine->check_invariants());

  // One approval of D's payout does not pay it (it needs two); a second supervisor's void
  // rejects it and voids the round.
  ASSERT_TRUE(testing::approve_payout(*floor.engine, hit["D"].id, "supervisor/bob", out));
  const auto second = floor.supervisor_void("v-2", round, "supervisor/cy", out);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->outcome, SupervisorVoidOutcome::voided);
  EXPECT_EQ(second->rejected, std::vector<PayoutId>{hit["D"].id});
  EXPECT_EQ(second->reversed, usd("6.20"));  // 1% and 30% of $10 on each link.
  EXPECT_TRUE(floor.engine->pending_payouts().empty());
  EXPECT_FALSE(floor.engine->check_invariants());
}

TEST(SupervisorVoid, ASettlementAfterAFirstVoidShowsTheHitsAsTheVoidLeftThem) {
  Floor floor(two_links_floor());
  const std::uint64_t round = play_until_both_hit(floor);
  ASSERT_NE(round, 0U);
  Records out;
  ASSERT_TRUE(floor.supervisor_void("v-1", round, "supervisor/ann", out));
  const auto settled = floor.engine->settle_round(
      {TableId("T"), RoundId(round), {{1, {"3c", "4d"}, std::nullopt}}, kQuietBoard, {}}, out);
  ASSERT_TRUE(settled.ok()) << settled.error().message;
  std::map<std::string, std::optional<PayoutState>> shown;
  for (const SeatResultView& result : settled->results) {
    for (const AwardView& award : result.awards) {
      if (award.kind == AwardKind::must_hit_by) shown[award.link.value()] = award.payout_state;
    }
  }
  EXPECT_EQ(shown["L"], PayoutState::rejected);
  EXPECT_EQ(shown["D"], PayoutState::pending);
  EXPECT_FALSE(floor.engine->check_invariants());
}

TEST(SupervisorVoid, APaidHitIsRefusedAndChangesNothing) {
  // Below the approval threshold the hit is paid at once: a void cannot take it back.
  Floor floor(must_hit_by_floor(TriggerMode::at_amount, "1000.00", nullptr));
  const std::uint64_t round = floor.play_until_hit();
  ASSERT_TRUE(floor.engine->pending_payouts().empty());
  const std::string before = state_of(floor);
  Records out;
  const auto refused = floor.supervisor_void("v-1", round, "supervisor/ann", out);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, EngineError::payout_not_pending);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(state_of(floor), before);
  // Nothing was kept under the request id: after settling, the round answers as settled.
  EXPECT_TRUE(floor.engine
                  ->settle_round({TableId("T"),
                                  RoundId(round),
                                  {{1, {"3c", "4d"}, std::nullopt},
                                   {3, {"8h", "Qc"}, std::nullopt},
                                   {5, {"5h", "6s"}, std::nullopt}},
                                  kQuietBoard,
                                  {}},
                                 out)
                  .ok());
}

TEST(SupervisorVoid, BadRequestsAreRefusedInOrderAndChangeNothing) {
  Floor floor(must_hit_by_floor(TriggerMode::at_amount, "0.00", nullptr));
  const std::uint64_t round = floor.play_until_hit();
  const std::string before = state_of(floor);
  struct Case {
    std::string request_id;
    std::string table;
    std::uint64_t round;
    std::string reason;
    EngineError expected;
  };
  const std::vector<Case> cases = {
      {"", "T", round, "misdeal", EngineError::request_id_invalid},
      {std::string(65, 'x'), "T", round, "misdeal", EngineError::request_id_invalid},
      {std::string("a\0b", 3), "T", round, "misdeal", EngineError::request_id_invalid},
      {"r", "NOPE", round, "misdeal", EngineError::unknown_table},
      {"r", "T", 0, "misdeal", EngineError::round_id_out_of_range},
      {"r", "T", round + 1, "misdeal", EngineError::round_not_found},
      {"r", "T", round, " \t", EngineError::reason_missing},
      {"r", "T", round, std::string("a\0b", 3), EngineError::reason_invalid},
      {"r", "T", round, std::string(513, 'r'), EngineError::reason_invalid},
      {"r", "T", round - 1, "misdeal", EngineError::wrong_round_state},  // SETTLED.
  };
  for (const Case& c : cases) {
    Records out;
    const auto refused = floor.engine->supervisor_void_round(
        {c.request_id, TableId(c.table), RoundId(c.round), c.reason}, "supervisor/ann", out);
    ASSERT_FALSE(refused.ok()) << c.reason;
    EXPECT_EQ(refused.error().code, c.expected) << refused.error().message;
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(state_of(floor), before);
  }
}

TEST(SupervisorVoid, AnOpenRoundIsVoidedWithNothingToRefund) {
  Floor floor(must_hit_by_floor(TriggerMode::at_amount, "0.00", nullptr));
  Records out;
  ASSERT_TRUE(floor.engine->open_round({TableId("T"), RoundId(1)}, out));
  Records voiding;
  const auto voided = floor.supervisor_void("v-1", 1, "supervisor/ann", voiding);
  ASSERT_TRUE(voided.ok()) << voided.error().message;
  EXPECT_EQ(voided->outcome, SupervisorVoidOutcome::voided);
  EXPECT_EQ(voided->reversed, Money());
  EXPECT_TRUE(voiding.transfers.empty());
  ASSERT_EQ(voiding.rounds.size(), 1U);
  EXPECT_EQ(voiding.rounds[0].voided_from, RoundPhase::open);
  // The table's next round opens as after its own void.
  EXPECT_TRUE(floor.engine->open_round({TableId("T"), RoundId(2)}, out).ok());
}

TEST(SupervisorVoid, ARoundWithoutAHitIsVoidedAsTheTableWouldAndSurvivesASnapshot) {
  Floor floor(must_hit_by_floor(TriggerMode::at_amount, "0.00", nullptr));
  Records out;
  ASSERT_TRUE(floor.engine->open_round({TableId("T"), RoundId(1)}, out));
  ASSERT_TRUE(floor.engine->lock_wagers({TableId("T"), RoundId(1), {{2, LinkId("L"), 500}}}, out));
  const Money mhb_before = floor.engine->link(LinkId("L"))->meter(2);
  const auto voided = floor.supervisor_void("v-1", 1, "supervisor/ann", out);
  ASSERT_TRUE(voided.ok()) << voided.error().message;
  EXPECT_EQ(voided->outcome, SupervisorVoidOutcome::voided);
  EXPECT_EQ(voided->reversed, usd("1.55"));  // 1% and 30% of $5.
  EXPECT_EQ(floor.engine->link(LinkId("L"))->meter(2), *mhb_before.minus(usd("1.50")));
  EXPECT_FALSE(floor.engine->check_invariants());

  // A restored engine answers the void's repeat from its snapshot.
  const EngineSnapshot snapshot = floor.engine->snapshot();
  ASSERT_EQ(snapshot.supervisor_voids.size(), 1U);
  FixedClock clock;
  SplitMix64 random{3};
  auto restored = Engine::restore(must_hit_by_floor(TriggerMode::at_amount, "0.00", nullptr),
                                  std::move(load_paytables(embedded_paytables())).value(), clock,
                                  random, snapshot);
  ASSERT_TRUE(restored.ok());
  Records after;
  const auto again = (*restored)->supervisor_void_round(
      {"v-1", TableId("T"), RoundId(1), "misdeal"}, "supervisor/ann", after);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *voided);
  EXPECT_TRUE(after.empty());
}

}  // namespace
}  // namespace jackpot
