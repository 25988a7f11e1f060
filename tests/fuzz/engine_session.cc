// The engine_fuzz target's session (engine_session.h): the command interpreter and its checks
// (listed in engine_fuzz.cc).
#include "tests/fuzz/engine_session.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "controller/engine/engine.h"
#include "controller/engine/floor_loader.h"
#include "meters/invariant.h"
#include "meters/random.h"
#include "tests/fuzz/engine_commands.h"
#include "tests/fuzz/fuzz_support.h"

namespace jackpot::fuzz {

// engine_fuzz_floor.textproto, built in (tests/fuzz/CMakeLists.txt).
const std::vector<std::pair<std::string_view, std::string_view>>& floor_files();

namespace {

[[noreturn]] void broken(const std::string& what) {
  invariant_failed("engine_fuzz", what, __FILE__, __LINE__);
}

struct Floor {
  EngineConfig config;
  std::vector<Paytable> paytables;  // Only those the floor plays: restore() copies them.
};

const Floor& floor() {
  static const Floor loaded = [] {
    JACKPOT_INVARIANT(floor_files().size() == 1, "one floor is built in");
    auto config = load_floor(floor_files().front().second, "engine_fuzz_floor.textproto",
                             shipped_paytables());
    if (!config) broken("the fuzz floor does not load: " + config.error().front());
    Floor result{std::move(config).value(), {}};
    for (const Paytable& paytable : shipped_paytables()) {
      for (const TableSettings& table : result.config.tables) {
        for (const TableLinkSettings& played : table.links) {
          if (played.paytable_id == paytable.id.str() &&
              std::none_of(result.paytables.begin(), result.paytables.end(),
                           [&](const Paytable& kept) { return kept.id == paytable.id; })) {
            result.paytables.push_back(paytable);
          }
        }
      }
    }
    JACKPOT_INVARIANT(result.config.tables.size() == kTableCount, "the floor has four tables");
    return result;
  }();
  return loaded;
}

// Reads the input front to back; zeros once it has run out.
class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool done() const { return next_ >= size_; }
  std::uint8_t byte() { return next_ < size_ ? data_[next_++] : 0; }
  std::uint64_t u64() {
    std::uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value = (value << 8) | byte();
    return value;
  }
  std::string raw_text(std::size_t length) {
    std::string text;
    for (std::size_t i = 0; i < length; ++i) text.push_back(static_cast<char>(byte()));
    return text;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t next_ = 0;
};

template <typename Request, typename Answer>
struct Done {
  Request request;
  Answer answer;
};
using DoneCommand =
    std::variant<Done<OpenRoundRequest, OpenRoundAnswer>, Done<LockWagersRequest, LockWagersAnswer>,
                 Done<SettleRoundRequest, SettleRoundAnswer>,
                 Done<VoidRoundRequest, VoidRoundAnswer>>;

Result<OpenRoundAnswer, EngineFailure> run(Engine& engine, const OpenRoundRequest& request,
                                           Records& out) {
  return engine.open_round(request, out);
}
Result<LockWagersAnswer, EngineFailure> run(Engine& engine, const LockWagersRequest& request,
                                            Records& out) {
  return engine.lock_wagers(request, out);
}
Result<SettleRoundAnswer, EngineFailure> run(Engine& engine, const SettleRoundRequest& request,
                                             Records& out) {
  return engine.settle_round(request, out);
}
Result<VoidRoundAnswer, EngineFailure> run(Engine& engine, const VoidRoundRequest& request,
                                           Records& out) {
  return engine.void_round(request, out);
}

std::string round_text(const TableId& table, RoundId round) {
  return table.value() + " round " + std::to_string(round.value());
}
std::string describe(const OpenRoundRequest& request) {
  return "OPEN " + round_text(request.table, request.round);
}
std::string describe(const LockWagersRequest& request) {
  std::string text = "LOCK " + round_text(request.table, request.round);
  for (const WagerRequest& wager : request.wagers) {
    text += " [seat " + std::to_string(wager.seat) + " " + wager.link.value() + " " +
            std::to_string(wager.amount_cents) + "c]";
  }
  return text;
}
std::string describe(const SettleRoundRequest& request) {
  std::string text = "SETTLE " + round_text(request.table, request.round);
  for (const SeatHandRequest& hand : request.seats) {
    text += " [seat " + std::to_string(hand.seat);
    for (const std::string& card : hand.cards) text += " " + card;
    if (hand.keyed_hand) text += " keyed " + *hand.keyed_hand;
    text += "]";
  }
  text += " board";
  for (const std::string& card : request.board) text += " " + card;
  text += " link";
  for (const std::string& card : request.link_cards) text += " " + card;
  return text;
}
std::string describe(const VoidRoundRequest& request) {
  return "VOID " + round_text(request.table, request.round);
}

class Session {
 public:
  Session(std::uint8_t seed, SessionLog* log) : random_(seed), log_(log) {
    Records out;
    auto created = Engine::create(floor().config, floor().paytables, clock_, random_, out);
    if (!created) broken("the fuzz floor does not run: " + created.error().front());
    engine_ = std::move(created).value();
    check_invariants();
  }

