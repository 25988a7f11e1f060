#pragma once

// The members of each message in the order the hand-written format (versions 1 and 2) holds
// them: the reader (engine_codec_v2.cc) and the tests' writer (tests/support/codec_v2_writer.cc)
// walk the same lists. `a` is called with the members in order; version() tells which version
// is read or written.

#include "controller/engine/engine_types.h"

namespace jackpot::codec_v2 {

template <typename A>
void fields(A& a, LevelMeterView& v) {
  a(v.link, v.level, v.name, v.meter, v.must_hit_by, v.ceiling);
}
template <typename A>
void fields(A& a, DynamicPayView& v) {
  a(v.hand, v.option, v.amount);
}
template <typename A>
void fields(A& a, DynamicSelectionView& v) {
  a(v.link, v.paytable_id, v.pays);
}
template <typename A>
void fields(A& a, OpenRoundRequest& v) {
  a(v.table, v.round);
}
template <typename A>
void fields(A& a, OpenRoundAnswer& v) {
  a(v.table, v.round, v.dynamic_pays);
}
template <typename A>
void fields(A& a, WagerRequest& v) {
  a(v.seat, v.link, v.amount_cents);
}
template <typename A>
void fields(A& a, LockWagersRequest& v) {
  a(v.table, v.round, v.wagers);
}
template <typename A>
void fields(A& a, MustHitByHitView& v) {
  a(v.link, v.level, v.seat, v.amount, v.draw_id);
  if (a.version() >= 2) a(v.payout_state);
}
template <typename A>
void fields(A& a, LockWagersAnswer& v) {
  a(v.table, v.round, v.meters, v.must_hit_by_hits);
}
template <typename A>
void fields(A& a, SeatHandRequest& v) {
  a(v.seat, v.cards, v.keyed_hand);
}
template <typename A>
void fields(A& a, SettleRoundRequest& v) {
  a(v.table, v.round, v.seats, v.board, v.link_cards);
}
template <typename A>
void fields(A& a, AwardView& v) {
  a(v.link, v.kind, v.level, v.hand, v.from_seat, v.amount, v.payout);
  if (a.version() >= 2) a(v.payout_state);
}
template <typename A>
void fields(A& a, SeatResultView& v) {
  a(v.seat, v.link, v.paytable_id, v.hand, v.dealer_keyed, v.awards, v.total);
}
template <typename A>
void fields(A& a, SettleRoundAnswer& v) {
  a(v.table, v.round, v.results, v.meters);
}
template <typename A>
void fields(A& a, VoidRoundRequest& v) {
  a(v.table, v.round, v.reason);
}
template <typename A>
void fields(A& a, VoidRoundAnswer& v) {
  a(v.table, v.round, v.reversed, v.meters);
}

}  // namespace jackpot::codec_v2
