#include "controller/hands/paytable.h"

namespace jackpot {
namespace {

struct EventName {
  HandEvent event;
  std::string_view name;
};

constexpr EventName kEventNames[] = {
    {HandEvent::royal_flush, "ROYAL_FLUSH"},
    {HandEvent::royal_flush_suit_specific, "ROYAL_FLUSH_SUIT_SPECIFIC"},
    {HandEvent::flopped_royal_flush, "FLOPPED_ROYAL_FLUSH"},
    {HandEvent::flopped_royal_flush_suit_specific, "FLOPPED_ROYAL_FLUSH_SUIT_SPECIFIC"},
    {HandEvent::flopped_straight_flush, "FLOPPED_STRAIGHT_FLUSH"},
    {HandEvent::community_royal_flush, "COMMUNITY_ROYAL_FLUSH"},
    {HandEvent::straight_flush, "STRAIGHT_FLUSH"},
    {HandEvent::four_of_a_kind, "FOUR_OF_A_KIND"},
    {HandEvent::full_house, "FULL_HOUSE"},
    {HandEvent::flush, "FLUSH"},
    {HandEvent::straight, "STRAIGHT"},
    {HandEvent::three_of_a_kind, "THREE_OF_A_KIND"},
    {HandEvent::two_pair, "TWO_PAIR"},
    {HandEvent::five_card_royal_flush, "FIVE_CARD_ROYAL_FLUSH"},
    {HandEvent::straight_flush_run_7_or_9tjqka, "STRAIGHT_FLUSH_RUN_7_OR_9TJQKA"},
    {HandEvent::straight_flush_run_7, "STRAIGHT_FLUSH_RUN_7"},
    {HandEvent::straight_flush_run_6, "STRAIGHT_FLUSH_RUN_6"},
    {HandEvent::straight_flush_run_5, "STRAIGHT_FLUSH_RUN_5"},
    {HandEvent::straight_flush_run_4, "STRAIGHT_FLUSH_RUN_4"},
    {HandEvent::straight_flush_run_3, "STRAIGHT_FLUSH_RUN_3"},
    {HandEvent::straight_flush_run_1, "STRAIGHT_FLUSH_RUN_1"},
    {HandEvent::flush_5, "FLUSH_5"},
    {HandEvent::flush_4, "FLUSH_4"},
    {HandEvent::must_hit_by, "MUST_HIT_BY"},
};
static_assert(std::size(kEventNames) == kHandEventCount);

}  // namespace

std::string_view to_string(GameRule rule) {
  switch (rule) {
    case GameRule::heads_up_holdem:
      return "Heads Up Hold'em";
    case GameRule::five_card_linked:
      return "Five-Card Linked";
    case GameRule::seven_card_linked:
      return "Seven-Card Stud Linked";
    case GameRule::high_card_flush:
      return "High Card Flush";
    case GameRule::mississippi_stud:
      return "Mississippi Stud";
  }
  return "unknown game rule";
}

std::string_view to_string(HandEvent event) {
  for (const auto& [known, name] : kEventNames) {
    if (known == event) return name;
  }
  return "UNKNOWN";
}

std::optional<HandEvent> hand_event_named(std::string_view name) {
  for (const auto& [event, known] : kEventNames) {
    if (known == name) return event;
  }
  return std::nullopt;
}

namespace {

bool ignored_in_key(char c) { return c == ' ' || c == '\t' || c == '-' || c == '_'; }

char key_char(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

std::string hand_key(std::string_view text) {
  std::string key;
  key.reserve(text.size());
  for (const char c : text) {
    if (!ignored_in_key(c)) key.push_back(key_char(c));
  }
  return key;
}

bool same_hand_key(std::string_view a, std::string_view b) {
  std::size_t i = 0;
  std::size_t j = 0;
  while (true) {
    while (i < a.size() && ignored_in_key(a[i])) ++i;
    while (j < b.size() && ignored_in_key(b[j])) ++j;
    if (i == a.size() || j == b.size()) return i == a.size() && j == b.size();
    if (key_char(a[i]) != key_char(b[j])) return false;
    ++i;
    ++j;
  }
}

std::optional<HandEvent> hand_event_keyed(std::string_view text) {
  for (const auto& [event, name] : kEventNames) {
    if (same_hand_key(name, text)) return event;
  }
  return std::nullopt;
}

std::optional<HandEvent> keyed_event(std::span<const Paytable* const> paytables,
                                     std::string_view keyed) {
  for (const Paytable* paytable : paytables) {
    for (const PaytableRow& row : paytable->rows) {
      if (same_hand_key(row.label.view(), keyed)) return row.hand;
    }
  }
  return hand_event_keyed(keyed);
}

bool game_can_make(GameRule rule, HandEvent event) {
  switch (event) {
    case HandEvent::flopped_royal_flush:
    case HandEvent::flopped_royal_flush_suit_specific:
    case HandEvent::flopped_straight_flush:
    case HandEvent::community_royal_flush:
      return rule == GameRule::heads_up_holdem;
    case HandEvent::straight_flush_run_7_or_9tjqka:
    case HandEvent::straight_flush_run_7:
    case HandEvent::straight_flush_run_6:
      return card_counts(rule).pocket + card_counts(rule).community >= 6;
    default:
      return true;
  }
}

CardCounts card_counts(GameRule rule) {
  switch (rule) {
    case GameRule::heads_up_holdem:
      return {2, 5};
    case GameRule::five_card_linked:
      return {2, 3};
    case GameRule::seven_card_linked:
      return {2, 5};
    case GameRule::high_card_flush:
      return {7, 0};
    case GameRule::mississippi_stud:
      return {2, 3};
  }
  return {0, 0};
}

std::optional<CardError> check_card_counts(GameRule rule, SeatCards cards) {
  const CardCounts counts = card_counts(rule);
  const auto count_error = [&](std::string_view which, std::size_t expected, std::size_t got) {
    return CardError{std::string(to_string(rule)) + " needs " + std::to_string(expected) + " " +
                     std::string(which) + " cards, got " + std::to_string(got)};
  };
  if (cards.pocket.size() != counts.pocket) {
    return count_error(rule == GameRule::high_card_flush ? "player" : "pocket", counts.pocket,
                       cards.pocket.size());
  }
  if (cards.community.size() != counts.community) {
    return count_error("community", counts.community, cards.community.size());
  }
  return std::nullopt;
}

std::optional<CardError> check_cards(GameRule rule, SeatCards cards) {
  if (auto error = check_card_counts(rule, cards)) return error;
  CardMask seen = 0;
  for (const auto& group : {cards.pocket, cards.community}) {
    for (const Card card : group) {
      if (card.rank > kAce || card.suit > 3) return CardError{"a card is out of range"};
      if (seen & card_bit(card)) return CardError{to_string(card) + " appears twice"};
      seen |= card_bit(card);
    }
  }
  return std::nullopt;
}

HandFacts evaluate(GameRule rule, SeatCards cards, unsigned needed) {
  return evaluate(rule, cards.pocket, community_cards(rule, cards.community), needed);
}

CommunityCards community_cards(GameRule rule, std::span<const Card> community) {
  return community_cards(rule, community, mask_of(community));
}

CommunityCards community_cards(GameRule rule, std::span<const Card> community, CardMask all) {
  CommunityCards cards;
  cards.all = all;
  if (rule == GameRule::heads_up_holdem) {
    cards.flop = mask_of(community.first(std::min<std::size_t>(3, community.size())));
    cards.royal = royal_suits(cards.all) != 0;
  }
  return cards;
}

HandFacts evaluate(GameRule rule, std::span<const Card> pocket_cards,
                   const CommunityCards& community, unsigned needed) {
  return evaluate(rule, mask_of(pocket_cards), community, needed);
}

HandFacts evaluate(GameRule rule, CardMask pocket, const CommunityCards& community, unsigned needed,
                   CategorySet wanted) {
  const CardMask all = pocket | community.all;
  HandFacts facts;
  facts.categories = categories(all, wanted);
  // A royal needs five cards of a suit: without a flush among all the cards there is none,
  // flopped or not (the flopped cards are among them).
  const bool flush = contains(facts.categories, Category::flush);
  if (flush) facts.royal_suits = royal_suits(all);
  if (needed & facts::kLongestRun) facts.longest_run = longest_straight_flush_run(all);
  if (needed & facts::kSuitedNineToAce) facts.suited_nine_to_ace = has_suited_nine_to_ace(all);
  if (needed & facts::kMaxSuitCount) facts.max_suit_count = max_suit_count(all);
  if (rule == GameRule::heads_up_holdem) {
    const CardMask flopped = pocket | community.flop;
    if (needed & facts::kFloppedCategories) facts.flopped_categories = categories(flopped);
    if (flush && (needed & facts::kFloppedRoyalSuits)) {
      facts.flopped_royal_suits = royal_suits(flopped);
    }
    if (needed & facts::kCommunityRoyal) facts.community_royal = community.royal;
  }
  return facts;
}

namespace {

constexpr CategorySet set_of(std::initializer_list<Category> categories) {
  unsigned set = 0;
  for (const Category category : categories) set |= 1U << static_cast<unsigned>(category);
  return static_cast<CategorySet>(set);
}

// What qualifies() reads for an event: the facts beyond the 7-card categories and royal suits
// (facts::), and the categories of which a hand must hold one to qualify.
struct EventReads {
  unsigned facts = 0;
  CategorySet categories = 0;
};
constexpr CategorySet kAnyHand = 0xFFFF;  // No category is needed (runs, suit counts).

EventReads reads(HandEvent event) {
  using C = Category;
  switch (event) {
    // A royal anywhere (flopped, on the board, suit-specific) is among the hand's categories.
    case HandEvent::royal_flush:
    case HandEvent::royal_flush_suit_specific:
    case HandEvent::five_card_royal_flush:
      return {0, set_of({C::royal_flush})};
    case HandEvent::flopped_royal_flush:
    case HandEvent::flopped_royal_flush_suit_specific:
      return {facts::kFloppedRoyalSuits, set_of({C::royal_flush})};
    case HandEvent::community_royal_flush:  // Also what keeps a board royal off the royal row.
      return {facts::kCommunityRoyal, set_of({C::royal_flush})};
    case HandEvent::flopped_straight_flush:  // The flop's cards stay in the hand.
      return {facts::kFloppedCategories, set_of({C::straight_flush})};
    case HandEvent::straight_flush:
      return {0, set_of({C::straight_flush})};
    case HandEvent::four_of_a_kind:
      return {0, set_of({C::four_of_a_kind})};
    case HandEvent::full_house:
      return {0, set_of({C::full_house})};
    case HandEvent::flush:
      return {0, set_of({C::flush})};
    case HandEvent::straight:
      return {0, set_of({C::straight})};
    case HandEvent::three_of_a_kind:
      return {0, set_of({C::three_of_a_kind})};
    case HandEvent::two_pair:
      return {0, set_of({C::two_pair})};
    case HandEvent::straight_flush_run_7_or_9tjqka:
      return {facts::kLongestRun | facts::kSuitedNineToAce, kAnyHand};
    case HandEvent::straight_flush_run_7:
    case HandEvent::straight_flush_run_6:
    case HandEvent::straight_flush_run_5:
    case HandEvent::straight_flush_run_4:
    case HandEvent::straight_flush_run_3:
    case HandEvent::straight_flush_run_1:
      return {facts::kLongestRun, kAnyHand};
    case HandEvent::flush_5:
    case HandEvent::flush_4:
      return {facts::kMaxSuitCount, kAnyHand};
    case HandEvent::must_hit_by:
      return {0, 0};  // Never qualifies by cards.
  }
  return {facts::kAll, kAnyHand};
}

}  // namespace

CategorySet categories_reaching(const std::vector<PaytableRow>& rows) {
  CategorySet reaching = 0;
  for (const PaytableRow& row : rows) reaching |= reads(row.hand).categories;
  return reaching;
}

unsigned facts_needed_by(const std::vector<PaytableRow>& rows) {
  unsigned needed = 0;
  for (const PaytableRow& row : rows) needed |= reads(row.hand).facts;
  return needed;
}

namespace {

// What a hand of each category contains (a full house contains three of a kind, and so on).
CategorySet contained(Category category) {
  using C = Category;
  switch (category) {
    case C::royal_flush:
      return set_of({C::royal_flush, C::straight_flush, C::flush, C::straight, C::high_card});
    case C::straight_flush:
      return set_of({C::straight_flush, C::flush, C::straight, C::high_card});
    case C::four_of_a_kind:
      return set_of({C::four_of_a_kind, C::three_of_a_kind, C::pair, C::high_card});
    case C::full_house:
      return set_of({C::full_house, C::three_of_a_kind, C::two_pair, C::pair, C::high_card});
    case C::flush:
      return set_of({C::flush, C::high_card});
    case C::straight:
      return set_of({C::straight, C::high_card});
    case C::three_of_a_kind:
      return set_of({C::three_of_a_kind, C::pair, C::high_card});
    case C::two_pair:
      return set_of({C::two_pair, C::pair, C::high_card});
    case C::pair:
      return set_of({C::pair, C::high_card});
    case C::high_card:
      return set_of({C::high_card});
  }
  return 0;
}

HandFacts made_of(Category category, unsigned royal_suits, unsigned run, unsigned suited) {
  HandFacts facts;
  facts.categories = contained(category);
  facts.royal_suits = royal_suits;
  facts.longest_run = run;
  facts.max_suit_count = suited;
  return facts;
}

}  // namespace

HandFacts keyed_facts(HandEvent event, Suit suit) {
  const unsigned any_suit =
      1U << static_cast<unsigned>((static_cast<unsigned>(suit) + 1) % 4);  // Not the specific one.
  const unsigned specific = 1U << static_cast<unsigned>(suit);
  using C = Category;
  HandFacts facts;
  switch (event) {
    case HandEvent::royal_flush:
    case HandEvent::five_card_royal_flush:
      return made_of(C::royal_flush, any_suit, 5, 5);
    case HandEvent::royal_flush_suit_specific:
      return made_of(C::royal_flush, specific, 5, 5);
    case HandEvent::flopped_royal_flush:
    case HandEvent::flopped_royal_flush_suit_specific: {
      const unsigned suits = event == HandEvent::flopped_royal_flush ? any_suit : specific;
      facts = made_of(C::royal_flush, suits, 5, 5);
      facts.flopped_categories = facts.categories;
      facts.flopped_royal_suits = suits;
      return facts;
    }
    case HandEvent::flopped_straight_flush:
      facts = made_of(C::straight_flush, 0, 5, 5);
      facts.flopped_categories = facts.categories;
      return facts;
    case HandEvent::community_royal_flush:
      facts = made_of(C::royal_flush, any_suit, 5, 5);
      facts.community_royal = true;
      return facts;
    case HandEvent::straight_flush:
    case HandEvent::straight_flush_run_5:
      return made_of(C::straight_flush, 0, 5, 5);
    case HandEvent::four_of_a_kind:
      return made_of(C::four_of_a_kind, 0, 1, 1);
    case HandEvent::full_house:
      return made_of(C::full_house, 0, 1, 2);
    case HandEvent::flush:
    case HandEvent::flush_5:
      return made_of(C::flush, 0, 1, 5);
    case HandEvent::straight:
      return made_of(C::straight, 0, 1, 2);
    case HandEvent::three_of_a_kind:
      return made_of(C::three_of_a_kind, 0, 1, 2);
    case HandEvent::two_pair:
      return made_of(C::two_pair, 0, 1, 2);
    case HandEvent::straight_flush_run_7_or_9tjqka:
    case HandEvent::straight_flush_run_7:
      return made_of(C::straight_flush, 0, 7, 7);
    case HandEvent::straight_flush_run_6:
      return made_of(C::straight_flush, 0, 6, 6);
    case HandEvent::straight_flush_run_4:
      return made_of(C::high_card, 0, 4, 4);
    case HandEvent::straight_flush_run_3:
      return made_of(C::high_card, 0, 3, 3);
    case HandEvent::flush_4:
      return made_of(C::high_card, 0, 1, 4);
    case HandEvent::straight_flush_run_1:
      return made_of(C::high_card, 0, 1, 1);
    case HandEvent::must_hit_by:
      break;
  }
  return facts;
}

namespace {

// qualifies(), inlined into resolve()'s walk over the rows: a settlement resolves every seat.
[[gnu::always_inline]] inline bool qualifies_inline(const Paytable& paytable, HandEvent event,
                                                    const HandFacts& facts,
                                                    const RoundContext& context) {
  const unsigned suit_bit = 1U << static_cast<unsigned>(context.specific_suit);
  // Where the paytable lists Community Royal Flush, a royal on the board is that row for every
  // seat and no seat's "Royal Flush" (no other royal can exist beside a board royal).
  const bool board_royal_is_community = paytable.lists_community_royal && facts.community_royal;
  const auto has = [&](Category category) { return contains(facts.categories, category); };
  switch (event) {
    case HandEvent::royal_flush:
      return facts.royal_suits != 0 && !board_royal_is_community;
    case HandEvent::royal_flush_suit_specific:
      return (facts.royal_suits & suit_bit) != 0 && !board_royal_is_community;
    case HandEvent::flopped_royal_flush:
      return facts.flopped_royal_suits != 0;
    case HandEvent::flopped_royal_flush_suit_specific:
      return (facts.flopped_royal_suits & suit_bit) != 0;
    case HandEvent::flopped_straight_flush:
      return contains(facts.flopped_categories, Category::straight_flush);
    case HandEvent::community_royal_flush:
      return facts.community_royal;
    case HandEvent::straight_flush:
      return has(Category::straight_flush);
    case HandEvent::four_of_a_kind:
      return has(Category::four_of_a_kind);
    case HandEvent::full_house:
      return has(Category::full_house);
    case HandEvent::flush:
      return has(Category::flush);
    case HandEvent::straight:
      return has(Category::straight);
    case HandEvent::three_of_a_kind:
      return has(Category::three_of_a_kind);
    case HandEvent::two_pair:
      return has(Category::two_pair);
    case HandEvent::five_card_royal_flush:
      return facts.royal_suits != 0;
    case HandEvent::straight_flush_run_7_or_9tjqka:
      return facts.longest_run >= 7 || facts.suited_nine_to_ace;
    case HandEvent::straight_flush_run_7:
      return facts.longest_run >= 7;
    case HandEvent::straight_flush_run_6:
      return facts.longest_run >= 6;
    case HandEvent::straight_flush_run_5:
      return facts.longest_run >= 5;
    case HandEvent::straight_flush_run_4:
      return facts.longest_run >= 4;
    case HandEvent::straight_flush_run_3:
      return facts.longest_run >= 3;
    case HandEvent::straight_flush_run_1:
      return facts.longest_run >= 1;
    case HandEvent::flush_5:
      return facts.max_suit_count >= 5;
    case HandEvent::flush_4:
      return facts.max_suit_count >= 4;
    case HandEvent::must_hit_by:
      return false;  // Won by the level's draw, never by cards.
  }
  return false;
}

}  // namespace

bool qualifies(const Paytable& paytable, HandEvent event, const HandFacts& facts,
               const RoundContext& context) {
  return qualifies_inline(paytable, event, facts, context);
}

std::optional<std::size_t> resolve_walk(const Paytable& paytable, const HandFacts& facts,
                                        const RoundContext& context) {
  for (std::size_t row = 0; row < paytable.rows.size(); ++row) {
    if (qualifies_inline(paytable, paytable.rows[row].hand, facts, context)) return row;
  }
  return std::nullopt;
}

Result<std::optional<std::size_t>, CardError> resolve_cards(const Paytable& paytable,
                                                            SeatCards cards,
                                                            const RoundContext& context) {
  if (auto error = check_cards(paytable.rule, cards)) return *error;
  return resolve(paytable, evaluate(paytable.rule, cards, paytable.facts_needed), context);
}

}  // namespace jackpot
