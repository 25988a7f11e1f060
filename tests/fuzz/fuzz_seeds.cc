// Writes the seed inputs of tests/fuzz/corpus/<target>/ (ops/fuzz --seed): valid and invalid
// cards, the shipped paytables, the example floor and the engine target's floor, scripted command
// sequences for engine_fuzz, and the requests and answers those sequences keep for replays as
// inputs of engine_codec_fuzz. With FUZZ_SEEDS_TRACE=1, each sequence's commands and outcomes
// go to stderr.
//
//   fuzz_seeds <source dir>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "controller/hands/paytable_loader.h"
#include "tests/fuzz/engine_commands.h"
#include "tests/fuzz/engine_session.h"

namespace jackpot::fuzz {

const std::vector<std::pair<std::string_view, std::string_view>>& floor_files();

namespace {

namespace fs = std::filesystem;

// Seeds are named seed-<name> with dots as dashes: no .textproto name, which ops/check-format
// would take for a file of the project.
void write(const fs::path& directory, std::string_view name, std::string_view bytes) {
  fs::create_directories(directory);
  std::string file_name = "seed-" + std::string(name);
  for (char& c : file_name) c = c == '.' ? '-' : c;
  std::ofstream file(directory / file_name, std::ios::binary);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!file) {
    std::cerr << "fuzz_seeds: cannot write " << (directory / name) << "\n";
    std::exit(1);
  }
}

std::string read(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::cerr << "fuzz_seeds: cannot read " << path << "\n";
    std::exit(1);
  }
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// Ranks and suits for card_byte().
enum Rank : std::uint8_t { r2, r3, r4, r5, r6, r7, r8, r9, rT, rJ, rQ, rK, rA };
enum SuitIndex : std::uint8_t { s, h, d, c };

struct Card2 {
  Rank rank;
  SuitIndex suit;
};

class Script {
 public:
  explicit Script(std::uint8_t seed) : out_(seed) {}
  Script& open(std::uint8_t table) {
    out_.op(Op::open).byte(table).byte(0);
    return *this;
  }
  // (seat, link index at the table, base wagers) each.
  Script& lock(std::uint8_t table,
               std::initializer_list<std::tuple<std::uint8_t, std::uint8_t, std::uint8_t>> wagers) {
    out_.op(Op::lock).byte(table).byte(0).byte(static_cast<std::uint8_t>(wagers.size()));
    for (const auto& [seat, link, units] : wagers) out_.byte(seat).byte(link).byte(units);
    return *this;
  }
  struct SeatHand {
    std::uint8_t seat;
    std::vector<Card2> cards;
    std::uint8_t keyed = 0;  // A hand event 1..24, or 0 for cards.
  };
  Script& settle(std::uint8_t table, const std::vector<SeatHand>& seats,
                 const std::vector<Card2>& board, const std::vector<Card2>& link_cards = {}) {
    out_.op(Op::settle).byte(table).byte(0).byte(static_cast<std::uint8_t>(seats.size()));
    for (const SeatHand& hand : seats) {
      out_.byte(hand.seat);
      if (hand.keyed != 0) {
        out_.byte(1).byte(hand.keyed);
      } else {
        out_.byte(0);
        cards(hand.cards);
      }
    }
    cards(board);
    cards(link_cards);
    return *this;
  }
  Script& void_round(std::uint8_t table) {
    out_.op(Op::void_round).byte(table).byte(0).byte(0);
    return *this;
  }
  Script& approve(std::uint8_t supervisor) {
    out_.op(Op::approve).byte(0).byte(supervisor);
    return *this;
  }
  Script& reject() {
    out_.op(Op::reject).byte(0).byte(1).byte(0);
    return *this;
  }
  Script& status(std::uint8_t link, std::uint8_t status) {
    out_.op(Op::status).byte(link).byte(status);
    return *this;
  }
  Script& repeat(std::uint8_t index) {
    out_.op(Op::repeat).byte(index);
    return *this;
  }
  Script& restore() {
    out_.op(Op::restore);
    return *this;
  }
  const std::string& bytes() const { return out_.bytes(); }

