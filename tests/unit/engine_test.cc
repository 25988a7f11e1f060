// Scenario tests of the round engine, written from the rules (docs/architecture.md §2–§6), not
// from its code. Every expected amount is worked out by hand in exact micros from the link's
// configuration; every command is followed by Engine::check_invariants(); every refused command
// must change nothing and record nothing; every replay must return the first answer.
#include "controller/engine/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "controller/engine/engine_config.h"
#include "controller/hands/paytable_loader.h"
#include "controller/limits/request_limits.h"
#include "meters/hidden_trigger.h"
#include "meters/random.h"
#include "meters/reconcile.h"

namespace jackpot {
namespace {

// A request id of its own for each payout decision of these tests (Engine::decide_payout): they
// are about the rules of approval, not about repeats.
std::string next_request_id() {
  static int decisions = 0;
  return "decision-" + std::to_string(++decisions);
}

// ---- Small helpers ----------------------------------------------------------------------

Money usd(std::string_view text) {
  auto parsed = Money::parse(text);
  if (!parsed) throw std::invalid_argument("bad amount " + std::string(text));
  return *parsed;
}

Money sum(Money a, Money b) { return *a.plus(b); }

std::string error_name(EngineError code) { return std::string(to_string(code)); }

std::vector<std::string> sorted(std::vector<std::string> lines) {
  std::sort(lines.begin(), lines.end());
  return lines;
}

// A clock that stands still unless a test moves it.
class TestClock final : public Clock {
 public:
  std::int64_t now_us() override { return now; }
  std::int64_t now = 1'767'225'600'000'000;
};

const std::vector<Paytable>& shipped() {
  static const std::vector<Paytable> paytables = [] {
    auto loaded = load_paytables(embedded_paytables());
    if (!loaded) throw std::runtime_error("the shipped paytables do not load");
    return std::move(loaded).value();
  }();
  return paytables;
}

const Paytable& shipped_paytable(const std::string& id) {
  for (const Paytable& paytable : shipped()) {
    if (paytable.id == id) return paytable;
  }
  throw std::invalid_argument("no shipped paytable " + id);
}

LevelConfig level(std::uint32_t number, const std::string& name, const char* seed,
                  std::int64_t meter_ppm, std::int64_t reserve_ppm) {
  LevelConfig config;
  config.level = number;
  config.name = Name(name);
  config.seed = usd(seed);
  config.meter_rate_ppm = meter_ppm;
  config.reserve_rate_ppm = reserve_ppm;
  return config;
}

LevelConfig must_hit_by_level(std::uint32_t number, const char* seed, std::int64_t meter_ppm,
                              const char* amount) {
  LevelConfig config = level(number, "Must-Hit-By", seed, meter_ppm, 0);
  config.must_hit_by = usd(amount);
  return config;
}

LinkSettings link_settings(const std::string& id, std::vector<LevelConfig> levels,
                           const char* base = "1.00") {
  LinkSettings settings;
  settings.meters.id = LinkId(id);
  settings.meters.base_wager = usd(base);
  settings.meters.levels = std::move(levels);
  return settings;
}

TableSettings table_settings(const std::string& id, GameRule game, std::uint32_t seats,
                             std::vector<TableLinkSettings> links) {
  TableSettings settings;
  settings.id = TableId(id);
  settings.game = game;
  settings.seats = seats;
  settings.links = std::move(links);
  return settings;
}

TableLinkSettings plays(const std::string& link, const std::string& paytable,
                        CommunitySource community = CommunitySource::board) {
  return TableLinkSettings{LinkId(link), paytable, community};
}

WagerRequest wager(std::uint32_t seat, const std::string& link, std::int64_t cents) {
  return WagerRequest{seat, LinkId(link), cents};
}

SeatHandRequest cards(std::uint32_t seat, std::vector<std::string> held) {
  return SeatHandRequest{seat, std::move(held), std::nullopt};
}

SeatHandRequest keyed(std::uint32_t seat, const std::string& hand) {
  return SeatHandRequest{seat, {}, hand};
}

LockWagersRequest lock_request(const std::string& table, std::uint64_t round,
                               std::vector<WagerRequest> wagers) {
  return LockWagersRequest{TableId(table), RoundId(round), std::move(wagers)};
}

SettleRoundRequest settle_request(const std::string& table, std::uint64_t round,
                                  std::vector<SeatHandRequest> seats,
                                  std::vector<std::string> board,
                                  std::vector<std::string> link_cards = {}) {
  return SettleRoundRequest{TableId(table), RoundId(round), std::move(seats), std::move(board),
                            std::move(link_cards)};
}

VoidRoundRequest void_request(const std::string& table, std::uint64_t round,
                              const std::string& reason = "misdeal") {
  return VoidRoundRequest{TableId(table), RoundId(round), reason};
}

// Every award of a settlement as one line, e.g. "seat 6 percent L1 Straight Flush 100.00" or
// "seat 1 envy Royal Flush from 4 1000.00", sorted (the rules fix no order within a seat).
std::vector<std::string> award_lines(const SettleRoundAnswer& answer) {
  std::vector<std::string> lines;
  for (const SeatResultView& result : answer.results) {
    for (const AwardView& award : result.awards) {
      std::string line =
          "seat " + std::to_string(result.seat) + " " + std::string(to_string(award.kind));
      if (award.kind == AwardKind::percent || award.kind == AwardKind::must_hit_by) {
        line += " L" + std::to_string(award.level);
      }
      if (award.kind != AwardKind::must_hit_by) line += " " + award.hand;
      if (award.kind == AwardKind::envy) line += " from " + std::to_string(award.from_seat);
      line += " " + award.amount.to_string();
      lines.push_back(line);
    }
  }
  return sorted(lines);
}

std::vector<std::uint32_t> result_seats(const SettleRoundAnswer& answer) {
  std::vector<std::uint32_t> seats;
  for (const SeatResultView& result : answer.results) seats.push_back(result.seat);
  return seats;
}

// The result of a seat that must have one.
const SeatResultView& seat_result(const SettleRoundAnswer& answer, std::uint32_t seat) {
  for (const SeatResultView& result : answer.results) {
    if (result.seat == seat) return result;
  }
  throw std::runtime_error("no result for seat " + std::to_string(seat));
}

const SeatResultView* result_of(const SettleRoundAnswer& answer, std::uint32_t seat) {
  for (const SeatResultView& result : answer.results) {
    if (result.seat == seat) return &result;
  }
  return nullptr;
}

// The transfers of one command of a kind, in posting order.
std::vector<Transfer> transfers_of(const Records& records, TransferKind kind) {
  std::vector<Transfer> found;
  for (const TransferRecord& record : records.transfers) {
    if (record.transfer.kind == kind) found.push_back(record.transfer);
  }
  return found;
}

Money total_moved(const Records& records, TransferKind kind, AccountRef credit) {
  Money total;
  for (const TransferRecord& record : records.transfers) {
    if (record.transfer.kind == kind && record.transfer.credit == credit) {
      total = sum(total, record.transfer.amount);
    }
  }
  return total;
}

std::size_t count_draws(const Records& records, DrawKind kind) {
  return static_cast<std::size_t>(
      std::count_if(records.draws.begin(), records.draws.end(),
                    [kind](const DrawRecord& draw) { return draw.kind == kind; }));
}

// Pearson's chi-square statistic against the uniform distribution over the categories.
double chi_square_uniform(const std::vector<std::int64_t>& observed) {
  double total = 0;
  for (const std::int64_t count : observed) total += static_cast<double>(count);
  const double expected = total / static_cast<double>(observed.size());
  double chi = 0;
  for (const std::int64_t count : observed) {
    const double delta = static_cast<double>(count) - expected;
    chi += delta * delta / expected;
  }
  return chi;
}

// The chi-square value exceeded with probability 0.001, by degrees of freedom.
double chi_square_critical_p001(std::size_t degrees_of_freedom) {
  static const std::map<std::size_t, double> critical = {{1, 10.828}, {2, 13.816}, {3, 16.266},
                                                         {4, 18.467}, {5, 20.515}, {6, 22.458},
                                                         {7, 24.322}, {8, 26.124}, {9, 27.877}};
  return critical.at(degrees_of_freedom);
}

struct CommandRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An engine with a fixed clock and a seeded random source. Every command goes through run(),
// which checks the engine's invariants afterwards; the records of the last command are kept.
class Harness {
 public:
  explicit Harness(EngineConfig config, std::uint64_t seed = 20260101,
                   std::vector<Paytable> paytables = shipped())
      : random_(seed) {
    const auto problems = validate(config, paytables);
    EXPECT_TRUE(problems.empty()) << "the configuration is refused: "
                                  << (problems.empty() ? "" : problems.front());
    auto created =
        Engine::create(std::move(config), std::move(paytables), clock_, random_, created_records_);
    if (!created) throw std::runtime_error("Engine::create refused the configuration");
    engine_ = std::move(created).value();
    check("create");
  }

  Engine& engine() { return *engine_; }
  const Records& records() const { return last_; }  // Of the last command.
  const Records& created_records() const { return created_records_; }
  TestClock& clock() { return clock_; }
  RandomSource& random() { return random_; }

  Money meter(const std::string& link, std::uint32_t level_number) const {
    return engine_->link(LinkId(link))->meter(level_number);
  }
  Money reserve(const std::string& link, std::uint32_t level_number) const {
    return engine_->link(LinkId(link))->reserve(level_number);
  }
  Money balance(const std::string& link, AccountKind kind) const {
    return engine_->link(LinkId(link))->ledger().balance(AccountRef::link(kind));
  }
  Money pending_total(const std::string& link) const {
    Money total;
    for (const Payout& payout : engine_->pending_payouts()) {
      if (payout.link == LinkId(link)) total = sum(total, payout.amount);
    }
    return total;
  }

  // The engine's invariants, and awards_payable against the pending payouts of each link. After
  // the first three failures of one harness the rest are only counted (reported at the end).
  void check(const std::string& what) {
    std::string problems;
    if (const auto broken = engine_->check_invariants()) problems += *broken + "; ";
    for (const LinkSettings& link : engine_->config().links) {
      const std::string id = link.meters.id.value();
      if (balance(id, AccountKind::awards_payable) != pending_total(id)) {
        problems += "awards_payable of link " + id + " is " +
                    balance(id, AccountKind::awards_payable).to_string() +
                    " but its pending payouts total " + pending_total(id).to_string() + "; ";
      }
    }
    if (problems.empty()) return;
    if (++broken_ <= 3) {
      ADD_FAILURE() << "invariants broken after " << what << ": " << problems;
    }
  }

  ~Harness() {
    if (broken_ > 3) {
      ADD_FAILURE() << "invariants were broken after " << broken_ << " commands in all (the "
                    << "first three are reported above)";
    }
  }
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  // Every payout the engine recorded, in its latest state (paid and rejected payouts leave the
  // engine's memory; the records carry them).
  const Payout* payout(std::uint64_t id) const {
    const auto it = payouts_.find(id);
    return it == payouts_.end() ? nullptr : &it->second;
  }

  template <typename Command>
  auto run(const std::string& what, Command command) {
    last_.clear();
    auto result = command(*engine_, last_);
    for (const Payout& made : last_.payouts) {
      payouts_[made.id.value()] = made;
      // A pending payout is in the engine's memory as recorded.
      const Payout* held = engine_->payout(made.id);
      if (made.state == PayoutState::pending) {
        EXPECT_TRUE(held != nullptr && *held == made)
            << what << ": pending payout " << made.id.value() << " differs from its record";
      }
    }
    check(what);
    return result;
  }

  template <typename T>
  T ok(const std::string& what, Result<T, EngineFailure> result) {
    if (!result) {
      ADD_FAILURE() << what << " was refused: " << error_name(result.error().code) << ": "
                    << result.error().message;
      throw CommandRefused(what);
    }
    return std::move(result).value();
  }

  OpenRoundAnswer open(const std::string& table, std::uint64_t round) {
    const std::string what = "open " + table + " round " + std::to_string(round);
    const OpenRoundRequest request{TableId(table), RoundId(round)};
    auto answer = ok(what, run(what, [&](Engine& engine, Records& out) {
                       return engine.open_round(request, out);
                     }));
    expect_phase(what, table, round, RoundPhase::open);
    return answer;
  }

  LockWagersAnswer lock(const LockWagersRequest& request) {
    const std::string what =
        "lock " + request.table.value() + " round " + std::to_string(request.round.value());
    auto answer = ok(what, run(what, [&](Engine& engine, Records& out) {
                       return engine.lock_wagers(request, out);
                     }));
    expect_phase(what, request.table.value(), request.round.value(), RoundPhase::locked);
    expect_links_of_table(what, request.table);
    EXPECT_EQ(last_.wagers.size(), request.wagers.size()) << what << ": one record per wager";
    for (const WagerRequest& wager_made : request.wagers) {
      const auto found =
          std::find_if(last_.wagers.begin(), last_.wagers.end(), [&](const WagerRecord& record) {
            return record.seat == wager_made.seat && record.link == wager_made.link.value();
          });
      if (found == last_.wagers.end()) {
        ADD_FAILURE() << what << ": no wager record for seat " << wager_made.seat;
        continue;
      }
      EXPECT_EQ(found->amount, *Money::from_cents(wager_made.amount_cents)) << what;
      const Money base = engine_->link(wager_made.link)->config().base_wager;
      EXPECT_EQ(found->units, found->amount.micros() / base.micros()) << what;
    }
    return answer;
  }

  SettleRoundAnswer settle(const SettleRoundRequest& request) {
    const std::string what =
        "settle " + request.table.value() + " round " + std::to_string(request.round.value());
    auto answer = ok(what, run(what, [&](Engine& engine, Records& out) {
                       return engine.settle_round(request, out);
                     }));
    expect_phase(what, request.table.value(), request.round.value(), RoundPhase::settled);
    expect_links_of_table(what, request.table);
    // Results highest seat first.
    const auto seats = result_seats(answer);
    EXPECT_TRUE(std::is_sorted(seats.rbegin(), seats.rend()))
        << what << ": results are not in seat order, highest seat first";
    // Every award is a payout of the same amount, and each seat's total adds up.
    for (const SeatResultView& result : answer.results) {
      Money total;
      for (const AwardView& award : result.awards) {
        total = sum(total, award.amount);
        EXPECT_TRUE(award.amount.is_whole_cents()) << what << ": award " << award.amount;
        EXPECT_GT(award.amount, Money()) << what;
        // Must-Hit-By payouts are recorded at the lock that hit, the others now.
        const auto recorded = payouts_.find(award.payout.value());
        if (recorded == payouts_.end()) {
          ADD_FAILURE() << what << ": award of seat " << result.seat << " has no payout record";
          continue;
        }
        const Payout* payout = &recorded->second;
        EXPECT_EQ(payout->seat, result.seat) << what;
        EXPECT_EQ(payout->amount, award.amount) << what;
        EXPECT_EQ(payout->kind, award.kind) << what;
        EXPECT_EQ(payout->link, award.link) << what;
        EXPECT_EQ(payout->table, request.table) << what;
        EXPECT_EQ(payout->round, request.round) << what;
      }
      EXPECT_EQ(result.total, total) << what << ": seat " << result.seat;
    }
    // One hand record per wagering seat and link, keyed or not as reported.
    for (const HandRecord& hand : last_.hands) {
      const auto reported = std::find_if(request.seats.begin(), request.seats.end(),
                                         [&](const auto& seat) { return seat.seat == hand.seat; });
      if (reported == request.seats.end()) {
        ADD_FAILURE() << what << ": a hand record for seat " << hand.seat << ", not reported";
        continue;
      }
      EXPECT_EQ(hand.dealer_keyed, reported->keyed_hand.has_value()) << what;
    }
    return answer;
  }

  VoidRoundAnswer void_round(const VoidRoundRequest& request) {
    const std::string what =
        "void " + request.table.value() + " round " + std::to_string(request.round.value());
    auto answer = ok(what, run(what, [&](Engine& engine, Records& out) {
                       return engine.void_round(request, out);
                     }));
    expect_phase(what, request.table.value(), request.round.value(), RoundPhase::voided);
    if (!last_.rounds.empty()) {
      EXPECT_EQ(last_.rounds.back().reason, request.reason) << what;
    }
    expect_links_of_table(what, request.table);
    for (const TransferRecord& record : last_.transfers) {
      EXPECT_TRUE(record.transfer.kind == TransferKind::contribution_reversal ||
                  record.transfer.kind == TransferKind::overflow_reversal ||
                  record.transfer.kind == TransferKind::house_funded_refund)
          << what << ": a void only reverses or refunds contributions";
      EXPECT_NE(record.transfer.corrects.value(), 0U) << what << ": a reversal names its transfer";
    }
    return answer;
  }

  Payout approve(std::uint64_t payout, const std::string& supervisor) {
    const std::string what = "approve payout " + std::to_string(payout) + " by " + supervisor;
    return ok(what, run(what, [&](Engine& engine, Records& out) {
                return engine.decide_payout(
                    {next_request_id(), PayoutId(payout), PayoutDecision::approve, ""}, supervisor,
                    out);
              }));
  }

  Payout reject(std::uint64_t payout, const std::string& supervisor, const std::string& reason) {
    const std::string what = "reject payout " + std::to_string(payout) + " by " + supervisor;
    return ok(what, run(what, [&](Engine& engine, Records& out) {
                return engine.decide_payout(
                    {next_request_id(), PayoutId(payout), PayoutDecision::reject, reason},
                    supervisor, out);
              }));
  }

