// The canonical form of the engine's requests (controller/engine/request_canonical.h): which
// spellings are one request, table by table.
#include "controller/engine/request_canonical.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "controller/hands/paytable_loader.h"

namespace jackpot {
namespace {

TEST(CanonicalCard, SpellsEveryCardOneWay) {
  const std::pair<const char*, const char*> cases[] = {
      {"As", "As"},  {"as", "As"},  {"AS", "As"}, {"aS", "As"}, {"Ts", "Ts"},   {"ts", "Ts"},
      {"10s", "Ts"}, {"10S", "Ts"}, {"2c", "2c"}, {"2C", "2c"}, {"kd", "Kd"},   {"Qh", "Qh"},
      {"qH", "Qh"},  {"1s", "1s"},  {"", ""},     {"Xx", "Xx"}, {"As ", "As "}, {"11s", "11s"},
  };
  for (const auto& [text, canonical_text] : cases) {
    EXPECT_EQ(canonical_card(text), canonical_text) << "'" << text << "'";
  }
}

WagerRequest wager(std::uint32_t seat, const char* link, std::int64_t cents) {
  return {seat, LinkId(link), cents};
}

TEST(CanonicalRequest, WagersInAnyOrderAreOneLock) {
  const LockWagersRequest sorted{
      TableId("T"), RoundId(4), {wager(1, "A", 100), wager(1, "B", 200), wager(3, "A", 100)}};
  const std::vector<std::vector<WagerRequest>> orders = {
      {wager(3, "A", 100), wager(1, "B", 200), wager(1, "A", 100)},
      {wager(1, "B", 200), wager(3, "A", 100), wager(1, "A", 100)},
      sorted.wagers,
  };
  for (const auto& wagers : orders) {
    EXPECT_EQ(canonical(LockWagersRequest{TableId("T"), RoundId(4), wagers}), sorted);
  }
  // What changes the lock stays: an amount, a seat, a link, the round.
  for (const LockWagersRequest& other :
       {LockWagersRequest{TableId("T"), RoundId(4), {wager(1, "A", 100), wager(1, "B", 300)}},
        LockWagersRequest{TableId("T"), RoundId(4), {wager(2, "A", 100), wager(1, "B", 200)}},
        LockWagersRequest{TableId("T"), RoundId(5), sorted.wagers}}) {
    EXPECT_NE(canonical(other), sorted);
  }
}

SeatHandRequest seat(std::uint32_t number, std::vector<std::string> cards) {
  return {number, std::move(cards), std::nullopt};
}

SeatHandRequest keyed(std::uint32_t number, std::string hand) { return {number, {}, hand}; }

TEST(CanonicalRequest, SeatsCardsAndKeyedHandsSpeltAnyWayAreOneSettlement) {
  const SettleRoundRequest reference{
      TableId("T"),
      RoundId(9),
      {seat(1, {"As", "Ks"}), seat(2, {"2c", "Td"}), keyed(4, "Full House")},
      {"Qs", "Js", "Ts", "3h", "4c"},
      {"9d", "9h", "9c"}};
  const SettleRoundRequest same[] = {
      {TableId("T"),
       RoundId(9),
       {keyed(4, "FULL_HOUSE"), seat(2, {"10d", "2C"}), seat(1, {"ks", "as"})},
       {"qs", "JS", "10s", "3H", "4c"},
       {"9D", "9h", "9c"}},
      {TableId("T"),
       RoundId(9),
       {seat(2, {"2c", "TD"}), seat(1, {"Ks", "As"}), keyed(4, "full house")},
       {"Qs", "Js", "Ts", "3h", "4c"},
       {"9d", "9h", "9c"}},
  };
  for (const SettleRoundRequest& request : same) {
    EXPECT_EQ(canonical(request), canonical(reference));
  }
  const auto differs = [&](auto change) {
    SettleRoundRequest other = reference;
    change(other);
    return canonical(other) != canonical(reference);
  };
  EXPECT_TRUE(differs([](auto& r) { r.seats[0].cards = {"As", "Qs"}; }));  // Another card.
  EXPECT_TRUE(differs([](auto& r) { std::swap(r.seats[0].cards, r.seats[1].cards); }));
  EXPECT_TRUE(differs([](auto& r) { std::swap(r.board[0], r.board[3]); }));  // Another flop.
  EXPECT_TRUE(differs([](auto& r) { std::swap(r.link_cards[0], r.link_cards[2]); }));
  EXPECT_TRUE(differs([](auto& r) { r.seats[2].keyed_hand = "Flush"; }));
  EXPECT_TRUE(differs([](auto& r) { r.seats[2].seat = 5; }));
  EXPECT_TRUE(differs([](auto& r) { r.round = RoundId(10); }));
  EXPECT_TRUE(differs([](auto& r) { r.link_cards.clear(); }));
}

// Given the table's paytables, a keyed hand is the hand it names there: a row printed "4 of a
// Kind" keyed as printed, by another paytable's spelling or by the hand's name is one hand.
TEST(CanonicalRequest, AKeyedHandIsTheHandItNamesOnTheTablesPaytables) {
  static const std::vector<Paytable> shipped = [] {
    auto loaded = load_paytables(embedded_paytables());
    if (!loaded) throw std::runtime_error("the shipped paytables do not load");
    return std::move(loaded).value();
  }();
  const auto found = std::find_if(shipped.begin(), shipped.end(),
                                  [](const Paytable& p) { return p.id == "MS Stud-01"; });
  ASSERT_NE(found, shipped.end());
  const std::vector<const Paytable*> table = {&*found};
  const auto settle = [](const char* keyed_hand) {
    return SettleRoundRequest{TableId("T"), RoundId(9), {keyed(4, keyed_hand)}, {}, {}};
  };
  const SettleRoundRequest reference = settle("4 of a Kind");
  for (const char* same : {"4 OF A KIND", "Four-of-a-Kind", "FOUR_OF_A_KIND", "four of a kind"}) {
    EXPECT_EQ(canonical(settle(same), table), canonical(reference, table)) << same;
  }
  EXPECT_NE(canonical(settle("Full House"), table), canonical(reference, table));
  EXPECT_NE(canonical(settle("3 of a Kind"), table), canonical(reference, table));
  // Without paytables only the spelling is made one: another row's text stays another request.
  EXPECT_NE(canonical(settle("FOUR_OF_A_KIND")), canonical(reference));
  EXPECT_EQ(canonical(settle("4 of a kind")), canonical(reference));
}

TEST(CanonicalRequest, OpenAndVoidAreTheirOwnCanonicalForm) {
  const OpenRoundRequest open{TableId("T"), RoundId(3)};
  EXPECT_EQ(canonical(open), open);
  const VoidRoundRequest void_round{TableId("T"), RoundId(3), "Misdeal "};
  EXPECT_EQ(canonical(void_round), void_round);  // A reason is kept as written.
}

}  // namespace
}  // namespace jackpot