 private:
  void cards(const std::vector<Card2>& list) {
    out_.byte(static_cast<std::uint8_t>(list.size()));
    for (const Card2& card : list) out_.byte(card_byte(card.rank, card.suit));
  }
  CommandWriter out_;
};

constexpr std::uint8_t H1 = 0, H2 = 1, M1 = 2, F1 = 3;

std::vector<std::pair<std::string, std::string>> engine_scripts() {
  std::vector<std::pair<std::string, std::string>> scripts;
  // A Royal Flush at a Heads Up table on the royal link, approved; Five-Card Linked on the flop.
  scripts.emplace_back(
      "royal",
      Script(1)
          .open(H1)
          .lock(H1, {{1, 0, 5}, {2, 1, 3}, {3, 0, 1}})
          .settle(H1, {{1, {{rA, s}, {rK, s}}}, {2, {{r2, h}, {r3, d}}}, {3, {{r9, c}, {r9, d}}}},
                  {{rQ, s}, {rJ, s}, {rT, s}, {r4, c}, {r7, h}})
          .approve(0)
          .repeat(0)
          .repeat(2)
          .restore()
          .open(H1)
          .void_round(H1)
          .bytes());
  // Keyed hands with Dynamic Pays and Envy, a rejected payout, a void after a lock.
  scripts.emplace_back("dynamic-envy",
                       Script(2)
                           .open(H2)
                           .lock(H2, {{1, 0, 2}, {2, 1, 4}, {3, 0, 1}})
                           .settle(H2, {{1, {}, 1}, {2, {}, 7}, {3, {{r2, c}, {r9, d}}}},
                                   {{rK, h}, {rQ, h}, {r3, s}, {r8, c}, {r5, d}})
                           .reject()
                           .approve(1)
                           .open(H2)
                           .lock(H2, {{2, 1, 6}})
                           .void_round(H2)
                           .repeat(3)
                           .restore()
                           .bytes());
  // Mississippi Stud with link cards drawn for Five-Card Linked.
  scripts.emplace_back("link-cards",
                       Script(3)
                           .open(M1)
                           .lock(M1, {{1, 0, 2}, {2, 0, 1}})
                           .settle(M1, {{1, {{rA, h}, {rK, h}}}, {2, {{r2, s}, {r2, d}}}},
                                   {{r4, c}, {r6, d}, {r8, s}}, {{rQ, h}, {rJ, h}, {rT, h}})
                           .approve(0)
                           .approve(1)
                           .bytes());
  // High Card Flush: seven cards a seat, no board; every payout waits for a supervisor.
  scripts.emplace_back(
      "high-card-flush",
      Script(4)
          .open(F1)
          .lock(F1, {{1, 0, 3}, {2, 0, 1}})
          .settle(F1,
                  {{1, {{rA, s}, {rK, s}, {rQ, s}, {rJ, s}, {r9, s}, {r2, h}, {r3, h}}},
                   {2, {{r4, c}, {r5, c}, {r6, d}, {r7, d}, {r8, h}, {rT, h}, {rJ, c}}}},
                  {})
          .approve(0)
          .approve(0)
          .restore()
          .bytes());
  // Full rounds at four seats until the Must-Hit-By level hits at a lock; its void needs a
  // supervisor; a link closed and opened again.
  Script must_hit_by(5);
  for (int round = 0; round < 4; ++round) {
    must_hit_by.open(H1).lock(H1, {{1, 0, 20}, {2, 0, 20}, {3, 0, 20}, {4, 0, 20}});
    if (round == 3) must_hit_by.void_round(H1);
    must_hit_by
        .settle(H1,
                {{1, {{r2, c}, {r3, d}}},
                 {2, {{r4, h}, {r5, s}}},
                 {3, {{r7, c}, {r8, d}}},
                 {4, {{r9, h}, {rJ, c}}}},
                {{rK, s}, {rQ, d}, {r6, h}, {r2, s}, {r4, d}})
        .approve(0)
        .approve(1);
  }
  must_hit_by.status(0, 1).open(H1).status(0, 0).open(H1).restore().repeat(1).repeat(5);
  scripts.emplace_back("must-hit-by", must_hit_by.bytes());
  return scripts;
}

// The codec target's first byte: the message type, in engine_codec_fuzz.cc's order.
std::uint8_t codec_type(CommandKind command, bool answer) {
  std::uint8_t base = 0;
  switch (command) {
    case CommandKind::open:
      base = 0;
      break;
    case CommandKind::lock:
      base = 2;
      break;
    case CommandKind::settle:
      base = 4;
      break;
    case CommandKind::void_round:
      base = 6;
      break;
  }
  return static_cast<std::uint8_t>(base + (answer ? 1 : 0));
}

}  // namespace
}  // namespace jackpot::fuzz

