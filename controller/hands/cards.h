#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "meters/result.h"

namespace jackpot {

// A playing card. Ranks 0..12 are 2..9, T, J, Q, K, A; suits 0..3 are s, h, d, c.
struct Card {
  std::uint8_t rank = 0;
  std::uint8_t suit = 0;
  friend constexpr bool operator==(Card, Card) = default;
};

enum class Suit : std::uint8_t { spades = 0, hearts = 1, diamonds = 2, clubs = 3 };

constexpr std::uint8_t kAce = 12;
constexpr std::uint8_t kTen = 8;

// The set of cards as one bit per card: bit (16 × suit + rank). Each suit's 13 ranks sit in
// their own 16-bit lane, so suit-wise questions are answered for all four suits at once.
using CardMask = std::uint64_t;

constexpr CardMask card_bit(Card card) { return CardMask{1} << (16 * card.suit + card.rank); }

// Why cards were refused; the message names the card and its position.
struct CardError {
  std::string message;
  bool duplicate = false;  // A card that appears twice, rather than text that is no card.
};

// Parses "As", "td", "10h", "KC": rank 2-9, T or 10, J, Q, K, A and suit s, h, d, c, in any case.
Result<Card, CardError> parse_card(std::string_view text);

// Ranks 0..12 and suits 0..3 as printed.
inline constexpr std::string_view kRankLetters = "23456789TJQKA";
inline constexpr std::string_view kSuitLetters = "shdc";

// "As", "Td": upper-case rank, lower-case suit.
std::string to_string(Card card);
constexpr char suit_letter(Suit suit) { return kSuitLetters[static_cast<std::size_t>(suit) & 3]; }
// A card's rank as printed: 2-9, T, J, Q, K, A ('?' for a rank out of range).
constexpr char rank_letter(Card card) {
  return card.rank < kRankLetters.size() ? kRankLetters[card.rank] : '?';
}

// Parses a list of cards, refusing malformed cards and duplicates; `what` names the list in
// messages ("pocket cards of seat 3").
Result<std::vector<Card>, CardError> parse_cards(std::span<const std::string> texts,
                                                 std::string_view what);

}  // namespace jackpot
