#pragma once

// What jackpot-tablesim's tables deal, as pure functions (tests/unit/tablesim_deal_test.cc): the
// shape of each table of a floor (cards per seat, board, link cards, the links it plays), a
// seeded random source per table and round, and one round's wagers and cards from it.
//
// Reproducible: the same seed, table and round id give the same wagers, void decision and cards,
// whatever else the simulator does (retries, other tables, threads), since each round draws
// from its own stream.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/engine/engine_config.h"

namespace jackpot::tools {

// What one table of the floor deals each round, and on which links its seats wager.
struct TableShape {
  struct Link {
    std::string id;
    std::int64_t base_wager_cents = 100;
    std::uint32_t max_units = 100;  // The link's max_wager_units: a seat's most in one round.
  };
  std::string table_id;
  std::uint32_t seats = 0;
  std::size_t seat_cards = 0;  // Each wagering seat's own cards (the table's game).
  std::size_t board_cards = 0;
  std::size_t link_cards = 0;  // Cards drawn for the links that use link cards; 0 if none does.
  std::vector<Link> links;
};

// The shape of every table of a loaded floor (load_floor against `paytables`), in the floor's
// order. A table whose links want different numbers of link cards, or whose full table needs
// more than one deck, cannot be dealt: `error` names it and the result is empty.
std::vector<TableShape> table_shapes(const EngineConfig& floor,
                                     const std::vector<Paytable>& paytables, std::string& error);

// The simulator's seed: 32 bytes, from --seed's text (hashed) or drawn at random.
using Seed = std::array<unsigned char, 32>;
Seed seed_from_text(const std::string& text);

// A ChaCha20 stream (libsodium's randombytes_buf_deterministic) keyed by BLAKE2b of the seed,
// the table id and the round id: one round's draws, independent of every other round's.
class RoundRandom {
 public:
  RoundRandom(const Seed& seed, const std::string& table_id, std::uint64_t round_id);
  // Uniform in [0, bound), bound >= 1, without modulo bias.
  std::uint32_t below(std::uint32_t bound);
  // True with probability p (0..1), to one part in 2^32.
  bool chance(double p);

 private:
  std::uint32_t next_word();
  void refill();

  std::array<unsigned char, 32> key_{};
  std::uint64_t block_ = 0;
  std::array<unsigned char, 512> buffer_{};
  std::size_t used_ = 0;
};

// How the simulated players bet and the dealer errs.
struct PlayStyle {
  double wager_probability = 0.6;  // Each seat on each link, each round.
  std::uint32_t max_units = 1;     // Wagers of 1..max_units base wagers (at most the link's).
  double void_probability = 0.01;  // A round voided as a misdeal instead of settled.
};

// One round of one table: who wagers what, whether it is voided, and the cards.
struct RoundPlan {
  struct Wager {
    std::uint32_t seat = 0;
    std::string link_id;
    std::int64_t amount_cents = 0;
  };
  std::vector<Wager> wagers;  // By seat, then by link in the table's order.
  bool void_after_lock = false;
  // Cards of each wagering seat (index = seat number; empty for a seat that did not wager).
  std::vector<std::vector<std::string>> seat_cards;
  std::vector<std::string> board;
  std::vector<std::string> link_cards;
};

// Plans one round from its own random stream: wagers, then the void decision, then a shuffled
// 52-card deck dealt to the wagering seats in seat order, then the board, then the link cards.
RoundPlan plan_round(const TableShape& table, const PlayStyle& style, RoundRandom& random);

}  // namespace jackpot::tools
