// decide_awards(): the award rules of a settlement, one case per rule of docs/architecture.md §5
// (the seeds' "awards in seat order", SEQUENTIAL and SPLIT, "for 1" pays, Dynamic Pay, Envy,
// Community Royal, Must-Hit-By). Each case names the rule it checks; the expected awards are
// written out as an auditor would read them.
#include "controller/engine/award_rules.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace jackpot {
namespace {

Money dollars(std::string_view text) { return Money::parse(text).value(); }

PaytableRow row(HandEvent hand, const char* label, PayKind kind) {
  PaytableRow made;
  made.hand = hand;
  made.label = Name(label);
  made.kind = kind;
  return made;
}
PaytableRow percent_row(HandEvent hand, const char* label, std::uint32_t level,
                        std::uint32_t percent, std::optional<Money> envy = std::nullopt) {
  PaytableRow made = row(hand, label, PayKind::percent);
  made.level = level;
  made.percent = percent;
  made.envy = envy;
  return made;
}
PaytableRow fixed_row(HandEvent hand, const char* label, Money amount,
                      std::optional<Money> envy = std::nullopt) {
  PaytableRow made = row(hand, label, PayKind::fixed);
  made.amount = amount;
  made.envy = envy;
  return made;
}

// A paytable with every kind of row, in rank order; printed for a $1 wager unless said.
Paytable test_paytable(Money printed_base = dollars("1.00")) {
  Paytable paytable;
  paytable.id = Name("TEST-01");
  paytable.base_wager = printed_base;
  PaytableRow full_house = row(HandEvent::full_house, "Full House", PayKind::dynamic);
  full_house.amount = dollars("100.00");
  for (std::size_t i = 0; i < full_house.options.size(); ++i) {
    full_house.options[i] = dollars("100.00").times(static_cast<std::int64_t>(i + 2)).value();
  }
  PaytableRow must_hit_by = row(HandEvent::must_hit_by, "Must-Hit-By", PayKind::must_hit_by);
  must_hit_by.level = 2;
  must_hit_by.amount = dollars("5000.00");
  PaytableRow two_pair = row(HandEvent::two_pair, "Two Pair", PayKind::loss);
  two_pair.envy = dollars("1.00");  // Envy printed on a LOSS row never pays.
  paytable.rows = {
      percent_row(HandEvent::royal_flush_suit_specific, "Royal Flush (Suit Specific)", 1, 100),
      percent_row(HandEvent::royal_flush, "Royal Flush", 1, 100, dollars("500.00")),
      percent_row(HandEvent::community_royal_flush, "Community Royal Flush", 3, 100),
      percent_row(HandEvent::straight_flush, "Straight Flush", 1, 10, dollars("50.00")),
      fixed_row(HandEvent::four_of_a_kind, "Four of a Kind", dollars("500.00")),
      full_house,
      fixed_row(HandEvent::flush, "Flush", dollars("3.33")),
      fixed_row(HandEvent::straight, "Straight", Money()),
      fixed_row(HandEvent::three_of_a_kind, "Three of a Kind", dollars("5.00"), dollars("0.01")),
      must_hit_by,
      two_pair,
  };
  return paytable;
}

std::size_t row_index(const Paytable& paytable, std::string_view label) {
  for (std::size_t i = 0; i < paytable.rows.size(); ++i) {
    if (paytable.rows[i].label == label) return i;
  }
  ADD_FAILURE() << "no row " << label;
  return 0;
}

// "seat 5 PERCENT Royal Flush: 100% of level 1", "seat 3 FIXED Four of a Kind: 2500.00", ...
std::string describe(const AwardDecision& award) {
  std::string text = "seat " + std::to_string(award.seat) + " ";
  switch (award.kind) {
    case AwardKind::percent:
      text += "PERCENT " + award.hand + ": " + std::to_string(award.percent) + "% of level " +
              std::to_string(award.level);
      if (award.shared_by > 1) text += ", shared by " + std::to_string(award.shared_by);
      return text;
    case AwardKind::fixed:
      return text + "FIXED " + award.hand + ": " + award.amount.to_string();
    case AwardKind::dynamic:
      return text + "DYNAMIC " + award.hand + ": " + award.amount.to_string();
    case AwardKind::envy:
      return text + "ENVY " + award.hand + " of seat " + std::to_string(award.from_seat) + ": " +
             award.amount.to_string();
    case AwardKind::must_hit_by:
      return text + "MUST_HIT_BY " + award.hand + " level " + std::to_string(award.level) + ": " +
             award.amount.to_string() + " (payout " + std::to_string(award.payout) + ")";
  }
  return text;
}

struct Seat {
  std::uint32_t seat;
  std::int64_t units;
  const char* hand;  // A row's label, or nullptr: the hand is on no row.
};

struct Case {
  const char* rule;
  std::vector<Seat> seats;  // Lowest seat first, as the engine passes them.
  std::vector<std::string> expected;
  HitPolicy policy = HitPolicy::sequential;
  Money link_base = dollars("1.00");
  Money printed_base = dollars("1.00");
  std::vector<std::pair<std::string, std::uint32_t>> dynamic = {};  // (row label, option)
  std::vector<MustHitByWin> must_hit_by = {};
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"awards apply in seat order, starting with the player farthest to the dealer's right "
       "(the highest seat)",
       {{2, 1, "Four of a Kind"}, {5, 1, "Straight Flush"}, {6, 1, nullptr}},
       {"seat 5 PERCENT Straight Flush: 10% of level 1", "seat 2 FIXED Four of a Kind: 500.00",
        "seat 6 ENVY Straight Flush of seat 5: 50.00",
        "seat 2 ENVY Straight Flush of seat 5: 50.00"}},
      {"SEQUENTIAL: a second 100% hit on a level in one round wins the meter the first one's "
       "reset left, so each is its own award, highest seat first",
       {{1, 1, "Royal Flush"}, {3, 1, "Royal Flush"}},
       {"seat 3 PERCENT Royal Flush: 100% of level 1",
        "seat 1 PERCENT Royal Flush: 100% of level 1", "seat 1 ENVY Royal Flush of seat 3: 500.00",
        "seat 3 ENVY Royal Flush of seat 1: 500.00"}},
      {"SPLIT: 100% hits on one level in one round share the meter in one split, decided at the "
       "highest of those seats; a hit below 100% stays sequential",
       {{1, 1, "Royal Flush"},
        {2, 1, "Straight Flush"},
        {3, 1, "Royal Flush"},
        {4, 1, "Royal Flush"}},
       {"seat 4 PERCENT Royal Flush: 100% of level 1, shared by 3",
        "seat 3 PERCENT Royal Flush: 100% of level 1, shared by 3",
        "seat 1 PERCENT Royal Flush: 100% of level 1, shared by 3",
        "seat 2 PERCENT Straight Flush: 10% of level 1",
        "seat 3 ENVY Royal Flush of seat 4: 500.00", "seat 2 ENVY Royal Flush of seat 4: 500.00",
        "seat 1 ENVY Royal Flush of seat 4: 500.00", "seat 4 ENVY Royal Flush of seat 3: 500.00",
        "seat 2 ENVY Royal Flush of seat 3: 500.00", "seat 1 ENVY Royal Flush of seat 3: 500.00",
        "seat 4 ENVY Straight Flush of seat 2: 50.00",
        "seat 3 ENVY Straight Flush of seat 2: 50.00",
        "seat 1 ENVY Straight Flush of seat 2: 50.00", "seat 4 ENVY Royal Flush of seat 1: 500.00",
        "seat 3 ENVY Royal Flush of seat 1: 500.00", "seat 2 ENVY Royal Flush of seat 1: 500.00"},
       HitPolicy::split},
      {"SPLIT: hits below 100% on one level stay sequential",
       {{1, 1, "Straight Flush"}, {2, 1, "Straight Flush"}},
       {"seat 2 PERCENT Straight Flush: 10% of level 1",
        "seat 1 PERCENT Straight Flush: 10% of level 1",
        "seat 1 ENVY Straight Flush of seat 2: 50.00",
        "seat 2 ENVY Straight Flush of seat 1: 50.00"},
       HitPolicy::split},
      {"SPLIT: a single 100% hit takes the whole meter",
       {{1, 1, nullptr}, {2, 1, "Royal Flush"}},
       {"seat 2 PERCENT Royal Flush: 100% of level 1", "seat 1 ENVY Royal Flush of seat 2: 500.00"},
       HitPolicy::split},
      {"fixed pays are \"for 1\": the printed pay per base wager the seat locked (units x the "
       "link's base wager per $1)",
       {{1, 5, "Four of a Kind"}, {2, 3, "Four of a Kind"}},
       {"seat 2 FIXED Four of a Kind: 750.00", "seat 1 FIXED Four of a Kind: 1250.00"},
       HitPolicy::sequential,
       dollars("0.50")},
      {"a fixed pay is floored to the cent: the tray pays whole cents",
       {{1, 1, "Flush"}},
       {"seat 1 FIXED Flush: 0.83"},
       HitPolicy::sequential,
       dollars("0.25")},
      {"Dynamic Pay: a selected hand pays its selected option; an unselected one its printed pay",
       {{1, 1, "Full House"}},
       {"seat 1 DYNAMIC Full House: 400.00"},
       HitPolicy::sequential,
       dollars("1.00"),
       dollars("1.00"),
       {{"Full House", 3}}},
      {"Dynamic Pay: a DYNAMIC row the round did not select pays its printed default",
       {{1, 2, "Full House"}},
       {"seat 1 DYNAMIC Full House: 200.00"}},
      {"Envy: each winning row that carries it pays every other wagering seat on the link, "
       "whatever that seat's own hand, by the link's base wager / $1",
       {{1, 1, nullptr}, {2, 4, "Royal Flush"}, {3, 1, "Four of a Kind"}},
       {"seat 3 FIXED Four of a Kind: 1000.00", "seat 2 PERCENT Royal Flush: 100% of level 1",
        "seat 3 ENVY Royal Flush of seat 2: 1000.00", "seat 1 ENVY Royal Flush of seat 2: 1000.00"},
       HitPolicy::sequential,
       dollars("2.00")},
      {"Envy printed for a $5 wager (PMG-02) scales by the link's base wager / $5",
       {{1, 1, "Royal Flush"}, {2, 1, nullptr}},
       {"seat 1 PERCENT Royal Flush: 100% of level 1", "seat 2 ENVY Royal Flush of seat 1: 100.00"},
       HitPolicy::sequential,
       dollars("1.00"),
       dollars("5.00")},
      {"a LOSS row is the hand and pays nothing, and never triggers Envy; a row paying 0 awards "
       "nothing",
       {{1, 1, "Two Pair"}, {2, 1, "Straight"}, {3, 1, nullptr}},
       {}},
      {"Community Royal Flush: where the paytable lists it, a board royal is that row for every "
       "wagering seat; at 100% each seat's hit wins the meter in seat order",
       {{1, 1, "Community Royal Flush"}, {2, 1, "Community Royal Flush"}},
       {"seat 2 PERCENT Community Royal Flush: 100% of level 3",
        "seat 1 PERCENT Community Royal Flush: 100% of level 3"}},
      {"Community Royal Flush under SPLIT: the seats share the level's meter",
       {{1, 1, "Community Royal Flush"}, {2, 1, "Community Royal Flush"}},
       {"seat 2 PERCENT Community Royal Flush: 100% of level 3, shared by 2",
        "seat 1 PERCENT Community Royal Flush: 100% of level 3, shared by 2"},
       HitPolicy::split},
      {"Must-Hit-By: the lock's draw won the level; its win is shown with the seat's awards, "
       "after the hands' awards, whatever the seat's hand",
       {{1, 1, "Four of a Kind"}, {2, 1, nullptr}},
       {"seat 1 FIXED Four of a Kind: 500.00",
        "seat 2 MUST_HIT_BY Must-Hit-By level 2: 5000.00 (payout 7)"},
       HitPolicy::sequential,
       dollars("1.00"),
       dollars("1.00"),
       {},
       {{2, 2, dollars("5000.00"), PayoutId(7)}}},
      {"a fixed pay is floored to the cent, never rounded up",
       {{1, 3, "Flush"}},
       {"seat 1 FIXED Flush: 2.49"},
       HitPolicy::sequential,
       dollars("0.25")},
      {"fixed pays are \"for 1\" whatever base the paytable prints its Envy for (PMG-02)",
       {{1, 1, "Four of a Kind"}},
       {"seat 1 FIXED Four of a Kind: 500.00"},
       HitPolicy::sequential,
       dollars("1.00"),
       dollars("5.00")},
      {"SPLIT: the seats sharing a level's meter each keep their own hand",
       {{1, 1, "Royal Flush"}, {2, 1, "Royal Flush (Suit Specific)"}},
       {"seat 2 PERCENT Royal Flush (Suit Specific): 100% of level 1, shared by 2",
        "seat 1 PERCENT Royal Flush: 100% of level 1, shared by 2",
        "seat 2 ENVY Royal Flush of seat 1: 500.00"},
       HitPolicy::split},
      {"SPLIT: each level's 100% hits are shared out on their own level",
       {{1, 1, "Community Royal Flush"},
        {2, 1, "Royal Flush (Suit Specific)"},
        {3, 1, "Community Royal Flush"},
        {4, 1, "Royal Flush (Suit Specific)"}},
       {"seat 4 PERCENT Royal Flush (Suit Specific): 100% of level 1, shared by 2",
        "seat 2 PERCENT Royal Flush (Suit Specific): 100% of level 1, shared by 2",
        "seat 3 PERCENT Community Royal Flush: 100% of level 3, shared by 2",
        "seat 1 PERCENT Community Royal Flush: 100% of level 3, shared by 2"},
       HitPolicy::split},
      {"a winner above a SPLIT group is paid first, then the group, then those below it",
       {{1, 1, "Royal Flush"}, {2, 1, "Four of a Kind"}, {3, 1, "Royal Flush"}, {4, 1, "Flush"}},
       {"seat 4 FIXED Flush: 3.33", "seat 3 PERCENT Royal Flush: 100% of level 1, shared by 2",
        "seat 1 PERCENT Royal Flush: 100% of level 1, shared by 2",
        "seat 2 FIXED Four of a Kind: 500.00", "seat 4 ENVY Royal Flush of seat 3: 500.00",
        "seat 2 ENVY Royal Flush of seat 3: 500.00", "seat 1 ENVY Royal Flush of seat 3: 500.00",
        "seat 4 ENVY Royal Flush of seat 1: 500.00", "seat 3 ENVY Royal Flush of seat 1: 500.00",
        "seat 2 ENVY Royal Flush of seat 1: 500.00"},
       HitPolicy::split},
      {"Envy from a FIXED row; a selected DYNAMIC row pays its option per unit the seat locked",
       {{1, 3, "Full House"}, {2, 1, "Three of a Kind"}},
       {"seat 2 FIXED Three of a Kind: 5.00", "seat 1 DYNAMIC Full House: 3300.00",
        "seat 1 ENVY Three of a Kind of seat 2: 0.01"},
       HitPolicy::sequential,
       dollars("1.00"),
       dollars("1.00"),
       {{"Full House", 10}}},
      {"Must-Hit-By: several levels won at one lock are shown in the order drawn",
       {{1, 1, nullptr}, {2, 1, nullptr}},
       {"seat 2 MUST_HIT_BY Must-Hit-By level 3: 250.00 (payout 4)",
        "seat 1 MUST_HIT_BY Must-Hit-By level 2: 5000.00 (payout 5)"},
       HitPolicy::sequential,
       dollars("1.00"),
       dollars("1.00"),
       {},
       {{2, 3, dollars("250.00"), PayoutId(4)}, {1, 2, dollars("5000.00"), PayoutId(5)}}},
      {"Envy floored to zero cents pays nothing",
       {{1, 1, "Three of a Kind"}, {2, 1, nullptr}},
       {"seat 1 FIXED Three of a Kind: 0.25"},
       HitPolicy::sequential,
       dollars("0.05")},
  };
  return all;
}

