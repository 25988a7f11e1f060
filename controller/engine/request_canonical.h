#pragma once

// The canonical form of the round engine's requests: what a replay is compared by. Two requests
// with the same canonical form ask for the same thing, so the second is a replay of the first
// and gets its answer; a request whose canonical form differs is another request under the same
// ids, refused. Pure functions, no state.
//
// What does not change a request's meaning, and so is made one here:
// - the order of a lock's wagers (sorted by seat, then link, then amount);
// - the order of a settlement's seats (sorted by seat) and of a seat's own cards (a seat's hand
//   is the same in any order; sorted by rank, then suit);
// - how a card is spelt: "10s" and "Ts", "as" and "As" are the card As would be written
//   (to_string(Card)); a text that is no card is kept as it is (such a request is refused
//   before it is kept);
// - how a keyed hand is spelt: its hand_key() ("Full House", "FULL_HOUSE" -> "fullhouse"); and
//   given the table's paytables, the hand the key names there, so that two rows of one hand
//   printed differently ("4 of a Kind", "Four-of-a-Kind", "FOUR_OF_A_KIND") are the same hand.
//   The paytables are those in force at the retry, which may not be those of the first settle
//   (a restart with an edited floor); that is sound because a printed label names one hand on
//   every shipped paytable (tests/unit/keyed_hand_test.cc, EveryShippedLabelNamesOneHand...).
// What does change it stays: ids, amounts, which seat holds which cards, the board and the link
// cards in deal order (the flop is the board's first three), a void's reason.

#include <span>

#include "controller/engine/engine_types.h"
#include "controller/hands/paytable.h"

namespace jackpot {

OpenRoundRequest canonical(OpenRoundRequest request);
LockWagersRequest canonical(LockWagersRequest request);
// `paytables`: those of the round's table, to read a keyed hand as the hand it names (a key that
// names none there is kept as its hand_key(); such a request is refused before it is kept).
SettleRoundRequest canonical(SettleRoundRequest request,
                             std::span<const Paytable* const> paytables = {});
VoidRoundRequest canonical(VoidRoundRequest request);

// A card's text as the canonical form spells it, e.g. "10s" -> "Ts", "ah" -> "Ah".
std::string canonical_card(const std::string& text);

}  // namespace jackpot
