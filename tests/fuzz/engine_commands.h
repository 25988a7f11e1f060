#pragma once

// The byte format of the engine_fuzz target's input: a sequence of engine commands over the
// fixed floor of engine_fuzz_floor.textproto. Shared by the target (which reads it) and by
// fuzz_seeds (which writes the seed inputs of tests/fuzz/corpus/engine_fuzz).
//
// The input's first byte seeds the engine's deterministic random source. Then, one after the
// other until the input ends (a read past the end reads zeros), commands of an op byte
// (op % kOpCount, Op below) and its operands, each one byte unless said otherwise:
//
//   table    % 5: the floor's tables H1, H2, M1, F1, or 4 = a table that does not exist.
//   round    % 5: 0 = the natural round (open: the table's last opened + 1; the others: the
//            last opened), 1 = the last opened, 2 = the one opened before it, 3 = a raw round
//            id (8 more bytes, big-endian), 4 = the last opened + 2 + byte / 5.
//   seat     below 240: % (seats + 2), so 0 and seats + 1 do not exist; else a raw seat (4 bytes).
//   link     % (the table's links + 1): the table's links in order, or a link of another table.
//   units    below 250: (byte % 25) base wagers (over the link's maximum from 21), one cent more
//            when byte % 25 is 24; else a raw amount in cents (8 bytes).
//   cards    a count (% 9), then one byte per card: below 208 the card (byte % 52: rank
//            byte % 13, suit byte / 13 % 4) spelt as "As", "as", "10s"/"AS" or "aS" by byte / 52;
//            else text that is no card (a length % 6 and that many raw bytes).
//   hand     % 26: 1..24 the hand events by name, 0 = "ROYAL", 25 = "".
//
//   OPEN     table round
//   LOCK     table round count(% 9) then count × (seat link units)
//   SETTLE   table round count(% 7) then count × (seat mode(% 4: 0 cards, 1 a keyed hand,
//            2 both, 3 neither) [cards] [hand]), then board cards, then link cards
//   VOID     table round reason(% 4: "misdeal", "", a NUL inside, "dealer error")
//   APPROVE  payout(below 200: the (byte % n)-th pending payout; else id byte - 200)
//            supervisor(% 4: "sup-a", "sup-b", "", a NUL inside)
//   REJECT   payout supervisor reason(% 3: "wrong hand", blanks, a NUL inside)
//   STATUS   link(% 5: royal, dyn, five, hcf, or one that does not exist) status(% 3)
//   REPEAT   index(% the number of earlier successful round commands): that command again
//   RESTORE  (no operands) the engine is replaced by one restored from its snapshot

#include <cstdint>
#include <string>

namespace jackpot::fuzz {

enum class Op : std::uint8_t {
  open = 0,
  lock = 1,
  settle = 2,
  void_round = 3,
  approve = 4,
  reject = 5,
  status = 6,
  repeat = 7,
  restore = 8,
};
inline constexpr std::uint8_t kOpCount = 9;

inline constexpr std::uint8_t kTableCount = 4;  // H1, H2, M1, F1.

// A card byte for "As"-style text: rank 0..12 (2..A), suit 0..3 (s, h, d, c).
inline std::uint8_t card_byte(std::uint8_t rank, std::uint8_t suit) {
  return static_cast<std::uint8_t>(suit * 13 + rank);
}

// Appends commands in the format above; for the seed corpus.
class CommandWriter {
 public:
  explicit CommandWriter(std::uint8_t seed) { bytes_.push_back(static_cast<char>(seed)); }
  CommandWriter& op(Op op) { return byte(static_cast<std::uint8_t>(op)); }
  CommandWriter& byte(std::uint8_t value) {
    bytes_.push_back(static_cast<char>(value));
    return *this;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

}  // namespace jackpot::fuzz
