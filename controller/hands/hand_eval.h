#pragma once

#include <bit>
#include <cstdint>

#include "controller/hands/cards.h"

namespace jackpot {

// Poker hand categories, lowest first.
enum class Category : std::uint8_t {
  high_card,
  pair,
  two_pair,
  three_of_a_kind,
  straight,
  flush,
  full_house,
  four_of_a_kind,
  straight_flush,
  royal_flush,
};

// Bit c is set when the cards contain a five-card (or smaller, for pairs and trips) hand of
// category c. A royal also sets straight_flush, flush and straight; a full house also sets
// three_of_a_kind, two_pair and pair; and so on.
using CategorySet = std::uint16_t;

constexpr bool contains(CategorySet set, Category category) {
  return ((static_cast<unsigned>(set) >> static_cast<unsigned>(category)) & 1U) != 0;
}

namespace hand_eval_detail {

constexpr CardMask kLanes = 0x0001'0001'0001'0001;  // Bit 0 of every suit lane.
constexpr CardMask kRankBits = 0x1FFF;

// Every suit lane widened to 14 bits with the ace copied below the deuce (bit 0), so that
// A-2-3-4-5 is a run like any other; bits 14 and 15 of every lane stay clear.
constexpr CardMask ace_low_extended(CardMask mask) {
  return ((mask << 1) | ((mask >> 12) & kLanes)) & (kLanes * 0x3FFF);
}

// Bit p set where five consecutive bits p..p+4 are set, within each lane.
constexpr CardMask five_runs(CardMask extended) {
  return extended & (extended >> 1) & (extended >> 2) & (extended >> 3) & (extended >> 4);
}

// The number of cards in each suit, in the low byte of its lane (SWAR popcount per lane).
constexpr CardMask suit_counts(CardMask mask) {
  CardMask x = mask - ((mask >> 1) & 0x5555'5555'5555'5555);
  x = (x & 0x3333'3333'3333'3333) + ((x >> 2) & 0x3333'3333'3333'3333);
  x = (x + (x >> 4)) & 0x0F0F'0F0F'0F0F'0F0F;
  return (x + (x >> 8)) & (kLanes * 0xFF);
}

}  // namespace hand_eval_detail

// The categories found by rank counts (pairs and better of a kind) and by runs of ranks.
inline constexpr CategorySet kRankCategories =
    (1U << static_cast<unsigned>(Category::pair)) |
    (1U << static_cast<unsigned>(Category::two_pair)) |
    (1U << static_cast<unsigned>(Category::three_of_a_kind)) |
    (1U << static_cast<unsigned>(Category::straight)) |
    (1U << static_cast<unsigned>(Category::full_house)) |
    (1U << static_cast<unsigned>(Category::four_of_a_kind));

// Every category the cards (up to seven, no duplicates) contain; with `wanted`, a category found
// by rank (kRankCategories) is looked for only when `wanted` holds it, so the set is exact on
// `wanted`, on high_card and on the suit categories (flush, straight flush, royal), and may lack
// other rank categories. A handful of bitwise operations on the card mask, no table and no
// allocation; straight flushes and royals are looked for only beside a flush (rare, and a
// well-predicted branch), and `wanted` is the same for every hand a paytable resolves.
constexpr CategorySet categories(CardMask mask, CategorySet wanted = 0xFFFF) {
  using namespace hand_eval_detail;
  unsigned set = 1U << static_cast<unsigned>(Category::high_card);
  const CardMask flush_lanes = (suit_counts(mask) + kLanes * 11) & (kLanes * 16);
  if (flush_lanes != 0) [[unlikely]] {  // A straight flush or a royal needs five of a suit.
    const CardMask straight_flushes = five_runs(ace_low_extended(mask));
    const CardMask royal_lanes = ((mask & (kLanes * 0x1F00)) + kLanes * 0x0100) & (kLanes * 0x2000);
    set |= 1U << static_cast<unsigned>(Category::flush);
    set |= unsigned{straight_flushes != 0} << static_cast<unsigned>(Category::straight_flush);
    set |= unsigned{royal_lanes != 0} << static_cast<unsigned>(Category::royal_flush);
  }
  if ((wanted & kRankCategories) == 0) return static_cast<CategorySet>(set);
  const CardMask s0 = mask & kRankBits;
  const CardMask s1 = (mask >> 16) & kRankBits;
  const CardMask s2 = (mask >> 32) & kRankBits;
  const CardMask s3 = (mask >> 48) & kRankBits;
  // How many suits hold each rank, as three bit planes (a bit-sliced adder of the four lanes).
  const CardMask low_sum = s0 ^ s1;
  const CardMask low_carry = s0 & s1;
  const CardMask high_sum = s2 ^ s3;
  const CardMask high_carry = s2 & s3;
  const CardMask ones = low_sum ^ high_sum;
  const CardMask carry = low_sum & high_sum;
  const CardMask twos = low_carry ^ high_carry ^ carry;
  const CardMask quads = low_carry & high_carry;  // Count 4: the only way to reach the fours.
  const CardMask pairs = twos | quads;
  const CardMask trips = (twos & ones) | quads;
  const bool two_pairs = (pairs & (pairs - 1)) != 0;
  set |= unsigned{pairs != 0} << static_cast<unsigned>(Category::pair);
  set |= unsigned{two_pairs} << static_cast<unsigned>(Category::two_pair);
  set |= unsigned{trips != 0} << static_cast<unsigned>(Category::three_of_a_kind);
  set |= unsigned{trips != 0 && two_pairs} << static_cast<unsigned>(Category::full_house);
  set |= unsigned{quads != 0} << static_cast<unsigned>(Category::four_of_a_kind);
  if (contains(wanted, Category::straight)) {
    const CardMask any = ones | twos | quads;
    set |= unsigned{five_runs(ace_low_extended(any)) != 0}
           << static_cast<unsigned>(Category::straight);
  }
  return static_cast<CategorySet>(set);
}

// The category of the best five-card hand among the cards (up to seven). The hot path of
// every evaluation: the rare flush is a well-predicted branch, the rest is branch-free, and
// nothing the answer does not need (royals, straight flushes without a flush) is computed.
constexpr Category best_category(CardMask mask) {
  using namespace hand_eval_detail;
  const CardMask flush_lanes = (suit_counts(mask) + kLanes * 11) & (kLanes * 16);
  if (flush_lanes != 0) [[unlikely]] {
    // Five of one suit leave at most two cards: no four of a kind or full house beside it.
    const CardMask royal_lanes = ((mask & (kLanes * 0x1F00)) + kLanes * 0x0100) & (kLanes * 0x2000);
    if (royal_lanes != 0) return Category::royal_flush;
    if (five_runs(ace_low_extended(mask)) != 0) return Category::straight_flush;
    return Category::flush;
  }
  const CardMask s0 = mask & kRankBits;
  const CardMask s1 = (mask >> 16) & kRankBits;
  const CardMask s2 = (mask >> 32) & kRankBits;
  const CardMask s3 = (mask >> 48) & kRankBits;
  const CardMask low_sum = s0 ^ s1;
  const CardMask high_sum = s2 ^ s3;
  const CardMask low_carry = s0 & s1;
  const CardMask high_carry = s2 & s3;
  const CardMask ones = low_sum ^ high_sum;
  const CardMask twos = low_carry ^ high_carry ^ (low_sum & high_sum);
  const CardMask quads = low_carry & high_carry;
  const CardMask pairs = twos | quads;
  const bool two_pairs = (pairs & (pairs - 1)) != 0;
  const bool trips = ((twos & ones) | quads) != 0;
  const bool straight = five_runs(ace_low_extended(ones | twos | quads)) != 0;
  unsigned category = pairs != 0 ? 1U : 0U;
  category = two_pairs ? 2U : category;
  category = trips ? 3U : category;
  category = straight ? 4U : category;
  category = trips && two_pairs ? 6U : category;
  category = quads != 0 ? 7U : category;
  return static_cast<Category>(category);
}

// Suits (bit per suit, s = 1) in which the cards hold a royal flush.
constexpr unsigned royal_suits(CardMask mask) {
  using namespace hand_eval_detail;
  const CardMask royal_lanes = ((mask & (kLanes * 0x1F00)) + kLanes * 0x0100) & (kLanes * 0x2000);
  return static_cast<unsigned>(((royal_lanes >> 13) & 1) | ((royal_lanes >> 28) & 2) |
                               ((royal_lanes >> 43) & 4) | ((royal_lanes >> 58) & 8));
}

// The longest run of consecutive ranks in one suit (ace high or low, no wrap), 0 for no cards.
constexpr unsigned longest_straight_flush_run(CardMask mask) {
  CardMask runs = hand_eval_detail::ace_low_extended(mask);
  unsigned length = 0;
  while (runs != 0) {  // Each step shortens every run by one card.
    runs &= runs >> 1;
    ++length;
  }
  return length;
}

// The most cards of any one suit.
constexpr unsigned max_suit_count(CardMask mask) {
  const CardMask counts = hand_eval_detail::suit_counts(mask);
  unsigned most = 0;
  for (unsigned lane = 0; lane < 4; ++lane) {
    const auto count = static_cast<unsigned>((counts >> (16 * lane)) & 0xFF);
    most = count > most ? count : most;
  }
  return most;
}

// True when one suit holds 9, T, J, Q, K and A.
constexpr bool has_suited_nine_to_ace(CardMask mask) {
  using namespace hand_eval_detail;
  const CardMask wanted = kLanes * 0x1F80;
  return (((mask & wanted) + kLanes * 0x0080) & (kLanes * 0x2000)) != 0;
}

constexpr CardMask mask_of(std::span<const Card> cards) {
  CardMask mask = 0;
  for (const Card card : cards) mask |= card_bit(card);
  return mask;
}

}  // namespace jackpot
