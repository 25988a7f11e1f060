// libFuzzer target: card parsing (controller/hands/cards.h) on arbitrary text.
//
// Checked for every input: parse_card() either refuses with a message or yields a card in range
// that prints and parses back to itself; parse_cards() refuses exactly the lists with a word
// that is no card or a card twice, and otherwise gives one card per word.
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
  if (!parsed) {
    JACKPOT_INVARIANT(!parsed.error().message.empty(), "a refused card says why");
    return;
  }
  const Card card = *parsed;
  JACKPOT_INVARIANT(card.rank < 13 && card.suit < 4, "a parsed card is in range");
  const std::string printed = jackpot::to_string(card);
  const auto again = jackpot::parse_card(printed);
  JACKPOT_INVARIANT(again && *again == card, "a card prints as text that parses back to it");
  JACKPOT_INVARIANT(printed.size() == 2, "a card prints as two letters");
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
  // What the list should come to, word by word.
  bool valid = true;
  CardMask seen = 0;
  for (const std::string& word : words) {
    const auto card = jackpot::parse_card(word);
    if (!card || (seen & jackpot::card_bit(*card)) != 0) {
      valid = false;
      break;
    }
    seen |= jackpot::card_bit(*card);
  }
  JACKPOT_INVARIANT(list.ok() == valid, "a list is refused exactly for a bad or repeated card");
  if (!list) {
    JACKPOT_INVARIANT(!list.error().message.empty(), "a refused list says why");
    return 0;
  }
  JACKPOT_INVARIANT(list->size() == words.size(), "one card per word");
  CardMask expected = 0;
  for (const Card& card : *list) expected |= jackpot::card_bit(card);
  JACKPOT_INVARIANT(expected == seen, "the list holds exactly the cards of the words");
  JACKPOT_INVARIANT(static_cast<std::size_t>(std::popcount(seen)) == words.size(),
                    "one bit per card");
  return 0;
}