  void step(Input& in) {
    switch (static_cast<Op>(in.byte() % kOpCount)) {
      case Op::open:
        open(in);
        break;
      case Op::lock:
        lock(in);
        break;
      case Op::settle:
        settle(in);
        break;
      case Op::void_round:
        void_round(in);
        break;
      case Op::approve:
        decide(in, true);
        break;
      case Op::reject:
        decide(in, false);
        break;
      case Op::status:
        status(in);
        break;
      case Op::repeat:
        repeat(in);
        break;
      case Op::restore:
        restore();
        break;
    }
  }

  void restore() {
    if (log_ != nullptr && log_->trace) std::cerr << "RESTORE\n";
    const EngineSnapshot snapshot = engine_->snapshot();
    auto restored = Engine::restore(floor().config, floor().paytables, clock_, random_, snapshot);
    if (!restored) broken("an engine's own snapshot does not restore: " + restored.error().front());
    if ((*restored)->snapshot() != snapshot) broken("restore(snapshot()) is another engine");
    engine_ = std::move(restored).value();
    check_invariants();
  }

 private:
  struct TableRounds {
    std::uint64_t last = 0;    // The last round opened.
    std::uint64_t before = 0;  // The one opened before it.
  };

  const TableSettings* table(std::uint8_t choice, TableId& id) const {
    const std::size_t index = choice % (kTableCount + 1);
    if (index == kTableCount) {
      id = TableId("X9");
      return nullptr;
    }
    const TableSettings& settings = floor().config.tables[index];
    id = settings.id;
    return &settings;
  }

  RoundId round(Input& in, std::size_t table_index, bool opening) {
    const TableRounds& rounds = rounds_[std::min<std::size_t>(table_index, kTableCount)];
    const std::uint8_t choice = in.byte();
    switch (choice % 5) {
      case 0:
        return RoundId(opening ? rounds.last + 1 : rounds.last);
      case 1:
        return RoundId(rounds.last);
      case 2:
        return RoundId(rounds.before);
      case 3:
        return RoundId(in.u64());
      default:
        return RoundId(rounds.last + 2 + choice / 5);
    }
  }

  std::size_t table_index(const TableId& id) const {
    for (std::size_t i = 0; i < kTableCount; ++i) {
      if (floor().config.tables[i].id == id) return i;
    }
    return kTableCount;
  }

  std::string card(Input& in) {
    const std::uint8_t choice = in.byte();
    if (choice >= 208) return in.raw_text(in.byte() % 6);
    const std::uint8_t index = choice % 52;
    const std::uint8_t rank = index % 13;
    const std::uint8_t suit = index / 13;
    const char suit_letter = kSuitLetters[suit];
    const char rank_letter = kRankLetters[rank];
    const auto lower = [](char c) {
      return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    };
    const auto upper = [](char c) {
      return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
    };
    switch (choice / 52) {
      case 0:
        return {rank_letter, suit_letter};
      case 1:
        return {lower(rank_letter), suit_letter};
      case 2:
        return rank == kTen ? std::string("10") + suit_letter
                            : std::string{rank_letter, upper(suit_letter)};
      default:
        return {lower(rank_letter), upper(suit_letter)};
    }
  }

  std::vector<std::string> cards(Input& in) {
    std::vector<std::string> list(in.byte() % 9);
    for (std::string& text : list) text = card(in);
    return list;
  }

  std::uint32_t seat(Input& in, const TableSettings* settings) {
    const std::uint8_t choice = in.byte();
    if (choice >= 240) {
      std::uint32_t raw = 0;
      for (int i = 0; i < 4; ++i) raw = (raw << 8) | in.byte();
      return raw;
    }
    const std::uint32_t seats = settings ? settings->seats : 4;
    return choice % (seats + 2);
  }

  void open(Input& in) {
    TableId id;
    table(in.byte(), id);
    const std::size_t index = table_index(id);
    const OpenRoundRequest request{id, round(in, index, true)};
    if (round_command(request) && index < kTableCount &&
        request.round.value() > rounds_[index].last) {
      rounds_[index].before = rounds_[index].last;
      rounds_[index].last = request.round.value();
    }
  }

