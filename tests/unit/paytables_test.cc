// Every shipped paytable loads; every row is reached by some hand; the hand just below the
// lowest row loses; malformed paytables are refused with file:line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <sstream>

#include "controller/hands/paytable.h"
#include "controller/hands/paytable_loader.h"

namespace jackpot {
namespace {

using ::testing::HasSubstr;

// Hands named by what they are, as seven cards (Heads Up Hold'em and Seven-Card Stud Linked
// split them 2 + 5 with the flop first; High Card Flush takes all seven as the player's) and as
// five (Five-Card Linked and Mississippi Stud split them 2 + 3). Several per event, so that a row
// below a more specific row (a royal that is not flopped, not on the board) is reachable.
struct Candidate {
  const char* what;
  const char* cards;
};

const Candidate kSevenCardHands[] = {
    {"flopped royal in spades", "As Ks Qs Js Ts 2d 3c"},
    {"flopped royal in hearts", "Ah Kh Qh Jh Th 2d 3c"},
    {"flopped straight flush", "9h 8h 7h 6h 5h 2d 3c"},
    {"royal on the turn", "Ah Kh Qh Jh 2c Th 3d"},
    {"royal in spades on the turn", "As Ks Qs Js 2c Ts 3d"},
    {"board royal", "2c 3d Ah Kh Qh Jh Th"},
    {"straight flush on the river", "9h 8h 7h 6h 2c 3d 5h"},
    {"run of 7", "2h 3h 4h 5h 6h 7h 8h"},
    {"suited 9 to ace", "9h Th Jh Qh Kh Ah 2c"},
    {"run of 6 from the ace", "Ah 2h 3h 4h 5h 6h 8c"},
    {"run of 6", "8h 9h Th Jh Qh Kh 2c"},
    {"run of 5", "2h 3h 4h 5h 6h 8c 9d"},
    {"run of 4", "2h 3h 4h 5h 7c 8d 9s"},
    {"run of 3", "2h 3h 4h 6c 7d 9s Jc"},
    {"four of a kind", "9h 9d 9s 9c 2d 5h Kc"},
    {"full house", "9h 9d 9s 5c 2d 5h Kc"},
    {"flush", "2h 7h 9h Jh 3c Kh 4d"},
    {"straight", "9h 8d 7s 6c 2h 5d Kc"},
    {"three of a kind", "9h 9d 9s 5c 2d 7h Kc"},
    {"two pair", "9h 9d 5s 5c 2d 7h Kc"},
    {"pair", "9h 9d 5s 4c 2d 7h Kc"},
    {"high card, runs of two", "2h 3h 5c 6c 8d 9d Js"},
};

const Candidate kFiveCardHands[] = {
    {"royal in spades", "As Ks Qs Js Ts"}, {"royal in hearts", "Ah Kh Qh Jh Th"},
    {"straight flush", "9h 8h 7h 6h 5h"},  {"run of 4", "9h 8h 7h 6h 2c"},
    {"four of a kind", "9h 9d 9s 9c 2d"},  {"full house", "9h 9d 9s 5c 5d"},
    {"flush", "2h 7h 9h Jh Kh"},           {"four-card flush", "2h 7h 9h Jh Kc"},
    {"straight", "9h 8d 7s 6c 5d"},        {"three of a kind", "9h 9d 9s 5c 2d"},
    {"two pair", "9h 9d 5s 5c 2d"},        {"pair", "9h 9d 5s 4c 2d"},
    {"high card", "9h 8d 5s 4c Jd"},
};

// The hand one category below each event, for "a hand just below the lowest row loses".
const std::map<HandEvent, const char*> kJustBelow = {
    {HandEvent::flush, "straight"},
    {HandEvent::full_house, "flush"},
    {HandEvent::four_of_a_kind, "full house"},
    {HandEvent::straight, "three of a kind"},
    {HandEvent::three_of_a_kind, "two pair"},
    {HandEvent::two_pair, "pair"},
    {HandEvent::straight_flush_run_3, "high card, runs of two"},
    {HandEvent::flush_4, "straight"},
};

std::vector<Card> parse(const char* text) {
  std::istringstream words(text);
  std::vector<Card> cards;
  for (std::string word; words >> word;) cards.push_back(*parse_card(word));
  return cards;
}

std::span<const Candidate> candidates_for(GameRule rule) {
  const CardCounts counts = card_counts(rule);
  if (counts.pocket + counts.community == 7) return kSevenCardHands;
  return kFiveCardHands;
}

std::optional<std::size_t> resolve_candidate(const Paytable& paytable, const Candidate& hand) {
  const std::vector<Card> cards = parse(hand.cards);
  const std::size_t pocket = card_counts(paytable.rule).pocket;
  const SeatCards seat{std::span(cards).first(pocket), std::span(cards).subspan(pocket)};
  const auto resolved = resolve_cards(paytable, seat, RoundContext{});
  EXPECT_TRUE(resolved.ok()) << hand.what << ": " << resolved.error().message;
  return resolved.ok() ? *resolved : std::nullopt;
}

std::string cards_text_for_test(const std::vector<Card>& cards) {
  std::string text;
  for (const Card card : cards) text += to_string(card) + " ";
  return text;
}

std::vector<Paytable> shipped() {
  auto loaded = load_paytables(embedded_paytables());
  if (!loaded) {
    for (const auto& error : loaded.error()) ADD_FAILURE() << error.message;
    return {};
  }
  return std::move(loaded).value();
}

TEST(Paytables, AllSixtyOneShippedPaytablesLoad) {
  const auto paytables = shipped();
  EXPECT_EQ(paytables.size(), 61u);
  std::size_t rows = 0;
  for (const auto& paytable : paytables) rows += paytable.rows.size();
  EXPECT_EQ(rows, 399u);
}

TEST(Paytables, EveryRowIsReachedBySomeHand) {
  for (const Paytable& paytable : shipped()) {
    for (std::size_t row = 0; row < paytable.rows.size(); ++row) {
      if (paytable.rows[row].hand == HandEvent::must_hit_by) continue;  // Won by a draw.
      bool reached = false;
      for (const Candidate& hand : candidates_for(paytable.rule)) {
        reached = reached || resolve_candidate(paytable, hand) == row;
      }
      EXPECT_TRUE(reached) << paytable.id << " row " << row << " (" << paytable.rows[row].label
                           << ") is reached by no hand";
    }
  }
}

// The candidate hands of the paytable's rule, then `deals` random hands of its size.
std::vector<std::vector<Card>> candidates_and_deals(GameRule rule, int deals,
                                                    std::mt19937_64& shuffle) {
  std::vector<Card> deck;
  for (std::uint8_t rank = 0; rank <= kAce; ++rank) {
    for (std::uint8_t suit = 0; suit < 4; ++suit) deck.push_back(Card{rank, suit});
  }
  const CardCounts counts = card_counts(rule);
  std::vector<std::vector<Card>> hands;
  for (const Candidate& hand : candidates_for(rule)) hands.push_back(parse(hand.cards));
  for (int deal = 0; deal < deals; ++deal) {
    std::shuffle(deck.begin(), deck.end(), shuffle);
    hands.emplace_back(
        deck.begin(), deck.begin() + static_cast<std::ptrdiff_t>(counts.pocket + counts.community));
  }
  return hands;
}

// Evaluation skips the facts no row of the paytable reads; every hand must resolve as it does
// with all of them, in either suit of the suit-specific rows.
TEST(Paytables, SkippingFactsNoRowReadsResolvesEveryHandAlike) {
  std::mt19937_64 shuffle(11);
  std::size_t narrowed = 0;
  for (const Paytable& paytable : shipped()) {
    narrowed += paytable.facts_needed != facts::kAll;
    const CardCounts counts = card_counts(paytable.rule);
    for (const auto& cards : candidates_and_deals(paytable.rule, 3000, shuffle)) {
      const SeatCards seat{std::span(cards).first(counts.pocket),
                           std::span(cards).subspan(counts.pocket)};
      for (const Suit suit : {Suit::spades, Suit::hearts}) {
        const RoundContext context{suit};
        EXPECT_EQ(resolve(paytable, evaluate(paytable.rule, seat, paytable.facts_needed), context),
                  resolve(paytable, evaluate(paytable.rule, seat), context))
            << paytable.id << ": " << cards_text_for_test(cards);
        // As settlement evaluates: the pocket as a mask, rank categories only among `reaching`.
        const HandFacts narrowed_facts = evaluate(paytable.rule, mask_of(seat.pocket),
                                                  community_cards(paytable.rule, seat.community),
                                                  paytable.facts_needed, paytable.reaching);
        EXPECT_EQ(resolve(paytable, narrowed_facts, context),
                  resolve(paytable, evaluate(paytable.rule, seat), context))
            << paytable.id << ": " << cards_text_for_test(cards);
      }
    }
  }
  // Most paytables read few of the extra facts: the comparison above is not all-with-all.
  EXPECT_GT(narrowed, 40u);
}

// The first row the facts qualify for, by walking every row: what resolve() must answer.
std::optional<std::size_t> walk_rows(const Paytable& paytable, const HandFacts& facts,
                                     const RoundContext& context) {
  for (std::size_t row = 0; row < paytable.rows.size(); ++row) {
    if (qualifies(paytable, paytable.rows[row].hand, facts, context)) return row;
  }
  return std::nullopt;
}

// resolve() turns away hands that hold none of the categories any row needs without walking the
// rows; every dealt and keyed hand must resolve as the full walk does.
TEST(Paytables, TurningAwayHandsWithoutARowsCategoryLosesNoWinner) {
  std::mt19937_64 shuffle(12);
  std::size_t shortcut = 0;
  std::size_t turned_away = 0;
  for (const Paytable& paytable : shipped()) {
    shortcut += paytable.reaching != 0xFFFF;
    const CardCounts counts = card_counts(paytable.rule);
    const auto hands = candidates_and_deals(paytable.rule, 3000, shuffle);
    for (const Suit suit : {Suit::spades, Suit::hearts}) {
      const RoundContext context{suit};
      for (const auto& cards : hands) {
        const SeatCards seat{std::span(cards).first(counts.pocket),
                             std::span(cards).subspan(counts.pocket)};
        const HandFacts facts = evaluate(paytable.rule, seat, paytable.facts_needed);
        const auto expected = walk_rows(paytable, facts, context);
        EXPECT_EQ(resolve(paytable, facts, context), expected)
            << paytable.id << ": " << cards_text_for_test(cards);
        turned_away += (facts.categories & paytable.reaching) == 0 && !expected;
      }
      for (std::uint8_t event = 0; event < kHandEventCount; ++event) {
        const HandFacts facts = keyed_facts(static_cast<HandEvent>(event), suit);
        EXPECT_EQ(resolve(paytable, facts, context), walk_rows(paytable, facts, context))
            << paytable.id << ": keyed " << to_string(static_cast<HandEvent>(event));
      }
    }
  }
  // The shortcut applies to most paytables and turns most dealt hands away.
  EXPECT_GT(shortcut, 30u);
  EXPECT_GT(turned_away, 100'000u);
}

// A keyed hand resolves like dealt cards: to its own row, or where the paytable lacks that row,
// to the row the cards would reach (a royal on 5CL-05 is its Straight Flush).
TEST(Paytables, KeyedHandsResolveToTheirOwnRow) {
  for (const Paytable& paytable : shipped()) {
    for (std::size_t row = 0; row < paytable.rows.size(); ++row) {
      const HandEvent event = paytable.rows[row].hand;
      if (event == HandEvent::must_hit_by) continue;
      EXPECT_EQ(resolve(paytable, keyed_facts(event, Suit::spades), RoundContext{}), row)
          << paytable.id << " row " << row << " (" << paytable.rows[row].label << ")";
    }
  }
  const auto paytables = shipped();
  for (const Paytable& paytable : paytables) {
    if (paytable.id != "PT-BJS-5CL-05") continue;
    const auto row = resolve(paytable, keyed_facts(HandEvent::royal_flush, Suit::spades), {});
    ASSERT_TRUE(row.has_value());
    EXPECT_EQ(paytable.rows[*row].label, "Straight Flush");
  }
}

TEST(Paytables, TheHandJustBelowTheLowestRowLoses) {
  for (const Paytable& paytable : shipped()) {
    const HandEvent lowest = paytable.rows.back().hand;
    if (lowest == HandEvent::straight_flush_run_1) {
      // High Card Flush: every hand is at least a one-card run; nothing lies below.
      for (const Candidate& hand : candidates_for(paytable.rule)) {
        EXPECT_TRUE(resolve_candidate(paytable, hand).has_value()) << paytable.id;
      }
      continue;
    }
    const auto below = kJustBelow.find(lowest);
    ASSERT_NE(below, kJustBelow.end()) << paytable.id << ": no hand below " << to_string(lowest);
    bool found = false;
    for (const Candidate& hand : candidates_for(paytable.rule)) {
      if (std::string_view(hand.what) != below->second) continue;
      found = true;
      EXPECT_EQ(resolve_candidate(paytable, hand), std::nullopt)
          << paytable.id << ": " << hand.what << " should lose";
    }
    EXPECT_TRUE(found) << paytable.id << ": no candidate named " << below->second;
  }
}

const Paytable& find(const std::vector<Paytable>& paytables, std::string_view id) {
  for (const Paytable& paytable : paytables) {
    if (paytable.id == id) return paytable;
  }
  ADD_FAILURE() << "no paytable " << id;
  return paytables.front();
}

std::string resolved_label(const Paytable& paytable, const char* cards, RoundContext context = {}) {
  const std::vector<Card> parsed = parse(cards);
  const std::size_t pocket = card_counts(paytable.rule).pocket;
  const auto row = resolve_cards(
      paytable, {std::span(parsed).first(pocket), std::span(parsed).subspan(pocket)}, context);
  if (!row) return "error: " + row.error().message;
  return *row ? paytable.rows[**row].label : "loses";
}

TEST(Paytables, RulesOfTheSeedsAsRead) {
  const auto paytables = shipped();
  // 5CP-06: Royal Flush 5% ranks above Community Royal $3000; a board royal is Community for
  // every seat, a royal made with the pocket cards is Royal Flush.
  const Paytable& huh6 = find(paytables, "PT-BJS-HUH-5CP-06");
  EXPECT_EQ(resolved_label(huh6, "2c 3d Ah Kh Qh Jh Th"), "Community Royal Flush");
  EXPECT_EQ(resolved_label(huh6, "Ah Kh Qh Jh 2c Th 3d"), "Royal Flush");
  // The suit of the suit-specific row is a link setting.
  const Paytable& huh1 = find(paytables, "PT-BJS-HUH-5CP-01");
  EXPECT_EQ(resolved_label(huh1, "Ah Kh Qh Jh Th 2d 3c"), "Flopped Royal Flush");
  EXPECT_EQ(resolved_label(huh1, "Ah Kh Qh Jh Th 2d 3c", {Suit::hearts}),
            "Flopped Royal Flush (Suit Specific)");
  // 5CL-05 has no Royal Flush row: a royal pays as the Straight Flush.
  EXPECT_EQ(resolved_label(find(paytables, "PT-BJS-5CL-05"), "As Ks Qs Js Ts"), "Straight Flush");
  // Only the highest-ranking hand counts: a royal on 5CL-01 is not also paid as anything else.
  EXPECT_EQ(resolved_label(find(paytables, "PT-BJS-5CL-01"), "As Ks Qs Js Ts"), "Royal Flush");
  // Two Pair on 5CL-01 is the hand and pays nothing (LOSS); a pair has no row.
  const Paytable& five1 = find(paytables, "PT-BJS-5CL-01");
  EXPECT_EQ(resolved_label(five1, "9h 9d 5s 5c 2d"), "Two Pair");
  EXPECT_EQ(five1.rows.back().kind, PayKind::loss);
  // High Card Flush paytable 3: a suited 9-A is the top row; another six-card run the second.
  const Paytable& hcf3 = find(paytables, "HCF-PROG-PAYTABLE-3");
  EXPECT_EQ(resolved_label(hcf3, "9h Th Jh Qh Kh Ah 2c"), hcf3.rows[0].label);
  EXPECT_EQ(resolved_label(hcf3, "Ah 2h 3h 4h 5h 6h 8c"), hcf3.rows[1].label);
  // Paytable 1 has no 9-A rule: the same cards are a six-card run.
  const Paytable& hcf1 = find(paytables, "HCF-PROG-PAYTABLE-1");
  EXPECT_EQ(resolved_label(hcf1, "9h Th Jh Qh Kh Ah 2c"), "6-Card Straight Flush");
  // Bad cards are refused, not evaluated.
  EXPECT_EQ(resolved_label(huh1, "Ah Kh Qh Jh Th 2d Ah"), "error: Ah appears twice");
}

std::string load_error(const std::string& text) {
  const auto loaded = load_paytable(text, "bad.textproto");
  return loaded.ok() ? "<loaded>" : loaded.error().message;
}

const char* kGoodHead =
    "id: \"T-1\"\n"
    "game: HUH_PROGRESSIVE\n"
    "base_wager: \"1.00\"\n";

TEST(PaytableLoader, NamesFileAndLineOfWhatIsWrong) {
  EXPECT_EQ(load_error(std::string(kGoodHead) +
                       "rows { hand: ROYAL_FLUSH label: \"Royal Flush\" percent { percent: 100 "
                       "level: 1 } }\n"),
            "<loaded>");
  EXPECT_THAT(load_error(std::string(kGoodHead) + "rows { hand: ROYAL_FLUSHH label: \"x\" }\n"),
              HasSubstr("bad.textproto:4:27: Unknown enumeration value of \"ROYAL_FLUSHH\""));
  EXPECT_THAT(load_error(std::string(kGoodHead) + "rows { colour: 1 }\n"),
              HasSubstr("bad.textproto:4:14: Message type \"jackpot.config.v1.Row\" has no field "
                        "named \"colour\""));
  EXPECT_EQ(
      load_error(std::string(kGoodHead) +
                 "rows { hand: FLUSH label: \"Flush\" fixed { amount: \"5.00\" } }\n"
                 "rows { hand: FULL_HOUSE label: \"Full House\" fixed { amount: \"5.00\" } }\n"
                 "rows { hand: FLUSH label: \"Flush\" fixed { amount: \"5.00\" } }\n"),
      "bad.textproto:6:1: duplicate row for FLUSH (first at line 4)");
  EXPECT_EQ(load_error(std::string(kGoodHead) + "rows { hand: ROYAL_FLUSH label: \"Royal Flush\"\n"
                                                "  percent { percent: 100 } }\n"),
            "bad.textproto:5:3: ROYAL_FLUSH: percent without a level");
  EXPECT_EQ(load_error(std::string(kGoodHead) +
                       "dynamic_selection { min_selected: 1 max_selected: 1 }\n"
                       "rows { hand: FLUSH label: \"Flush\"\n"
                       "  dynamic { default_amount: \"1.00\" options: [\"2.00\", \"3.00\"] } }\n"),
            "bad.textproto:6:3: FLUSH: a dynamic row needs ten options, has 2");
  EXPECT_EQ(load_error(std::string(kGoodHead) +
                       "rows { hand: FLUSH label: \"Flush\" fixed { amount: \"5.001\" } }\n"),
            "bad.textproto:4:35: FLUSH: amount '5.001' must be a whole number of cents >= 0");
  EXPECT_EQ(load_error("id: \"T-2\"\ngame: MS_PROGRESSIVE\nbase_wager: \"1.00\"\n"
                       "rows { hand: COMMUNITY_ROYAL_FLUSH label: \"x\" loss {} }\n"),
            "bad.textproto:4:1: COMMUNITY_ROYAL_FLUSH cannot happen in Mississippi Stud");
  EXPECT_EQ(load_error("game: MS_PROGRESSIVE\nbase_wager: \"1.00\"\n"),
            "bad.textproto:1:1: the paytable has no id");
  EXPECT_EQ(load_error("id: \"T-3\"\nbase_wager: \"1.00\"\n"),
            "bad.textproto:1:1: the paytable has no game");
  EXPECT_EQ(load_error("id: \"T-3\"\ngame: HCF_PROGRESSIVE\nbase_wager: \"0\"\n"),
            "bad.textproto:3:1: base_wager '0' must be a positive amount in cents");
  EXPECT_EQ(
      load_error(std::string(kGoodHead) +
                 "rows { hand: ROYAL_FLUSH label: \"RF\" percent { percent: 100 level: 2 } }\n"
                 "rows { hand: MUST_HIT_BY label: \"MHB\"\n"
                 "  must_hit_by { amount: \"250.00\" level: 2 } }\n"),
      "bad.textproto:5:1: level 2 of a Must-Hit-By row must be its own meter");
  EXPECT_EQ(load_error(std::string(kGoodHead) +
                       "rows { hand: FLUSH label: \"Flush\"\n"
                       "  dynamic { default_amount: \"1.00\" options: [\"2\", \"3\", \"4\", \"5\", "
                       "\"6\", \"7\", \"8\", \"9\", \"10\", \"11\"] } }\n"),
            "bad.textproto:1:1: DYNAMIC rows need a dynamic_selection");
}

TEST(PaytableLoader, RefusesTwoPaytablesWithOneId) {
  const std::string text =
      std::string(kGoodHead) + "rows { hand: FLUSH label: \"Flush\" fixed { amount: \"5.00\" } }\n";
  const auto loaded = load_paytables({{"a.textproto", text}, {"b.textproto", text}});
  ASSERT_FALSE(loaded.ok());
  ASSERT_EQ(loaded.error().size(), 1u);
  EXPECT_EQ(loaded.error()[0].message,
            "b.textproto:1:1: paytable id T-1 is already used by a.textproto");
}

TEST(HandEvents, NamesRoundTrip) {
  for (std::uint8_t value = 1; value <= kHandEventCount; ++value) {
    const auto event = static_cast<HandEvent>(value);
    EXPECT_EQ(hand_event_named(to_string(event)), event);
  }
  EXPECT_EQ(hand_event_named("NOT_A_HAND"), std::nullopt);
}

}  // namespace
}  // namespace jackpot
