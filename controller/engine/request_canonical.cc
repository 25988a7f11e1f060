#include "controller/engine/request_canonical.h"

#include <algorithm>
#include <tuple>

#include "controller/hands/cards.h"

namespace jackpot {

std::string canonical_card(const std::string& text) {
  const auto card = parse_card(text);
  return card ? to_string(*card) : text;
}

OpenRoundRequest canonical(OpenRoundRequest request) { return request; }

LockWagersRequest canonical(LockWagersRequest request) {
  std::sort(request.wagers.begin(), request.wagers.end(),
            [](const WagerRequest& a, const WagerRequest& b) {
              return std::tie(a.seat, a.link.value(), a.amount_cents) <
                     std::tie(b.seat, b.link.value(), b.amount_cents);
            });
  return request;
}

SettleRoundRequest canonical(SettleRoundRequest request,
                             std::span<const Paytable* const> paytables) {
  for (SeatHandRequest& seat : request.seats) {
    for (std::string& card : seat.cards) card = canonical_card(card);
    // By the card's rank and suit where both parse, else by text: any order sorts the same.
    std::sort(seat.cards.begin(), seat.cards.end(), [](const std::string& a, const std::string& b) {
      const auto card_a = parse_card(a);
      const auto card_b = parse_card(b);
      if (card_a && card_b) {
        return std::tie(card_a->rank, card_a->suit) < std::tie(card_b->rank, card_b->suit);
      }
      if (card_a.ok() != card_b.ok()) return card_a.ok();
      return a < b;
    });
    if (seat.keyed_hand) {
      const auto event =
          paytables.empty() ? std::nullopt : keyed_event(paytables, *seat.keyed_hand);
      // The hand's event name cannot be a hand_key() (keys have no underscores or capitals).
      seat.keyed_hand = event ? std::string(to_string(*event)) : hand_key(*seat.keyed_hand);
    }
  }
  std::stable_sort(
      request.seats.begin(), request.seats.end(),
      [](const SeatHandRequest& a, const SeatHandRequest& b) { return a.seat < b.seat; });
  for (std::string& card : request.board) card = canonical_card(card);
  for (std::string& card : request.link_cards) card = canonical_card(card);
  return request;
}

VoidRoundRequest canonical(VoidRoundRequest request) { return request; }

}  // namespace jackpot