  // Everything a command could change: every account of every link, every hidden trigger,
  // every link status, every payout; with `transfer_ids`, the next transfer id of each link.
  std::string snapshot(bool transfer_ids = true) const {
    std::ostringstream text;
    for (const LinkSettings& settings : engine_->config().links) {
      const LinkId& id = settings.meters.id;
      const Link* state = engine_->link(id);
      text << id.value() << " status=" << static_cast<int>(engine_->link_status(id));
      for (const auto& [account, amount] : state->ledger().balances()) {
        text << " " << to_string(account) << "=" << amount.to_string();
      }
      if (transfer_ids) text << " next_transfer=" << state->ledger().next_id().value();
      for (std::uint32_t n = 1; n <= state->level_count(); ++n) {
        if (const auto& hidden = state->hidden_trigger(n)) {
          text << " trigger" << n << "=" << hidden->point.to_string();
        }
      }
      text << "\n";
    }
    for (const Payout& payout : engine_->pending_payouts()) {
      text << "pending payout " << payout.id.value() << " approvals=" << payout.approved_by.size()
           << " amount=" << payout.amount << "\n";
    }
    return text.str();
  }

  // A command that must be refused with `code`, changing nothing and recording nothing.
  template <typename Command>
  void expect_refused(EngineError code, const std::string& what, Command command) {
    expect_refused_with(std::vector<EngineError>{code}, what, command);
  }

  // The same where the rules leave the error open among `codes`.
  template <typename Command>
  void expect_refused_with(const std::vector<EngineError>& codes, const std::string& what,
                           Command command) {
    std::string names;
    for (const EngineError code : codes) names += (names.empty() ? "" : " or ") + error_name(code);
    const std::string before = snapshot();
    last_.clear();
    auto result = command(*engine_, last_);
    if (result.ok()) {
      ADD_FAILURE() << what << ": accepted, expected " << names;
    } else {
      EXPECT_NE(std::find(codes.begin(), codes.end(), result.error().code), codes.end())
          << what << ": refused with " << error_name(result.error().code) << ", expected " << names
          << ": " << result.error().message;
      EXPECT_FALSE(result.error().message.empty()) << what << ": the refusal says nothing";
    }
    EXPECT_TRUE(last_.empty()) << what << ": a refused command appended records";
    EXPECT_EQ(snapshot(), before) << what << ": a refused command changed the state";
    check(what);
  }

  // A repeated command: the first answer, no records, no change.
  template <typename Answer, typename Command>
  void expect_replay(const Answer& first, const std::string& what, Command command) {
    const std::string before = snapshot();
    last_.clear();
    auto result = command(*engine_, last_);
    if (!result.ok()) {
      ADD_FAILURE() << what << ": the replay was refused: " << error_name(result.error().code)
                    << ": " << result.error().message;
    } else {
      EXPECT_TRUE(result.value() == first) << what << ": the replay answered differently";
    }
    EXPECT_TRUE(last_.empty()) << what << ": a replay appended records";
    EXPECT_EQ(snapshot(), before) << what << ": a replay changed the state";
    check(what);
  }

 private:
  void expect_phase(const std::string& what, const std::string& table, std::uint64_t round,
                    RoundPhase phase) {
    ASSERT_EQ(last_.rounds.size(), 1U) << what << ": one round record per command";
    EXPECT_EQ(last_.rounds[0].table, TableId(table)) << what;
    EXPECT_EQ(last_.rounds[0].round, RoundId(round)) << what;
    EXPECT_EQ(last_.rounds[0].phase, phase) << what;
    EXPECT_EQ(last_.rounds[0].time_us, clock_.now) << what;
    EXPECT_NE(last_.rounds[0].round_key, 0U) << what;
    for (const DrawRecord& draw : last_.draws) {
      EXPECT_EQ(draw.round_key, last_.rounds[0].round_key) << what << ": draw of another round";
    }
  }

  void expect_links_of_table(const std::string& what, const TableId& table) {
    const auto links = engine_->links_of_table(table);
    for (const TransferRecord& record : last_.transfers) {
      EXPECT_NE(std::find(links.begin(), links.end(), LinkId(record.link.str())), links.end())
          << what << ": a transfer on link " << record.link << ", which the table does not play";
    }
  }