TEST(AwardRules, EachRuleOfTheSeedsDecidesTheAwardsInTheirOrder) {
  for (const Case& rule : cases()) {
    SCOPED_TRACE(rule.rule);
    const Paytable paytable = test_paytable(rule.printed_base);
    std::vector<SeatRow> seats;
    for (const Seat& seat : rule.seats) {
      seats.push_back({seat.seat, seat.units,
                       seat.hand ? std::optional(row_index(paytable, seat.hand)) : std::nullopt});
    }
    std::vector<std::pair<std::size_t, std::uint32_t>> dynamic;
    for (const auto& [label, option] : rule.dynamic) {
      dynamic.emplace_back(row_index(paytable, label), option);
    }
    const auto decided =
        decide_awards({&paytable, rule.link_base, rule.policy, seats, dynamic, rule.must_hit_by});
    ASSERT_TRUE(decided.ok());
    std::vector<std::string> described;
    for (const AwardDecision& award : *decided) described.push_back(describe(award));
    EXPECT_EQ(described, rule.expected);
  }
}

// docs/architecture.md §5a: "Two supervisors are needed strictly above dual_approval_threshold;
// one at or above approval_threshold; below it a payout is paid at once."
TEST(AwardRules, APayoutNeedsTheApprovalsItsAmountCallsFor) {
  LinkSettings link;
  link.approval_threshold = dollars("1000.00");
  struct Approvals {
    const char* amount;
    std::optional<Money> dual;
    std::uint32_t approvals;
  };
  const std::vector<Approvals> table = {
      {"999.99", std::nullopt, 0},        {"1000.00", std::nullopt, 1},
      {"1000000.00", std::nullopt, 1},    {"999.99", dollars("5000.00"), 0},
      {"5000.00", dollars("5000.00"), 1}, {"5000.01", dollars("5000.00"), 2},
      {"1000.00", dollars("1000.00"), 1}, {"1000.01", dollars("1000.00"), 2},
  };
  for (const Approvals& row : table) {
    link.dual_approval_threshold = row.dual;
    EXPECT_EQ(approvals_required(link, dollars(row.amount)), row.approvals)
        << row.amount << " with dual threshold "
        << (row.dual ? row.dual->to_string() : std::string("none"));
  }
}

