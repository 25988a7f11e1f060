#include "controller/hands/hand_eval.h"

#include <gtest/gtest.h>

#include <array>
#include <random>

namespace jackpot {
namespace {

CardMask hand(std::initializer_list<const char*> texts) {
  CardMask mask = 0;
  for (const char* text : texts) mask |= card_bit(*parse_card(text));
  return mask;
}

TEST(HandEval, NamesTheBestCategoryOfSevenCards) {
  const struct {
    std::initializer_list<const char*> cards;
    Category category;
  } cases[] = {
      {{"As", "Ks", "Qs", "Js", "Ts", "2d", "3c"}, Category::royal_flush},
      {{"Ah", "2h", "3h", "4h", "5h", "Kd", "Kc"}, Category::straight_flush},  // Wheel.
      {{"9d", "Td", "Jd", "Qd", "Kd", "Ad", "2c"}, Category::royal_flush},
      {{"9c", "9d", "9h", "9s", "Ac", "Ad", "Ah"}, Category::four_of_a_kind},
      {{"9c", "9d", "9h", "Ac", "Ad", "Ah", "2s"}, Category::full_house},  // Two trips.
      {{"9c", "9d", "9h", "Ac", "Ad", "2s", "2h"}, Category::full_house},
      {{"2h", "7h", "9h", "Jh", "Kh", "Ah", "3c"}, Category::flush},
      {{"Ac", "2d", "3h", "4s", "5c", "9d", "Kh"}, Category::straight},   // Wheel.
      {{"Tc", "Jd", "Qh", "Ks", "Ac", "2d", "3h"}, Category::straight},   // Broadway.
      {{"Qc", "Kd", "Ah", "2s", "3c", "7d", "8h"}, Category::high_card},  // No wrap-around.
      {{"9c", "9d", "9h", "Ac", "Kd", "2s", "4h"}, Category::three_of_a_kind},
      {{"9c", "9d", "5h", "5c", "Kd", "Ks", "4h"}, Category::two_pair},
      {{"9c", "9d", "5h", "6c", "Kd", "As", "4h"}, Category::pair},
      {{"9c", "Jd", "5h", "6c", "Kd", "As", "4h"}, Category::high_card},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(best_category(hand(c.cards)), c.category) << "cards " << *c.cards.begin() << "...";
  }
}

TEST(HandEval, FindsRunsFlushCountsAndRoyalSuits) {
  EXPECT_EQ(longest_straight_flush_run(hand({"2h", "3h", "4h", "5h", "6h", "7h", "8h"})), 7u);
  EXPECT_EQ(longest_straight_flush_run(hand({"Ah", "2h", "3h", "4h", "5h", "6h", "8c"})), 6u);
  EXPECT_EQ(longest_straight_flush_run(hand({"Qh", "Kh", "Ah", "2h", "3h", "9c", "8c"})), 3u);
  EXPECT_EQ(longest_straight_flush_run(hand({"2h", "4h", "6h", "8c", "Td", "Qs", "Ac"})), 1u);
  EXPECT_EQ(longest_straight_flush_run(0), 0u);
  EXPECT_TRUE(has_suited_nine_to_ace(hand({"9h", "Th", "Jh", "Qh", "Kh", "Ah", "2c"})));
  EXPECT_FALSE(has_suited_nine_to_ace(hand({"9h", "Th", "Jh", "Qh", "Kh", "Ac", "2c"})));
  EXPECT_EQ(max_suit_count(hand({"2h", "4h", "6h", "8h", "Td", "Qs", "Ac"})), 4u);
  EXPECT_EQ(royal_suits(hand({"As", "Ks", "Qs", "Js", "Ts"})), 1u);
  EXPECT_EQ(royal_suits(hand({"Ac", "Kc", "Qc", "Jc", "Tc", "9c"})), 8u);
  EXPECT_EQ(royal_suits(hand({"Ac", "Kc", "Qc", "Jc", "9c"})), 0u);
}

// Every five-card hand: the textbook category counts.
TEST(HandEval, FiveCardCensus) {
  std::array<std::uint64_t, 10> counts{};
  std::uint64_t disagreements = 0;
  for (unsigned a = 0; a < 52; ++a) {
    for (unsigned b = a + 1; b < 52; ++b) {
      for (unsigned c = b + 1; c < 52; ++c) {
        for (unsigned d = c + 1; d < 52; ++d) {
          for (unsigned e = d + 1; e < 52; ++e) {
            const auto bit = [](unsigned card) {
              return card_bit(
                  Card{static_cast<std::uint8_t>(card % 13), static_cast<std::uint8_t>(card / 13)});
            };
            const CardMask mask = bit(a) | bit(b) | bit(c) | bit(d) | bit(e);
            const Category best = best_category(mask);
            ++counts[static_cast<std::size_t>(best)];
            // The fast path and the full category set must agree on every hand.
            if (std::bit_width(unsigned{categories(mask)}) - 1 != static_cast<int>(best)) {
              ++disagreements;
            }
          }
        }
      }
    }
  }
  const std::array<std::uint64_t, 10> expected = {1'302'540, 1'098'240, 123'552, 54'912, 10'200,
                                                  5'108,     3'744,     624,     36,     4};
  EXPECT_EQ(counts, expected);
  EXPECT_EQ(disagreements, 0u);
}

// categories(mask, wanted) skips the rank categories not wanted: on random seven-card hands
// (and on every flush family hand below) it must agree with the full set on every wanted
// category, on high_card and on the suit categories, for every choice of wanted rank categories.
TEST(HandEval, CategoriesAmongWantedAgreeWithTheFullSet) {
  constexpr CategorySet kSuitCategories = (1U << static_cast<unsigned>(Category::high_card)) |
                                          (1U << static_cast<unsigned>(Category::flush)) |
                                          (1U << static_cast<unsigned>(Category::straight_flush)) |
                                          (1U << static_cast<unsigned>(Category::royal_flush));
  std::vector<CardMask> hands = {
      hand({"As", "Ks", "Qs", "Js", "Ts", "2d", "3c"}), hand({"Ah", "2h", "3h", "4h", "5h", "Kd"}),
      hand({"2h", "7h", "9h", "Jh", "Kh", "Ah", "3c"}), hand({"9c", "9d", "9h", "9s", "Ac", "Ad"}),
      hand({"Ac", "2d", "3h", "4s", "5c", "9d", "Kh"})};
  std::mt19937_64 shuffle(5);
  std::array<unsigned, 52> deck{};
  for (unsigned card = 0; card < 52; ++card) deck[card] = card;
  for (int deal = 0; deal < 20000; ++deal) {
    std::shuffle(deck.begin(), deck.end(), shuffle);
    CardMask mask = 0;
    for (int i = 0; i < 7; ++i) {
      mask |= card_bit(Card{static_cast<std::uint8_t>(deck[static_cast<std::size_t>(i)] % 13),
                            static_cast<std::uint8_t>(deck[static_cast<std::size_t>(i)] / 13)});
    }
    hands.push_back(mask);
  }
  std::size_t differs = 0;
  for (const CardMask mask : hands) {
    const CategorySet all = categories(mask);
    for (unsigned subset = 0; subset < 64; ++subset) {
      CategorySet wanted = 0;
      unsigned bit = 0;
      for (unsigned category = 0; category < 10; ++category) {
        if (!contains(kRankCategories, static_cast<Category>(category))) continue;
        if (subset & (1U << bit++)) wanted = static_cast<CategorySet>(wanted | (1U << category));
      }
      const CategorySet exact = static_cast<CategorySet>(wanted | kSuitCategories);
      if ((categories(mask, wanted) & exact) != (all & exact)) ++differs;
    }
  }
  EXPECT_EQ(differs, 0u);
}

}  // namespace
}  // namespace jackpot
