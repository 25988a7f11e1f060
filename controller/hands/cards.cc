#include "controller/hands/cards.h"

#include <array>
#include <cstdint>

#include "controller/limits/request_limits.h"

namespace jackpot {

namespace {

// Rank and suit by character, either case; -1 for anything else.
struct CardLetters {
  std::array<std::int8_t, 256> rank{};
  std::array<std::int8_t, 256> suit{};
  constexpr CardLetters() {
    rank.fill(-1);
    suit.fill(-1);
    for (std::size_t i = 0; i < kRankLetters.size(); ++i) {
      const char c = kRankLetters[i];
      rank[static_cast<unsigned char>(c)] = static_cast<std::int8_t>(i);
      if (c >= 'A' && c <= 'Z')
        rank[static_cast<unsigned char>(c - 'A' + 'a')] = static_cast<std::int8_t>(i);
    }
    for (std::size_t i = 0; i < kSuitLetters.size(); ++i) {
      suit[static_cast<unsigned char>(kSuitLetters[i])] = static_cast<std::int8_t>(i);
      suit[static_cast<unsigned char>(kSuitLetters[i] - 'a' + 'A')] = static_cast<std::int8_t>(i);
    }
  }
};
constexpr CardLetters kLetters;

}  // namespace

Result<Card, CardError> parse_card(std::string_view text) {
  const auto quoted = [text] { return quote_prefix(text); };
  if (text.size() < 2 || text.size() > 3) {
    return CardError{quoted() + " is not a card (expected a rank and a suit, e.g. As, Td, 10h)"};
  }
  const std::string_view rank_text = text.substr(0, text.size() - 1);
  Card card;
  if (rank_text == "10") {
    card.rank = kTen;
  } else if (const auto rank = kLetters.rank[static_cast<unsigned char>(rank_text[0])];
             rank_text.size() == 1 && rank >= 0) {
    card.rank = static_cast<std::uint8_t>(rank);
  } else {
    return CardError{quoted() + " has no valid rank (2-9, T or 10, J, Q, K, A)"};
  }
  const auto suit = kLetters.suit[static_cast<unsigned char>(text.back())];
  if (suit < 0) {
    return CardError{quoted() + " has no valid suit (s, h, d, c)"};
  }
  card.suit = static_cast<std::uint8_t>(suit);
  return card;
}

std::string to_string(Card card) {
  return {rank_letter(card), suit_letter(static_cast<Suit>(card.suit))};
}

Result<std::vector<Card>, CardError> parse_cards(std::span<const std::string> texts,
                                                 std::string_view what) {
  std::vector<Card> cards;
  cards.reserve(texts.size());
  CardMask seen = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    auto card = parse_card(texts[i]);
    if (!card) {
      return CardError{std::string(what) + ", card " + std::to_string(i + 1) + ": " +
                       card.error().message};
    }
    if (seen & card_bit(*card)) {
      return CardError{std::string(what) + ": " + to_string(*card) + " appears twice", true};
    }
    seen |= card_bit(*card);
    cards.push_back(*card);
  }
  return cards;
}

}  // namespace jackpot