TEST(AwardRules, AnEnvyPastTheMoneyRangeIsRefusedWhenASeatWouldReceiveIt) {
  const Paytable paytable = test_paytable(Money::from_micros(1));
  const std::vector<SeatRow> two_seats = {{1, 1, row_index(paytable, "Royal Flush")}, {2, 1, {}}};
  const auto refused =
      decide_awards({&paytable, dollars("1000000.00"), HitPolicy::sequential, two_seats, {}, {}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(), LinkError::overflow);
  // Alone on the link, the winner's Envy pays nobody and is never computed.
  const std::vector<SeatRow> alone = {{1, 1, row_index(paytable, "Royal Flush")}};
  const auto decided =
      decide_awards({&paytable, dollars("1000000.00"), HitPolicy::sequential, alone, {}, {}});
  ASSERT_TRUE(decided.ok());
  EXPECT_EQ(decided->size(), 1U);
}

TEST(AwardRules, APayPastTheMoneyRangeIsRefusedNotWrapped) {
  const Paytable paytable = test_paytable();
  const std::vector<SeatRow> huge_stake = {
      {1, std::numeric_limits<std::int64_t>::max() / 2, row_index(paytable, "Four of a Kind")}};
  const auto decided =
      decide_awards({&paytable, dollars("1000.00"), HitPolicy::sequential, huge_stake, {}, {}});
  ASSERT_FALSE(decided.ok());
  EXPECT_EQ(decided.error(), LinkError::overflow);
}

}  // namespace
// The Dynamic Pay carry-over rule (§5a), every last phase a new round can follow, with and
// without a wager on the link.
TEST(AwardRules, ADynamicPaySelectionStandsUntilAWageredRoundSettles) {
  struct Case {
    RoundPhase last;
    bool wagered;
    DynamicCarry carry;
  };
  for (const Case& c : {Case{RoundPhase::settled, true, DynamicCarry::draw},
                        Case{RoundPhase::settled, false, DynamicCarry::after_unwagered_round},
                        Case{RoundPhase::voided, true, DynamicCarry::after_void},
                        Case{RoundPhase::voided, false, DynamicCarry::after_void}}) {
    EXPECT_EQ(dynamic_pays_carry(c.last, c.wagered), c.carry)
        << "phase " << static_cast<int>(c.last) << " wagered " << c.wagered;
  }
}

}  // namespace jackpot