  TestClock clock_;
  SplitMix64 random_;
  Records created_records_;
  Records last_;
  std::unique_ptr<Engine> engine_;
  std::map<std::uint64_t, Payout> payouts_;
  int broken_ = 0;
};

// Cards that make no paying hand on any Heads Up Hold'em paytable used here: no pair, straight
// or flush for any seat.
const std::vector<std::string> kQuietHoldemBoard = {"2h", "7s", "9d", "Jc", "Ks"};
SeatHandRequest quiet_holdem(std::uint32_t seat) {
  static const std::vector<std::vector<std::string>> pockets = {
      {"3c", "4d"}, {"5d", "6c"}, {"8h", "Qc"}, {"3h", "4s"}, {"5h", "6s"}, {"8d", "Qd"}};
  return cards(seat, pockets.at(seat - 1));
}

// The same for Mississippi Stud.
const std::vector<std::string> kQuietStudBoard = {"8c", "Qh", "5d"};
SeatHandRequest quiet_stud(std::uint32_t seat) {
  static const std::vector<std::vector<std::string>> pockets = {
      {"2c", "7d"}, {"4h", "9s"}, {"Jd", "3s"}, {"6h", "Ts"}, {"Kc", "2d"}, {"3h", "9c"}};
  return cards(seat, pockets.at(seat - 1));
}

// A level-1 link shared by the scenarios: seed $1000, 1.2345% to the meter, 0.3% to the
// reserve: each $1 unit adds $0.012345 to the meter and $0.003 to the reserve.
LinkSettings royal_link(const std::string& id, const char* seed = "1000.00") {
  return link_settings(id, {level(1, "Royal Flush", seed, 12345, 3000)});
}

// ---- 1. One link, three tables, two games ---------------------------------------------------

TEST(EngineOneLink, ContributionsFromThreeTablesOfTwoGamesMoveOneMeter) {
  EngineConfig config;
  config.links.push_back(royal_link("PROG"));
  config.tables.push_back(
      table_settings("HUH-1", GameRule::heads_up_holdem, 6, {plays("PROG", "PT-BJS-HUH-5CP-10")}));
  config.tables.push_back(
      table_settings("HUH-2", GameRule::heads_up_holdem, 6, {plays("PROG", "PT-BJS-HUH-5CP-07")}));
  config.tables.push_back(
      table_settings("MS-1", GameRule::mississippi_stud, 5, {plays("PROG", "MS Stud-01")}));
  // Every PERCENT row of the three paytables pays from level 1.
  for (const char* id : {"PT-BJS-HUH-5CP-10", "PT-BJS-HUH-5CP-07", "MS Stud-01"}) {
    for (const PaytableRow& row : shipped_paytable(id).rows) {
      if (row.kind == PayKind::percent) {
        EXPECT_EQ(row.level, 1U) << id << " " << row.label;
      }
    }
  }
  EXPECT_TRUE(validate(config, shipped()).empty());

  Harness h(config);
  EXPECT_EQ(h.meter("PROG", 1), usd("1000.00"));
  EXPECT_EQ(h.reserve("PROG", 1), Money());
  ASSERT_FALSE(h.created_records().transfers.empty());
  EXPECT_EQ(h.created_records().transfers[0].link, "PROG");
  EXPECT_EQ(h.created_records().transfers[0].transfer.kind, TransferKind::seed);

  h.open("HUH-1", 1);
  h.open("HUH-2", 1);
  h.open("MS-1", 1);

  // HUH-1: two $1 wagers = 2 units.
  auto lock1 = h.lock(lock_request("HUH-1", 1, {wager(1, "PROG", 100), wager(2, "PROG", 100)}));
  EXPECT_EQ(h.meter("PROG", 1), usd("1000.024690"));
  EXPECT_EQ(h.reserve("PROG", 1), usd("0.006"));
  ASSERT_EQ(lock1.meters.size(), 1U);
  EXPECT_EQ(lock1.meters[0].link, LinkId("PROG"));
  EXPECT_EQ(lock1.meters[0].meter, usd("1000.024690"));
  EXPECT_TRUE(lock1.must_hit_by_hits.empty());
  EXPECT_EQ(total_moved(h.records(), TransferKind::contribution, AccountRef::meter(1)),
            usd("0.024690"));
  EXPECT_EQ(total_moved(h.records(), TransferKind::contribution, AccountRef::reserve(1)),
            usd("0.006"));

  // HUH-2: one $2 wager = 2 units.
  h.lock(lock_request("HUH-2", 1, {wager(3, "PROG", 200)}));
  EXPECT_EQ(h.meter("PROG", 1), usd("1000.049380"));
  EXPECT_EQ(h.reserve("PROG", 1), usd("0.012"));

  // MS-1: three $1 wagers = 3 units.
  auto lock3 = h.lock(lock_request(
      "MS-1", 1, {wager(1, "PROG", 100), wager(2, "PROG", 100), wager(3, "PROG", 100)}));
  EXPECT_EQ(h.meter("PROG", 1), usd("1000.086415"));
  EXPECT_EQ(h.reserve("PROG", 1), usd("0.021"));
  EXPECT_EQ(lock3.meters[0].meter, usd("1000.086415"));

  // Nothing at HUH-2 or MS-1.
  auto quiet = h.settle(settle_request("HUH-2", 1, {quiet_holdem(3)}, kQuietHoldemBoard));
  EXPECT_TRUE(award_lines(quiet).empty());
  auto quiet_ms = h.settle(
      settle_request("MS-1", 1, {quiet_stud(1), quiet_stud(2), quiet_stud(3)}, kQuietStudBoard));
  EXPECT_TRUE(award_lines(quiet_ms).empty());
  EXPECT_EQ(h.meter("PROG", 1), usd("1000.086415"));

  // A royal flush (spades, made on the turn and river) at HUH-1 seat 1.
  auto royal = h.settle(settle_request("HUH-1", 1, {cards(1, {"As", "Ks"}), cards(2, {"2h", "2d"})},
                                       {"7c", "8d", "Qs", "Js", "Ts"}));
  EXPECT_EQ(result_seats(royal), (std::vector<std::uint32_t>{2, 1}));
  ASSERT_NE(result_of(royal, 1), nullptr);
  ASSERT_NE(result_of(royal, 2), nullptr);
  EXPECT_EQ(seat_result(royal, 1).hand, "Royal Flush");
  EXPECT_EQ(seat_result(royal, 2).hand, "");
  EXPECT_EQ(award_lines(royal),
            (std::vector<std::string>{"seat 1 percent L1 Royal Flush 1000.08"}));
  // Reset: the sub-cent residue 0.006415 + seed 1000 + reserve 0.021.
  EXPECT_EQ(h.meter("PROG", 1), usd("1000.027415"));
  EXPECT_EQ(h.reserve("PROG", 1), Money());
  ASSERT_EQ(royal.meters.size(), 1U);
  EXPECT_EQ(royal.meters[0].meter, usd("1000.027415"));
  const auto awards = transfers_of(h.records(), TransferKind::award);
  ASSERT_EQ(awards.size(), 1U);
  EXPECT_EQ(awards[0].amount, usd("1000.08"));
  EXPECT_EQ(awards[0].debit, AccountRef::meter(1));
  EXPECT_EQ(awards[0].credit, AccountRef::link(AccountKind::awards_payable));
  const auto seeds = transfers_of(h.records(), TransferKind::seed);
  ASSERT_EQ(seeds.size(), 1U);
  EXPECT_EQ(seeds[0].amount, usd("1000.00"));
  EXPECT_EQ(total_moved(h.records(), TransferKind::reserve_release, AccountRef::meter(1)),
            usd("0.021"));
  ASSERT_EQ(h.records().payouts.size(), 1U);
  EXPECT_EQ(h.records().payouts[0].state, PayoutState::pending);
  EXPECT_EQ(h.records().payouts[0].amount, usd("1000.08"));
  for (const HandRecord& hand : h.records().hands) EXPECT_FALSE(hand.dealer_keyed);

  // The next round at another table sees the reset meter.
  h.open("HUH-2", 2);
  auto next = h.lock(lock_request("HUH-2", 2, {wager(1, "PROG", 100)}));
  ASSERT_EQ(next.meters.size(), 1U);
  EXPECT_EQ(next.meters[0].meter, usd("1000.039760"));
  h.open("MS-1", 2);
  auto next_ms = h.lock(lock_request("MS-1", 2, {wager(4, "PROG", 100)}));
  EXPECT_EQ(next_ms.meters[0].meter, usd("1000.052105"));
  EXPECT_EQ(h.engine().meters()[0].meter, usd("1000.052105"));
}

// ---- 2. Two hits on one level in one round ---------------------------------------------------

EngineConfig stud_config(HitPolicy policy, std::uint32_t seats = 6) {
  EngineConfig config;
  config.links.push_back(royal_link("MS"));
  config.links[0].simultaneous_hits = policy;
  config.tables.push_back(
      table_settings("MS-1", GameRule::mississippi_stud, seats, {plays("MS", "MS Stud-01")}));
  return config;
}

TEST(EngineSameRound, StraightFlushAtSeatSixIsPaidBeforeRoyalAtSeatTwo) {
  // MS Stud-01: Royal Flush 100% and Straight Flush 10% of level 1.
  const Paytable& paytable = shipped_paytable("MS Stud-01");
  ASSERT_EQ(paytable.rows[0].label, "Royal Flush");
  ASSERT_EQ(paytable.rows[0].percent, 100U);
  ASSERT_EQ(paytable.rows[1].label, "Straight Flush");
  ASSERT_EQ(paytable.rows[1].percent, 10U);
  ASSERT_EQ(paytable.rows[1].level, 1U);

  Harness h(stud_config(HitPolicy::sequential));
  h.open("MS-1", 1);
  h.lock(lock_request("MS-1", 1, {wager(2, "MS", 100), wager(6, "MS", 100)}));
  EXPECT_EQ(h.meter("MS", 1), usd("1000.024690"));

  auto answer = h.settle(settle_request("MS-1", 1, {cards(2, {"Kh", "Ah"}), cards(6, {"9h", "8h"})},
                                        {"Th", "Jh", "Qh"}));
  EXPECT_EQ(result_seats(answer), (std::vector<std::uint32_t>{6, 2}));
  // Seat 6 first: 10% of 1000.024690 = 100.002469 -> 100.00; the meter keeps 900.024690.
  // Seat 2: 100% of 900.024690 -> 900.02; residue 0.004690 + seed 1000 + reserve 0.006.
  // Envy: Royal Flush $1000 to seat 6, Straight Flush $300 to seat 2.
  EXPECT_EQ(
      award_lines(answer),
      sorted({"seat 6 percent L1 Straight Flush 100.00", "seat 6 envy Royal Flush from 2 1000.00",
              "seat 2 percent L1 Royal Flush 900.02", "seat 2 envy Straight Flush from 6 300.00"}));
  const auto awards = transfers_of(h.records(), TransferKind::award);
  ASSERT_EQ(awards.size(), 2U);
  EXPECT_EQ(awards[0].amount, usd("100.00")) << "seat 6 is paid first";
  EXPECT_EQ(awards[1].amount, usd("900.02"));
  EXPECT_EQ(transfers_of(h.records(), TransferKind::seed).size(), 1U);
  EXPECT_EQ(h.meter("MS", 1), usd("1000.010690"));
  EXPECT_EQ(h.reserve("MS", 1), Money());
}

TEST(EngineSameRound, SplitPolicySharesOneMeterEquallyWithOneReset) {
  Harness h(stud_config(HitPolicy::split));
  h.open("MS-1", 1);
  h.lock(lock_request("MS-1", 1, {wager(1, "MS", 100), wager(2, "MS", 100), wager(5, "MS", 100)}));
  EXPECT_EQ(h.meter("MS", 1), usd("1000.037035"));
  EXPECT_EQ(h.reserve("MS", 1), usd("0.009"));

  // Two dealer-keyed royals (impossible with one three-card board) and a quiet seat.
  auto answer = h.settle(
      settle_request("MS-1", 1, {quiet_stud(1), keyed(2, "ROYAL_FLUSH"), keyed(5, "ROYAL_FLUSH")},
                     kQuietStudBoard));
  // 1000.037035 / 2 = 500.0185175 -> 500.01 each; 0.017035 stays; one reset.
  EXPECT_EQ(
      award_lines(answer),
      sorted({"seat 5 percent L1 Royal Flush 500.01", "seat 5 envy Royal Flush from 2 1000.00",
              "seat 2 percent L1 Royal Flush 500.01", "seat 2 envy Royal Flush from 5 1000.00",
              "seat 1 envy Royal Flush from 5 1000.00", "seat 1 envy Royal Flush from 2 1000.00"}));
  EXPECT_EQ(transfers_of(h.records(), TransferKind::seed).size(), 1U) << "exactly one reset";
  EXPECT_EQ(h.meter("MS", 1), usd("1000.026035"));
  EXPECT_EQ(h.reserve("MS", 1), Money());
  EXPECT_TRUE(seat_result(answer, 2).dealer_keyed);
  EXPECT_FALSE(seat_result(answer, 1).dealer_keyed);
}

TEST(EngineSameRound, SequentialPolicyGivesTheSecondRoyalTheResetMeter) {
  Harness h(stud_config(HitPolicy::sequential));
  h.open("MS-1", 1);
  h.lock(lock_request("MS-1", 1, {wager(1, "MS", 100), wager(2, "MS", 100), wager(5, "MS", 100)}));
  auto answer = h.settle(
      settle_request("MS-1", 1, {quiet_stud(1), keyed(2, "ROYAL_FLUSH"), keyed(5, "ROYAL_FLUSH")},
                     kQuietStudBoard));
  // Seat 5: 1000.037035 -> 1000.03; reset 0.007035 + 1000 + 0.009 = 1000.016035.
  // Seat 2: 1000.016035 -> 1000.01; reset 0.006035 + 1000 + 0 = 1000.006035.
  EXPECT_EQ(
      award_lines(answer),
      sorted({"seat 5 percent L1 Royal Flush 1000.03", "seat 5 envy Royal Flush from 2 1000.00",
              "seat 2 percent L1 Royal Flush 1000.01", "seat 2 envy Royal Flush from 5 1000.00",
              "seat 1 envy Royal Flush from 5 1000.00", "seat 1 envy Royal Flush from 2 1000.00"}));
  EXPECT_EQ(transfers_of(h.records(), TransferKind::seed).size(), 2U);
  EXPECT_EQ(h.meter("MS", 1), usd("1000.006035"));
}

// ---- 3. Envy -----------------------------------------------------------------------------------

// A settlement is all or nothing across its awards: when the ledger refuses one while they are
// applied (here the second of two $5,000,000,000,000 Four-of-a-Kind pays overflows
// awards_payable), the awards already posted are undone and the payout counter, the meters and
// the round are as they were; the round can still be voided.
TEST(EngineSameRound, ALedgerRefusalWhileApplyingTheAwardsChangesNothing) {
  EngineConfig config;
  config.links.push_back(
      link_settings("BIG", {level(1, "Royal Flush", "1000.00", 12345, 3000)}, "1000000000.00"));
  config.tables.push_back(
      table_settings("HUH-1", GameRule::heads_up_holdem, 6, {plays("BIG", "PT-BJS-HUH-5CP-01")}));
  Harness h(config);
  h.open("HUH-1", 1);
  // 100 base wagers of $1,000,000,000 each: a $50 Four-of-a-Kind pays $5,000,000,000,000.
  const std::int64_t hundred_units_cents = 100 * 100'000'000'000LL;
  h.lock(lock_request(
      "HUH-1", 1, {wager(1, "BIG", hundred_units_cents), wager(2, "BIG", hundred_units_cents)}));
  const EngineSnapshot before = h.engine().snapshot();

  // Four aces on the board: both seats hold Four-of-a-Kind.
  const auto refused = h.run("settle", [](Engine& engine, Records& records) {
    return engine.settle_round(
        settle_request("HUH-1", 1, {cards(1, {"2c", "3d"}), cards(2, {"5h", "6s"})},
                       {"As", "Ah", "Ad", "Ac", "Kd"}),
        records);
  });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, EngineError::ledger_refused);
  EXPECT_NE(refused.error().message.find("overflow"), std::string::npos) << refused.error().message;
  EXPECT_TRUE(h.records().transfers.empty() && h.records().payouts.empty() &&
              h.records().hands.empty() && h.records().rounds.empty());
  EXPECT_EQ(h.engine().snapshot(), before) << "a refused settlement changed the engine";
  h.void_round(void_request("HUH-1", 1, "the settlement could not be paid"));
}

TEST(EngineEnvy, TwoWinnersAtFiveSeatsWithOneSeatNotWagering) {
  // Mississippi Stud, real cards: seat 4 a royal (Envy $1000), seat 2 a straight flush (Envy
  // $300), seats 1 and 3 nothing, seat 5 did not wager.
  Harness h(stud_config(HitPolicy::sequential, 5));
  h.open("MS-1", 1);
  h.lock(lock_request(
      "MS-1", 1,
      {wager(1, "MS", 100), wager(2, "MS", 100), wager(3, "MS", 100), wager(4, "MS", 100)}));
  EXPECT_EQ(h.meter("MS", 1), usd("1000.049380"));
  auto answer = h.settle(settle_request("MS-1", 1,
                                        {cards(1, {"2c", "3d"}), cards(2, {"9h", "8h"}),
                                         cards(3, {"4s", "7c"}), cards(4, {"Kh", "Ah"})},
                                        {"Th", "Jh", "Qh"}));
  // Seat 4: 1000.049380 -> 1000.04; reset 0.009380 + 1000 + 0.012 = 1000.021380.
  // Seat 2: 10% of 1000.021380 -> 100.00; the meter keeps 900.021380.
  EXPECT_EQ(
      award_lines(answer),
      sorted({"seat 4 percent L1 Royal Flush 1000.04", "seat 4 envy Straight Flush from 2 300.00",
              "seat 3 envy Royal Flush from 4 1000.00", "seat 3 envy Straight Flush from 2 300.00",
              "seat 2 percent L1 Straight Flush 100.00", "seat 2 envy Royal Flush from 4 1000.00",
              "seat 1 envy Royal Flush from 4 1000.00",
              "seat 1 envy Straight Flush from 2 300.00"}));
  EXPECT_EQ(result_of(answer, 5), nullptr) << "seat 5 did not wager";
  for (const Payout& payout : h.records().payouts) EXPECT_NE(payout.seat, 5U);
  EXPECT_EQ(h.meter("MS", 1), usd("900.021380"));
  // Envy comes from the tray, never from the meter.
  EXPECT_EQ(transfers_of(h.records(), TransferKind::tray_pay).size(), 6U);
}

TEST(EngineEnvy, TwoKeyedRoyalsOnAnEnvyPaytable) {
  // PT-BJS-HUH-5CP-E01: Royal Flush 100% with Envy $100. Seats 1, 2, 3, 5 wager; 4 does not.
  EngineConfig config;
  config.links.push_back(royal_link("E"));
  config.tables.push_back(
      table_settings("HUH-E", GameRule::heads_up_holdem, 5, {plays("E", "PT-BJS-HUH-5CP-E01")}));
  Harness h(config);
  h.open("HUH-E", 7);
  h.lock(lock_request(
      "HUH-E", 7,
      {wager(1, "E", 100), wager(2, "E", 100), wager(3, "E", 100), wager(5, "E", 100)}));
  auto answer = h.settle(settle_request("HUH-E", 7,
                                        {cards(1, {"3h", "8s"}), keyed(2, "ROYAL_FLUSH"),
                                         cards(3, {"Kd", "5h"}), keyed(5, "ROYAL_FLUSH")},
                                        {"2c", "7d", "9h", "Jc", "4s"}));
  // Seat 5: 1000.049380 -> 1000.04, reset to 1000.021380; seat 2: -> 1000.02, reset to
  // 0.001380 + 1000.
  EXPECT_EQ(
      award_lines(answer),
      sorted({"seat 5 percent L1 Royal Flush 1000.04", "seat 5 envy Royal Flush from 2 100.00",
              "seat 3 envy Royal Flush from 5 100.00", "seat 3 envy Royal Flush from 2 100.00",
              "seat 2 percent L1 Royal Flush 1000.02", "seat 2 envy Royal Flush from 5 100.00",
              "seat 1 envy Royal Flush from 5 100.00", "seat 1 envy Royal Flush from 2 100.00"}));
  EXPECT_EQ(result_of(answer, 4), nullptr);
  EXPECT_EQ(h.meter("E", 1), usd("1000.001380"));
}

TEST(EngineEnvy, PrintedForFiveDollarsOnPmg02) {
  // Rule §5a: PMG-02 prints its Envy for a $5 wager and its fixed pays "for 1"; on a $5 link
  // the Straight Flush Envy ($1500 printed) stays $1500, Four of a Kind (300 for 1) is $1500.
  // PMG-01 prints Envy for $1: its $300 becomes $1500 on the same link.
  for (const char* id : {"PMG-02", "PMG-01"}) {
    SCOPED_TRACE(id);
    EngineConfig config;
    config.links.push_back(
        link_settings("P5", {level(1, "Royal Flush", "1000.00", 12345, 0)}, "5.00"));
    config.tables.push_back(
        table_settings("MS-5", GameRule::mississippi_stud, 6, {plays("P5", id)}));
    Harness h(config);
    EXPECT_EQ(h.meter("P5", 1), usd("5000.00"));
    h.open("MS-5", 1);
    h.lock(lock_request("MS-5", 1, {wager(1, "P5", 500), wager(4, "P5", 500)}));
    // 5000 + 2 × 0.061725.
    EXPECT_EQ(h.meter("P5", 1), usd("5000.123450"));
    auto answer = h.settle(
        settle_request("MS-5", 1, {keyed(1, "FOUR_OF_A_KIND"), keyed(4, "STRAIGHT_FLUSH")}, {}));
    // 10% of 5000.123450 -> 500.01.
    EXPECT_EQ(award_lines(answer),
              sorted({"seat 4 percent L1 Straight Flush 500.01", "seat 1 fixed 4 of a Kind 1500.00",
                      "seat 1 envy Straight Flush from 4 1500.00"}));
  }
}

// ---- 4. Community Royal Flush ---------------------------------------------------------------

EngineConfig community_config(const std::string& paytable) {
  EngineConfig config;
  config.links.push_back(royal_link("C"));
  config.tables.push_back(
      table_settings("HUH-C", GameRule::heads_up_holdem, 6, {plays("C", paytable)}));
  return config;
}

SettleRoundAnswer settle_board_royal(Harness& h) {
  h.open("HUH-C", 1);
  h.lock(lock_request("HUH-C", 1, {wager(1, "C", 100), wager(3, "C", 100), wager(4, "C", 100)}));
  EXPECT_EQ(h.meter("C", 1), usd("1000.037035"));
  auto answer = h.settle(settle_request(
      "HUH-C", 1, {cards(1, {"2c", "3d"}), cards(3, {"4s", "5s"}), cards(4, {"7c", "8d"})},
      {"Ah", "Kh", "Qh", "Jh", "Th"}));
  EXPECT_EQ(result_seats(answer), (std::vector<std::uint32_t>{4, 3, 1}));
  return answer;
}

TEST(EngineCommunityRoyal, PercentRowPaysEveryWageringSeatHighestSeatFirst) {
  // PT-BJS-HUH-5CP-01: Community Royal Flush 10% of level 1.
  Harness h(community_config("PT-BJS-HUH-5CP-01"));
  auto answer = settle_board_royal(h);
  for (const SeatResultView& result : answer.results) {
    EXPECT_EQ(result.hand, "Community Royal Flush") << "seat " << result.seat;
  }
  // 10% of 1000.037035 -> 100.00; of 900.037035 -> 90.00; of 810.037035 -> 81.00.
  EXPECT_EQ(award_lines(answer), sorted({"seat 4 percent L1 Community Royal Flush 100.00",
                                         "seat 3 percent L1 Community Royal Flush 90.00",
                                         "seat 1 percent L1 Community Royal Flush 81.00"}));
  const auto awards = transfers_of(h.records(), TransferKind::award);
  ASSERT_EQ(awards.size(), 3U);
  EXPECT_EQ(awards[0].amount, usd("100.00"));
  EXPECT_EQ(awards[1].amount, usd("90.00"));
  EXPECT_EQ(awards[2].amount, usd("81.00"));
  EXPECT_EQ(h.meter("C", 1), usd("729.037035"));
  EXPECT_EQ(h.reserve("C", 1), usd("0.009"));
}

TEST(EngineCommunityRoyal, FixedRowPaysEveryWageringSeatAndIsNoSeatsRoyal) {
  // PT-BJS-HUH-5CP-E01: Community Royal Flush $1000 for 1; the Royal Flush row (100%, Envy)
  // is not hit by a board royal.
  Harness h(community_config("PT-BJS-HUH-5CP-E01"));
  auto answer = settle_board_royal(h);
  EXPECT_EQ(award_lines(answer), sorted({"seat 4 fixed Community Royal Flush 1000.00",
                                         "seat 3 fixed Community Royal Flush 1000.00",
                                         "seat 1 fixed Community Royal Flush 1000.00"}));
  EXPECT_EQ(h.meter("C", 1), usd("1000.037035"));
}

TEST(EngineCommunityRoyal, WithoutACommunityRowEachSeatHasTheRoyal) {
  // PT-BJS-HUH-5CP-09 lists no Community Royal Flush: each seat's best five is the royal.
  Harness h(community_config("PT-BJS-HUH-5CP-09"));
  auto answer = settle_board_royal(h);
  EXPECT_EQ(award_lines(answer),
            sorted({"seat 4 fixed Royal Flush 2000.00", "seat 3 fixed Royal Flush 2000.00",
                    "seat 1 fixed Royal Flush 2000.00"}));
  EXPECT_EQ(h.meter("C", 1), usd("1000.037035"));
}

// ---- 5. Must-Hit-By ---------------------------------------------------------------------------

// PT-BJS-HUH-5CP-12: Royal Flush 100% of level 1, Must-Hit-By $250 on level 2.
EngineConfig must_hit_by_config(std::int64_t mhb_rate_ppm,
                                TriggerMode trigger = TriggerMode::at_amount) {
  EngineConfig config;
  LevelConfig mhb = must_hit_by_level(2, "100.00", mhb_rate_ppm, "250.00");
  mhb.trigger = trigger;
  config.links.push_back(link_settings("MHB", {level(1, "Royal Flush", "1000.00", 10000, 0), mhb}));
  // Six seats of at most $50 keep one round's contribution below the room of $149.99 between
  // the $100 seed and the $250 amount, as the configuration must (§5a).
  config.links.back().max_wager_units = 50;
  config.tables.push_back(
      table_settings("HUH-M", GameRule::heads_up_holdem, 6, {plays("MHB", "PT-BJS-HUH-5CP-12")}));
  return config;
}

const std::set<std::uint32_t> kMustHitBySeats = {1, 3, 4, 6};

std::vector<WagerRequest> must_hit_by_wagers(std::int64_t cents) {
  std::vector<WagerRequest> wagers;
  for (const std::uint32_t seat : kMustHitBySeats) wagers.push_back(wager(seat, "MHB", cents));
  return wagers;
}

SettleRoundRequest quiet_must_hit_by_settle(std::uint64_t round) {
  std::vector<SeatHandRequest> seats;
  for (const std::uint32_t seat : kMustHitBySeats) seats.push_back(quiet_holdem(seat));
  return settle_request("HUH-M", round, seats, kQuietHoldemBoard);
}

TEST(EngineMustHitBy, TheLockThatCrossesTheAmountHitsAndThePayoutComesAtSettlement) {
  // 12.3457% of four $25 wagers (100 units) = 12.3457 per round: 100 + 12 × 12.3457 =
  // 248.1484, round 13 carries the meter to 260.4941.
  Harness h(must_hit_by_config(123457));
  for (std::uint64_t round = 1; round <= 12; ++round) {
    h.open("HUH-M", round);
    auto lock = h.lock(lock_request("HUH-M", round, must_hit_by_wagers(2500)));
    EXPECT_TRUE(lock.must_hit_by_hits.empty()) << "round " << round;
    EXPECT_EQ(count_draws(h.records(), DrawKind::must_hit_by_winner), 0U);
    h.settle(quiet_must_hit_by_settle(round));
  }
  EXPECT_EQ(h.meter("MHB", 2), usd("248.148400"));

  h.open("HUH-M", 13);
  auto lock = h.lock(lock_request("HUH-M", 13, must_hit_by_wagers(2500)));
  const Records lock_records = h.records();
  ASSERT_EQ(lock.must_hit_by_hits.size(), 1U);
  const MustHitByHitView hit = lock.must_hit_by_hits[0];
  EXPECT_EQ(hit.link, LinkId("MHB"));
  EXPECT_EQ(hit.level, 2U);
  EXPECT_EQ(hit.amount, usd("250.00")) << "the award is the meter at the trigger";
  EXPECT_LE(hit.amount, usd("250.00"));
  EXPECT_TRUE(kMustHitBySeats.count(hit.seat)) << "seat " << hit.seat << " did not wager";
  // The rest of the round's contribution carries into the reset meter: 100 + 10.4941.
  EXPECT_EQ(h.meter("MHB", 2), usd("110.494100"));
  EXPECT_EQ(h.meter("MHB", 1), usd("1013.00"));
  // Records: the winner's draw, the award transfer, no payout yet.
  ASSERT_EQ(count_draws(lock_records, DrawKind::must_hit_by_winner), 1U);
  for (const DrawRecord& draw : lock_records.draws) {
    if (draw.kind != DrawKind::must_hit_by_winner) continue;
    EXPECT_EQ(draw.id, hit.draw_id);
    EXPECT_EQ(draw.link, LinkId("MHB"));
    EXPECT_EQ(draw.level, 2U);
    EXPECT_FALSE(draw.inputs.empty());
    EXPECT_NE(draw.outcome.find(std::to_string(hit.seat)), std::string::npos) << draw.outcome;
  }
  const auto awards = transfers_of(lock_records, TransferKind::award);
  ASSERT_EQ(awards.size(), 1U);
  EXPECT_EQ(awards[0].debit, AccountRef::meter(2));
  EXPECT_EQ(awards[0].amount, usd("250.00"));
  // Rules §6: the payout is created PENDING at the hit, its amount frozen; awards_payable holds
  // exactly what pending payouts owe, also between lock and settlement.
  ASSERT_EQ(lock_records.payouts.size(), 1U) << "the payout is created at the hit";
  EXPECT_EQ(lock_records.payouts[0].kind, AwardKind::must_hit_by);
  EXPECT_EQ(lock_records.payouts[0].seat, hit.seat);
  EXPECT_EQ(h.balance("MHB", AccountKind::awards_payable), h.pending_total("MHB"));

  // A round whose Must-Hit-By hit cannot be voided without a supervisor.
  h.expect_refused(EngineError::must_hit_by_needs_supervisor, "void the Must-Hit-By round",
                   [](Engine& engine, Records& out) {
                     return engine.void_round(void_request("HUH-M", 13), out);
                   });

  const std::vector<Payout> hit_payouts = lock_records.payouts;
  auto settled = h.settle(quiet_must_hit_by_settle(13));
  EXPECT_EQ(award_lines(settled), (std::vector<std::string>{"seat " + std::to_string(hit.seat) +
                                                            " must_hit_by L2 250.00"}));
  // The settlement shows the award with the payout made at the hit; it creates no second one.
  EXPECT_TRUE(std::none_of(h.records().payouts.begin(), h.records().payouts.end(),
                           [](const Payout& p) { return p.kind == AwardKind::must_hit_by; }));
  const auto payout = hit_payouts.begin();
  EXPECT_EQ(payout->seat, hit.seat);
  EXPECT_EQ(payout->level, 2U);
  EXPECT_EQ(payout->amount, usd("250.00"));
  EXPECT_EQ(payout->state, PayoutState::pending);
  EXPECT_EQ(h.balance("MHB", AccountKind::awards_payable), usd("250.00"));
}

TEST(EngineMustHitBy, ReachingTheAmountExactlyCounts) {
  // 30% of 100 units = $30 per round: 100, 130, ..., 220, then exactly 250 in round 5.
  Harness h(must_hit_by_config(300000));
  for (std::uint64_t round = 1; round <= 5; ++round) {
    h.open("HUH-M", round);
    auto lock = h.lock(lock_request("HUH-M", round, must_hit_by_wagers(2500)));
    EXPECT_EQ(lock.must_hit_by_hits.size(), round == 5 ? 1U : 0U) << "round " << round;
    if (round == 5 && !lock.must_hit_by_hits.empty()) {
      EXPECT_EQ(lock.must_hit_by_hits[0].amount, usd("250.00"));
    }
    h.settle(quiet_must_hit_by_settle(round));
  }
  EXPECT_EQ(h.meter("MHB", 2), usd("100.00"));
}

TEST(EngineMustHitBy, WinnersAreUniformOverTheWageringSeats) {
  // $60 per round (30% of four $50 wagers): a hit every two or three rounds. A model of the
  // meter says which lock crosses $250 and what the meter is after.
  EngineConfig config = must_hit_by_config(300000);
  config.links[0].approval_threshold = usd("1000000.00");  // Paid at once.
  Harness h(config, 987654321);
  std::map<std::uint32_t, std::int64_t> wins;
  Money model = usd("100.00");
  const Money per_round = usd("60.00");
  const Money amount = usd("250.00");
  std::int64_t hits = 0;
  for (std::uint64_t round = 1; round <= 3000; ++round) {
    h.open("HUH-M", round);
    auto lock = h.lock(lock_request("HUH-M", round, must_hit_by_wagers(5000)));
    model = sum(model, per_round);
    const bool crosses = model >= amount;
    if (crosses) model = sum(*model.minus(amount), usd("100.00"));
    ASSERT_EQ(lock.must_hit_by_hits.size(), crosses ? 1U : 0U) << "round " << round;
    ASSERT_EQ(h.meter("MHB", 2), model) << "round " << round;
    ASSERT_EQ(count_draws(h.records(), DrawKind::must_hit_by_winner), crosses ? 1U : 0U);
    if (crosses) {
      // Below the approval threshold the payout made at the hit is paid at once.
      ASSERT_EQ(h.records().payouts.size(), 1U);
      EXPECT_EQ(h.records().payouts[0].state, PayoutState::paid);
      const MustHitByHitView& hit = lock.must_hit_by_hits[0];
      ASSERT_TRUE(kMustHitBySeats.count(hit.seat)) << "seat " << hit.seat << " did not wager";
      EXPECT_EQ(hit.amount, amount);
      ++wins[hit.seat];
      ++hits;
    }
    auto settled = h.settle(quiet_must_hit_by_settle(round));
    if (crosses) {
      ASSERT_EQ(award_lines(settled).size(), 1U);
    }
  }
  EXPECT_GT(hits, 1000);
  std::vector<std::int64_t> observed;
  for (const std::uint32_t seat : kMustHitBySeats) observed.push_back(wins[seat]);
  const double chi = chi_square_uniform(observed);
  EXPECT_LT(chi, chi_square_critical_p001(3))
      << "winners by seat 1/3/4/6: " << observed[0] << "/" << observed[1] << "/" << observed[2]
      << "/" << observed[3];
}

// A Must-Hit-By payout that a supervisor rejects between the lock and the settlement is shown to
// the table as rejected, not as the PENDING the lock created (#32); one still waiting is PENDING.
TEST(EngineMustHitBy, TheSettlementShowsTheHitsPayoutAsItStandsNow) {
  for (const bool reject : {true, false}) {
    SCOPED_TRACE(reject ? "rejected before the settlement" : "still waiting");
    Harness h(must_hit_by_config(123457));
    std::optional<MustHitByHitView> hit;
    PayoutId payout;
    std::uint64_t round = 0;
    while (!hit && round < 40) {
      h.open("HUH-M", ++round);
      auto lock = h.lock(lock_request("HUH-M", round, must_hit_by_wagers(2500)));
      if (!lock.must_hit_by_hits.empty()) {
        hit = lock.must_hit_by_hits[0];
        ASSERT_EQ(h.records().payouts.size(), 1U);
        payout = h.records().payouts[0].id;
      } else {
        h.settle(quiet_must_hit_by_settle(round));
      }
    }
    ASSERT_TRUE(hit.has_value());
    ASSERT_EQ(hit->payout_state, PayoutState::pending);
    if (reject) h.reject(payout.value(), "alice", "sensor fault");
    const auto settled = h.settle(quiet_must_hit_by_settle(round));
    std::optional<PayoutState> shown;
    for (const SeatResultView& result : settled.results) {
      for (const AwardView& award : result.awards) {
        if (award.kind == AwardKind::must_hit_by) shown = award.payout_state;
      }
    }
    EXPECT_EQ(shown, reject ? PayoutState::rejected : PayoutState::pending);
  }
}

TEST(EngineMustHitBy, HiddenTriggerPaysTheCommittedPoint) {
  Harness h(must_hit_by_config(300000, TriggerMode::hidden_uniform), 4242);
  // The opening draw commits to the first point.
  std::optional<HiddenTrigger> committed;
  for (const DrawRecord& draw : h.created_records().draws) {
    if (draw.kind == DrawKind::hidden_trigger && draw.level == 2) committed = draw.trigger;
  }
  ASSERT_TRUE(committed.has_value()) << "no hidden_trigger draw recorded at the opening";
  int hits = 0;
  for (std::uint64_t round = 1; round <= 40 && hits < 5; ++round) {
    const Money before = h.meter("MHB", 2);
    h.open("HUH-M", round);
    auto lock = h.lock(lock_request("HUH-M", round, must_hit_by_wagers(2500)));
    if (lock.must_hit_by_hits.empty()) {
      EXPECT_LT(sum(before, usd("30.00")), committed->point) << "round " << round;
    } else {
      ++hits;
      const Money award = lock.must_hit_by_hits[0].amount;
      EXPECT_EQ(award, committed->point) << "round " << round;
      EXPECT_LE(award, usd("250.00"));
      EXPECT_GE(sum(before, usd("30.00")), committed->point);
      EXPECT_TRUE(verify_trigger(committed->point, committed->salt, committed->commitment));
      // The carry: what the round added above the point, on the reset meter.
      EXPECT_EQ(h.meter("MHB", 2), sum(*sum(before, usd("30.00")).minus(award), usd("100.00")));
      std::optional<HiddenTrigger> next;
      for (const DrawRecord& draw : h.records().draws) {
        if (draw.kind == DrawKind::hidden_trigger && draw.level == 2) next = draw.trigger;
      }
      ASSERT_TRUE(next.has_value()) << "no new commitment recorded at the hit";
      EXPECT_GT(next->point, usd("100.00"));
      EXPECT_LE(next->point, usd("250.00"));
      committed = next;
    }
    h.settle(quiet_must_hit_by_settle(round));
  }
  EXPECT_EQ(hits, 5);
}

// ---- 6. Dynamic Pay ---------------------------------------------------------------------------

struct DynamicCase {
  const char* paytable;
  std::uint32_t min_selected;
  std::uint32_t max_selected;
  std::size_t dynamic_rows;
  bool five_card;
};

// Rule §5.1: D01/D02/D04/D05 select 1–3 of their 4 fixed-pay hands, D03 1–4 of 5, 5CL-D01/D02
// 1–5 of 6.
const DynamicCase kDynamicCases[] = {
    {"PT-PRG-HUH-D01", 1, 3, 4, false}, {"PT-PRG-HUH-D02", 1, 3, 4, false},
    {"PT-PRG-HUH-D03", 1, 4, 5, false}, {"PT-PRG-HUH-D04", 1, 3, 4, false},
    {"PT-PRG-HUH-D05", 1, 3, 4, false}, {"PT-BJS-5CL-D01", 1, 5, 6, true},
    {"PT-BJS-5CL-D02", 1, 5, 6, true}};

EngineConfig dynamic_config(const Paytable& paytable, bool five_card, const char* base = "1.00") {
  std::vector<LevelConfig> levels = {level(1, "Royal Flush", "1000.00", 12345, 3000)};
  for (const PaytableRow& row : paytable.rows) {
    if (row.kind == PayKind::must_hit_by) {
      levels.push_back(must_hit_by_level(row.level, "100.00", 1000, "250.00"));
    }
  }
  EngineConfig config;
  config.links.push_back(link_settings("DYN", levels, base));
  config.tables.push_back(table_settings(
      "HUH-D", GameRule::heads_up_holdem, 6,
      {plays("DYN", paytable.id, five_card ? CommunitySource::flop : CommunitySource::board)}));
  return config;
}

std::optional<std::size_t> row_labelled(const Paytable& paytable, const std::string& label) {
  for (std::size_t row = 0; row < paytable.rows.size(); ++row) {
    if (paytable.rows[row].label == label) return row;
  }
  return std::nullopt;
}

// A round of HUH-D played to the end with a progressive wager and a hand that pays nothing: the
// next round draws its own Dynamic Pays (after a round with no wager it keeps this one's, §5a).
void settle_with_a_wager(Harness& h, std::uint64_t round, std::int64_t base_cents = 100) {
  h.lock(lock_request("HUH-D", round, {wager(1, "DYN", base_cents)}));
  h.settle(settle_request("HUH-D", round, {quiet_holdem(1)}, kQuietHoldemBoard));
}

TEST(EngineDynamicPay, SelectionsStayInBoundsAndAreUniform) {
  for (const DynamicCase& test : kDynamicCases) {
    SCOPED_TRACE(test.paytable);
    const Paytable& paytable = shipped_paytable(test.paytable);
    EXPECT_EQ(paytable.dynamic_min_selected, test.min_selected);
    EXPECT_EQ(paytable.dynamic_max_selected, test.max_selected);
    std::vector<std::size_t> dynamic_rows;
    for (std::size_t row = 0; row < paytable.rows.size(); ++row) {
      if (paytable.rows[row].kind == PayKind::dynamic) dynamic_rows.push_back(row);
    }
    ASSERT_EQ(dynamic_rows.size(), test.dynamic_rows);

    const EngineConfig config = dynamic_config(paytable, test.five_card);
    EXPECT_TRUE(validate(config, shipped()).empty());
    Harness h(config, 1000 + test.dynamic_rows * 7 + test.max_selected);
    const std::size_t span = test.max_selected - test.min_selected + 1;
    std::vector<std::int64_t> counts(span, 0);
    std::vector<std::int64_t> hands(paytable.rows.size(), 0);
    std::vector<std::int64_t> options(10, 0);
    for (std::uint64_t round = 1; round <= 3000; ++round) {
      auto answer = h.open("HUH-D", round);
      const Records& records = h.records();
      ASSERT_EQ(answer.dynamic_pays.size(), 1U);
      const DynamicSelectionView& selection = answer.dynamic_pays[0];
      EXPECT_EQ(selection.link, LinkId("DYN"));
      EXPECT_EQ(selection.paytable_id, paytable.id);
      const std::size_t count = selection.pays.size();
      ASSERT_GE(count, test.min_selected) << "round " << round;
      ASSERT_LE(count, test.max_selected) << "round " << round;
      ++counts[count - test.min_selected];
      std::set<std::size_t> seen;
      for (const DynamicPayView& pay : selection.pays) {
        const auto row = row_labelled(paytable, pay.hand);
        ASSERT_TRUE(row.has_value()) << pay.hand;
        ASSERT_EQ(paytable.rows[*row].kind, PayKind::dynamic) << pay.hand;
        ASSERT_TRUE(seen.insert(*row).second) << pay.hand << " selected twice";
        ASSERT_GE(pay.option, 1U);
        ASSERT_LE(pay.option, 10U);
        EXPECT_EQ(pay.amount, paytable.rows[*row].options[pay.option - 1]);
        ++hands[*row];
        ++options[pay.option - 1];
      }
      // Every draw recorded with the round.
      EXPECT_EQ(count_draws(records, DrawKind::dynamic_count), 1U);
      EXPECT_EQ(count_draws(records, DrawKind::dynamic_hand), count);
      EXPECT_EQ(count_draws(records, DrawKind::dynamic_option), count);
      for (const DrawRecord& draw : records.draws) {
        EXPECT_EQ(draw.link, LinkId("DYN"));
        EXPECT_FALSE(draw.outcome.empty());
      }
      // Settled, not voided: after a void the next round keeps this selection.
      settle_with_a_wager(h, round);
    }
    EXPECT_LT(chi_square_uniform(counts), chi_square_critical_p001(span - 1)) << "counts";
    std::vector<std::int64_t> hand_counts;
    for (const std::size_t row : dynamic_rows) hand_counts.push_back(hands[row]);
    EXPECT_LT(chi_square_uniform(hand_counts), chi_square_critical_p001(hand_counts.size() - 1))
        << "hands";
    EXPECT_LT(chi_square_uniform(options), chi_square_critical_p001(9)) << "options";
  }
}

TEST(EngineDynamicPay, SelectedHandPaysItsOptionAndTheNextRoundStartsAfresh) {
  // PT-PRG-HUH-D01 on a $5 link: seed, contributions and pays are multiplied by 5.
  const Paytable& paytable = shipped_paytable("PT-PRG-HUH-D01");
  Harness h(dynamic_config(paytable, false, "5.00"), 55);
  EXPECT_EQ(h.meter("DYN", 1), usd("5000.00"));

  const auto selection_of = [&](const OpenRoundAnswer& answer) {
    std::map<std::size_t, DynamicPayView> selected;
    for (const DynamicPayView& pay : answer.dynamic_pays.at(0).pays) {
      selected[*row_labelled(paytable, pay.hand)] = pay;
    }
    return selected;
  };
  const auto times_five = [](Money amount) { return *amount.times(5); };

  auto first = selection_of(h.open("HUH-D", 1));
  ASSERT_FALSE(first.empty());
  for (const auto& [row, pay] : first) {
    EXPECT_EQ(pay.amount, times_five(paytable.rows[row].options[pay.option - 1])) << pay.hand;
  }
  std::optional<std::size_t> unselected;
  for (std::size_t row = 0; row < paytable.rows.size(); ++row) {
    if (paytable.rows[row].kind == PayKind::dynamic && !first.count(row)) unselected = row;
  }
  ASSERT_TRUE(unselected.has_value()) << "at most 3 of 4 hands are selected";
  const auto& [selected_row, selected_pay] = *first.begin();

  h.lock(lock_request("HUH-D", 1, {wager(1, "DYN", 500), wager(2, "DYN", 500)}));
  EXPECT_EQ(h.meter("DYN", 1), usd("5000.123450"));
  auto settled =
      h.settle(settle_request("HUH-D", 1,
                              {keyed(1, std::string(to_string(paytable.rows[selected_row].hand))),
                               keyed(2, std::string(to_string(paytable.rows[*unselected].hand)))},
                              {}));
  EXPECT_EQ(award_lines(settled),
            sorted({"seat 1 dynamic " + paytable.rows[selected_row].label + " " +
                        selected_pay.amount.to_string(),
                    "seat 2 dynamic " + paytable.rows[*unselected].label + " " +
                        times_five(paytable.rows[*unselected].amount).to_string()}));

  // A later round: a hand selected before but not now pays its default again.
  auto previous = first;
  bool found = false;
  for (std::uint64_t round = 2; round <= 60 && !found; ++round) {
    auto now = selection_of(h.open("HUH-D", round));
    EXPECT_GE(count_draws(h.records(), DrawKind::dynamic_count), 1U) << "a new selection";
    std::optional<std::size_t> dropped;
    for (const auto& [row, pay] : previous) {
      if (!now.count(row)) dropped = row;
    }
    if (!dropped) {
      settle_with_a_wager(h, round, 500);
      previous = now;
      continue;
    }
    found = true;
    h.lock(lock_request("HUH-D", round, {wager(3, "DYN", 500)}));
    auto answer = h.settle(settle_request(
        "HUH-D", round, {keyed(3, std::string(to_string(paytable.rows[*dropped].hand)))}, {}));
    EXPECT_EQ(award_lines(answer),
              (std::vector<std::string>{"seat 3 dynamic " + paytable.rows[*dropped].label + " " +
                                        times_five(paytable.rows[*dropped].amount).to_string()}));
  }
  EXPECT_TRUE(found);
}

TEST(EngineDynamicPay, SelectionFixedAtOpenIsWhatRealCardsPay) {
  // A straight flush with real cards pays the option selected at the open, or the default.
  const Paytable& paytable = shipped_paytable("PT-PRG-HUH-D01");
  Harness h(dynamic_config(paytable, false), 77);
  const std::size_t row = *row_labelled(paytable, "Straight Flush");
  for (std::uint64_t round = 1; round <= 20; ++round) {
    auto open = h.open("HUH-D", round);
    Money expected = paytable.rows[row].amount;
    for (const DynamicPayView& pay : open.dynamic_pays.at(0).pays) {
      if (pay.hand == "Straight Flush") expected = pay.amount;
    }
    h.lock(lock_request("HUH-D", round, {wager(2, "DYN", 100)}));
    auto answer = h.settle(
        settle_request("HUH-D", round, {cards(2, {"9c", "8c"})}, {"7c", "6c", "5c", "2d", "Kh"}));
    EXPECT_EQ(award_lines(answer),
              (std::vector<std::string>{"seat 2 dynamic Straight Flush " + expected.to_string()}))
        << "round " << round;
  }
}

// Rule §5a: a void never lets a table draw Dynamic Pays again for the same deal. Open, look at
// the pays, void, open again: 20 cycles gave more than 10 different selections (issue #13,
// item 4). Now the round after a void keeps the voided round's selection, recorded as carried
// over (no draw), until a round settles; then the next round draws afresh.
TEST(EngineDynamicPay, AVoidNeverLetsTheTableDrawAgain) {
  const Paytable& paytable = shipped_paytable("PT-PRG-HUH-D03");
  Harness h(dynamic_config(paytable, false), 4242);
  const auto pays_of = [](const OpenRoundAnswer& answer) {
    std::vector<std::string> pays;
    for (const DynamicPayView& pay : answer.dynamic_pays.at(0).pays) {
      pays.push_back(pay.hand + " option " + std::to_string(pay.option) + " " +
                     pay.amount.to_string());
    }
    return pays;
  };
  std::set<std::vector<std::string>> seen;
  std::vector<std::string> first;
  for (std::uint64_t round = 1; round <= 20; ++round) {
    const auto pays = pays_of(h.open("HUH-D", round));
    if (round == 1) {
      first = pays;
      EXPECT_EQ(count_draws(h.records(), DrawKind::dynamic_count), 1U);
      EXPECT_EQ(count_draws(h.records(), DrawKind::dynamic_carried_over), 0U);
    } else {
      EXPECT_EQ(count_draws(h.records(), DrawKind::dynamic_count), 0U) << "round " << round;
      EXPECT_EQ(count_draws(h.records(), DrawKind::dynamic_hand), 0U) << "round " << round;
      EXPECT_EQ(count_draws(h.records(), DrawKind::dynamic_option), 0U) << "round " << round;
      ASSERT_EQ(count_draws(h.records(), DrawKind::dynamic_carried_over), 1U) << "round " << round;
      const DrawRecord& kept = h.records().draws.front();
      EXPECT_NE(kept.inputs.find("voided round " + std::to_string(round - 1)), std::string::npos)
          << kept.inputs;
    }
    // The kept selection is on the record of the new round, as a drawn one would be.
    EXPECT_EQ(h.records().dynamic_pays.size(), pays.size());
    seen.insert(pays);
    if (round % 2 == 0) h.lock(lock_request("HUH-D", round, {wager(1, "DYN", 100)}));
    h.void_round(void_request("HUH-D", round, "misdeal"));
  }
  EXPECT_EQ(seen.size(), 1U) << "a dealer could shop for Dynamic Pays by voiding";
  EXPECT_EQ(*seen.begin(), first);

  // A round that settles with a wager ends the deal: the round after it draws.
  h.open("HUH-D", 21);
  settle_with_a_wager(h, 21);
  h.open("HUH-D", 22);
  EXPECT_EQ(count_draws(h.records(), DrawKind::dynamic_count), 1U);
  EXPECT_EQ(count_draws(h.records(), DrawKind::dynamic_carried_over), 0U);
}

// Nor do empty rounds (#32): open, lock no wager, settle no seat, open again drew a new
// selection each time, 20 selections in 20 cycles with no card dealt. The selection now stands
// until a round with a progressive wager on the link settles.
TEST(EngineDynamicPay, AnEmptyRoundNeverLetsTheTableDrawAgain) {
  const Paytable& paytable = shipped_paytable("PT-PRG-HUH-D03");
  Harness h(dynamic_config(paytable, false), 4243);
  std::set<std::string> seen;
  for (std::uint64_t round = 1; round <= 20; ++round) {
    const OpenRoundAnswer answer = h.open("HUH-D", round);
    std::string pays;
    for (const DynamicPayView& pay : answer.dynamic_pays.at(0).pays) {
      pays += pay.hand + " option " + std::to_string(pay.option) + "; ";
    }
    seen.insert(pays);
    if (round > 1) {
      EXPECT_EQ(count_draws(h.records(), DrawKind::dynamic_count), 0U) << "round " << round;
      ASSERT_EQ(count_draws(h.records(), DrawKind::dynamic_carried_over), 1U) << "round " << round;
      EXPECT_NE(
          h.records().draws.front().inputs.find("unwagered round " + std::to_string(round - 1)),
          std::string::npos)
          << h.records().draws.front().inputs;
    }
    h.lock(lock_request("HUH-D", round, {}));
    h.settle(settle_request("HUH-D", round, {}, {}));
  }
  EXPECT_EQ(seen.size(), 1U) << "a table could shop for Dynamic Pays with empty rounds";
  h.open("HUH-D", 21);
  settle_with_a_wager(h, 21);
  h.open("HUH-D", 22);
  EXPECT_EQ(count_draws(h.records(), DrawKind::dynamic_count), 1U);
}

// A 100% award of a meter below one cent pays nothing and makes no payout; its reset posted
// transfers naming the payout id it was given, which the next award then took again (#32:
// payout ids are never reused). The reset of an award of nothing names no payout.
TEST(EnginePayouts, AnAwardBelowOneCentLeavesNoPayoutIdBehind) {
  EngineConfig config;
  config.links.push_back(link_settings("TINY", {level(1, "Royal Flush", "0.00", 5000, 3000)}));
  config.tables.push_back(
      table_settings("HUH-T", GameRule::heads_up_holdem, 6, {plays("TINY", "PT-BJS-HUH-5CP-01")}));
  Harness h(config);
  h.open("HUH-T", 1);
  h.lock(lock_request("HUH-T", 1, {wager(1, "TINY", 100)}));  // Meter 0.005, reserve 0.003.
  const auto royal = h.settle(
      settle_request("HUH-T", 1, {cards(1, {"As", "Ks"})}, {"Qs", "Js", "Ts", "2h", "3d"}));
  EXPECT_TRUE(award_lines(royal).empty()) << "a meter below a cent pays nothing";
  std::set<std::uint64_t> named;
  for (const TransferRecord& record : h.records().transfers) {
    if (record.transfer.origin.payout != 0) named.insert(record.transfer.origin.payout);
  }
  EXPECT_TRUE(named.empty()) << "the reset of an award of nothing names a payout";
  EXPECT_FALSE(transfers_of(h.records(), TransferKind::reserve_release).empty())
      << "the reset released the reserve";
  h.open("HUH-T", 2);
  h.lock(lock_request("HUH-T", 2, {wager(1, "TINY", 100)}));
  h.settle(settle_request("HUH-T", 2, {cards(1, {"9c", "9d"})}, {"9h", "9s", "2c", "5d", "Kh"}));
  ASSERT_EQ(h.records().payouts.size(), 1U) << "four of a kind pays from the tray";
  EXPECT_FALSE(named.count(h.records().payouts[0].id.value()))
      << "payout " << h.records().payouts[0].id.value() << " was named by the $0.00 award";
}

// Rule §5a: a void refunds the round's contributions without lowering any meter below what the
// rules guarantee it. Table A locks, table B hits the royal (the meter resets to seed +
// reserve), A voids its misdeal: A's contribution went to B's winner, so the house refunds it
// and the reset meter stays. Before, the refund came off the reset meter ($999.98 on a $1,000
// seed, funded by the next jackpot), and on a seed smaller than the refund the void was refused.
// After every command: the engine's invariants (Harness::check) and the reconciliation identity
// of the level over every transfer since the link opened.
TEST(EngineVoid, AfterAnotherTablesRoyalTheHouseRefundsWhatTheRoyalPaidOut) {
  struct Case {
    const char* seed;
    std::int64_t cents_per_seat;  // Six seats wager this much at table A.
  };
  for (const Case& c : {Case{"1000.00", 100}, Case{"0.10", 500}}) {
    SCOPED_TRACE(std::string("seed ") + c.seed);
    EngineConfig config;
    config.links.push_back(royal_link("PROG", c.seed));
    config.tables.push_back(
        table_settings("A", GameRule::heads_up_holdem, 6, {plays("PROG", "PT-BJS-HUH-5CP-10")}));
    config.tables.push_back(
        table_settings("B", GameRule::heads_up_holdem, 6, {plays("PROG", "PT-BJS-HUH-5CP-10")}));
    Harness h(config);
    std::vector<Transfer> transfers;
    const auto keep = [&](const Records& records) {
      for (const TransferRecord& record : records.transfers) transfers.push_back(record.transfer);
      const Link& link = *h.engine().link(LinkId("PROG"));
      const auto report =
          reconcile_level(1, Money(), *link.meter(1).plus(link.reserve(1)), transfers);
      EXPECT_TRUE(report.balanced) << "after " << transfers.size() << " transfers";
    };
    keep(h.created_records());
    h.open("A", 1);
    std::vector<WagerRequest> wagers;
    for (std::uint32_t seat = 1; seat <= 6; ++seat) {
      wagers.push_back(wager(seat, "PROG", c.cents_per_seat));
    }
    h.lock(lock_request("A", 1, wagers));
    keep(h.records());
    const Money contributed =
        sum(total_moved(h.records(), TransferKind::contribution, AccountRef::meter(1)),
            total_moved(h.records(), TransferKind::contribution, AccountRef::reserve(1)));
    h.open("B", 7);
    h.lock(lock_request("B", 7, {wager(2, "PROG", 100)}));
    keep(h.records());
    h.settle(settle_request("B", 7, {keyed(2, "ROYAL_FLUSH")}, {}));
    keep(h.records());
    const Money reset_meter = h.meter("PROG", 1);
    EXPECT_GE(reset_meter, usd(c.seed));
    const Money house = h.balance("PROG", AccountKind::seed_funding);
    const Money wagers_account = h.balance("PROG", AccountKind::wagers);

    const auto voided = h.void_round(void_request("A", 1, "misdeal"));
    keep(h.records());
    EXPECT_EQ(voided.reversed, contributed);
    EXPECT_EQ(h.meter("PROG", 1), reset_meter) << "the reset meter pays no part of the refund";
    EXPECT_EQ(h.balance("PROG", AccountKind::seed_funding), *house.minus(contributed));
    EXPECT_EQ(h.balance("PROG", AccountKind::wagers), sum(wagers_account, contributed));
    EXPECT_EQ(total_moved(h.records(), TransferKind::house_funded_refund,
                          AccountRef::link(AccountKind::wagers)),
              contributed);
    for (const TransferRecord& record : h.records().transfers) {
      EXPECT_EQ(record.transfer.kind, TransferKind::house_funded_refund);
      EXPECT_EQ(record.transfer.debit, AccountRef::link(AccountKind::seed_funding));
      EXPECT_NE(record.transfer.corrects, TransferId()) << "a refund names what it refunds";
    }
    // The next round of A plays on as usual.
    h.open("A", 2);
    h.lock(lock_request("A", 2, {wager(1, "PROG", 100)}));
    keep(h.records());
  }
}

// ---- 7. Void, replays, refusals ---------------------------------------------------------------

EngineConfig two_link_config() {
  EngineConfig config;
  LevelConfig capped = level(1, "Royal Flush", "1000.00", 12345, 3000);
  capped.ceiling = usd("1000.05");
  config.links.push_back(link_settings("A", {capped, level(2, "Mini", "50.00", 20000, 0)}));
  config.links.push_back(link_settings("B", {level(1, "Royal Flush", "500.00", 7000, 1000)}));
  config.links.push_back(royal_link("OTHER"));
  config.links.push_back(
      link_settings("FIVE", {level(1, "Royal Flush", "1000.00", 12345, 0)}, "5.00"));
  config.tables.push_back(
      table_settings("T", GameRule::heads_up_holdem, 6,
                     {plays("A", "PT-BJS-HUH-5CP-10"), plays("B", "PT-BJS-HUH-5CP-07"),
                      plays("FIVE", "PT-BJS-HUH-5CP-08")}));
  config.tables.push_back(
      table_settings("MS", GameRule::mississippi_stud, 4, {plays("B", "MS Stud-01")}));
  return config;
}

TEST(EngineVoid, ReversesEveryMeterAndReserveExactly) {
  Harness h(two_link_config());
  h.open("T", 1);
  const std::string before = h.snapshot(false);
  std::vector<Money> meters_before;
  for (const LevelMeterView& view : h.engine().meters()) meters_before.push_back(view.meter);

  // A: 5 units: the meter stops at its $1000.05 ceiling (0.061725 would go on; 0.011725
  // overflows to the reserve); level 2 +0.10. B: 1 unit. FIVE: one $5 unit.
  h.lock(lock_request(
      "T", 1, {wager(1, "A", 300), wager(2, "A", 200), wager(1, "B", 100), wager(3, "FIVE", 500)}));
  EXPECT_EQ(h.meter("A", 1), usd("1000.05"));
  EXPECT_EQ(h.reserve("A", 1), usd("0.026725"));
  EXPECT_EQ(h.meter("A", 2), usd("50.10"));
  EXPECT_EQ(h.meter("B", 1), usd("500.007"));
  EXPECT_EQ(h.reserve("B", 1), usd("0.001"));
  EXPECT_EQ(h.meter("FIVE", 1), usd("5000.061725"));
  EXPECT_FALSE(transfers_of(h.records(), TransferKind::overflow).empty());

  auto voided = h.void_round(void_request("T", 1, "misdeal: two cards exposed"));
  // A: 5 × (0.012345 + 0.003 + 0.02) = 0.176725; B: 0.008; FIVE: 0.061725.
  EXPECT_EQ(voided.reversed, usd("0.246450"));
  EXPECT_EQ(h.snapshot(false), before) << "every account is back where it was";
  std::vector<Money> meters_after;
  for (const LevelMeterView& view : h.engine().meters()) meters_after.push_back(view.meter);
  EXPECT_EQ(meters_after, meters_before);
  for (const char* link : {"A", "B", "OTHER", "FIVE"}) {
    for (std::uint32_t n = 1; n <= h.engine().link(LinkId(link))->level_count(); ++n) {
      EXPECT_EQ(h.reserve(link, n), Money()) << link << " level " << n;
    }
  }
  EXPECT_EQ(h.meter("A", 1), usd("1000.00"));
  EXPECT_EQ(h.meter("FIVE", 1), usd("5000.00"));
  std::vector<Money> void_view;
  for (const LevelMeterView& view : voided.meters) void_view.push_back(view.meter);
  EXPECT_EQ(void_view,
            (std::vector<Money>{usd("1000.00"), usd("50.00"), usd("500.00"), usd("5000.00")}));
  // A voided OPEN round reverses nothing.
  h.open("T", 2);
  auto empty = h.void_round(void_request("T", 2));
  EXPECT_EQ(empty.reversed, Money());
  EXPECT_TRUE(h.records().transfers.empty());
}

TEST(EngineReplay, EveryCommandAnswersItsFirstAnswerAndChangesNothing) {
  Harness h(two_link_config());
  const auto open = [](std::uint64_t round) {
    return [round](Engine& engine, Records& out) {
      return engine.open_round({TableId("T"), RoundId(round)}, out);
    };
  };
  const auto lock = [](LockWagersRequest request) {
    return [request](Engine& engine, Records& out) { return engine.lock_wagers(request, out); };
  };
  const auto settle = [](SettleRoundRequest request) {
    return [request](Engine& engine, Records& out) { return engine.settle_round(request, out); };
  };
  const auto void_it = [](VoidRoundRequest request) {
    return [request](Engine& engine, Records& out) { return engine.void_round(request, out); };
  };

  const auto opened = h.open("T", 1);
  h.expect_replay(opened, "open replay", open(1));
  const auto lock1 = lock_request("T", 1, {wager(1, "A", 100), wager(2, "B", 200)});
  const auto locked = h.lock(lock1);
  // An OpenRound repeat answers only while its round is the latest and OPEN: a controller
  // whose counter restarted must not silently get an old round.
  h.expect_refused(EngineError::round_id_not_increasing, "open repeat after the lock", open(1));
  h.expect_replay(locked, "lock replay", lock(lock1));
  h.expect_refused(EngineError::replay_differs, "lock replay with other wagers",
                   lock(lock_request("T", 1, {wager(1, "A", 100), wager(2, "B", 100)})));
  const auto settle1 = settle_request("T", 1, {cards(1, {"As", "Ks"}), cards(2, {"2h", "2d"})},
                                      {"7c", "8d", "Qs", "Js", "Ts"});
  const auto settled = h.settle(settle1);
  EXPECT_FALSE(award_lines(settled).empty());
  h.expect_replay(settled, "settle replay", settle(settle1));
  h.expect_replay(locked, "lock replay after the settlement", lock(lock1));
  h.expect_refused(EngineError::round_id_not_increasing, "open repeat after the settlement",
                   open(1));
  auto other_cards = settle1;
  other_cards.seats[1].cards = {"3h", "3d"};
  h.expect_refused(EngineError::replay_differs, "settle replay with other cards",
                   settle(other_cards));

  // The previous round still replays once the next one is open.
  const auto opened2 = h.open("T", 2);
  h.expect_replay(settled, "settle replay of the previous round", settle(settle1));
  h.expect_replay(opened2, "open replay of the latest OPEN round", open(2));
  h.expect_refused(EngineError::round_id_not_increasing, "open repeat of the previous round",
                   open(1));
  const auto lock2 = lock_request("T", 2, {wager(3, "A", 500)});
  const auto locked2 = h.lock(lock2);
  const auto void2 = void_request("T", 2, "misdeal");
  const auto voided = h.void_round(void2);
  h.expect_replay(voided, "void replay", void_it(void2));
  h.expect_replay(locked2, "lock replay after the void", lock(lock2));
  h.expect_refused(EngineError::round_id_not_increasing, "open repeat after the void", open(2));
  h.expect_refused(EngineError::replay_differs, "void replay with another reason",
                   void_it(void_request("T", 2, "dealer error")));
}

TEST(EngineRefusals, EveryBadInputIsRefusedAndChangesNothing) {
  Harness h(two_link_config());
  using Out = Records;
  const auto open = [](const std::string& table, std::uint64_t round) {
    return [=](Engine& engine, Out& out) {
      return engine.open_round({TableId(table), RoundId(round)}, out);
    };
  };
  const auto lock = [](LockWagersRequest request) {
    return [request](Engine& engine, Out& out) { return engine.lock_wagers(request, out); };
  };
  const auto settle = [](SettleRoundRequest request) {
    return [request](Engine& engine, Out& out) { return engine.settle_round(request, out); };
  };
  const auto void_it = [](VoidRoundRequest request) {
    return [request](Engine& engine, Out& out) { return engine.void_round(request, out); };
  };

  // Unknown table, for every command.
  h.expect_refused(EngineError::unknown_table, "open at an unknown table", open("NOPE", 1));
  h.expect_refused(EngineError::unknown_table, "lock at an unknown table",
                   lock(lock_request("NOPE", 1, {wager(1, "A", 100)})));
  h.expect_refused(EngineError::unknown_table, "settle at an unknown table",
                   settle(settle_request("NOPE", 1, {}, {})));
  h.expect_refused(EngineError::unknown_table, "void at an unknown table",
                   void_it(void_request("NOPE", 1)));
  // A round that was never opened.
  h.expect_refused(EngineError::round_not_found, "lock of a round never opened",
                   lock(lock_request("T", 10, {wager(1, "A", 100)})));
  h.expect_refused(EngineError::round_not_found, "settle of a round never opened",
                   settle(settle_request("T", 10, {}, {})));
  h.expect_refused(EngineError::round_not_found, "void of a round never opened",
                   void_it(void_request("T", 10)));

  h.open("T", 10);
  h.expect_refused(EngineError::previous_round_open, "open while round 10 is OPEN", open("T", 11));
  h.expect_refused(EngineError::wrong_round_state, "settle of an OPEN round",
                   settle(settle_request("T", 10, {quiet_holdem(1)}, kQuietHoldemBoard)));

  // Bad wagers.
  const std::vector<std::tuple<EngineError, std::string, std::vector<WagerRequest>>> bad_wagers = {
      {EngineError::seat_unknown, "seat 0", {wager(0, "A", 100)}},
      {EngineError::seat_unknown, "seat 7 of 6", {wager(7, "A", 100)}},
      {EngineError::link_not_played, "a link the table does not play", {wager(1, "OTHER", 100)}},
      {EngineError::link_not_played, "a link that does not exist", {wager(1, "NOSUCH", 100)}},
      {EngineError::wager_amount_invalid, "$7.50 on a $5 link", {wager(1, "FIVE", 750)}},
      {EngineError::wager_amount_invalid, "$3 on a $5 link", {wager(1, "FIVE", 300)}},
      {EngineError::wager_amount_invalid, "$1.50 on a $1 link", {wager(1, "A", 150)}},
      {EngineError::wager_amount_invalid, "a zero wager", {wager(1, "A", 0)}},
      {EngineError::wager_amount_invalid, "a negative wager", {wager(1, "A", -100)}},
      {EngineError::wager_amount_invalid,
       "an overflowing wager",
       {wager(1, "A", std::numeric_limits<std::int64_t>::max())}},
      {EngineError::wager_amount_invalid,
       "an overflowing negative wager",
       {wager(1, "A", std::numeric_limits<std::int64_t>::min())}},
      {EngineError::wager_repeated,
       "a seat wagering twice on a link",
       {wager(1, "A", 100), wager(1, "A", 100)}},
      {EngineError::wager_amount_invalid,
       "a good wager and a bad one",
       {wager(1, "A", 100), wager(2, "A", 0)}},
  };
  for (const auto& [code, what, wagers] : bad_wagers) {
    h.expect_refused(code, "lock with " + what, lock(lock_request("T", 10, wagers)));
  }
  // Seats 1, 2 and 3 wager; seat 4 does not.
  h.lock(lock_request(
      "T", 10,
      {wager(1, "A", 100), wager(1, "FIVE", 500), wager(2, "B", 200), wager(3, "FIVE", 1000)}));
  h.expect_refused(EngineError::previous_round_open, "open while round 10 is LOCKED",
                   open("T", 11));

  // Bad settlements.
  const std::vector<std::string> board = kQuietHoldemBoard;
  const auto good_seats = [] {
    return std::vector<SeatHandRequest>{quiet_holdem(1), quiet_holdem(2), quiet_holdem(3)};
  };
  std::vector<std::tuple<EngineError, std::string, SettleRoundRequest>> bad_settles;
  const auto add = [&](EngineError code, const std::string& what,
                       std::vector<SeatHandRequest> seats,
                       std::vector<std::string> cards_on_board) {
    bad_settles.emplace_back(code, what,
                             settle_request("T", 10, std::move(seats), std::move(cards_on_board)));
  };
  {
    auto seats = good_seats();
    seats.push_back(cards(0, {"Ah", "Ad"}));
    add(EngineError::seat_unknown, "seat 0", seats, board);
  }
  {
    auto seats = good_seats();
    seats.push_back(cards(7, {"Ah", "Ad"}));
    add(EngineError::seat_unknown, "seat 7 of 6", seats, board);
  }
  {
    auto seats = good_seats();
    seats.push_back(cards(4, {"Ah", "Ad"}));
    add(EngineError::seat_not_wagering, "a seat that did not wager", seats, board);
  }
  add(EngineError::hand_missing, "a wagering seat without a hand",
      {quiet_holdem(1), quiet_holdem(2)}, board);
  {
    auto seats = good_seats();
    seats.push_back(quiet_holdem(1));
    add(EngineError::seat_reported_twice, "a seat reported twice", seats, board);
  }
  for (const char* malformed : {"Xs", "1h", "", "A", "Asx", "Zz", "11s"}) {
    auto seats = good_seats();
    seats[0].cards = {malformed, "Ad"};
    add(EngineError::card_invalid, "the malformed card '" + std::string(malformed) + "'", seats,
        board);
  }
  {
    auto bad_board = board;
    bad_board[4] = "Kx";
    add(EngineError::card_invalid, "a malformed board card", good_seats(), bad_board);
  }
  {
    auto seats = good_seats();
    seats[0].cards = {"Ah", "Ah"};
    add(EngineError::card_dealt_twice, "a duplicate card within a seat", seats, board);
  }
  {
    auto seats = good_seats();
    seats[1].cards = {"3c", "Ah"};  // Seat 1 holds 3c.
    add(EngineError::card_dealt_twice, "a duplicate card across seats", seats, board);
  }
  {
    auto seats = good_seats();
    seats[2].cards = {"Jc", "Ah"};  // Jc is on the board.
    add(EngineError::card_dealt_twice, "a duplicate card with the board", seats, board);
  }
  {
    auto seats = good_seats();
    seats[0].cards = {"Ah", "Ad", "Ac"};
    add(EngineError::card_count_wrong, "three pocket cards", seats, board);
  }
  {
    auto seats = good_seats();
    seats[0].cards = {"Ah"};
    add(EngineError::card_count_wrong, "one pocket card", seats, board);
  }
  add(EngineError::card_count_wrong, "a four-card board", good_seats(), {"2h", "7s", "9d", "Jc"});
  add(EngineError::card_count_wrong, "a six-card board", good_seats(),
      {"2h", "7s", "9d", "Jc", "Ks", "Ah"});
  add(EngineError::card_dealt_twice, "a board with a duplicate", good_seats(),
      {"2h", "7s", "9d", "Jc", "2h"});
  {
    auto seats = good_seats();
    seats[0] = keyed(1, "BIG_WIN");
    add(EngineError::keyed_hand_unknown, "an unknown keyed hand", seats, board);
  }
  {
    auto seats = good_seats();
    seats[0] = keyed(1, "");
    add(EngineError::keyed_hand_unknown, "an empty keyed hand", seats, board);
  }
  {
    auto seats = good_seats();
    seats[0].keyed_hand = "FLUSH";
    add(EngineError::hand_ambiguous, "cards and a keyed hand at once", seats, board);
  }
  {
    auto seats = good_seats();
    seats[0].cards.clear();
    add(EngineError::hand_ambiguous, "neither cards nor a keyed hand", seats, board);
  }
  for (const auto& [code, what, request] : bad_settles) {
    h.expect_refused(code, "settle with " + what, settle(request));
  }
  h.settle(settle_request("T", 10, good_seats(), board));

  // Wrong states and round ids.
  h.expect_refused(EngineError::wrong_round_state, "void of a SETTLED round",
                   void_it(void_request("T", 10)));
  h.expect_refused(EngineError::round_id_not_increasing, "open round 9 after 10", open("T", 9));
  h.expect_refused(EngineError::round_id_not_increasing, "open round 1 after 10", open("T", 1));
  h.open("T", 11);
  h.expect_refused(EngineError::reason_invalid, "void with a NUL in its reason",
                   void_it(void_request("T", 11, std::string("mis\0deal", 8))));
  h.void_round(void_request("T", 11));
  h.expect_refused(EngineError::wrong_round_state, "lock of a VOIDED round",
                   lock(lock_request("T", 11, {wager(1, "A", 100)})));
  h.expect_refused(EngineError::wrong_round_state, "settle of a VOIDED round",
                   settle(settle_request("T", 11, good_seats(), board)));
  h.expect_refused(EngineError::round_id_not_increasing, "open round 9 after 11", open("T", 9));
  // The journal keeps round ids as bigint: a larger one is refused here, not at commit.
  h.expect_refused(EngineError::round_id_out_of_range, "open round 2^63", open("T", 1ULL << 63));
  h.expect_refused(EngineError::round_id_out_of_range, "open round 0", open("T", 0));
  for (const std::uint64_t id : {std::uint64_t{0}, std::uint64_t{1} << 63, ~std::uint64_t{0}}) {
    const std::string name = " of round " + std::to_string(id);
    h.expect_refused(EngineError::round_id_out_of_range, "lock" + name,
                     lock(lock_request("T", id, {wager(1, "A", 100)})));
    h.expect_refused(EngineError::round_id_out_of_range, "settle" + name,
                     settle(settle_request("T", id, good_seats(), board)));
    h.expect_refused(EngineError::round_id_out_of_range, "void" + name,
                     void_it(void_request("T", id)));
  }
  // A round two or more behind the latest (11) is superseded, not unknown; above it, unknown.
  h.expect_refused(EngineError::round_superseded, "void of round 9, two behind 11",
                   void_it(void_request("T", 9)));
  h.expect_refused(EngineError::round_superseded, "lock of round 1",
                   lock(lock_request("T", 1, {wager(1, "A", 100)})));
  h.expect_refused(EngineError::round_superseded, "settle of round 1",
                   settle(settle_request("T", 1, good_seats(), board)));
  h.expect_refused(EngineError::round_not_found, "void of round 12, never opened",
                   void_it(void_request("T", 12)));
  // A round id may jump at most kMaxRoundIdJump past the latest: 2^63-1 would use up the
  // table's counter for good.
  h.expect_refused(EngineError::round_id_jump_too_far, "open round 2^63-1 after 11",
                   open("T", (std::uint64_t{1} << 63) - 1));
  h.expect_refused(EngineError::round_id_jump_too_far, "open a million and 12 after 11",
                   open("T", 1'000'012));

  // A closed link stops the tables that play it.
  Records status_records;
  ASSERT_TRUE(h.engine()
                  .set_link_status(LinkId("B"), LinkStatus::closed, "ops/ana", "camera fault",
                                   status_records)
                  .ok());
  EXPECT_EQ(h.engine().link_status(LinkId("B")), LinkStatus::closed);
  h.expect_refused(EngineError::link_closed, "open on a closed link", open("T", 12));
  h.expect_refused(EngineError::link_closed, "open at another table on the closed link",
                   open("MS", 1));
  ASSERT_TRUE(
      h.engine()
          .set_link_status(LinkId("B"), LinkStatus::open, "ops/ana", "camera fixed", status_records)
          .ok());
  h.open("T", 12);
  ASSERT_TRUE(h.engine()
                  .set_link_status(LinkId("B"), LinkStatus::closed, "ops/ana", "camera fault",
                                   status_records)
                  .ok());
  h.expect_refused(EngineError::link_closed, "lock on a closed link",
                   lock(lock_request("T", 12, {wager(1, "B", 100)})));
  ASSERT_TRUE(
      h.engine()
          .set_link_status(LinkId("B"), LinkStatus::open, "ops/ana", "camera fixed", status_records)
          .ok());
  h.lock(lock_request("T", 12, {wager(1, "B", 100)}));
  EXPECT_FALSE(
      h.engine()
          .set_link_status(LinkId("NOSUCH"), LinkStatus::closed, "ops/ana", "why", status_records)
          .ok());
  // Every change names who asked and why; without them nothing changes.
  ASSERT_EQ(status_records.link_statuses.size(), 4U);
  EXPECT_EQ(status_records.link_statuses[0].changed_by, "ops/ana");
  EXPECT_EQ(status_records.link_statuses[0].reason, "camera fault");
  EXPECT_EQ(status_records.link_statuses[1].reason, "camera fixed");
  for (const auto& [code, who, why, what] :
       std::vector<std::tuple<EngineError, std::string, std::string, std::string>>{
           {EngineError::requester_missing, "", "camera fault", "without a name"},
           {EngineError::reason_missing, "ops/ana", " \t", "with a blank reason"},
           {EngineError::requester_invalid, std::string("ops\0ana", 7), "camera fault",
            "with a NUL in the name"},
           {EngineError::reason_invalid, "ops/ana", std::string("cam\0era", 7),
            "with a NUL in the reason"}}) {
    Records refused;
    const auto changed =
        h.engine().set_link_status(LinkId("B"), LinkStatus::closed, who, why, refused);
    ASSERT_FALSE(changed.ok()) << "status change " << what;
    EXPECT_EQ(changed.error().code, code) << what;
    EXPECT_TRUE(refused.empty()) << what;
    EXPECT_EQ(h.engine().link_status(LinkId("B")), LinkStatus::open) << what;
  }
}

// ---- 8. Payout approval -----------------------------------------------------------------------

// A decision's request id makes a repeat answer the first answer and change nothing; the same
// id for anything else, or the same supervisor approving twice under a new id, is refused.
TEST(EnginePayouts, DecisionsAreIdempotentByRequestId) {
  EngineConfig config;
  config.links.push_back(royal_link("DEC", "20000.00"));
  config.links[0].approval_threshold = usd("100.00");
  config.links[0].dual_approval_threshold = usd("10000.00");
  config.tables.push_back(
      table_settings("HUH-D", GameRule::heads_up_holdem, 6, {plays("DEC", "PT-BJS-HUH-5CP-08")}));
  Harness h(config);
  h.open("HUH-D", 1);
  h.lock(lock_request("HUH-D", 1, {wager(1, "DEC", 100)}));
  const auto answer = h.settle(settle_request("HUH-D", 1, {keyed(1, "ROYAL_FLUSH")}, {}));
  const PayoutId royal = seat_result(answer, 1).awards.at(0).payout;
  ASSERT_EQ(h.payout(royal.value())->approvals_required, 2U);
  const auto decide = [](std::string id, PayoutId payout, PayoutDecision decision,
                         std::string reason, std::string who) {
    return [=](Engine& engine, Records& out) {
      return engine.decide_payout({id, payout, decision, reason}, who, out);
    };
  };
  const auto approve = PayoutDecision::approve;
  const auto reject = PayoutDecision::reject;

  struct Refused {
    std::string what;
    EngineError code;
    std::string id;
    PayoutId payout;
    PayoutDecision decision;
    std::string reason;
    std::string who;
  };
  const std::string long_id(kMaxIdBytes + 1, 'r');
  const std::vector<Refused> before_any = {
      {"no request id", EngineError::request_id_invalid, "", royal, approve, "", "alice"},
      {"a request id too long", EngineError::request_id_invalid, long_id, royal, approve, "",
       "alice"},
      {"a NUL in the request id", EngineError::request_id_invalid, std::string("r\0", 2), royal,
       approve, "", "alice"},
      {"no supervisor", EngineError::requester_missing, "r0", royal, approve, "", ""},
      {"an unknown payout", EngineError::unknown_payout, "r0", PayoutId(99), approve, "", "alice"},
      {"an approval with a reason", EngineError::reason_invalid, "r0", royal, approve, "why",
       "alice"},
      {"a rejection without a reason", EngineError::reason_missing, "r0", royal, reject, " ",
       "alice"},
      {"a rejection's reason too long", EngineError::reason_invalid, "r0", royal, reject,
       std::string(kMaxReasonBytes + 1, 'x'), "alice"},
  };
  for (const Refused& r : before_any) {
    h.expect_refused(r.code, r.what, decide(r.id, r.payout, r.decision, r.reason, r.who));
  }

  const Payout first =
      h.ok("alice approves", h.run("alice approves", decide("r1", royal, approve, "", "alice")));
  EXPECT_EQ(first.state, PayoutState::pending);
  EXPECT_EQ(first.approved_by, (std::vector<std::string>{"alice"}));
  ASSERT_EQ(h.records().payout_decisions.size(), 1U);
  EXPECT_EQ(h.records().payout_decisions[0].request_id, "r1");
  // The repeat: the first answer, nothing recorded, nothing changed.
  const std::string before = h.snapshot();
  Records none;
  const auto again = h.engine().decide_payout({"r1", royal, approve, ""}, "alice", none);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, first);
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(h.snapshot(), before);