  void lock(Input& in) {
    TableId id;
    const TableSettings* settings = table(in.byte(), id);
    LockWagersRequest request{id, round(in, table_index(id), false), {}};
    request.wagers.resize(in.byte() % 9);
    for (WagerRequest& wager : request.wagers) {
      wager.seat = seat(in, settings);
      const std::uint8_t link_choice = in.byte();
      const std::size_t links = settings ? settings->links.size() : 0;
      const std::size_t link_index = links == 0 ? 0 : link_choice % (links + 1);
      std::int64_t base_cents = 100;
      if (settings && link_index < links) {
        const LinkId& link = settings->links[link_index].link;
        wager.link = link;
        for (const LinkSettings& candidate : floor().config.links) {
          if (candidate.meters.id == link) {
            base_cents = candidate.meters.base_wager.micros() / Money::kMicrosPerCent;
          }
        }
      } else {
        wager.link = LinkId(link_choice % 2 == 0 ? "hcf" : "nope");
      }
      const std::uint8_t units = in.byte();
      if (units >= 250) {
        wager.amount_cents = static_cast<std::int64_t>(in.u64());
      } else {
        wager.amount_cents = (units % 25) * base_cents + (units % 25 == 24 ? 1 : 0);
      }
    }
    round_command(request);
  }

  void settle(Input& in) {
    TableId id;
    const TableSettings* settings = table(in.byte(), id);
    SettleRoundRequest request{id, round(in, table_index(id), false), {}, {}, {}};
    request.seats.resize(in.byte() % 7);
    for (SeatHandRequest& hand : request.seats) {
      hand.seat = seat(in, settings);
      const std::uint8_t mode = in.byte() % 4;
      if (mode == 0 || mode == 2) hand.cards = cards(in);
      if (mode == 1 || mode == 2) {
        const std::uint8_t event = in.byte() % 26;
        if (event == 0) {
          hand.keyed_hand = "ROYAL";
        } else if (event == 25) {
          hand.keyed_hand = "";
        } else {
          hand.keyed_hand = std::string(to_string(static_cast<HandEvent>(event)));
        }
      }
    }
    request.board = cards(in);
    request.link_cards = cards(in);
    round_command(request);
  }

  void void_round(Input& in) {
    TableId id;
    table(in.byte(), id);
    VoidRoundRequest request{id, round(in, table_index(id), false), {}};
    switch (in.byte() % 4) {
      case 0:
        request.reason = "misdeal";
        break;
      case 1:
        break;
      case 2:
        request.reason = std::string("mis\0deal", 8);
        break;
      default:
        request.reason = "dealer error";
        break;
    }
    round_command(request);
  }

  void decide(Input& in, bool approve) {
    const std::uint8_t choice = in.byte();
    const std::vector<Payout> pending = engine_->pending_payouts();
    const PayoutId id =
        choice < 200 && !pending.empty()
            ? pending[choice % pending.size()].id
            : PayoutId(static_cast<std::uint64_t>(choice >= 200 ? choice - 200 : 0));
    static const std::string supervisors[] = {"sup-a", "sup-b", "", std::string("sup\0c", 5)};
    const std::string& supervisor = supervisors[in.byte() % 4];
    static const std::string reasons[] = {"wrong hand", " \t ", std::string("wr\0ng", 5)};
    const std::string& reason = approve ? reasons[0] : reasons[in.byte() % 3];

    // A few request ids, so that repeats (the first answer) and reuses for another decision
    // (replay_differs) happen; "" is refused.
    static const std::string request_ids[] = {"d1", "d2", "d3", "d4", ""};
    const std::string& request_id = request_ids[in.byte() % 5];

    const EngineSnapshot before = engine_->snapshot();
    Records out;
    auto result = engine_->decide_payout(
        {request_id, id, approve ? PayoutDecision::approve : PayoutDecision::reject,
         approve ? std::string() : reason},
        supervisor, out);
    check_invariants();
    note((approve ? "APPROVE payout " : "REJECT payout ") + std::to_string(id.value()) + " by '" +
             supervisor + "' as '" + request_id + "'",
         out, result);
    if (!result) {
      unchanged(before, out, "decide_payout");
      return;
    }
    if (out.empty()) {  // A repeat: its first answer, nothing changed.
      unchanged(before, out, "a repeated decide_payout");
      const auto first = decided_.find(request_id);
      if (first == decided_.end()) broken("a decision recorded nothing and is no repeat");
      if (first != decided_.end() && !(first->second == *result)) {
        broken("a repeated decision answered another answer");
      }
      return;
    }
    decided_.insert_or_assign(request_id, *result);
    if (result->id != id) broken("a decision answers for another payout");
    if (approve && result->state == PayoutState::rejected) broken("an approval rejected a payout");
    if (!approve && result->state != PayoutState::rejected) broken("a rejection did not reject");
  }

