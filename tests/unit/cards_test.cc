#include "controller/hands/cards.h"

#include <gtest/gtest.h>

#include "controller/hands/paytable.h"

namespace jackpot {
namespace {

std::vector<Card> cards(std::initializer_list<const char*> texts) {
  std::vector<Card> parsed;
  for (const char* text : texts) parsed.push_back(*parse_card(text));
  return parsed;
}

TEST(Cards, ParseEveryRankAndSuitInEitherCase) {
  const struct {
    const char* text;
    std::uint8_t rank;
    std::uint8_t suit;
    const char* printed;
  } cases[] = {
      {"2s", 0, 0, "2s"},  {"9h", 7, 1, "9h"},  {"Td", 8, 2, "Td"},  {"10d", 8, 2, "Td"},
      {"tc", 8, 3, "Tc"},  {"jS", 9, 0, "Js"},  {"QH", 10, 1, "Qh"}, {"kd", 11, 2, "Kd"},
      {"As", 12, 0, "As"}, {"aC", 12, 3, "Ac"},
  };
  for (const auto& c : cases) {
    const auto card = parse_card(c.text);
    ASSERT_TRUE(card.ok()) << c.text << ": " << card.error().message;
    EXPECT_EQ(card->rank, c.rank) << c.text;
    EXPECT_EQ(card->suit, c.suit) << c.text;
    EXPECT_EQ(to_string(*card), c.printed);
  }
}

TEST(Cards, RefuseMalformedCardsWithAClearMessage) {
  const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {"", "'' is not a card (expected a rank and a suit, e.g. As, Td, 10h)"},
      {"A", "'A' is not a card (expected a rank and a suit, e.g. As, Td, 10h)"},
      {"10hh", "'10hh' is not a card (expected a rank and a suit, e.g. As, Td, 10h)"},
      {"1s", "'1s' has no valid rank (2-9, T or 10, J, Q, K, A)"},
      {"11s", "'11s' has no valid rank (2-9, T or 10, J, Q, K, A)"},
      {"Xs", "'Xs' has no valid rank (2-9, T or 10, J, Q, K, A)"},
      {"Ax", "'Ax' has no valid suit (s, h, d, c)"},
      {"A♠", "'A♠' is not a card (expected a rank and a suit, e.g. As, Td, 10h)"},
      {" As", "' As' has no valid rank (2-9, T or 10, J, Q, K, A)"},
  };
  for (const auto& c : cases) {
    const auto card = parse_card(c.text);
    ASSERT_FALSE(card.ok()) << c.text;
    EXPECT_EQ(card.error().message, c.message);
  }
}

TEST(Cards, ParseListsAndRefuseDuplicates) {
  const std::vector<std::string> good{"As", "Kd", "10c"};
  EXPECT_EQ(parse_cards(good, "pocket cards of seat 3")->size(), 3u);
  const std::vector<std::string> duplicate{"As", "Kd", "as"};
  EXPECT_EQ(parse_cards(duplicate, "board").error().message, "board: As appears twice");
  const std::vector<std::string> malformed{"As", "Kz"};
  EXPECT_EQ(parse_cards(malformed, "pocket cards of seat 2").error().message,
            "pocket cards of seat 2, card 2: 'Kz' has no valid suit (s, h, d, c)");
}

TEST(Cards, EachGameChecksItsCountsAndDuplicatesAcrossPocketAndBoard) {
  const auto pocket = cards({"As", "Kd"});
  const auto board = cards({"2c", "3c", "4c", "5c", "6c"});
  const auto flop = cards({"2c", "3c", "4c"});
  EXPECT_FALSE(check_cards(GameRule::heads_up_holdem, {pocket, board}));
  EXPECT_FALSE(check_cards(GameRule::seven_card_linked, {pocket, board}));
  EXPECT_FALSE(check_cards(GameRule::five_card_linked, {pocket, flop}));
  EXPECT_FALSE(check_cards(GameRule::mississippi_stud, {pocket, flop}));
  EXPECT_EQ(check_cards(GameRule::heads_up_holdem, {pocket, flop})->message,
            "Heads Up Hold'em needs 5 community cards, got 3");
  EXPECT_EQ(check_cards(GameRule::mississippi_stud, {cards({"As"}), flop})->message,
            "Mississippi Stud needs 2 pocket cards, got 1");
  EXPECT_EQ(check_cards(GameRule::high_card_flush, {pocket, {}})->message,
            "High Card Flush needs 7 player cards, got 2");
  EXPECT_EQ(check_cards(GameRule::high_card_flush,
                        {cards({"As", "Kd", "2c", "3c", "4c", "5c", "6c"}), flop})
                ->message,
            "High Card Flush needs 0 community cards, got 3");
  const auto clash = cards({"As", "4c"});
  EXPECT_EQ(check_cards(GameRule::five_card_linked, {clash, flop})->message, "4c appears twice");
}

}  // namespace
}  // namespace jackpot
