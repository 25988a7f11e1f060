// libFuzzer target: card parsing (controller/hands/cards.h) on arbitrary text.
//
// Checked for every input: parse_card() either refuses with a message or yields a card in range
// that prints and parses back to itself; the inline two-letter parser agrees with parse_card()
// whenever it answers, and answers for every two-character card; parse_cards() and
// parse_cards_into() agree, refuse duplicates, and the mask holds exactly the cards parsed.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "controller/hands/cards.h"
#include "meters/invariant.h"

namespace {

using jackpot::Card;
using jackpot::CardMask;

void check_one(std::string_view text) {
  const auto parsed = jackpot::parse_card(text);
  const auto two_letter = jackpot::parse_two_letter_card(text);
  if (!parsed) {
    JACKPOT_INVARIANT(!parsed.error().message.empty(), "a refused card says why");
    JACKPOT_INVARIANT(!two_letter, "the two-letter parser refuses what parse_card refuses");
    return;
  }
  const Card card = *parsed;
  JACKPOT_INVARIANT(card.rank < 13 && card.suit < 4, "a parsed card is in range");
  const std::string printed = jackpot::to_string(card);
  const auto again = jackpot::parse_card(printed);
  JACKPOT_INVARIANT(again && *again == card, "a card prints as text that parses back to it");
  JACKPOT_INVARIANT(jackpot::parse_two_letter_card(printed) == card,
                    "a printed card is a two-letter card");
  if (text.size() == 2) {
    JACKPOT_INVARIANT(two_letter == card, "the two-letter parser takes every two-letter card");
  } else {
    JACKPOT_INVARIANT(!two_letter, "the two-letter parser takes two letters only");
  }
}

std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ' ') {
      words.emplace_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return words;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_one(text);

  const std::vector<std::string> words = words_of(text);
  for (const std::string& word : words) check_one(word);
  const auto list = jackpot::parse_cards(words, "fuzzed cards");
  std::vector<Card> into{Card{3, 1}};  // Replaced, never appended to.
  CardMask mask = ~CardMask{0};
  const auto error = jackpot::parse_cards_into(words, "fuzzed cards", into, &mask);
  JACKPOT_INVARIANT(list.ok() == !error.has_value(), "parse_cards and parse_cards_into agree");
  if (!list) {
    JACKPOT_INVARIANT(list.error().message == error->message, "both give the same reason");
    return 0;
  }
  JACKPOT_INVARIANT(*list == into, "both give the same cards");
  JACKPOT_INVARIANT(list->size() == words.size(), "one card per word");
  CardMask expected = 0;
  for (const Card& card : *list) {
    JACKPOT_INVARIANT((expected & jackpot::card_bit(card)) == 0, "no card is accepted twice");
    expected |= jackpot::card_bit(card);
  }
  JACKPOT_INVARIANT(mask == expected, "the mask holds exactly the cards parsed");
  JACKPOT_INVARIANT(static_cast<std::size_t>(std::popcount(mask)) == words.size(),
                    "one bit per card");
  return 0;
}