  void status(Input& in) {
    static const char* const links[] = {"royal", "dyn", "five", "hcf", "nope"};
    const LinkId link(links[in.byte() % 5]);
    const auto status = static_cast<LinkStatus>(in.byte() % 3);
    const EngineSnapshot before = engine_->snapshot();
    Records out;
    auto result = engine_->set_link_status(link, status, "operator", "fuzz", out);
    check_invariants();
    note("STATUS " + link.value() + " " + std::to_string(static_cast<int>(status)), out, result);
    if (!result) unchanged(before, out, "set_link_status");
  }

  void repeat(Input& in) {
    const std::uint8_t choice = in.byte();
    if (done_.empty()) return;
    std::visit(
        [this](const auto& done) {
          const EngineSnapshot before = engine_->snapshot();
          Records out;
          auto again = run(*engine_, done.request, out);
          check_invariants();
          note("REPEAT " + describe(done.request), out, again);
          unchanged(before, out, "a repeated command");
          if (again) {
            if (!(*again == done.answer)) broken("a repeated command answered another answer");
            return;
          }
          // Refused: only when the round has left memory, or for an OpenRound, once its round
          // is no longer the table's latest OPEN round (controller/engine/round_counter.h).
          constexpr bool kOpen =
              std::is_same_v<std::decay_t<decltype(done.request)>, OpenRoundRequest>;
          for (const TableSnapshot& kept : before.tables) {
            if (kept.id != done.request.table) continue;
            if (kOpen) {
              if (kept.current && kept.current->id == done.request.round &&
                  kept.current->phase == RoundPhase::open) {
                broken("a repeat of the latest OPEN round was refused: " + again.error().message);
              }
              continue;
            }
            for (const auto* round : {&kept.current, &kept.previous}) {
              if (*round && (*round)->id == done.request.round) {
                broken("a repeat of a kept round was refused: " + again.error().message);
              }
            }
          }
        },
        done_[choice % done_.size()]);
  }

  // Runs a round command with the checks above; whether it succeeded.
  template <typename Request>
  bool round_command(const Request& request) {
    const EngineSnapshot before = engine_->snapshot();
    Records out;
    auto result = run(*engine_, request, out);
    check_invariants();
    note(describe(request), out, result);
    if (!result) {
      unchanged(before, out, "a refused round command");
      return false;
    }
    const EngineSnapshot after = engine_->snapshot();
    Records again_out;
    auto again = run(*engine_, request, again_out);
    if (!again) broken("a command repeated at once was refused: " + again.error().message);
    if (!(*again == *result)) broken("a command repeated at once answered another answer");
    unchanged(after, again_out, "a command repeated at once");
    using Answer = std::decay_t<decltype(*result)>;
    done_.push_back(Done<Request, Answer>{request, *result});
    if (done_.size() > 64) done_.erase(done_.begin());
    return true;
  }

  // With a log: the command's outcome on stderr, and what it kept for replays.
  template <typename Outcome>
  void note(const std::string& command, const Records& out, const Outcome& outcome) {
    if (log_ == nullptr) return;
    for (const AnswerRecord& answer : out.answers) log_->answers.push_back(answer);
    if (log_->trace) {
      std::cerr << command << ": " << (outcome ? "ok" : "refused: " + outcome.error().message)
                << "\n";
    }
  }

  void unchanged(const EngineSnapshot& before, const Records& out, const char* what) {
    if (!out.empty()) broken(std::string(what) + " recorded something");
    if (engine_->snapshot() != before) broken(std::string(what) + " changed the engine");
  }

  void check_invariants() {
    if (auto problem = engine_->check_invariants()) broken("invariant broken: " + *problem);
  }

  std::map<std::string, Payout> decided_;  // The first answer of each request id decided.
  StoppedClock clock_;
  SplitMix64 random_;
  std::unique_ptr<Engine> engine_;
  SessionLog* log_;
  TableRounds rounds_[kTableCount + 1];
  std::vector<DoneCommand> done_;
};

}  // namespace

void run_session(const std::uint8_t* data, std::size_t size, SessionLog* log) {
  Input in(data, size);
  Session session(in.byte(), log);
  // Bounded, so that one input stays fast.
  for (int command = 0; command < 512 && !in.done(); ++command) session.step(in);
  session.restore();
}

}  // namespace jackpot::fuzz