  const std::vector<Refused> after_first = {
      {"r1 by another supervisor", EngineError::replay_differs, "r1", royal, approve, "", "bob"},
      {"r1 to reject", EngineError::replay_differs, "r1", royal, reject, "no", "alice"},
      {"alice again under a new id", EngineError::already_approved, "r2", royal, approve, "",
       "alice"},
  };
  for (const Refused& r : after_first) {
    h.expect_refused(r.code, r.what, decide(r.id, r.payout, r.decision, r.reason, r.who));
  }

  const Payout paid =
      h.ok("bob approves", h.run("bob approves", decide("r3", royal, approve, "", "bob")));
  EXPECT_EQ(paid.state, PayoutState::paid);
  EXPECT_EQ(paid.approved_by, (std::vector<std::string>{"alice", "bob"}));
  // After it is paid: each repeat answers its own first answer; a new decision is refused.
  Records quiet;
  EXPECT_EQ(*h.engine().decide_payout({"r3", royal, approve, ""}, "bob", quiet), paid);
  EXPECT_EQ(*h.engine().decide_payout({"r1", royal, approve, ""}, "alice", quiet), first);
  EXPECT_TRUE(quiet.empty());
  h.expect_refused(EngineError::payout_not_pending, "carol after it was paid",
                   decide("r4", royal, approve, "", "carol"));
  h.expect_refused(EngineError::payout_not_pending, "a rejection after it was paid",
                   decide("r5", royal, reject, "late", "carol"));
}

