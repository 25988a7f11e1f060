#include "controller/hands/cards.h"

#include <array>
#include <cstdint>

#include "controller/limits/request_limits.h"

namespace jackpot {

using cards_detail::kLetters;

Result<Card, CardError> parse_card(std::string_view text) {
  // Messages are built only on failure: parsing is on the path of every settlement.
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
  if (auto error = parse_cards_into(texts, what, cards)) return *std::move(error);
  return cards;
}

std::optional<CardError> parse_cards_into(std::span<const std::string> texts, std::string_view what,
                                          std::vector<Card>& cards, CardMask* mask) {
  // Sized once and written by index: a reused vector of the same size costs nothing here.
  cards.resize(texts.size());
  CardMask seen = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    std::optional<Card> card = parse_two_letter_card(texts[i]);
    if (!card) {
      auto parsed = parse_card(texts[i]);
      if (!parsed) {
        return CardError{std::string(what) + ", card " + std::to_string(i + 1) + ": " +
                         parsed.error().message};
      }
      card = *parsed;
    }
    if (seen & card_bit(*card)) {
      return CardError{std::string(what) + ": " + to_string(*card) + " appears twice", true};
    }
    seen |= card_bit(*card);
    cards[i] = *card;
  }
  if (mask != nullptr) *mask = seen;
  return std::nullopt;
}

}  // namespace jackpot