int main(int argc, char** argv) {
  using namespace jackpot;
  using namespace jackpot::fuzz;
  if (argc != 2) {
    std::cerr << "usage: fuzz_seeds <source dir>\n";
    return 2;
  }
  const fs::path source = argv[1];
  const fs::path corpus = source / "tests/fuzz/corpus";

  const std::vector<std::pair<std::string, std::string>> cards = {{"ace", "As"},
                                                                  {"ten", "10h"},
                                                                  {"lower", "kc"},
                                                                  {"tee", "Td"},
                                                                  {"royal", "As Ks Qs Js Ts"},
                                                                  {"twice", "As Ks As"},
                                                                  {"seven", "2c 3d 4h 5s 6c 7d 8h"},
                                                                  {"bad-rank", "1s"},
                                                                  {"bad-suit", "Ax"},
                                                                  {"empty", ""},
                                                                  {"long", "10hh"},
                                                                  {"spaces", "As  Kd"}};
  for (const auto& [name, text] : cards) write(corpus / "cards_fuzz", name, text);

  for (const PaytableSource& paytable : embedded_paytables()) {
    write(corpus / "paytable_loader_fuzz", fs::path(paytable.origin).filename().string(),
          paytable.text);
  }
  write(corpus / "floor_loader_fuzz", "floor.example.textproto",
        read(source / "ops/floor.example.textproto"));
  for (const auto& [name, text] : floor_files()) write(corpus / "floor_loader_fuzz", name, text);

  const bool trace = std::getenv("FUZZ_SEEDS_TRACE") != nullptr;
  std::set<std::string> codec_inputs;
  for (const auto& [name, bytes] : engine_scripts()) {
    write(corpus / "engine_fuzz", name, bytes);
    SessionLog log;
    log.trace = trace;
    if (trace) std::cerr << "== " << name << "\n";
    run_session(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), &log);
    for (const AnswerRecord& kept : log.answers) {
      for (const bool answer : {false, true}) {
        std::string input(1, static_cast<char>(codec_type(kept.command, answer)));
        input += answer ? kept.encoded.answer() : kept.encoded.request();
        codec_inputs.insert(std::move(input));
      }
    }
  }
  // Named by the format version (the byte after the type) so that seeds an older format wrote,
  // "kept-N", stay beside these: the reader of every version keeps its seeds.
  int index = 0;
  for (const std::string& input : codec_inputs) {
    write(corpus / "engine_codec_fuzz",
          "kept-v" + std::to_string(static_cast<int>(input.at(1))) + "-" + std::to_string(index++),
          input);
  }
  std::cout << "fuzz_seeds: wrote the seeds under " << corpus << " (" << codec_inputs.size()
            << " codec inputs)\n";
  return 0;
}