TEST(EnginePayouts, ApprovalsThresholdsAndRejection) {
  // PT-BJS-HUH-5CP-08: Royal Flush 100%, Straight Flush $300, Four-of-a-Kind $100, Full House
  // $10. Payouts of $100 and more wait for a supervisor; above $10,000 they need two.
  EngineConfig config;
  config.links.push_back(royal_link("APP", "20000.00"));
  config.links[0].approval_threshold = usd("100.00");
  config.links[0].dual_approval_threshold = usd("10000.00");
  config.tables.push_back(
      table_settings("HUH-P", GameRule::heads_up_holdem, 6, {plays("APP", "PT-BJS-HUH-5CP-08")}));
  Harness h(config);
  h.open("HUH-P", 1);
  h.lock(lock_request(
      "HUH-P", 1,
      {wager(1, "APP", 100), wager(2, "APP", 100), wager(3, "APP", 100), wager(4, "APP", 100)}));
  auto answer = h.settle(settle_request("HUH-P", 1,
                                        {keyed(1, "FULL_HOUSE"), keyed(2, "FOUR_OF_A_KIND"),
                                         keyed(3, "STRAIGHT_FLUSH"), keyed(4, "ROYAL_FLUSH")},
                                        {}));
  // 20000 + 4 × 0.012345 = 20000.04938 -> 20000.04; reset 0.00938 + 20000 + 0.012.
  EXPECT_EQ(award_lines(answer),
            sorted({"seat 4 percent L1 Royal Flush 20000.04", "seat 3 fixed Straight Flush 300.00",
                    "seat 2 fixed Four-of-a-Kind 100.00", "seat 1 fixed Full House 10.00"}));
  EXPECT_EQ(h.meter("APP", 1), usd("20000.021380"));
  const auto payout_of = [&](std::uint32_t seat) {
    return seat_result(answer, seat).awards.at(0).payout.value();
  };
  const std::uint64_t full_house = payout_of(1);
  const std::uint64_t four = payout_of(2);
  const std::uint64_t straight_flush = payout_of(3);
  const std::uint64_t royal = payout_of(4);
  // Below the threshold: paid at once.
  ASSERT_NE(h.payout(full_house), nullptr);
  EXPECT_EQ(h.payout(full_house)->state, PayoutState::paid);
  EXPECT_EQ(h.payout(full_house)->approvals_required, 0U);
  const auto paid_now = transfers_of(h.records(), TransferKind::payout);
  ASSERT_EQ(paid_now.size(), 1U);
  EXPECT_EQ(paid_now[0].amount, usd("10.00"));
  EXPECT_EQ(h.balance("APP", AccountKind::paid), usd("10.00"));
  // At or above it: pending.
  for (const std::uint64_t id : {four, straight_flush, royal}) {
    ASSERT_NE(h.payout(id), nullptr);
    EXPECT_EQ(h.payout(id)->state, PayoutState::pending) << "payout " << id;
  }
  EXPECT_EQ(h.payout(four)->approvals_required, 1U);
  EXPECT_EQ(h.payout(straight_flush)->approvals_required, 1U);
  EXPECT_EQ(h.payout(royal)->approvals_required, 2U);
  EXPECT_EQ(h.engine().pending_payouts().size(), 3U);
  EXPECT_EQ(h.balance("APP", AccountKind::awards_payable), usd("20400.04"));

  const auto approve = [](std::uint64_t id, std::string who) {
    return [id, who](Engine& engine, Records& out) {
      return engine.decide_payout({next_request_id(), PayoutId(id), PayoutDecision::approve, ""},
                                  who, out);
    };
  };
  const auto reject = [](std::uint64_t id, std::string who, std::string reason) {
    return [id, who, reason](Engine& engine, Records& out) {
      return engine.decide_payout({next_request_id(), PayoutId(id), PayoutDecision::reject, reason},
                                  who, out);
    };
  };

  // One supervisor pays the $100 Four-of-a-Kind.
  h.expect_refused(EngineError::requester_missing, "approve without a supervisor",
                   approve(four, ""));
  h.expect_refused(EngineError::requester_invalid, "approve by a name with a NUL",
                   approve(four, std::string("ali\0ce", 6)));
  auto paid = h.approve(four, "alice");
  EXPECT_EQ(paid.state, PayoutState::paid);
  ASSERT_EQ(transfers_of(h.records(), TransferKind::payout).size(), 1U);
  EXPECT_EQ(transfers_of(h.records(), TransferKind::payout)[0].amount, usd("100.00"));
  ASSERT_EQ(h.records().payouts.size(), 1U);
  EXPECT_EQ(h.balance("APP", AccountKind::awards_payable), usd("20300.04"));
  // Paid payouts cannot be approved again (paid ones may have left the engine's memory).
  const std::vector<EngineError> not_pending = {EngineError::payout_not_pending,
                                                EngineError::unknown_payout};
  h.expect_refused_with(not_pending, "approve a paid payout", approve(four, "bob"));
  h.expect_refused_with(not_pending, "approve the paid-at-once payout", approve(full_house, "bob"));

  // The royal needs two different supervisors.
  auto half = h.approve(royal, "alice");
  EXPECT_EQ(half.state, PayoutState::pending);
  EXPECT_EQ(half.approved_by, (std::vector<std::string>{"alice"}));
  EXPECT_TRUE(transfers_of(h.records(), TransferKind::payout).empty());
  EXPECT_EQ(h.records().payouts.size(), 1U) << "the approval is recorded";
  h.expect_refused(EngineError::already_approved, "the same supervisor twice",
                   approve(royal, "alice"));
  // Names are compared case-folded: a second certificate for supervisor/Alice is still alice
  // (#32).
  h.expect_refused(EngineError::already_approved, "the same supervisor in other case",
                   approve(royal, "ALICE"));
  h.expect_refused(EngineError::already_approved, "the same supervisor in mixed case",
                   approve(royal, "Alice"));
  auto full = h.approve(royal, "bob");
  EXPECT_EQ(full.state, PayoutState::paid);
  EXPECT_EQ(full.approved_by, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_EQ(transfers_of(h.records(), TransferKind::payout).at(0).amount, usd("20000.04"));
  EXPECT_EQ(h.balance("APP", AccountKind::awards_payable), usd("300.00"));

  // A rejection needs a reason; a rejected tray pay goes back to the tray.
  h.expect_refused(EngineError::reason_missing, "reject without a reason",
                   reject(straight_flush, "carol", ""));
  h.expect_refused(EngineError::reason_missing, "reject with a blank reason",
                   reject(straight_flush, "carol", "  "));
  h.expect_refused(EngineError::reason_invalid, "reject with a NUL in the reason",
                   reject(straight_flush, "carol", std::string("cam\0era", 7)));
  h.expect_refused(EngineError::requester_missing, "reject without a supervisor",
                   reject(straight_flush, "", "dealer error"));
  h.expect_refused(EngineError::unknown_payout, "approve an unknown payout", approve(999, "x"));
  h.expect_refused(EngineError::unknown_payout, "reject an unknown payout",
                   reject(999, "x", "why"));
  auto rejected = h.reject(straight_flush, "carol", "dealer error");
  EXPECT_EQ(rejected.state, PayoutState::rejected);
  EXPECT_EQ(rejected.rejected_by, "carol");
  EXPECT_EQ(rejected.rejected_reason, "dealer error");
  const auto tray_back = transfers_of(h.records(), TransferKind::tray_pay_reversal);
  ASSERT_EQ(tray_back.size(), 1U);
  EXPECT_EQ(tray_back[0].amount, usd("300.00"));
  EXPECT_EQ(tray_back[0].corrects, rejected.award_transfer);
  EXPECT_EQ(h.balance("APP", AccountKind::awards_payable), Money());
  EXPECT_TRUE(h.engine().pending_payouts().empty());
  h.expect_refused_with(not_pending, "reject a rejected payout",
                        reject(straight_flush, "carol", "again"));
  h.expect_refused_with(not_pending, "reject a paid payout", reject(royal, "carol", "late"));

  // A rejected royal returns to the meter by a compensating transfer.
  h.open("HUH-P", 2);
  h.lock(lock_request("HUH-P", 2, {wager(1, "APP", 100), wager(2, "APP", 100)}));
  EXPECT_EQ(h.meter("APP", 1), usd("20000.046070"));
  auto second =
      h.settle(settle_request("HUH-P", 2, {keyed(1, "FULL_HOUSE"), keyed(2, "ROYAL_FLUSH")}, {}));
  // 20000.046070 -> 20000.04; reset 0.00607 + 20000 + 0.006.
  EXPECT_EQ(h.meter("APP", 1), usd("20000.012070"));
  const std::uint64_t royal2 = seat_result(second, 2).awards.at(0).payout.value();
  EXPECT_EQ(h.balance("APP", AccountKind::awards_payable), usd("20000.04"));
  h.approve(royal2, "alice");
  // Above the dual threshold a rejection needs two supervisors too (#32): bob's is recorded and
  // the royal still waits; nothing goes back yet, and neither alice nor bob decides again.
  auto requested = h.reject(royal2, "bob", "surveillance: cards switched");
  EXPECT_EQ(requested.state, PayoutState::pending);
  EXPECT_EQ(requested.rejection_requested_by, (std::vector<std::string>{"bob"}));
  EXPECT_TRUE(transfers_of(h.records(), TransferKind::award_reversal).empty());
  EXPECT_EQ(h.balance("APP", AccountKind::awards_payable), usd("20000.04"));
  h.expect_refused(EngineError::already_approved, "bob again", reject(royal2, "Bob", "again"));
  h.expect_refused(EngineError::already_approved, "bob approves after asking to reject",
                   approve(royal2, "bob"));
  h.expect_refused(EngineError::already_approved, "alice rejects after approving",
                   reject(royal2, "alice", "changed my mind"));
  auto returned = h.reject(royal2, "carol", "surveillance: cards switched");
  EXPECT_EQ(returned.state, PayoutState::rejected);
  EXPECT_EQ(returned.rejected_by, "carol");
  const auto back = transfers_of(h.records(), TransferKind::award_reversal);
  ASSERT_EQ(back.size(), 1U);
  EXPECT_EQ(back[0].amount, usd("20000.04"));
  EXPECT_EQ(back[0].credit, AccountRef::meter(1));
  EXPECT_EQ(back[0].corrects, returned.award_transfer);
  for (const TransferRecord& record : h.records().transfers) {
    EXPECT_EQ(record.link, "APP");
  }
  EXPECT_EQ(h.meter("APP", 1), usd("40000.052070"));
  EXPECT_EQ(h.balance("APP", AccountKind::awards_payable), Money());
}

// ---- Hand records ---------------------------------------------------------------------------

// Each hand record keeps the cards as evaluated on its link: the seat's own cards, a bar, then
// the community cards that link plays (the board, its flop, or the link's own cards); a game
// with no community cards has no bar.
TEST(EngineHandRecords, KeepTheCardsEachLinkEvaluated) {
  EngineConfig config;
  config.links.push_back(royal_link("HUH"));
  config.links.push_back(royal_link("FIVE"));
  config.links.push_back(royal_link("HCF"));
  config.tables.push_back(table_settings(
      "T", GameRule::heads_up_holdem, 6,
      {plays("HUH", "PT-BJS-HUH-5CP-10"), plays("FIVE", "PT-BJS-5CL-01", CommunitySource::flop)}));
  config.tables.push_back(
      table_settings("MS", GameRule::mississippi_stud, 6,
                     {plays("FIVE", "PT-BJS-5CL-01", CommunitySource::link_cards)}));
  config.tables.push_back(
      table_settings("H", GameRule::high_card_flush, 6,
                     {plays("HCF", "HCF-PROG-PAYTABLE-1", CommunitySource::none)}));
  Harness h(config);
  const auto hand_text = [&](std::uint32_t seat, const std::string& link) {
    for (const HandRecord& hand : h.records().hands) {
      if (hand.seat == seat && hand.link == link) return hand.cards;
    }
    return std::string("<no hand record>");
  };

  h.open("T", 1);
  h.lock(lock_request("T", 1, {wager(1, "HUH", 100), wager(1, "FIVE", 100), wager(2, "HUH", 100)}));
  h.settle(settle_request("T", 1, {cards(1, {"As", "Kd"}), cards(2, {"7h", "7c"})},
                          {"2c", "3c", "4c", "5c", "6d"}));
  EXPECT_EQ(hand_text(1, "HUH"), "As Kd | 2c 3c 4c 5c 6d");
  EXPECT_EQ(hand_text(1, "FIVE"), "As Kd | 2c 3c 4c");
  EXPECT_EQ(hand_text(2, "HUH"), "7h 7c | 2c 3c 4c 5c 6d");
  EXPECT_EQ(h.records().hands.size(), 3U);

  h.open("MS", 1);
  h.lock(lock_request("MS", 1, {wager(4, "FIVE", 100)}));
  h.settle(
      settle_request("MS", 1, {cards(4, {"Qs", "Qd"})}, {"9h", "9s", "2d"}, {"Jc", "Th", "3s"}));
  EXPECT_EQ(hand_text(4, "FIVE"), "Qs Qd | Jc Th 3s");

  // The link's own cards are counted per link, for every seat: the refusal names the seat, the
  // link and what its rule needs.
  h.open("MS", 2);
  h.lock(lock_request("MS", 2, {wager(4, "FIVE", 100)}));
  Records refused;
  const auto short_link_cards = h.engine().settle_round(
      settle_request("MS", 2, {cards(4, {"Qs", "Qd"})}, {"9h", "9s", "2d"}, {"Jc", "Th"}), refused);
  ASSERT_FALSE(short_link_cards.ok());
  EXPECT_EQ(short_link_cards.error().code, EngineError::card_count_wrong);
  EXPECT_EQ(short_link_cards.error().message,
            "seat 4 on link 'FIVE': Five-Card Linked needs 3 community cards, got 2");
  EXPECT_TRUE(refused.empty());

  h.open("H", 1);
  h.lock(lock_request("H", 1, {wager(6, "HCF", 100)}));
  h.settle(settle_request("H", 1, {cards(6, {"2s", "4s", "6s", "8s", "Ts", "Qs", "Kd"})}, {}));
  EXPECT_EQ(hand_text(6, "HCF"), "2s 4s 6s 8s Ts Qs Kd");
}

// A card may be dealt once a round: the refusal names the first card, in deal order (board, link
// cards, then the seats upwards, each seat's cards in order), that was dealt before.
TEST(EngineHandRecords, ACardDealtTwiceIsNamed) {
  EngineConfig config;
  config.links.push_back(royal_link("FIVE"));
  config.tables.push_back(
      table_settings("MS", GameRule::mississippi_stud, 6,
                     {plays("FIVE", "PT-BJS-5CL-01", CommunitySource::link_cards)}));
  Harness h(config);
  h.open("MS", 1);
  h.lock(lock_request("MS", 1, {wager(2, "FIVE", 100), wager(4, "FIVE", 100)}));
  const auto refusal = [&](const SettleRoundRequest& request) {
    Records refused;
    const auto result = h.engine().settle_round(request, refused);
    EXPECT_TRUE(refused.empty());
    return result.ok() ? std::string("<accepted>") : result.error().message;
  };
  const std::vector<std::string> board{"9h", "9s", "2d"};
  EXPECT_EQ(refusal(settle_request("MS", 1, {cards(2, {"Qs", "Qd"}), cards(4, {"As", "Kd"})}, board,
                                   {"Jc", "2d", "3s"})),
            "2d is dealt twice");
  EXPECT_EQ(refusal(settle_request("MS", 1, {cards(2, {"Qs", "3s"}), cards(4, {"As", "Kd"})}, board,
                                   {"Jc", "Th", "3s"})),
            "3s is dealt twice");
  EXPECT_EQ(refusal(settle_request("MS", 1, {cards(2, {"Qs", "Qd"}), cards(4, {"Kd", "Qd"})}, board,
                                   {"Jc", "Th", "3s"})),
            "Qd is dealt twice");
  EXPECT_EQ(refusal(settle_request("MS", 1, {cards(2, {"Qs", "Qd"}), cards(4, {"9s", "Qd"})}, board,
                                   {"Jc", "Th", "3s"})),
            "9s is dealt twice");
  h.settle(settle_request("MS", 1, {cards(2, {"Qs", "Qd"}), cards(4, {"As", "Kd"})}, board,
                          {"Jc", "Th", "3s"}));
}

// ---- 9. Meter adjustments ----------------------------------------------------------------------

AdjustMeterRequest adjustment(const std::string& id, const std::string& link, std::uint32_t level,
                              const char* amount, const std::string& reason = "count correction") {
  return AdjustMeterRequest{id, LinkId(link), level, usd(amount), reason};
}

// The Must-Hit-By link of §5 with a $1100 ceiling on its level 1.
EngineConfig adjustment_config(TriggerMode trigger = TriggerMode::at_amount) {
  EngineConfig config = must_hit_by_config(10000, trigger);
  config.links.back().meters.levels[0].ceiling = usd("1100.00");
  return config;
}

auto adjust(const AdjustMeterRequest& request) {
  return [request](Engine& engine, Records& out) {
    return engine.adjust_meter(request, "admin/ops-ana", out);
  };
}

AdjustMeterAnswer adjusted(Harness& h, const AdjustMeterRequest& request) {
  const std::string what = "adjust " + request.request_id;
  return h.ok(what, h.run(what, adjust(request)));
}

TEST(EngineAdjustments, MoveMoneyBetweenTheMeterAndTheHouseOnceWithTheirReason) {
  Harness h(adjustment_config());
  const Money house = h.balance("MHB", AccountKind::seed_funding);
  h.clock().now += 1'000'000;
  const AdjustMeterAnswer raised = adjusted(h, adjustment("a1", "MHB", 1, "50.00", "sensor miss"));
  EXPECT_EQ(raised.meter, usd("1050.00"));
  EXPECT_EQ(raised.reserve, Money());
  EXPECT_EQ(raised.name, "Royal Flush");
  EXPECT_EQ(h.meter("MHB", 1), usd("1050.00"));
  EXPECT_EQ(h.balance("MHB", AccountKind::seed_funding), sum(house, usd("-50.00")));
  // One transfer, seed_funding -> meter, and the adjustment on the record with who and why.
  ASSERT_EQ(h.records().transfers.size(), 1U);
  const Transfer& transfer = h.records().transfers[0].transfer;
  EXPECT_EQ(transfer.kind, TransferKind::adjustment);
  EXPECT_EQ(transfer.debit, AccountRef::link(AccountKind::seed_funding));
  EXPECT_EQ(transfer.credit, AccountRef::meter(1));
  EXPECT_EQ(transfer.amount, usd("50.00"));
  EXPECT_EQ(transfer.id, raised.transfer);
  ASSERT_EQ(h.records().adjustments.size(), 1U);
  const MeterAdjustmentRecord& record = h.records().adjustments[0];
  EXPECT_EQ(record.request_id, "a1");
  EXPECT_EQ(record.link, LinkId("MHB"));
  EXPECT_EQ(record.level, 1U);
  EXPECT_EQ(record.amount, usd("50.00"));
  EXPECT_EQ(record.reason, "sensor miss");
  EXPECT_EQ(record.requested_by, "admin/ops-ana");
  EXPECT_EQ(record.transfer, raised.transfer);
  EXPECT_EQ(record.meter_after, usd("1050.00"));
  EXPECT_EQ(record.time_us, h.clock().now);

  // The same request again answers the first answer, changing nothing, even after the meter
  // moved on; the same id with another request is refused.
  const AdjustMeterAnswer lowered = adjusted(h, adjustment("a2", "MHB", 1, "-20.00"));
  EXPECT_EQ(lowered.meter, usd("1030.00"));
  EXPECT_EQ(h.records().transfers.at(0).transfer.debit, AccountRef::meter(1));
  EXPECT_EQ(h.records().transfers.at(0).transfer.credit,
            AccountRef::link(AccountKind::seed_funding));
  h.expect_replay(raised, "adjust a1 again",
                  adjust(adjustment("a1", "MHB", 1, "50.00", "sensor miss")));
  for (const auto& [other, what] : std::vector<std::pair<AdjustMeterRequest, std::string>>{
           {adjustment("a1", "MHB", 1, "51.00", "sensor miss"), "another amount"},
           {adjustment("a1", "MHB", 1, "50.00", "another reason"), "another reason"},
           {adjustment("a1", "MHB", 2, "50.00", "sensor miss"), "another level"},
           {adjustment("a1", "NOSUCH", 1, "50.00", "sensor miss"), "another link"}}) {
    h.expect_refused(EngineError::replay_differs, "a1 with " + what, adjust(other));
  }
  EXPECT_EQ(h.balance("MHB", AccountKind::seed_funding), sum(house, usd("-30.00")));
}

TEST(EngineAdjustments, RefusalsChangeNothing) {
  Harness h(adjustment_config());
  const std::string long_reason(kMaxReasonBytes + 1, 'r');
  const std::string long_id(kMaxIdBytes + 1, 'i');
  struct Refusal {
    EngineError code;
    AdjustMeterRequest request;
    const char* what;
  };
  const std::vector<Refusal> refusals = {
      {EngineError::request_id_invalid, adjustment("", "MHB", 1, "1.00"), "no request id"},
      {EngineError::request_id_invalid, adjustment(long_id, "MHB", 1, "1.00"), "a long request id"},
      {EngineError::reason_missing, adjustment("r", "MHB", 1, "1.00", ""), "no reason"},
      {EngineError::reason_missing, adjustment("r", "MHB", 1, "1.00", " \t\n"), "a blank reason"},
      {EngineError::reason_invalid, adjustment("r", "MHB", 1, "1.00", long_reason),
       "a reason over 512 bytes"},
      {EngineError::reason_invalid, adjustment("r", "MHB", 1, "1.00", std::string("a\0b", 3)),
       "a NUL in the reason"},
      {EngineError::adjustment_zero, adjustment("r", "MHB", 1, "0"), "a zero amount"},
      {EngineError::unknown_link, adjustment("r", "NOSUCH", 1, "1.00"), "an unknown link"},
      {EngineError::unknown_link, adjustment("r", "MHB", 0, "1.00"), "level 0"},
      {EngineError::unknown_link, adjustment("r", "MHB", 3, "1.00"), "level 3 of 2"},
      {EngineError::ledger_refused, adjustment("r", "MHB", 1, "-1000.000001"), "below zero"},
      {EngineError::ledger_refused, adjustment("r", "MHB", 1, "100.000001"), "past the ceiling"},
      {EngineError::ledger_refused, adjustment("r", "MHB", 2, "149.990001"),
       "within a cent of the Must-Hit-By amount"},
      {EngineError::ledger_refused, adjustment("r", "MHB", 2, "150.00"),
       "to the Must-Hit-By amount"},
      {EngineError::ledger_refused,
       AdjustMeterRequest{"r", LinkId("MHB"), 1,
                          Money::from_micros(std::numeric_limits<std::int64_t>::max()), "why"},
       "an amount that overflows"},
      {EngineError::ledger_refused,
       AdjustMeterRequest{"r", LinkId("MHB"), 1,
                          Money::from_micros(std::numeric_limits<std::int64_t>::min()), "why"},
       "the most negative amount"},
  };
  for (const Refusal& refusal : refusals) {
    h.expect_refused(refusal.code, refusal.what, adjust(refusal.request));
  }
  // The bounds themselves are admitted, and a refused id is free for a new request.
  const std::string longest_reason(kMaxReasonBytes, 'r');
  const std::string longest_id(kMaxIdBytes, 'i');
  EXPECT_EQ(adjusted(h, adjustment(longest_id, "MHB", 1, "100.00", longest_reason)).meter,
            usd("1100.00"));
  EXPECT_EQ(adjusted(h, adjustment("r", "MHB", 2, "149.99")).meter, usd("249.99"));
  // One person lowers a meter to its seed at most (#32): the $2,500.12 meter swept to $0 into
  // the house's account by one admin is refused, down to the seed admitted.
  h.expect_refused(EngineError::ledger_refused, "a sweep below the seed",
                   adjust(adjustment("sweep", "MHB", 1, "-1100.00")));
  h.expect_refused(EngineError::ledger_refused, "a cent below the seed",
                   adjust(adjustment("sweep", "MHB", 1, "-100.01")));
  EXPECT_EQ(adjusted(h, adjustment("to the seed", "MHB", 1, "-100.00")).meter, usd("1000.00"));
}

// A LOCKED round's void takes back from the meter exactly what the round put there: no lowering
// of that meter until the round ends. A raise leaves the void exact.
TEST(EngineAdjustments, NoLoweringWhileALockedRoundHoldsContributions) {
  Harness h(adjustment_config());
  const Money before_1 = h.meter("MHB", 1);
  const Money before_2 = h.meter("MHB", 2);
  h.open("HUH-M", 1);
  h.lock(lock_request("HUH-M", 1, must_hit_by_wagers(500)));
  ASSERT_GT(h.meter("MHB", 1), before_1);
  h.expect_refused(EngineError::ledger_refused, "lower level 1 under a LOCKED round",
                   adjust(adjustment("down1", "MHB", 1, "-0.01")));
  h.expect_refused(EngineError::ledger_refused, "lower level 2 under a LOCKED round",
                   adjust(adjustment("down2", "MHB", 2, "-0.01")));
  adjusted(h, adjustment("up2", "MHB", 2, "10.00"));
  h.void_round(void_request("HUH-M", 1));
  EXPECT_EQ(h.meter("MHB", 1), before_1);
  EXPECT_EQ(h.meter("MHB", 2), sum(before_2, usd("10.00")));
  EXPECT_EQ(adjusted(h, adjustment("down2", "MHB", 2, "-0.01")).meter, sum(before_2, usd("9.99")));
}

// A hidden point lies in (the value it was drawn above, the amount]: a raise may not pass that
// lower bound, so it never reaches the point, and its refusal says nothing about where it is.
TEST(EngineAdjustments, AHiddenTriggerLevelRisesOnlyToTheValueItsPointWasDrawnAbove) {
  Harness h(adjustment_config(TriggerMode::hidden_uniform));
  const auto& hidden = h.engine().link(LinkId("MHB"))->hidden_trigger(2);
  ASSERT_TRUE(hidden.has_value());
  ASSERT_EQ(hidden->range_above, usd("100.00"));
  for (const char* amount : {"0.01", "50.00", "149.99"}) {
    h.expect_refused(EngineError::ledger_refused, std::string("raise a hidden level by ") + amount,
                     adjust(adjustment("up", "MHB", 2, amount)));
  }
  Records out;
  const auto refused = h.engine().adjust_meter(adjustment("up", "MHB", 2, "0.01"), "admin/x", out);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message.find(hidden->point.to_string()), std::string::npos)
      << refused.error().message;
  h.expect_refused(EngineError::ledger_refused, "lower a hidden level below its seed",
                   adjust(adjustment("down", "MHB", 2, "-10.00")));
  h.open("HUH-M", 1);
  h.lock(lock_request("HUH-M", 1, must_hit_by_wagers(500)));  // 1% of $20: +0.20 on level 2.
  h.settle(quiet_must_hit_by_settle(1));
  EXPECT_EQ(adjusted(h, adjustment("down", "MHB", 2, "-0.20")).meter, usd("100.00"));
}

