#include "tools/tablesim_deal.h"

#include <sodium.h>

#include <algorithm>
#include <cstring>

#include "controller/hands/cards.h"
#include "controller/hands/paytable.h"

namespace jackpot::tools {

std::vector<TableShape> table_shapes(const EngineConfig& floor,
                                     const std::vector<Paytable>& paytables, std::string& error) {
  std::vector<TableShape> shapes;
  for (const TableSettings& table : floor.tables) {
    TableShape shape;
    shape.table_id = table.id.value();
    shape.seats = table.seats;
    const TableCards cards = table_cards(table.game);
    shape.seat_cards = cards.seat_cards;
    shape.board_cards = cards.board_cards;
    for (const TableLinkSettings& played : table.links) {
      const auto link = std::find_if(floor.links.begin(), floor.links.end(),
                                     [&](const auto& l) { return l.meters.id == played.link; });
      const auto paytable = std::find_if(paytables.begin(), paytables.end(), [&](const auto& p) {
        return p.id.str() == played.paytable_id;
      });
      if (link == floor.links.end() || paytable == paytables.end()) {
        error = "table " + shape.table_id + ": link " + played.link.value() + " or paytable " +
                played.paytable_id + " is not on the floor";
        return {};
      }
      shape.links.push_back({played.link.value(),
                             link->meters.base_wager.micros() / Money::kMicrosPerCent,
                             link->max_wager_units});
      if (played.community != CommunitySource::link_cards) continue;
      const std::size_t wanted = card_counts(paytable->rule).community;
      if (shape.link_cards != 0 && shape.link_cards != wanted) {
        error = "table " + shape.table_id + ": its links want " + std::to_string(shape.link_cards) +
                " and " + std::to_string(wanted) + " link cards; one set cannot serve both";
        return {};
      }
      shape.link_cards = wanted;
    }
    const std::size_t dealt = shape.seats * shape.seat_cards + shape.board_cards + shape.link_cards;
    if (dealt > 52) {
      error = "table " + shape.table_id + ": a full table deals " + std::to_string(dealt) +
              " cards, more than one deck";
      return {};
    }
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

Seed seed_from_text(const std::string& text) {
  Seed seed{};
  crypto_generichash(seed.data(), seed.size(), reinterpret_cast<const unsigned char*>(text.data()),
                     text.size(), nullptr, 0);
  return seed;
}

RoundRandom::RoundRandom(const Seed& seed, const std::string& table_id, std::uint64_t round_id) {
  crypto_generichash_state state;
  crypto_generichash_init(&state, seed.data(), seed.size(), key_.size());
  // The table id's length first, so ("T1", round 23) and ("T12", round 3) never share a stream.
  const std::uint64_t id_length = table_id.size();
  unsigned char number[8];
  const auto put = [&](std::uint64_t value) {
    for (int i = 0; i < 8; ++i) number[i] = static_cast<unsigned char>(value >> (8 * i));
    crypto_generichash_update(&state, number, sizeof number);
  };
  put(id_length);
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(table_id.data()),
                            table_id.size());
  put(round_id);
  crypto_generichash_final(&state, key_.data(), key_.size());
  refill();
}

void RoundRandom::refill() {
  // Block b of the stream: ChaCha20 keyed by BLAKE2b(key, b).
  unsigned char block_seed[randombytes_SEEDBYTES];
  unsigned char index[8];
  for (int i = 0; i < 8; ++i) index[i] = static_cast<unsigned char>(block_ >> (8 * i));
  crypto_generichash(block_seed, sizeof block_seed, index, sizeof index, key_.data(), key_.size());
  randombytes_buf_deterministic(buffer_.data(), buffer_.size(), block_seed);
  ++block_;
  used_ = 0;
}

std::uint32_t RoundRandom::next_word() {
  if (used_ + 4 > buffer_.size()) refill();
  std::uint32_t word = 0;
  std::memcpy(&word, buffer_.data() + used_, 4);
  used_ += 4;
  return word;
}

std::uint32_t RoundRandom::below(std::uint32_t bound) {
  // Rejects the top partial range of 2^32 so every value is equally likely.
  const std::uint32_t limit =
      static_cast<std::uint32_t>((std::uint64_t{1} << 32) - ((std::uint64_t{1} << 32) % bound));
  for (;;) {
    const std::uint32_t word = next_word();
    if (limit == 0 || word < limit) return word % bound;
  }
}

bool RoundRandom::chance(double p) {
  if (p <= 0) return false;
  if (p >= 1) return true;
  return static_cast<double>(next_word()) < p * 4294967296.0;
}

RoundPlan plan_round(const TableShape& table, const PlayStyle& style, RoundRandom& random) {
  RoundPlan plan;
  std::vector<bool> wagering(table.seats + 1, false);
  for (std::uint32_t seat = 1; seat <= table.seats; ++seat) {
    for (const TableShape::Link& link : table.links) {
      if (!random.chance(style.wager_probability)) continue;
      const std::uint32_t most =
          std::max<std::uint32_t>(std::min(style.max_units, link.max_units), 1);
      const std::uint32_t units = 1 + random.below(most);
      plan.wagers.push_back({seat, link.id, link.base_wager_cents * units});
      wagering[seat] = true;
    }
  }
  plan.void_after_lock = random.chance(style.void_probability);

  std::vector<std::string> deck;
  deck.reserve(52);
  for (const char rank : kRankLetters) {
    for (const char suit : kSuitLetters) deck.push_back({rank, suit});
  }
  for (std::uint32_t i = 51; i > 0; --i) std::swap(deck[i], deck[random.below(i + 1)]);
  std::size_t next = 0;
  const auto draw = [&](std::size_t count) {
    std::vector<std::string> cards(deck.begin() + static_cast<std::ptrdiff_t>(next),
                                   deck.begin() + static_cast<std::ptrdiff_t>(next + count));
    next += count;
    return cards;
  };
  plan.seat_cards.resize(table.seats + 1);
  for (std::uint32_t seat = 1; seat <= table.seats; ++seat) {
    if (wagering[seat]) plan.seat_cards[seat] = draw(table.seat_cards);
  }
  plan.board = draw(table.board_cards);
  plan.link_cards = draw(table.link_cards);
  return plan;
}

}  // namespace jackpot::tools
