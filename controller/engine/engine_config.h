#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/hands/cards.h"
#include "controller/hands/paytable.h"
#include "meters/ids.h"
#include "meters/link_config.h"
#include "meters/money.h"

namespace jackpot {

// When several seats hit 100% of the same level in one round.
enum class HitPolicy : std::uint8_t {
  sequential,  // In seat order (highest seat first): the second hit wins the reset meter.
  split,       // Equal shares of the meter, floored to the cent; one reset.
};

// Where a link's rule takes its shared cards from at a table.
enum class CommunitySource : std::uint8_t {
  none,        // The game has no shared cards (High Card Flush).
  board,       // The table's board: Heads Up Hold'em's five, Mississippi Stud's three.
  flop,        // The first three board cards (Five-Card Linked at a Heads Up Hold'em table).
  link_cards,  // Cards drawn separately for the link (Five-Card or Seven-Card Stud Linked).
};

// A link: its meters (meters/link_config.h) and how the controller runs it.
struct LinkSettings {
  LinkConfig meters;
  HitPolicy simultaneous_hits = HitPolicy::sequential;
  Suit suit_specific = Suit::spades;  // The suit of "(Suit Specific)" rows.
  // Relative weights of the Dynamic Pay count (index 0 = the paytable's min_selected, one entry
  // per count up to max_selected) and of the ten options; empty = uniform.
  std::vector<std::uint32_t> dynamic_count_weights;
  std::vector<std::uint32_t> dynamic_option_weights;
  // The Must-Hit-By winner is drawn uniformly among the round's wagering seats, or weighted by
  // their wagers.
  bool must_hit_by_weighted_by_wager = false;
  // The most base wagers one seat may lock on the link in one round. With the seats of the
  // link's tables it bounds one round's contribution, which every Must-Hit-By level must have
  // room for between its reset value and its amount (so a level hits at most once a round and
  // its meter never passes the amount).
  std::uint32_t max_wager_units = 100;
  // Payouts of at least this amount wait for a supervisor; smaller ones are paid at once.
  Money approval_threshold;
  // Payouts above this amount need two different supervisors.
  std::optional<Money> dual_approval_threshold;
};

// One link a table plays, with the paytable it uses there.
struct TableLinkSettings {
  LinkId link;
  std::string paytable_id;
  CommunitySource community = CommunitySource::board;
};

// Seats at a table are numbered 1..kMaxSeats at most.
inline constexpr std::uint32_t kMaxSeats = 20;

struct TableSettings {
  TableId id;
  GameRule game = GameRule::heads_up_holdem;  // heads_up_holdem, mississippi_stud or
                                              // high_card_flush: fixes the cards a seat holds.
  std::uint32_t seats = 0;                    // Seats 1..seats from the dealer's left.
  std::vector<TableLinkSettings> links;
};

struct EngineConfig {
  std::vector<LinkSettings> links;
  std::vector<TableSettings> tables;
};

// The cards a table's seats hold and the board it deals, by the table's game.
struct TableCards {
  std::size_t seat_cards;
  std::size_t board_cards;
};
TableCards table_cards(GameRule table_game);

// How many shared cards a source yields for a link rule at a table of the given game.
std::size_t community_count(CommunitySource source, GameRule table_game, GameRule link_rule);

// Every problem with the configuration, naming the link or table and what is wrong; empty when
// the engine can run it. Checks: unique link and table ids; each link's meters (meters'
// validate()); weights (count weights fit the paytables played on the link, ten option weights,
// no all-zero weights); thresholds; each table's game, seats (1..20) and links: the link exists,
// is listed once, the paytable exists, its rule fits the table's seat cards and community
// source, every PERCENT level exists on the link and is not a Must-Hit-By level, every
// MUST_HIT_BY row matches a Must-Hit-By level of the link with the same printed amount; across a
// table's paytables, labels with the same hand_key() name the same hand (keyed hands).
std::vector<std::string> validate(const EngineConfig& config,
                                  const std::vector<Paytable>& paytables);

}  // namespace jackpot