// Adjustments are part of what the engine holds: a restored engine answers their replays.
TEST(EngineAdjustments, ARestoredEngineAnswersReplays) {
  Harness h(adjustment_config());
  const AdjustMeterAnswer first = adjusted(h, adjustment("keep", "MHB", 1, "12.345678"));
  TestClock clock;
  SplitMix64 random(7);
  auto restored =
      Engine::restore(adjustment_config(), shipped(), clock, random, h.engine().snapshot());
  ASSERT_TRUE(restored.ok());
  Engine& engine = **restored;
  EXPECT_EQ(engine.snapshot(), h.engine().snapshot());
  Records out;
  const auto replay = engine.adjust_meter(adjustment("keep", "MHB", 1, "12.345678"), "x", out);
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ(*replay, first);
  EXPECT_TRUE(out.empty());
  const auto other = engine.adjust_meter(adjustment("keep", "MHB", 1, "1.00"), "x", out);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, EngineError::replay_differs);
  EXPECT_TRUE(out.empty());
}

// A supervisor's re-base of a table's round counter (controller/engine/round_counter.h): refused
// while the latest round is OPEN or LOCKED, idempotent by request id, and after it the table plays
// from the re-based id again, old ids included, in a new counter epoch.
TEST(EngineRoundCounter, ARebaseLetsARestartedCounterPlayAgain) {
  Harness h(two_link_config());
  const auto rebase = [](std::string id, std::string table, std::uint64_t next,
                         std::string reason = "controller card swapped") {
    return [=](Engine& engine, Records& out) {
      return engine.rebase_round_counter({id, TableId(table), RoundId(next), reason},
                                         "supervisor/S7", out);
    };
  };
  const auto open = [](std::uint64_t round) {
    return [round](Engine& engine, Records& out) {
      return engine.open_round({TableId("T"), RoundId(round)}, out);
    };
  };
  const auto void_it = [](VoidRoundRequest request) {
    return [request](Engine& engine, Records& out) { return engine.void_round(request, out); };
  };
  const auto refused = [&](EngineError code, const std::string& what, auto command) {
    const EngineSnapshot before = h.engine().snapshot();
    h.expect_refused(code, what, command);
    EXPECT_TRUE(h.engine().snapshot() == before) << what << ": the refusal changed the state";
  };

  h.open("T", 7);
  refused(EngineError::previous_round_open, "re-base while round 7 is OPEN", rebase("r1", "T", 1));
  h.lock(lock_request("T", 7, {wager(1, "A", 100)}));
  refused(EngineError::previous_round_open, "re-base while round 7 is LOCKED",
          rebase("r1", "T", 1));
  h.void_round(void_request("T", 7));
  // The controller's counter restarted: round 1 is below the counter.
  refused(EngineError::round_id_not_increasing, "open round 1 after 7", open(1));
  refused(EngineError::unknown_table, "re-base of an unknown table", rebase("r1", "NOPE", 1));
  refused(EngineError::reason_missing, "re-base without a reason", rebase("r1", "T", 1, ""));
  refused(EngineError::reason_missing, "re-base with a blank reason",
          rebase("r1", "T", 1, " \t\n"));
  refused(EngineError::reason_invalid, "re-base with a reason over 512 bytes",
          rebase("r1", "T", 1, std::string(513, 'x')));
  refused(EngineError::request_id_invalid, "re-base without a request id", rebase("", "T", 1));
  refused(EngineError::request_id_invalid, "re-base with a 65-byte request id",
          rebase(std::string(65, 'r'), "T", 1));
  refused(EngineError::round_id_out_of_range, "re-base to round 0", rebase("r1", "T", 0));
  refused(EngineError::round_id_out_of_range, "re-base to round 2^63",
          rebase("r1", "T", std::uint64_t{1} << 63));

  const RoundCounterRebaseRecord first =
      h.ok("re-base", h.run("re-base", rebase("r1", "T", 1, std::string(512, 'x'))));
  EXPECT_EQ(first.epoch, 1u);
  EXPECT_EQ(first.last_round, RoundId(7));
  EXPECT_EQ(first.next_round, RoundId(1));
  EXPECT_EQ(first.requested_by, "supervisor/S7");
  ASSERT_EQ(h.records().rebases.size(), 1u);
  EXPECT_TRUE(h.records().rebases[0] == first);
  h.expect_replay(first, "re-base repeat", rebase("r1", "T", 1, std::string(512, 'x')));
  refused(EngineError::replay_differs, "another re-base with the same request id",
          rebase("r1", "T", 5, std::string(512, 'x')));
  // Round 7 of the old epoch answers nothing: in the new epoch it was never opened.
  refused(EngineError::round_not_found, "void of round 7, before the re-base",
          void_it(void_request("T", 7)));

  // Round 1 again, in the new epoch: a new round, not the old one.
  h.open("T", 1);
  EXPECT_EQ(h.records().rounds.at(0).epoch, 1u);
  h.lock(lock_request("T", 1, {wager(2, "A", 200)}));
  h.void_round(void_request("T", 1));
  h.open("T", 2);
  refused(EngineError::round_not_found, "void of round 7 after two rounds of the new epoch",
          void_it(void_request("T", 7)));
  h.void_round(void_request("T", 2));
  refused(EngineError::round_id_jump_too_far, "a jump past the limit after the re-base",
          open(3 + 1'000'000));
  // The re-base survives a snapshot and restore, request id and all.
  const EngineSnapshot saved = h.engine().snapshot();
  ASSERT_EQ(saved.rebases.size(), 1u);
  EXPECT_EQ(saved.tables.at(0).epoch, 1u);
  auto restored = Engine::restore(h.engine().config(), shipped(), h.clock(), h.random(), saved);
  ASSERT_TRUE(restored) << restored.error().front();
  EXPECT_TRUE((*restored)->snapshot() == saved);
  Records out;
  EXPECT_TRUE((*restored)->rebase_round_counter(
      {"r1", TableId("T"), RoundId(1), std::string(512, 'x')}, "supervisor/S7", out));
  EXPECT_TRUE(out.empty());
  // A second re-base moves the counter forward past the jump limit, e.g. a card installed with
  // a high counter.
  const RoundCounterRebaseRecord second =
      h.ok("second re-base", h.run("second re-base", rebase("r2", "T", 50'000'000, "new card")));
  EXPECT_EQ(second.epoch, 2u);
  EXPECT_EQ(second.last_round, RoundId(2));
  h.open("T", 50'000'000);
}

}  // namespace
}  // namespace jackpot
