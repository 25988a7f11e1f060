#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "controller/hands/cards.h"
#include "controller/hands/hand_eval.h"
#include "journal/name.h"
#include "meters/money.h"

namespace jackpot {

// How a game's cards are evaluated for its progressive.
enum class GameRule : std::uint8_t {
  heads_up_holdem,    // Best five of pocket (2) + board (5); flopped = pocket + first 3 board
                      // cards; community = the board alone.
  five_card_linked,   // Pocket (2) + 3 community cards (the flop, or separately drawn cards).
  seven_card_linked,  // Best five of pocket (2) + 5 link cards.
  high_card_flush,    // The player's own 7 cards.
  mississippi_stud,   // 2 hole cards + 3 community cards.
};

std::string_view to_string(GameRule rule);

// Every hand event a paytable row can name; the numbering matches jackpot.config.v1.Hand.
enum class HandEvent : std::uint8_t {
  royal_flush = 1,
  royal_flush_suit_specific = 2,
  flopped_royal_flush = 3,
  flopped_royal_flush_suit_specific = 4,
  flopped_straight_flush = 5,
  community_royal_flush = 6,
  straight_flush = 7,
  four_of_a_kind = 8,
  full_house = 9,
  flush = 10,
  straight = 11,
  three_of_a_kind = 12,
  two_pair = 13,
  five_card_royal_flush = 14,
  straight_flush_run_7_or_9tjqka = 15,
  straight_flush_run_7 = 16,
  straight_flush_run_6 = 17,
  straight_flush_run_5 = 18,
  straight_flush_run_4 = 19,
  straight_flush_run_3 = 20,
  straight_flush_run_1 = 21,
  flush_5 = 22,
  flush_4 = 23,
  must_hit_by = 24,
};

constexpr std::uint8_t kHandEventCount = 24;

// "ROYAL_FLUSH", as in the paytable files.
std::string_view to_string(HandEvent event);
std::optional<HandEvent> hand_event_named(std::string_view name);

// What a keyed hand and a row's label are matched by: the text in lower case (ASCII), without
// spaces, tabs, hyphens and underscores. "Full House", "full house", "FULL_HOUSE" and
// "Full-House" all key "fullhouse"; "Royal Flush (Suit Specific)" keys
// "royalflush(suitspecific)".
std::string hand_key(std::string_view text);
// hand_key(a) == hand_key(b), without making either.
bool same_hand_key(std::string_view a, std::string_view b);
// The hand event whose name (to_string()) has this key, if any.
std::optional<HandEvent> hand_event_keyed(std::string_view text);
// Whether a game's cards can make the event (flopped and community rows need a board, ...).
bool game_can_make(GameRule rule, HandEvent event);

enum class PayKind : std::uint8_t { percent, fixed, dynamic, must_hit_by, loss };

struct PaytableRow {
  HandEvent hand = HandEvent::royal_flush;
  Name label;  // As printed.
  PayKind kind = PayKind::loss;
  std::uint32_t percent = 0;        // PERCENT.
  std::uint32_t level = 0;          // PERCENT and MUST_HIT_BY.
  Money amount;                     // FIXED, DYNAMIC default, MUST_HIT_BY amount.
  std::array<Money, 10> options{};  // DYNAMIC.
  std::optional<Money> envy;
};

// The facts beyond the 7-card categories and royal suits that evaluation can skip: a bit each.
namespace facts {
inline constexpr unsigned kFloppedCategories = 1U << 0;
inline constexpr unsigned kFloppedRoyalSuits = 1U << 1;
inline constexpr unsigned kCommunityRoyal = 1U << 2;
inline constexpr unsigned kLongestRun = 1U << 3;
inline constexpr unsigned kSuitedNineToAce = 1U << 4;
inline constexpr unsigned kMaxSuitCount = 1U << 5;
inline constexpr unsigned kAll = (1U << 6) - 1;
}  // namespace facts

struct Paytable {
  Name id;
  std::string game;  // As in the file, e.g. "HUH_DYNAMIC".
  GameRule rule = GameRule::heads_up_holdem;
  Money base_wager;
  std::string source;
  std::vector<PaytableRow> rows;           // Highest rank first.
  std::uint32_t dynamic_min_selected = 0;  // Both 0 when the paytable has no DYNAMIC rows.
  std::uint32_t dynamic_max_selected = 0;
  bool lists_community_royal = false;
  // What resolving against the rows reads (facts::), set by the loader: evaluation skips the rest.
  unsigned facts_needed = facts::kAll;
  // Categories of which a hand must hold one for any row to qualify, set by the loader; every
  // category when some row can qualify without one (runs, suit counts).
  CategorySet reaching = 0xFFFF;
};

// A seat's cards as the table reports them.
struct SeatCards {
  std::span<const Card> pocket;     // The seat's own cards.
  std::span<const Card> community;  // Shared cards in deal order (board: flop first).
};

// How many cards each rule needs.
struct CardCounts {
  std::size_t pocket;
  std::size_t community;
};
CardCounts card_counts(GameRule rule);

// What the cards of one seat make, computed once and matched against every row.
struct HandFacts {
  CategorySet categories = 0;  // Rank categories only among those evaluate() was asked for.
  unsigned royal_suits = 0;
  CategorySet flopped_categories = 0;  // Heads Up Hold'em only.
  unsigned flopped_royal_suits = 0;
  bool community_royal = false;
  unsigned longest_run = 0;
  bool suited_nine_to_ace = false;
  unsigned max_suit_count = 0;
};

// Evaluates validated cards (right counts, no duplicates) under the rule. Facts not in `needed`
// (facts::) are left at their defaults.
HandFacts evaluate(GameRule rule, SeatCards cards, unsigned needed = facts::kAll);

// What the community cards contribute to every seat's facts, computed once per round and link.
struct CommunityCards {
  std::uint64_t all = 0;   // CardMask of every community card.
  std::uint64_t flop = 0;  // Heads Up Hold'em: the first three.
  bool royal = false;      // Heads Up Hold'em: the board alone is a royal flush.
};
CommunityCards community_cards(GameRule rule, std::span<const Card> community);
// The same with the cards' mask (mask_of(community)) already made, as parsing them makes it.
CommunityCards community_cards(GameRule rule, std::span<const Card> community, CardMask all);
// evaluate() with the community's part already computed: the same facts.
HandFacts evaluate(GameRule rule, std::span<const Card> pocket, const CommunityCards& community,
                   unsigned needed);
// The same with the seat's own cards as a mask, for callers that made it while parsing them.
// Categories found by rank are looked for only among `wanted` (see categories()): a paytable's
// `reaching` are all that resolve() reads.
HandFacts evaluate(GameRule rule, CardMask pocket, const CommunityCards& community, unsigned needed,
                   CategorySet wanted = 0xFFFF);

// The facts that qualifies() reads for these rows (facts::).
unsigned facts_needed_by(const std::vector<PaytableRow>& rows);
// The categories of which a hand must hold one for any of these rows to qualify.
CategorySet categories_reaching(const std::vector<PaytableRow>& rows);

// The facts of a hand a dealer keyed in (tables without a card reader): the smallest hand that
// is that event, so that it resolves like dealt cards would (a keyed royal on a paytable without
// a Royal Flush row pays its Straight Flush row). `suit` is the link's suit-specific suit.
HandFacts keyed_facts(HandEvent event, Suit suit);

// Checks counts and duplicates across pocket and community cards; the message says what is wrong.
std::optional<CardError> check_cards(GameRule rule, SeatCards cards);
// The counts alone, for callers that already refused duplicate and out-of-range cards.
std::optional<CardError> check_card_counts(GameRule rule, SeatCards cards);

struct RoundContext {
  Suit specific_suit = Suit::spades;  // The suit of "(Suit Specific)" rows (a link setting).
};

// True when the facts qualify for the event on this paytable.
bool qualifies(const Paytable& paytable, HandEvent event, const HandFacts& facts,
               const RoundContext& context);

// The highest-ranking row the facts qualify for (its index), or nothing (the hand loses).
// Inline for its first test: most hands hold none of the categories any row needs (`reaching`)
// and lose there, without a call; the rest walk the rows (resolve_walk()).
std::optional<std::size_t> resolve_walk(const Paytable& paytable, const HandFacts& facts,
                                        const RoundContext& context);
inline std::optional<std::size_t> resolve(const Paytable& paytable, const HandFacts& facts,
                                          const RoundContext& context) {
  if ((facts.categories & paytable.reaching) == 0) return std::nullopt;
  return resolve_walk(paytable, facts, context);
}

// The hand a dealer keyed in at a table whose links use `paytables`: the hand of a row whose
// label (as printed) has the keyed text's hand_key() on any of them, else the hand event of that
// key (e.g. "FULL_HOUSE"); nothing when neither. The loaders make sure that a key names one hand
// on a table (a label never keys another row's label or another hand's event name).
std::optional<HandEvent> keyed_event(std::span<const Paytable* const> paytables,
                                     std::string_view keyed);

// Checks the cards, evaluates them under the paytable's rule and resolves the row.
Result<std::optional<std::size_t>, CardError> resolve_cards(const Paytable& paytable,
                                                            SeatCards cards,
                                                            const RoundContext& context);

}  // namespace jackpot
