#include "tests/sim/simulation.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "controller/api/sign_feed.h"
#include "controller/engine/engine.h"
#include "controller/engine/engine_codec.h"
#include "controller/engine/engine_config.h"
#include "controller/hands/paytable_loader.h"
#include "controller/host/engine_host.h"
#include "meters/random.h"
#include "meters/reconcile.h"
#include "tests/sim/journal.h"

namespace jackpot::sim {
namespace {

// The rules a failure names.
constexpr const char* kRuleInvariant = "ledger-invariant";
constexpr const char* kRuleReconcile = "reconciliation";
constexpr const char* kRuleDurable = "durable-equals-live";
constexpr const char* kRuleAckLost = "acknowledged-lost";
constexpr const char* kRuleReplay = "replay-differs";
constexpr const char* kRulePercent = "percent-award-above-rule";
constexpr const char* kRuleMustHitBy = "must-hit-by-above-amount";        // #13 item 1.
constexpr const char* kRuleSeats = "restore-kept-wager-on-missing-seat";  // #13 item 2.
constexpr const char* kRuleVoid = "void-below-reset";                     // #13 item 3.
constexpr const char* kRulePays = "pay-differs-from-paytable";
constexpr const char* kRuleRefused = "valid-command-refused";
constexpr const char* kRuleRecovery = "recovery-refused";
constexpr const char* kRuleSigns = "signs-show-committed-meters";
// #32: nothing public (a meter, an answer, a refusal) says more about a hidden point than its
// committed range and the meter that contributions showed.
constexpr const char* kRuleSecret = "hidden-point-shown";
// #32: a payout that needs two supervisors to pay needs two to reject.
constexpr const char* kRuleTwoPeople = "two-person-rule";

struct Broken {
  std::string rule;
  std::string message;
};

[[noreturn]] void broken(const char* rule, std::string message) {
  throw Broken{rule, std::move(message)};
}

Money cents(std::int64_t value) { return Money::from_micros(value * Money::kMicrosPerCent); }

std::string dollars(std::int64_t value_cents) {
  char text[32];
  std::snprintf(text, sizeof text, "%lld.%02lld", static_cast<long long>(value_cents / 100),
                static_cast<long long>(value_cents % 100));
  return text;
}

// ---- The reference paytables -------------------------------------------------------------

// Hand categories of the model's own evaluator, lowest first.
enum class Category : std::uint8_t {
  none,
  pair,
  two_pair,
  three_of_a_kind,
  straight,
  flush,
  full_house,
  four_of_a_kind,
  straight_flush,
  royal_flush,
};

struct Row {
  Category category;
  const char* hand;   // The paytable file's hand name.
  const char* label;  // As printed.
  enum Kind { kPercent, kFixed, kDynamic } kind;
  std::uint32_t percent = 0;
  std::uint32_t level = 0;
  std::int64_t amount_cents = 0;  // FIXED amount, or DYNAMIC default.
  std::int64_t envy_cents = 0;
  std::array<std::int64_t, 10> options_cents{};
};

// A fixed-pay paytable with percentages and Envy, and a Dynamic one; both have the Must-Hit-By
// row of the link's level 2 (its amount is the link's, so each amount has its own paytable).
const std::vector<Row>& fixed_rows() {
  static const std::vector<Row> rows = {
      {Category::royal_flush, "ROYAL_FLUSH", "Royal Flush", Row::kPercent, 100, 1, 0, 5000, {}},
      {Category::straight_flush,
       "STRAIGHT_FLUSH",
       "Straight Flush",
       Row::kPercent,
       10,
       1,
       0,
       1000,
       {}},
      {Category::four_of_a_kind,
       "FOUR_OF_A_KIND",
       "Four-of-a-Kind",
       Row::kFixed,
       0,
       0,
       10000,
       500,
       {}},
      {Category::full_house, "FULL_HOUSE", "Full House", Row::kFixed, 0, 0, 2000, 0, {}},
      {Category::flush, "FLUSH", "Flush", Row::kFixed, 0, 0, 1000, 0, {}},
      {Category::straight, "STRAIGHT", "Straight", Row::kFixed, 0, 0, 500, 0, {}},
      {Category::three_of_a_kind,
       "THREE_OF_A_KIND",
       "Three-of-a-Kind",
       Row::kFixed,
       0,
       0,
       200,
       0,
       {}},
  };
  return rows;
}

const std::vector<Row>& dynamic_rows() {
  static const std::vector<Row> rows = {
      {Category::royal_flush, "ROYAL_FLUSH", "Royal Flush", Row::kPercent, 100, 1, 0, 0, {}},
      {Category::straight_flush,
       "STRAIGHT_FLUSH",
       "Straight Flush",
       Row::kDynamic,
       0,
       0,
       10000,
       0,
       {15000, 20000, 30000, 40000, 50000, 60000, 70000, 80000, 90000, 100000}},
      {Category::four_of_a_kind,
       "FOUR_OF_A_KIND",
       "Four-of-a-Kind",
       Row::kDynamic,
       0,
       0,
       3000,
       0,
       {4500, 6000, 9000, 12000, 15000, 18000, 21000, 24000, 27000, 30000}},
      {Category::full_house,
       "FULL_HOUSE",
       "Full House",
       Row::kDynamic,
       0,
       0,
       400,
       0,
       {600, 800, 1200, 1600, 2000, 2400, 2800, 3200, 3600, 4000}},
  };
  return rows;
}

std::string paytable_id(bool dynamic, std::int64_t must_hit_by_cents) {
  return std::string(dynamic ? "SIM-D-" : "SIM-F-") + std::to_string(must_hit_by_cents);
}

std::string paytable_text(bool dynamic, std::int64_t must_hit_by_cents) {
  std::string text = "id: \"" + paytable_id(dynamic, must_hit_by_cents) + "\"\n";
  text += dynamic ? "game: HUH_DYNAMIC\n" : "game: HUH_PROGRESSIVE\n";
  text += "base_wager: \"1.00\"\nsource: \"jackpotd simulation\"\n";
  if (dynamic) text += "dynamic_selection { min_selected: 1 max_selected: 3 }\n";
  bool must_hit_by_written = false;
  for (const Row& row : dynamic ? dynamic_rows() : fixed_rows()) {
    if (row.kind != Row::kPercent && !must_hit_by_written) {
      text += "rows { hand: MUST_HIT_BY label: \"Must-Hit-By\" must_hit_by { amount: \"" +
              dollars(must_hit_by_cents) + "\" level: 2 } }\n";
      must_hit_by_written = true;
    }
    text += std::string("rows { hand: ") + row.hand + " label: \"" + row.label + "\" ";
    if (row.kind == Row::kPercent) {
      text += "percent { percent: " + std::to_string(row.percent) +
              " level: " + std::to_string(row.level) + " } ";
    } else if (row.kind == Row::kFixed) {
      text += "fixed { amount: \"" + dollars(row.amount_cents) + "\" } ";
    } else {
      text += "dynamic { default_amount: \"" + dollars(row.amount_cents) + "\" options: [";
      for (std::size_t i = 0; i < row.options_cents.size(); ++i) {
        text += (i ? ", \"" : "\"") + dollars(row.options_cents[i]) + "\"";
      }
      text += "] } ";
    }
    if (row.envy_cents > 0) text += "envy: \"" + dollars(row.envy_cents) + "\" ";
    text += "}\n";
  }
  return text;
}

// ---- The model's own hand evaluator --------------------------------------------------------

// Cards are 0..51: rank = card % 13 (0 = deuce .. 12 = ace), suit = card / 13 (s, h, d, c).
std::string card_text(int card) {
  static const char* ranks = "23456789TJQKA";
  static const char* suits = "shdc";
  return {ranks[card % 13], suits[card / 13]};
}

// The highest rank of a five-card run in the rank bits, or -1 (the wheel A-2-3-4-5 is 3).
int straight_high(unsigned ranks) {
  for (int high = 12; high >= 4; --high) {
    const unsigned run = 0x1FU << (high - 4);
    if ((ranks & run) == run) return high;
  }
  const unsigned wheel = (1U << 12) | 0xFU;
  return (ranks & wheel) == wheel ? 3 : -1;
}

// The best category among the seven cards (any five of them).
Category best_category(const std::vector<int>& cards) {
  std::array<int, 13> rank_count{};
  std::array<int, 4> suit_count{};
  std::array<unsigned, 4> suit_ranks{};
  unsigned ranks = 0;
  for (int card : cards) {
    const auto rank = static_cast<std::size_t>(card % 13);
    const auto suit = static_cast<std::size_t>(card / 13);
    ++rank_count[rank];
    ++suit_count[suit];
    suit_ranks[suit] |= 1U << rank;
    ranks |= 1U << rank;
  }
  bool flush = false;
  for (std::size_t suit = 0; suit < 4; ++suit) {
    if (suit_count[suit] < 5) continue;
    flush = true;
    const int high = straight_high(suit_ranks[suit]);
    if (high == 12) return Category::royal_flush;
    if (high >= 0) return Category::straight_flush;
  }
  int trips = 0;
  int pairs = 0;
  for (int count : rank_count) {
    if (count == 4) return Category::four_of_a_kind;
    if (count == 3) ++trips;
    if (count == 2) ++pairs;
  }
  if (trips >= 2 || (trips == 1 && pairs >= 1)) return Category::full_house;
  if (flush) return Category::flush;
  if (straight_high(ranks) >= 0) return Category::straight;
  if (trips == 1) return Category::three_of_a_kind;
  if (pairs >= 2) return Category::two_pair;
  if (pairs == 1) return Category::pair;
  return Category::none;
}

const char* keyed_name(Category category) {
  switch (category) {
    case Category::royal_flush:
      return "ROYAL_FLUSH";
    case Category::straight_flush:
      return "STRAIGHT_FLUSH";
    case Category::four_of_a_kind:
      return "FOUR_OF_A_KIND";
    case Category::full_house:
      return "FULL_HOUSE";
    case Category::flush:
      return "FLUSH";
    case Category::straight:
      return "STRAIGHT";
    case Category::three_of_a_kind:
      return "THREE_OF_A_KIND";
    case Category::two_pair:
      return "TWO_PAIR";
    default:
      return "TWO_PAIR";
  }
}

// The row a hand of this category is paid by: the paytables list every category from their
// lowest row up, so the first qualifying row is the best category's.
const Row* row_of(const std::vector<Row>& rows, Category category) {
  for (const Row& row : rows) {
    if (row.category == category) return &row;
  }
  return nullptr;
}

// ---- The floor ------------------------------------------------------------------------------

struct SimLevel {
  std::int64_t seed_cents = 0;  // Per $1.
  std::int64_t meter_ppm = 0;
  std::int64_t reserve_ppm = 0;
  std::optional<std::int64_t> ceiling_cents;  // Absolute.
  std::uint32_t overflow_level = 0;
  std::optional<std::int64_t> must_hit_by_cents;  // Per $1.
  bool hidden = false;
};

struct SimLink {
  std::string id;
  std::int64_t base_cents = 100;
  std::vector<SimLevel> levels;  // 1: Royal; 2: Must-Hit-By; 3 (optional): a capped bonus.
  std::int64_t approval_cents = 0;
  std::optional<std::int64_t> dual_cents;
  std::uint32_t max_units = 1;
};

struct SimTableLink {
  std::string link;
  bool dynamic = false;
};

struct SimTable {
  std::string id;
  std::uint32_t seats = 6;
  std::vector<SimTableLink> links;
};

struct SimFloor {
  std::vector<SimLink> links;
  std::vector<SimTable> tables;

  const SimLink& link(const std::string& id) const {
    for (const SimLink& link : links) {
      if (link.id == id) return link;
    }
    broken("sim", "no link " + id);
  }
  const SimTable& table(const std::string& id) const {
    for (const SimTable& table : tables) {
      if (table.id == id) return table;
    }
    broken("sim", "no table " + id);
  }
};

// The link's Must-Hit-By amount as the engine applies it (per $1 × base wager).
Money scaled_must_hit_by(const SimLink& link) {
  return cents(*link.levels[1].must_hit_by_cents * link.base_cents / 100);
}

struct BuiltFloor {
  EngineConfig config;
  std::vector<Paytable> paytables;
};

std::optional<BuiltFloor> build(const SimFloor& floor, std::string& why) {
  BuiltFloor built;
  std::vector<PaytableSource> sources;
  std::set<std::string> made;
  for (const SimLink& link : floor.links) {
    const std::int64_t amount = *link.levels[1].must_hit_by_cents;
    for (bool dynamic : {false, true}) {
      if (made.insert(paytable_id(dynamic, amount)).second) {
        sources.push_back({paytable_id(dynamic, amount), paytable_text(dynamic, amount)});
      }
    }
  }
  auto paytables = load_paytables(sources);
  if (!paytables) {
    why = paytables.error().front().message;
    return std::nullopt;
  }
  built.paytables = std::move(paytables).value();
  for (const SimLink& link : floor.links) {
    LinkSettings settings;
    settings.meters.id = LinkId(link.id);
    settings.meters.base_wager = cents(link.base_cents);
    const char* names[] = {"Royal Flush", "Must-Hit-By", "Bonus"};
    for (std::size_t i = 0; i < link.levels.size(); ++i) {
      const SimLevel& level = link.levels[i];
      LevelConfig config;
      config.level = static_cast<std::uint32_t>(i + 1);
      config.name = Name(names[i]);
      config.seed = cents(level.seed_cents);
      config.meter_rate_ppm = level.meter_ppm;
      config.reserve_rate_ppm = level.reserve_ppm;
      if (level.ceiling_cents) config.ceiling = cents(*level.ceiling_cents);
      config.overflow_level = level.overflow_level;
      if (level.must_hit_by_cents) config.must_hit_by = cents(*level.must_hit_by_cents);
      config.trigger = level.hidden ? TriggerMode::hidden_uniform : TriggerMode::at_amount;
      settings.meters.levels.push_back(config);
    }
    settings.max_wager_units = link.max_units;
    settings.approval_threshold = cents(link.approval_cents);
    if (link.dual_cents) settings.dual_approval_threshold = cents(*link.dual_cents);
    built.config.links.push_back(std::move(settings));
  }
  for (const SimTable& table : floor.tables) {
    TableSettings settings;
    settings.id = TableId(table.id);
    settings.game = GameRule::heads_up_holdem;
    settings.seats = table.seats;
    for (const SimTableLink& played : table.links) {
      const std::int64_t amount = *floor.link(played.link).levels[1].must_hit_by_cents;
      settings.links.push_back(
          {LinkId(played.link), paytable_id(played.dynamic, amount), CommunitySource::board});
    }
    built.config.tables.push_back(std::move(settings));
  }
  if (auto problems = validate(built.config, built.paytables); !problems.empty()) {
    why = problems.front();
    return std::nullopt;
  }
  return built;
}

class Choices {
 public:
  explicit Choices(std::uint64_t seed) : random_(seed) {}
  std::uint64_t below(std::uint64_t bound) { return uniform_below(random_, bound); }
  std::int64_t between(std::int64_t low, std::int64_t high) {  // Inclusive.
    return low + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(high - low + 1)));
  }
  bool chance(std::uint32_t per_thousand) { return below(1000) < per_thousand; }
  template <typename T>
  const T& pick(const std::vector<T>& from) {
    return from[below(from.size())];
  }

 private:
  SplitMix64 random_;
};

SimLink random_link(Choices& choose, const std::string& id) {
  SimLink link;
  link.id = id;
  link.base_cents = choose.pick(std::vector<std::int64_t>{100, 100, 200, 500});
  SimLevel royal;
  // Small seeds too: #13 item 3's second form is a void refused on a small seed.
  royal.seed_cents = choose.pick(std::vector<std::int64_t>{100, 2000, 10000, 50000, 100000});
  royal.meter_ppm = choose.between(5, 20) * 10000;
  royal.reserve_ppm = choose.pick(std::vector<std::int64_t>{0, 10000, 25000});
  if (choose.chance(300)) {
    royal.ceiling_cents = royal.seed_cents * link.base_cents / 100 + choose.between(5, 50) * 100;
  }
  SimLevel must_hit_by;
  must_hit_by.seed_cents = choose.between(2, 8) * 1000;
  // Room for a hit every few dozen rounds.
  must_hit_by.meter_ppm = choose.between(20, 60) * 1000;
  must_hit_by.must_hit_by_cents = must_hit_by.seed_cents + choose.between(2, 6) * 1000;
  must_hit_by.hidden = choose.chance(600);
  // A reserve too, so that a reset may release more than the range can take (#32).
  must_hit_by.reserve_ppm = choose.pick(std::vector<std::int64_t>{0, 0, 20000, 60000});
  link.levels = {royal, must_hit_by};
  if (choose.chance(300)) {
    SimLevel bonus;
    bonus.seed_cents = 1000;
    bonus.meter_ppm = choose.between(1, 4) * 5000;
    bonus.ceiling_cents = bonus.seed_cents * link.base_cents / 100 + choose.between(2, 10) * 100;
    bonus.overflow_level = 1;
    link.levels.push_back(bonus);
  }
  link.approval_cents = choose.pick(std::vector<std::int64_t>{0, 2500, 10000, 50000});
  if (choose.chance(500)) link.dual_cents = choose.pick(std::vector<std::int64_t>{50000, 200000});
  link.max_units = static_cast<std::uint32_t>(choose.between(1, 4));
  return link;
}

SimFloor random_floor(Choices& choose) {
  SimFloor floor;
  floor.links.push_back(random_link(choose, "link-a"));
  if (choose.chance(400)) floor.links.push_back(random_link(choose, "link-b"));
  const auto tables = choose.between(2, 4);
  for (std::int64_t t = 0; t < tables; ++t) {
    SimTable table;
    table.id = "T" + std::to_string(t + 1);
    table.seats = static_cast<std::uint32_t>(choose.between(2, 7));
    table.links.push_back({"link-a", choose.chance(300)});
    if (floor.links.size() > 1 && (t == 0 || choose.chance(500))) {
      table.links.push_back({"link-b", choose.chance(300)});
    }
    floor.tables.push_back(table);
  }
  return floor;
}

// One change an operator could make between restarts.
SimFloor edited(SimFloor floor, Choices& choose, std::string& what) {
  const auto kind = choose.below(7);
  SimLink& link = floor.links[choose.below(floor.links.size())];
  switch (kind) {
    case 0:
      link.levels[0].seed_cents = choose.pick(std::vector<std::int64_t>{100, 2000, 10000, 50000});
      link.levels[1].seed_cents = choose.between(2, 8) * 1000;
      what = link.id + ": seeds " + dollars(link.levels[0].seed_cents) + " and " +
             dollars(link.levels[1].seed_cents);
      break;
    case 1:
      link.levels[0].meter_ppm = choose.between(5, 20) * 10000;
      link.levels[1].meter_ppm = choose.between(20, 60) * 1000;
      what = link.id + ": rates " + std::to_string(link.levels[0].meter_ppm) + " and " +
             std::to_string(link.levels[1].meter_ppm) + " ppm";
      break;
    case 2:
    case 3: {
      // Mostly lowered: #13 item 1 is a hidden trigger kept above a lowered amount.
      SimLevel& level = link.levels[1];
      const std::int64_t room = *level.must_hit_by_cents - level.seed_cents;
      level.must_hit_by_cents =
          level.seed_cents +
          std::max<std::int64_t>(1000, room * choose.between(30, 120) / 100 / 100 * 100);
      what = link.id + ": Must-Hit-By amount " + dollars(*level.must_hit_by_cents);
      break;
    }
    case 4:
      link.base_cents = choose.pick(std::vector<std::int64_t>{100, 200, 500});
      what = link.id + ": base wager " + dollars(link.base_cents);
      break;
    case 5: {
      SimTable& table = floor.tables[choose.below(floor.tables.size())];
      table.seats = static_cast<std::uint32_t>(choose.between(2, 7));
      what = table.id + ": " + std::to_string(table.seats) + " seats";
      break;
    }
    default: {
      if (floor.links.size() == 1) {
        floor.links.push_back(random_link(choose, "link-b"));
        SimTable& table = floor.tables[choose.below(floor.tables.size())];
        table.links.push_back({"link-b", choose.chance(300)});
        what = "link-b added, played at " + table.id;
      } else {
        what = "no change";
      }
      break;
    }
  }
  return floor;
}

// ---- The simulation -------------------------------------------------------------------------

class SimClock final : public Clock {
 public:
  std::int64_t now_us() override { return now; }
  std::int64_t now = 1'767'225'600'000'000;
};

enum class Phase : std::uint8_t { none, open, locked, settled, voided };

struct RoundModel {
  std::uint64_t id = 0;
  Phase phase = Phase::none;
  std::optional<std::pair<OpenRoundRequest, OpenRoundAnswer>> opened;
  std::optional<std::pair<LockWagersRequest, LockWagersAnswer>> locked;
  std::optional<std::pair<SettleRoundRequest, SettleRoundAnswer>> settled;
  std::optional<std::pair<VoidRoundRequest, VoidRoundAnswer>> voided;
  std::map<std::pair<std::string, std::uint32_t>, std::int64_t> units;  // (link, seat).
};

struct TableModel {
  RoundModel current;
  RoundModel previous;
  std::uint64_t last_round = 0;
};

// A command answered OK: it must be in the journal exactly once, with that answer.
struct Ack {
  std::string table;
  std::uint64_t round = 0;
  CommandKind kind = CommandKind::open;
  std::string answer;  // Encoded.
};

struct PayoutAck {
  std::uint64_t payout = 0;
  PayoutState state = PayoutState::pending;
  std::size_t approvals = 0;
  std::size_t rejection_requests = 0;  // A rejection that left the payout pending is one (#32).
  bool reject = false;
  std::string supervisor;
};

using Balances = std::map<std::tuple<std::string, int, std::uint32_t>, std::int64_t>;

class Simulation {
 public:
  Simulation(std::uint64_t seed, const Options& options)
      : options_(options),
        choose_(seed),
        engine_random_(seed ^ 0x9e3779b97f4a7c15ULL),
        journal_(clock_, engine_random_) {}

  ~Simulation() {
    if (host_) host_->stop();
  }

  void run(Outcome& outcome) {
    floor_ = random_floor(choose_);
    std::string why;
    if (!build(floor_, why)) broken("sim", "the generated floor is invalid: " + why);
    note("floor: " + describe(floor_));
    start(floor_, true);
    for (step_ = 1; step_ <= options_.steps; ++step_) {
      clock_.now += 1000;
      one_step();
      check_all();
    }
    outcome.stats = stats_;
  }

  std::uint32_t step() const { return step_; }
  const std::deque<std::string>& trace() const { return trace_; }
  const Stats& stats() const { return stats_; }

 private:
  void note(std::string line) {
    if (options_.trace) std::printf("  [%u] %s\n", step_, line.c_str());
    trace_.push_back("[" + std::to_string(step_) + "] " + std::move(line));
    if (trace_.size() > 40) trace_.pop_front();
  }

  static std::string describe(const SimFloor& floor) {
    std::string text;
    for (const SimLink& link : floor.links) {
      text += link.id + "(base " + dollars(link.base_cents) + ", seeds " +
              dollars(link.levels[0].seed_cents) + "/" + dollars(link.levels[1].seed_cents) +
              ", MHB " + dollars(*link.levels[1].must_hit_by_cents) +
              (link.levels[1].hidden ? " hidden" : "") + ", " + std::to_string(link.levels.size()) +
              " levels) ";
    }
    for (const SimTable& table : floor.tables) {
      text += table.id + "(" + std::to_string(table.seats) + " seats:";
      for (const auto& played : table.links) {
        text += " " + played.link + (played.dynamic ? "/D" : "/F");
      }
      text += ") ";
    }
    return text;
  }

  // ---- Starting and restarting ----

  // Opens the journal on `floor`; false when the engine refuses it (a refusal is a valid
  // answer to an edit that cannot be carried over).
  bool start(const SimFloor& floor, bool must) {
    std::string why;
    auto built = build(floor, why);
    if (!built) broken("sim", "invalid floor: " + why);
    auto engine = journal_.open(built->config, built->paytables);
    if (!engine) {
      if (must)
        broken(kRuleRecovery, "the floor that ran before is refused: " + engine.error().front());
      note("floor refused: " + engine.error().front());
      return false;
    }
    host_ = std::make_unique<EngineHost>(std::move(engine).value(), &journal_);
    signs_ = follow_commits(*host_, built->paytables, 60'000'000);
    return true;
  }

  void restart(bool edit) {
    absorb();  // What the last commit wrote, under the floor it was written on.
    host_->stop();
    host_.reset();
    journal_.clear_crash();
    ++stats_.restarts;
    SimFloor next = floor_;
    if (edit) {
      std::string what;
      for (int attempt = 0; attempt < 8; ++attempt) {
        SimFloor candidate = edited(floor_, choose_, what);
        std::string why;
        if (build(candidate, why)) {
          next = candidate;
          break;
        }
      }
      if (!what.empty()) note("floor edit: " + what);
      ++stats_.floor_edits;
    }
    if (start(next, false)) {
      if (edit) floor_unchanged_ = false;
      floor_ = next;
    } else {
      ++stats_.floors_refused;
      start(floor_, true);
    }
    note("restarted: " + describe(floor_));
    absorb();
    check_after_restore();
    replay_acknowledged();
  }

  // Rules a restored engine must meet on the floor it now runs (#13 items 1 and 2 at the
  // restart itself).
  void check_after_restore() {
    const EngineSnapshot snapshot = host_->read([](const Engine& e) { return e.snapshot(); });
    for (const LinkSnapshot& link : snapshot.links) {
      const SimLink& settings = floor_.link(link.id.value());
      const Money amount = scaled_must_hit_by(settings);
      if (link.hidden.size() > 1 && link.hidden[1] && link.hidden[1]->point > amount) {
        broken(kRuleMustHitBy, link.id.value() + " level 2 restored with its hidden trigger at " +
                                   link.hidden[1]->point.to_string() +
                                   " above its Must-Hit-By amount " + amount.to_string());
      }
    }
    for (const TableSnapshot& table : snapshot.tables) {
      const SimTable& settings = floor_.table(table.id.value());
      if (!table.current || table.current->phase != RoundPhase::locked) continue;
      for (const auto& wagers : table.current->wagers) {
        for (const auto& wager : wagers) {
          if (wager.seat > settings.seats) {
            broken(kRuleSeats, "table " + table.id.value() + " round " +
                                   std::to_string(table.current->id.value()) +
                                   " is LOCKED with a wager on seat " + std::to_string(wager.seat) +
                                   ", and the restart accepted a floor " + "with " +
                                   std::to_string(settings.seats) + " seats");
          }
        }
      }
    }
  }

  // After a failure: waits for the host to rebuild (or restarts the process after a crash).
  void after_unavailable() {
    for (int waited = 0; host_->failed(); ++waited) {
      if (!journal_.recovery_error().empty()) {
        broken(kRuleRecovery, "recovery refused the durable state: " + journal_.recovery_error());
      }
      if (waited > 200000) broken(kRuleRecovery, "the host never recovered");
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    // A rebuilt host records its balances in a batch of its own, which the committer writes
    // while this thread goes on: wait until it is written, so that nothing below reads the
    // journal while the committer appends to it, and the seed alone decides what happens next.
    host_->read_durable([](const Engine&) { return 0; });
    if (journal_.crashed()) {
      ++stats_.crashes;
      note("crash");
      restart(choose_.chance(500));
      return;
    }
    absorb();
    check_after_restore();
    replay_acknowledged();
  }

  // Runs a command through the host, with a seeded fault on its commit; retries the same
  // command while the answer is UNAVAILABLE, as a table would. `landed` is true when an attempt
  // may have been applied without an answer.
  template <typename Answer>
  Result<Answer, EngineFailure> send(
      const std::function<Result<Answer, EngineFailure>(Engine&, Records&)>& command,
      bool& ambiguous) {
    ambiguous = false;
    // Local: the replays after a restart in between are commands too.
    std::vector<SimFloor> floors;
    for (int attempt = 0; attempt < 30; ++attempt) {
      floors.push_back(floor_);
      CommitFault fault = CommitFault::none;
      const auto roll = choose_.below(1000);
      if (roll < 25)
        fault = CommitFault::fail;
      else if (roll < 50)
        fault = CommitFault::answer_lost;
      else if (roll < 62)
        fault = CommitFault::crash;
      else if (roll < 74)
        fault = CommitFault::crash_after_write;
      journal_.arm(fault);
      ++stats_.commands;
      auto answer = host_->run(command);
      journal_.arm(CommitFault::none);  // A command that wrote nothing left it unused.
      if (!answer) expect_silent_about_points("a refusal", answer.error().message);
      if (answer || answer.error().code != EngineError::link_unavailable) {
        attempt_floors_ = std::move(floors);
        return answer;
      }
      ++stats_.faults;
      ambiguous = true;
      note("UNAVAILABLE (" +
           std::string(fault == CommitFault::fail                ? "commit failed"
                       : fault == CommitFault::answer_lost       ? "answer lost"
                       : fault == CommitFault::crash             ? "crash"
                       : fault == CommitFault::crash_after_write ? "crash after the write"
                                                                 : "host down") +
           "); retrying");
      after_unavailable();
    }
    broken(kRuleRecovery, "a command stayed UNAVAILABLE through 30 attempts");
  }

  // ---- Steps ----

  void one_step() {
    contributed_ = false;
    floor_unchanged_ = true;
    const auto roll = choose_.below(1000);
    if (roll < 40) {
      restart(choose_.chance(700));
      return;
    }
    if (roll < 180) {
      const auto pending = host_->read([](const Engine& e) { return e.pending_payouts(); });
      if (!pending.empty()) {
        decide_payout(pending[choose_.below(pending.size())]);
        return;
      }
    }
    if (roll < 220) {
      replay_one();
      return;
    }
    if (roll < 260) {
      adjust();
      return;
    }
    // A copy: a restart while the command is retried may replace the floor.
    const SimTable table = floor_.tables[choose_.below(floor_.tables.size())];
    TableModel& model = tables_[table.id];
    switch (model.current.phase) {
      case Phase::none:
      case Phase::settled:
      case Phase::voided:
        open(table, model);
        break;
      case Phase::open:
        if (choose_.chance(850)) {
          lock(table, model);
        } else {
          void_round(table, model);
        }
        break;
      case Phase::locked:
        // A round whose lock hit a Must-Hit-By level is often voided by supervisors, one or two.
        if (model.current.locked && !model.current.locked->second.must_hit_by_hits.empty() &&
            choose_.chance(500)) {
          supervisor_void(table, model);
        } else if (choose_.chance(700)) {
          settle(table, model);
        } else {
          void_round(table, model);
        }
        break;
    }
  }

  [[noreturn]] void refused(const std::string& what, const EngineFailure& failure) {
    broken(kRuleRefused, what + " refused: " + failure.message);
  }

  void acknowledge(const std::string& table, std::uint64_t round, CommandKind kind,
                   std::string answer) {
    acks_.push_back({table, round, kind, std::move(answer)});
  }

  void open(const SimTable& table, TableModel& model) {
    OpenRoundRequest request{TableId(table.id), RoundId(model.last_round + 1 + choose_.below(2))};
    bool ambiguous = false;
    auto answer = send<OpenRoundAnswer>(
        [&](Engine& e, Records& out) { return e.open_round(request, out); }, ambiguous);
    if (!answer) refused("open " + table.id, answer.error());
    note("open " + table.id + " round " + std::to_string(request.round.value()));
    model.previous = std::move(model.current);
    model.current = RoundModel{};
    model.current.id = request.round.value();
    model.current.phase = Phase::open;
    model.current.opened.emplace(request, *answer);
    model.last_round = request.round.value();
    acknowledge(table.id, request.round.value(), CommandKind::open, encode(*answer));
    check_dynamic_selection(table, *answer);
  }

  void lock(const SimTable& table, TableModel& model) {
    LockWagersRequest request{TableId(table.id), RoundId(model.current.id), {}};
    std::map<std::pair<std::string, std::uint32_t>, std::int64_t> units;
    for (std::uint32_t seat = 1; seat <= table.seats; ++seat) {
      for (const SimTableLink& played : table.links) {
        if (!choose_.chance(600)) continue;
        const SimLink& link = floor_.link(played.link);
        const std::int64_t n = choose_.between(1, link.max_units);
        request.wagers.push_back({seat, LinkId(played.link), n * link.base_cents});
        units[{played.link, seat}] = n;
      }
    }
    bool ambiguous = false;
    auto answer = send<LockWagersAnswer>(
        [&](Engine& e, Records& out) { return e.lock_wagers(request, out); }, ambiguous);
    if (!answer) {
      // A crash in between may have restarted on a floor where this request no longer fits
      // (fewer seats, another base wager): then the round stays OPEN and is voided later.
      const EngineError code = answer.error().code;
      if (ambiguous &&
          (code == EngineError::seat_unknown || code == EngineError::link_not_played ||
           code == EngineError::wager_amount_invalid || code == EngineError::wager_above_max)) {
        note("lock " + table.id + " no longer fits the floor: " + answer.error().message);
        return;
      }
      refused("lock " + table.id + " round " + std::to_string(model.current.id), answer.error());
    }
    contributed_ = true;
    model.current.phase = Phase::locked;
    model.current.locked.emplace(request, *answer);
    model.current.units = units;
    stats_.must_hit_by_hits += answer->must_hit_by_hits.size();
    note("lock " + table.id + " round " + std::to_string(model.current.id) + ": " +
         std::to_string(request.wagers.size()) + " wagers, " +
         std::to_string(answer->must_hit_by_hits.size()) + " Must-Hit-By hits");
    acknowledge(table.id, model.current.id, CommandKind::lock, encode(*answer));
  }

  void void_round(const SimTable& table, TableModel& model) {
    VoidRoundRequest request{TableId(table.id), RoundId(model.current.id), "misdeal"};
    bool ambiguous = false;
    auto answer = send<VoidRoundAnswer>(
        [&](Engine& e, Records& out) { return e.void_round(request, out); }, ambiguous);
    if (!answer) {
      if (answer.error().code == EngineError::must_hit_by_needs_supervisor) {
        if (choose_.chance(600)) {
          supervisor_void(table, model);
        } else {
          note("void " + table.id + " needs a supervisor (Must-Hit-By hit); settling instead");
        }
        return;
      }
      // DESIGN: a misdeal can always be voided; a void refused because the meter would go
      // below zero is #13 item 3 on a small seed.
      if (answer.error().code == EngineError::ledger_refused) {
        broken(kRuleVoid, "void of " + table.id + " round " + std::to_string(model.current.id) +
                              " refused: " + answer.error().message);
      }
      refused("void " + table.id, answer.error());
    }
    ++stats_.voids;
    model.current.phase = Phase::voided;
    model.current.voided.emplace(request, *answer);
    note("void " + table.id + " round " + std::to_string(model.current.id) + ": reversed " +
         answer->reversed.to_string());
    acknowledge(table.id, model.current.id, CommandKind::void_round, encode(*answer));
  }

  // A supervisor voids a round whose lock hit a Must-Hit-By level: its pending hit payouts are
  // rejected (two supervisors where one needs two), its contributions refunded. Then the table's
  // own void with the same reason answers the void, which the model keeps for replays.
  void supervisor_void(const SimTable& table, TableModel& model) {
    static const std::vector<std::string> supervisors = {"supervisor/sup-1", "supervisor/sup-2",
                                                         "supervisor/sup-3"};
    const std::string supervisor = choose_.pick(supervisors);
    const SupervisorVoidRequest request{"sim-void-" + std::to_string(++supervisor_voids_),
                                        TableId(table.id), RoundId(model.current.id), "misdeal"};
    // The round's hit payouts before the void, for the two-person rule.
    std::map<std::uint64_t, Payout> hits;
    for (const Payout& payout : host_->read([](const Engine& e) { return e.pending_payouts(); })) {
      if (payout.table == request.table && payout.round == request.round &&
          payout.kind == AwardKind::must_hit_by) {
        hits[payout.id.value()] = payout;
      }
    }
    bool ambiguous = false;
    auto answer = send<SupervisorVoidRecord>(
        [&](Engine& e, Records& out) { return e.supervisor_void_round(request, supervisor, out); },
        ambiguous);
    if (!answer) {
      const auto code = answer.error().code;
      // A hit paid at once (below the approval threshold), or by approvals, cannot be voided;
      // a supervisor who already decided on the hit's payout is not the second person.
      if (code == EngineError::payout_not_pending || code == EngineError::already_approved) {
        note("supervisor void of " + table.id + ": " + answer.error().message);
        return;
      }
      refused("supervisor void of " + table.id, answer.error());
    }
    ++stats_.supervisor_voids;
    note("supervisor void of " + table.id + " round " + std::to_string(model.current.id) + " by " +
         supervisor + ": " + std::string(to_string(answer->outcome)));
    // Rule §6: a payout that needs two supervisors to reject needs two to void its round.
    for (const PayoutId id : answer->payouts) {
      const auto before = hits.find(id.value());
      if (before == hits.end()) {
        broken(kRuleTwoPeople, "supervisor void of " + table.id + " names payout " +
                                   std::to_string(id.value()) + ", not a pending hit of the round");
      }
      const Payout& was = before->second;
      const bool rejected =
          std::find(answer->rejected.begin(), answer->rejected.end(), id) != answer->rejected.end();
      const auto folded = [](std::string name) {
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return name;
      };
      // Rejected by this void exactly when it needed one supervisor, or another one had asked.
      const bool second_person =
          was.approvals_required < 2 ||
          std::any_of(was.rejection_requested_by.begin(), was.rejection_requested_by.end(),
                      [&](const std::string& name) { return folded(name) != folded(supervisor); });
      if (rejected != second_person) {
        broken(kRuleTwoPeople, "payout " + std::to_string(id.value()) + " needing " +
                                   std::to_string(was.approvals_required) + " supervisors was " +
                                   (rejected ? "rejected" : "left waiting") + " by a void of " +
                                   supervisor);
      }
      if (answer->outcome == SupervisorVoidOutcome::voided && !rejected) {
        broken(kRuleTwoPeople, "a void of " + table.id + " voided the round with payout " +
                                   std::to_string(id.value()) + " still waiting");
      }
    }
    if (answer->payouts.size() != hits.size()) {
      broken(kRuleTwoPeople, "supervisor void of " + table.id + " left a pending hit payout");
    }
    if (answer->outcome != SupervisorVoidOutcome::voided) return;
    const VoidRoundRequest table_void{TableId(table.id), RoundId(model.current.id), "misdeal"};
    auto repeated = send<VoidRoundAnswer>(
        [&](Engine& e, Records& out) { return e.void_round(table_void, out); }, ambiguous);
    if (!repeated) refused("the table's void after a supervisor's", repeated.error());
    if (repeated->reversed != answer->reversed) {
      broken(kRuleReplay, "the table's void of " + table.id + " round " +
                              std::to_string(model.current.id) + " answers " +
                              repeated->reversed.to_string() + " refunded, the supervisor's " +
                              answer->reversed.to_string());
    }
    model.current.phase = Phase::voided;
    model.current.voided.emplace(table_void, *repeated);
    acknowledge(table.id, model.current.id, CommandKind::void_round, encode(*repeated));
  }

  // A seat's seven cards, as the model sees them.
  struct Dealt {
    std::map<std::uint32_t, std::vector<int>> pocket;
    std::map<std::uint32_t, Category> keyed;
    std::vector<int> board;
  };

  Dealt deal(const std::vector<std::uint32_t>& seats) {
    Dealt dealt;
    const bool keyed_round = choose_.chance(300);
    if (keyed_round) {
      static const std::vector<Category> events = {
          Category::royal_flush,     Category::straight_flush, Category::four_of_a_kind,
          Category::full_house,      Category::flush,          Category::straight,
          Category::three_of_a_kind, Category::two_pair,       Category::two_pair,
          Category::two_pair};
      for (std::uint32_t seat : seats) dealt.keyed[seat] = choose_.pick(events);
      return dealt;
    }
    std::vector<int> deck(52);
    for (std::size_t i = 0; i < 52; ++i) deck[i] = static_cast<int>(i);
    for (std::size_t i = 51; i > 0; --i) std::swap(deck[i], deck[choose_.below(i + 1)]);
    std::vector<int> used;
    const auto take = [&](int card) {
      used.push_back(card);
      deck.erase(std::find(deck.begin(), deck.end(), card));
      return card;
    };
    // Sometimes a stacked deck: a royal, a straight flush or four of a kind for one seat, its
    // pocket holding two of the cards, so that real cards hit the meters too.
    std::optional<std::uint32_t> stacked;
    if (!seats.empty() && choose_.chance(200)) {
      stacked = seats[choose_.below(seats.size())];
      const int suit = static_cast<int>(choose_.below(4));
      std::vector<int> made;
      const auto kind = choose_.below(3);
      if (kind == 0) {
        for (int rank = 8; rank <= 12; ++rank) made.push_back(suit * 13 + rank);
      } else if (kind == 1) {
        const int high = static_cast<int>(choose_.between(4, 11));
        for (int rank = high - 4; rank <= high; ++rank) made.push_back(suit * 13 + rank);
      } else {
        const int rank = static_cast<int>(choose_.below(13));
        for (int s = 0; s < 4; ++s) made.push_back(s * 13 + rank);
      }
      for (int card : made) take(card);
      dealt.pocket[*stacked] = {made[0], made[1]};
      dealt.board.assign(made.begin() + 2, made.end());
    }
    for (std::uint32_t seat : seats) {
      if (stacked && seat == *stacked) continue;
      if (choose_.chance(100)) {
        dealt.keyed[seat] = choose_.chance(500) ? Category::royal_flush : Category::two_pair;
        continue;
      }
      dealt.pocket[seat] = {take(deck[0]), take(deck[0])};
    }
    while (dealt.board.size() < 5) dealt.board.push_back(take(deck[0]));
    return dealt;
  }

  void settle(const SimTable& table, TableModel& model) {
    std::set<std::uint32_t> wagering;
    for (const auto& [key, units] : model.current.units) wagering.insert(key.second);
    std::vector<std::uint32_t> seats(wagering.begin(), wagering.end());
    const Dealt dealt = deal(seats);
    SettleRoundRequest request{TableId(table.id), RoundId(model.current.id), {}, {}, {}};
    for (std::uint32_t seat : seats) {
      SeatHandRequest hand{seat, {}, std::nullopt};
      if (auto keyed = dealt.keyed.find(seat); keyed != dealt.keyed.end()) {
        hand.keyed_hand = keyed_name(keyed->second);
      } else {
        for (int card : dealt.pocket.at(seat)) hand.cards.push_back(card_text(card));
      }
      request.seats.push_back(hand);
    }
    if (!dealt.pocket.empty()) {
      for (int card : dealt.board) request.board.push_back(card_text(card));
    }
    bool ambiguous = false;
    auto answer = send<SettleRoundAnswer>(
        [&](Engine& e, Records& out) { return e.settle_round(request, out); }, ambiguous);
    if (!answer)
      refused("settle " + table.id + " round " + std::to_string(model.current.id), answer.error());
    ++stats_.settles;
    for (const SeatResultView& result : answer->results) {
      for (const AwardView& award : result.awards) {
        if (award.kind == AwardKind::percent) ++stats_.percent_hits;
      }
    }
    model.current.phase = Phase::settled;
    model.current.settled.emplace(request, *answer);
    note("settle " + table.id + " round " + std::to_string(model.current.id) + ": " +
         std::to_string(answer->results.size()) + " results");
    acknowledge(table.id, model.current.id, CommandKind::settle, encode(*answer));
    check_pays(table, model.current, dealt, *answer);
  }

  void decide_payout(const Payout& payout) {
    static const std::vector<std::string> supervisors = {"sup-1", "sup-2", "sup-3"};
    const bool reject = choose_.chance(200);
    const std::string supervisor = choose_.pick(supervisors);
    bool ambiguous = false;
    const PayoutId id = payout.id;
    // A request id of its own for each decision; a retry after a lost answer repeats it.
    const PayoutDecisionRequest request{"sim-decision-" + std::to_string(++decisions_), id,
                                        reject ? PayoutDecision::reject : PayoutDecision::approve,
                                        reject ? "not a valid hand" : ""};
    auto answer = send<Payout>(
        [&](Engine& e, Records& out) { return e.decide_payout(request, supervisor, out); },
        ambiguous);
    if (!answer) {
      const auto code = answer.error().code;
      // The same supervisor twice (under a new request id) is refused. A retry after a lost
      // answer repeats its request id, so it answers the first answer, never a refusal.
      if (code == EngineError::already_approved) {
        note("payout " + std::to_string(id.value()) + ": " + answer.error().message);
        return;
      }
      refused("payout " + std::to_string(id.value()), answer.error());
    }
    if (reject) {
      ++stats_.rejections;
    } else {
      ++stats_.approvals;
    }
    note(std::string(reject ? "reject" : "approve") + " payout " + std::to_string(id.value()) +
         " (" + answer->amount.to_string() + ") by " + supervisor);
    // Rule §6: a payout that needs two supervisors to pay needs two to reject.
    if (reject && answer->state == PayoutState::pending &&
        (payout.approvals_required < 2 || answer->rejection_requested_by.size() != 1)) {
      broken(kRuleTwoPeople, "payout " + std::to_string(id.value()) + " needing " +
                                 std::to_string(payout.approvals_required) +
                                 " approvals stayed pending after a rejection");
    }
    if (reject && answer->state == PayoutState::rejected && payout.approvals_required >= 2 &&
        payout.rejection_requested_by.empty()) {
      broken(kRuleTwoPeople, "payout " + std::to_string(id.value()) +
                                 " needing two supervisors was rejected by one");
    }
    payout_acks_.push_back({id.value(), answer->state, answer->approved_by.size(),
                            answer->rejection_requested_by.size(), reject, supervisor});
  }

  // An operator's meter adjustment, mostly on the Must-Hit-By level: on a hidden-trigger level
  // often exactly to the value its point was drawn above, or a cent past it (refused), so that
  // the rules that keep the point secret are tried at their edge.
  void adjust() {
    // A copy: a restart while the command is retried may replace the floor.
    const SimLink link = floor_.links[choose_.below(floor_.links.size())];
    const auto level =
        static_cast<std::uint32_t>(choose_.chance(700) ? 2 : 1 + choose_.below(link.levels.size()));
    const auto [meter, above] = host_->read([&](const Engine& e) {
      const Link* held = e.link(LinkId(link.id));
      std::optional<Money> bound;
      if (held->hidden_trigger(level)) bound = held->hidden_trigger(level)->range_above;
      return std::pair{held->meter(level), bound};
    });
    std::int64_t cents_delta = 0;
    if (above && choose_.chance(500)) {
      cents_delta = above->cents_floor() - meter.cents_floor() + (choose_.chance(500) ? 1 : 0);
    } else if (choose_.chance(400)) {
      cents_delta = -choose_.between(1, 500);
    } else {
      cents_delta = choose_.between(1, 2000);
    }
    if (cents_delta == 0) cents_delta = 1;
    const AdjustMeterRequest request{"sim-adjust-" + std::to_string(++adjustments_),
                                     LinkId(link.id), level, cents(cents_delta), "sim correction"};
    bool ambiguous = false;
    auto answer = send<AdjustMeterAnswer>(
        [&](Engine& e, Records& out) { return e.adjust_meter(request, "admin/sim", out); },
        ambiguous);
    const std::string what = "adjust " + link.id + " level " + std::to_string(level) + " by " +
                             request.amount.to_string();
    if (!answer) {
      const EngineError code = answer.error().code;
      if (code != EngineError::ledger_refused && code != EngineError::adjustment_zero) {
        refused(what, answer.error());
      }
      ++stats_.adjustments_refused;
      note(what + " refused: " + answer.error().message);
      return;
    }
    ++stats_.adjustments;
    note(what + ": meter " + answer->meter.to_string());
  }

  // A refusal or an answer names no hidden point in force (its dollars or its micros): of the
  // links it names ('link-a'), or of every link when it names none (a number of one link's that
  // equals another link's point by chance says nothing of it).
  void expect_silent_about_points(const std::string& what, const std::string& text) {
    std::set<std::string> named;
    for (const SimLink& link : floor_.links) {
      if (text.find("'" + link.id + "'") != std::string::npos) named.insert(link.id);
    }
    const auto points = host_->read([&](const Engine& e) {
      std::vector<Money> in_force;
      for (const SimLink& link : floor_.links) {
        if (!named.empty() && named.count(link.id) == 0) continue;
        const Link* held = e.link(LinkId(link.id));
        for (std::uint32_t level = 1; level <= held->level_count(); ++level) {
          if (held->hidden_trigger(level)) in_force.push_back(held->hidden_trigger(level)->point);
        }
      }
      return in_force;
    });
    // `number` in `text` as a whole number (not a part of a longer one, as 87.90 of 187.905).
    const auto names = [&text](const std::string& number) {
      for (auto at = text.find(number); at != std::string::npos; at = text.find(number, at + 1)) {
        const auto end = at + number.size();
        const bool before = at > 0 && std::isdigit(static_cast<unsigned char>(text[at - 1]));
        const bool after = end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]));
        if (!before && !after) return true;
      }
      return false;
    };
    for (const Money point : points) {
      if (names(point.to_string()) || names(std::to_string(point.micros()))) {
        broken(kRuleSecret, what + " names the hidden point " + point.to_string() + ": " + text);
      }
    }
  }

  // What the public knows of each hidden point in force (#32): the committed range, and the
  // meters contributions showed since the draw (a point lies above every meter shown without a
  // hit). Any other change (a returned award, an adjustment, a void, a restart) may lift the
  // meter no higher than that, or the meter itself tells where the point is.
  void check_secrecy() {
    for (const SimLink& link : floor_.links) {
      const auto [meter, trigger] = host_->read([&](const Engine& e) {
        const Link* held = e.link(LinkId(link.id));
        return std::pair{held->meter(2), held->hidden_trigger(2)};
      });
      if (!trigger) {
        known_.erase(link.id);
        continue;
      }
      ++stats_.secrecy_checks;
      auto known = known_.find(link.id);
      if (known == known_.end() || known->second.commitment != trigger->commitment) {
        // A point that replaces one seen before was drawn at a reset of this step, under the
        // floor in force (one first seen, or seen after a floor edit, may be older).
        const bool reset_now = known != known_.end() && floor_unchanged_;
        // A new draw: the public knows its range; the meter after the reset is where it starts.
        known = known_.insert_or_assign(link.id, Known{trigger->commitment, trigger->range_above})
                    .first;
        if (meter > trigger->range_above) {
          broken(kRuleSecret, link.id + " level 2's new point was drawn above " +
                                  trigger->range_above.to_string() + " while the meter shows " +
                                  meter.to_string());
        }
        // The range keeps at least half of (seed, amount]: the reserve fills a hidden level to
        // the middle at most. Only the seed and the rest of the hitting lock's contribution may
        // carry the meter further, and that is one lock's at most.
        const Money amount = scaled_must_hit_by(link);
        const std::int64_t seed =
            link.levels[1].seed_cents * link.base_cents / 100 * Money::kMicrosPerCent;
        const std::int64_t middle =
            seed + (amount.micros() - seed) / 2 / Money::kMicrosPerCent * Money::kMicrosPerCent;
        std::uint32_t seats = 0;
        for (const SimTable& table : floor_.tables) seats = std::max(seats, table.seats);
        const std::int64_t one_lock = static_cast<std::int64_t>(seats) * link.max_units *
                                          link.base_cents * Money::kMicrosPerCent *
                                          link.levels[1].meter_ppm / 1'000'000 +
                                      Money::kMicrosPerCent;
        if (reset_now && trigger->range_above.micros() > std::max(middle, seed + one_lock)) {
          broken(kRuleSecret, link.id + " level 2's new point was drawn from (" +
                                  trigger->range_above.to_string() + ", " + amount.to_string() +
                                  "]: the reset filled it past the middle of its range, " +
                                  Money::from_micros(middle).to_string());
        }
      }
      if (contributed_) {
        known->second.shown = std::max(known->second.shown, meter);
      } else if (meter > known->second.shown) {
        broken(kRuleSecret, link.id + " level 2's meter rose to " + meter.to_string() +
                                " without a contribution, past what the public knew of its "
                                "hidden point (above " +
                                known->second.shown.to_string() + ")");
      }
    }
  }

  // Sends an acknowledged command again: the first answer must come back.
  void replay_one() {
    const SimTable& table = floor_.tables[choose_.below(floor_.tables.size())];
    const TableModel& model = tables_[table.id];
    replay_round(table.id, model.current);
  }

  // Replays every acknowledged command of a round the engine still keeps (each table's last
  // two; a command whose answer was lost may have opened a round the model has not seen yet).
  void replay_round(const std::string& table, const RoundModel& round) {
    if (round.phase == Phase::none) return;
    const bool kept = host_->read([&](const Engine& e) {
      const EngineSnapshot snapshot = e.snapshot();
      for (const TableSnapshot& saved : snapshot.tables) {
        if (saved.id.value() != table) continue;
        for (const auto* held : {&saved.current, &saved.previous}) {
          if (*held && (*held)->id.value() == round.id) return true;
        }
      }
      return false;
    });
    if (!kept) return;
    bool ambiguous = false;
    const auto same = [&](const char* what, const auto& answer, const auto& first) {
      ++stats_.replays;
      if (!answer || !(*answer == first)) {
        broken(kRuleReplay, std::string("a repeated ") + what + " of " + table + " round " +
                                std::to_string(round.id) + " got another answer" +
                                (answer ? std::string() : ": " + answer.error().message));
      }
    };
    if (round.opened) {
      // An OpenRound repeat answers only while its round is the table's latest and OPEN
      // (controller/engine/round_counter.h); after that it is refused and changes nothing.
      const bool latest_open = host_->read([&](const Engine& e) {
        for (const TableSnapshot& saved : e.snapshot().tables) {
          if (saved.id.value() == table) {
            return saved.current && saved.current->id.value() == round.id &&
                   saved.current->phase == RoundPhase::open;
          }
        }
        return false;
      });
      auto answer = send<OpenRoundAnswer>(
          [&](Engine& e, Records& out) { return e.open_round(round.opened->first, out); },
          ambiguous);
      if (latest_open) {
        same("open", answer, round.opened->second);
      } else if (answer || answer.error().code != EngineError::round_id_not_increasing) {
        broken(kRuleReplay, "a repeated open of " + table + " round " + std::to_string(round.id) +
                                " that is no longer the latest OPEN round was not refused as "
                                "such" +
                                (answer ? std::string() : ": " + answer.error().message));
      }
    }
    if (round.locked) {
      auto answer = send<LockWagersAnswer>(
          [&](Engine& e, Records& out) { return e.lock_wagers(round.locked->first, out); },
          ambiguous);
      same("lock", answer, round.locked->second);
    }
    if (round.settled) {
      auto answer = send<SettleRoundAnswer>(
          [&](Engine& e, Records& out) { return e.settle_round(round.settled->first, out); },
          ambiguous);
      same("settle", answer, round.settled->second);
    }
    if (round.voided) {
      auto answer = send<VoidRoundAnswer>(
          [&](Engine& e, Records& out) { return e.void_round(round.voided->first, out); },
          ambiguous);
      same("void", answer, round.voided->second);
    }
  }

  void replay_acknowledged() {
    for (const SimTable& table : floor_.tables) {
      const TableModel& model = tables_[table.id];
      replay_round(table.id, model.previous);
      replay_round(table.id, model.current);
    }
  }

  // ---- The reference checks of a command's answer ----

  const std::vector<Row>& rows_of(const SimTable& table, const std::string& link) const {
    for (const SimTableLink& played : table.links) {
      if (played.link == link) return played.dynamic ? dynamic_rows() : fixed_rows();
    }
    broken("sim", "table " + table.id + " does not play " + link);
  }

  // A command retried across a restart may have been applied under a floor edited since: its
  // answer must fit the floor of one of its attempts.
  template <typename Check>
  void under_attempted_floors(Check check) {
    std::optional<Broken> first;
    for (const SimFloor& floor : attempt_floors_) {
      try {
        check(floor);
        return;
      } catch (const Broken& failure) {
        if (!first) first = failure;
      }
    }
    if (first) throw *first;
  }

  void check_dynamic_selection(const SimTable& table, const OpenRoundAnswer& answer) {
    under_attempted_floors([&](const SimFloor& floor) {
      check_dynamic_selection(floor, floor.table(table.id), answer);
    });
  }

  void check_dynamic_selection(const SimFloor& floor, const SimTable& table,
                               const OpenRoundAnswer& answer) {
    for (const DynamicSelectionView& selection : answer.dynamic_pays) {
      const SimLink& link = floor.link(selection.link.value());
      const auto& rows = rows_of(table, selection.link.value());
      if (selection.pays.empty() || selection.pays.size() > 3) {
        broken(kRulePays, "a Dynamic Pay selection of " + std::to_string(selection.pays.size()) +
                              " hands (1-3 expected)");
      }
      for (const DynamicPayView& pay : selection.pays) {
        const Row* row = nullptr;
        for (const Row& candidate : rows) {
          if (candidate.kind == Row::kDynamic && pay.hand == candidate.label) row = &candidate;
        }
        if (row == nullptr || pay.option < 1 || pay.option > 10) {
          broken(kRulePays, "Dynamic Pay " + pay.hand.str() + " option " +
                                std::to_string(pay.option) + " is not a DYNAMIC row's option");
        }
        const Money expected = cents(row->options_cents[pay.option - 1] * link.base_cents / 100);
        if (pay.amount != expected) {
          broken(kRulePays, "Dynamic Pay " + pay.hand.str() + " option " +
                                std::to_string(pay.option) + " shows " + pay.amount.to_string() +
                                ", the paytable says " + expected.to_string());
        }
      }
    }
  }

  // Every seat's row and its fixed, Dynamic and Envy pays, from the model's own evaluation.
  void check_pays(const SimTable& table, const RoundModel& round, const Dealt& dealt,
                  const SettleRoundAnswer& answer) {
    under_attempted_floors([&](const SimFloor& floor) {
      check_pays(floor, floor.table(table.id), round, dealt, answer);
    });
  }

  void check_pays(const SimFloor& floor, const SimTable& table, const RoundModel& round,
                  const Dealt& dealt, const SettleRoundAnswer& answer) {
    for (const SimTableLink& played : table.links) {
      const SimLink& link = floor.link(played.link);
      const auto& rows = played.dynamic ? dynamic_rows() : fixed_rows();
      std::map<std::uint32_t, const Row*> row_of_seat;
      for (const auto& [key, units] : round.units) {
        if (key.first != played.link) continue;
        Category category;
        if (auto keyed = dealt.keyed.find(key.second); keyed != dealt.keyed.end()) {
          category = keyed->second;
        } else {
          std::vector<int> seven = dealt.pocket.at(key.second);
          seven.insert(seven.end(), dealt.board.begin(), dealt.board.end());
          category = best_category(seven);
        }
        row_of_seat[key.second] = row_of(rows, category);
      }
      for (const auto& [seat, row] : row_of_seat) {
        const SeatResultView* result = nullptr;
        for (const SeatResultView& r : answer.results) {
          if (r.seat == seat && r.link.value() == played.link) result = &r;
        }
        const std::string where = table.id + " round " + std::to_string(round.id) + " seat " +
                                  std::to_string(seat) + " on " + played.link;
        if (result == nullptr) broken(kRulePays, where + ": no result");
        const std::string expected_hand = row ? row->label : "";
        if (result->hand.str() != expected_hand) {
          broken(kRulePays, where + ": hand '" + result->hand.str() + "', the model says '" +
                                expected_hand + "'");
        }
        const std::int64_t units = round.units.at({played.link, seat});
        std::multiset<std::pair<int, std::int64_t>> expected;  // (kind, micros)
        std::size_t percent_expected = 0;
        if (row && row->kind == Row::kFixed) {
          expected.insert({static_cast<int>(AwardKind::fixed),
                           cents(row->amount_cents * link.base_cents / 100).micros() * units});
        }
        if (row && row->kind == Row::kDynamic) {
          std::int64_t amount = row->amount_cents;
          for (const auto& selection : round.opened->second.dynamic_pays) {
            if (selection.link.value() != played.link) continue;
            for (const DynamicPayView& pay : selection.pays) {
              if (pay.hand == row->label) amount = row->options_cents[pay.option - 1];
            }
          }
          expected.insert({static_cast<int>(AwardKind::dynamic),
                           cents(amount * link.base_cents / 100).micros() * units});
        }
        if (row && row->kind == Row::kPercent) ++percent_expected;
        for (const auto& [other, other_row] : row_of_seat) {
          if (other == seat || other_row == nullptr || other_row->envy_cents == 0) continue;
          expected.insert({static_cast<int>(AwardKind::envy),
                           cents(other_row->envy_cents * link.base_cents / 100).micros()});
        }
        std::multiset<std::pair<int, std::int64_t>> paid;
        std::size_t percent_paid = 0;
        for (const AwardView& award : result->awards) {
          if (award.kind == AwardKind::percent) ++percent_paid;
          if (award.kind == AwardKind::fixed || award.kind == AwardKind::dynamic ||
              award.kind == AwardKind::envy) {
            paid.insert({static_cast<int>(award.kind), award.amount.micros()});
          }
        }
        if (paid != expected || percent_paid != percent_expected) {
          std::string text =
              where + " (" + expected_hand + ", " + std::to_string(units) + " units): paid";
          for (const auto& [kind, micros] : paid) {
            text += " " + std::string(to_string(static_cast<AwardKind>(kind))) + "=" +
                    Money::from_micros(micros).to_string();
          }
          text += "; the paytable says";
          for (const auto& [kind, micros] : expected) {
            text += " " + std::string(to_string(static_cast<AwardKind>(kind))) + "=" +
                    Money::from_micros(micros).to_string();
          }
          text += " and " + std::to_string(percent_expected) + " percent award(s), paid " +
                  std::to_string(percent_paid);
          broken(kRulePays, text);
        }
      }
    }
  }

  // ---- The journal, read back as an auditor would ----

  // Takes in the commands committed since the last call: balances by summing transfers, and the
  // rules each award and void must meet at the moment it happened.
  void absorb() {
    const auto& commands = journal_.commands();
    for (; absorbed_ < commands.size(); ++absorbed_) {
      const Records& records = commands[absorbed_];
      std::map<std::uint64_t, Payout> created;
      for (const Payout& payout : records.payouts) {
        payout_records_[payout.id.value()].push_back(payout);
        if (payout_created(payout)) {
          created[payout.id.value()] = payout;
          payouts_[payout.id.value()] = payout;
        }
      }
      for (const RoundRecord& round : records.rounds) {
        round_keys_[round.round_key] = {round.table.value(), round.round.value()};
      }
      for (const AnswerRecord& answer : records.answers) {
        const auto& [table, round] = round_keys_.at(answer.round_key);
        answers_[{table, round, static_cast<int>(answer.command)}].push_back(
            std::string(answer.encoded.answer()));
      }
      const Balances before = balances_;
      for (const TransferRecord& record : records.transfers) {
        const std::string link = record.link.str();
        const Transfer& t = record.transfer;
        transfers_[link].push_back(t);
        if (t.kind == TransferKind::award) check_award(link, t, created);
        if (t.kind == TransferKind::seed) {
          ++reset_epoch_[{link, t.credit.level}];
          reset_guarantee_[{link, t.credit.level}] = {t.origin, t.amount.micros()};
        }
        if (t.kind == TransferKind::reserve_release) {
          auto& guarantee = reset_guarantee_[{link, t.credit.level}];
          if (guarantee.first == t.origin) guarantee.second += t.amount.micros();
        }
        balances_[{link, static_cast<int>(t.debit.kind), t.debit.level}] -= t.amount.micros();
        balances_[{link, static_cast<int>(t.credit.kind), t.credit.level}] += t.amount.micros();
      }
      for (const RoundRecord& round : records.rounds) {
        if (round.phase == RoundPhase::locked) epochs_at_lock_[round.round_key] = reset_epoch_;
        if (round.phase == RoundPhase::voided) check_void(round, before);
      }
    }
  }

  std::int64_t balance(const Balances& from, const std::string& link, AccountRef account) const {
    const auto it = from.find({link, static_cast<int>(account.kind), account.level});
    return it == from.end() ? 0 : it->second;
  }

  // A percent award is never more than floor_to_cent(meter × p / 100) at the hit (exactly that
  // for 100%); a Must-Hit-By award never more than its amount.
  void check_award(const std::string& link, const Transfer& t,
                   const std::map<std::uint64_t, Payout>& created) {
    const auto found = created.find(t.origin.payout);
    if (found == created.end()) return;  // Not a payout's award (none such today).
    const Payout& payout = found->second;
    const std::int64_t meter = balance(balances_, link, t.debit);
    const SimLink& settings = floor_.link(link);
    if (payout.kind == AwardKind::must_hit_by) {
      const Money amount = scaled_must_hit_by(settings);
      if (t.amount > amount) {
        broken(kRuleMustHitBy, link + " level " + std::to_string(t.debit.level) +
                                   ": a Must-Hit-By award of " + t.amount.to_string() +
                                   " above its amount " + amount.to_string() + " (payout " +
                                   std::to_string(payout.id.value()) + ")");
      }
      return;
    }
    if (payout.kind != AwardKind::percent) return;
    const SimTable& table = floor_.table(payout.table.value());
    std::uint32_t percent = 0;
    for (const Row& row : rows_of(table, link)) {
      if (payout.hand == row.label && row.kind == Row::kPercent) percent = row.percent;
    }
    if (percent == 0) broken(kRulePays, "a percent award for '" + payout.hand.str() + "'");
    const Money limit = Money::from_micros(meter * percent / 100).floor_to_cent();
    const bool ok = percent == 100 ? t.amount == limit : t.amount <= limit;
    if (!ok || payout.amount != t.amount) {
      broken(kRulePercent, link + " level " + std::to_string(t.debit.level) + ": a " +
                               std::to_string(percent) + "% award of " + t.amount.to_string() +
                               " (payout " + payout.amount.to_string() + ") on a meter of " +
                               Money::from_micros(meter).to_string() + "; the rule gives " +
                               limit.to_string());
    }
  }

  // DESIGN: a void refunds the round's contributions without lowering any meter below what the
  // rules guarantee it: seed plus reserve after a reset.
  void check_void(const RoundRecord& round, const Balances& before) {
    const auto at_lock = epochs_at_lock_.find(round.round_key);
    if (at_lock == epochs_at_lock_.end()) return;  // Voided while OPEN: nothing contributed.
    for (const auto& [level_key, epoch] : reset_epoch_) {
      const auto then = at_lock->second.find(level_key);
      if (then != at_lock->second.end() && then->second == epoch) continue;
      const auto& [link, level] = level_key;
      const std::int64_t guarantee = reset_guarantee_[level_key].second;
      const std::int64_t was = balance(before, link, AccountRef::meter(level));
      const std::int64_t now = balance(balances_, link, AccountRef::meter(level));
      if (now < std::min(was, guarantee)) {
        broken(kRuleVoid, "void of " + round.table.value() + " round " +
                              std::to_string(round.round.value()) + " took " + link + " level " +
                              std::to_string(level) + " from " +
                              Money::from_micros(was).to_string() + " to " +
                              Money::from_micros(now).to_string() + ", below its reset value " +
                              Money::from_micros(guarantee).to_string() +
                              " (another table's hit reset it after this round locked)");
      }
    }
  }

  // ---- After every step ----

  void check_all() {
    absorb();
    if (auto problem = host_->read([](const Engine& e) { return e.check_invariants(); })) {
      broken(kRuleInvariant, *problem);
    }
    // The live engine equals what the journal holds, account by account.
    struct LiveLink {
      std::string id;
      std::vector<std::pair<AccountRef, Money>> balances;
      std::vector<std::optional<Money>> triggers;
    };
    const auto live = host_->read([](const Engine& e) {
      std::vector<LiveLink> links;
      for (const LinkSettings& settings : e.config().links) {
        const Link* link = e.link(settings.meters.id);
        LiveLink view{settings.meters.id.value(), link->ledger().balances(), {}};
        links.push_back(std::move(view));
      }
      return links;
    });
    for (const LiveLink& link : live) {
      std::int64_t sum = 0;
      for (const auto& [account, amount] : link.balances) {
        const std::int64_t durable = balance(balances_, link.id, account);
        if (durable != amount.micros()) {
          broken(kRuleDurable, link.id + " " + to_string(account) + ": live " + amount.to_string() +
                                   ", durable " + Money::from_micros(durable).to_string());
        }
        sum += durable;
        const bool never_negative = account.kind == AccountKind::meter ||
                                    account.kind == AccountKind::reserve ||
                                    account.kind == AccountKind::awards_payable;
        if (never_negative && durable < 0) {
          broken(kRuleInvariant, link.id + " " + to_string(account) + " is negative");
        }
      }
      if (sum != 0) broken(kRuleInvariant, link.id + ": balances sum to " + std::to_string(sum));
      // A Must-Hit-By meter never passes its amount.
      const SimLink& settings = floor_.link(link.id);
      const Money amount = scaled_must_hit_by(settings);
      const Money meter = Money::from_micros(balance(balances_, link.id, AccountRef::meter(2)));
      if (meter > amount) {
        broken(kRuleMustHitBy, link.id + " level 2's meter is " + meter.to_string() +
                                   ", past its Must-Hit-By amount " + amount.to_string() +
                                   " without a hit");
      }
      reconcile(link.id, link.balances);
    }
    check_acknowledged();
    check_signs();
    check_secrecy();
  }

  // The signs (the sign feed's board, kept from the host's commits, failed ones and recoveries)
  // show what a board built afresh from the committed engine shows: every level's amount (floored
  // to the cent and capped) and hidden trigger commitment, every link's status, every table's
  // round and Dynamic Pays, once the host's responder has delivered what it committed.
  void check_signs() {
    const auto start = host_->read([](const Engine& e) { return board_start(e); });
    sign::SignState expected;
    sign::SignState shown;
    {
      std::unique_lock lock(signs_->mutex);
      expected = sign::SignBoard(signs_->board.floor(), start, 0).state(0, true);
      // The host answers once a batch is durable; its responder tells the observers just after.
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      for (;;) {
        shown = signs_->board.state(0, true);
        if (shown.links == expected.links && shown.tables == expected.tables) return;
        if (std::chrono::steady_clock::now() >= until) break;
        signs_->changed.wait_for(lock, std::chrono::milliseconds(2));
      }
    }
    std::string text;
    for (std::size_t l = 0; l < expected.links.size() && l < shown.links.size(); ++l) {
      const sign::LinkShown& want = expected.links[l];
      const sign::LinkShown& got = shown.links[l];
      if (want.status != got.status) text += " " + want.link + " status differs;";
      for (std::size_t i = 0; i < want.levels.size() && i < got.levels.size(); ++i) {
        if (want.levels[i] == got.levels[i]) continue;
        text += " " + want.link + " level " + std::to_string(want.levels[i].level) + ": shown " +
                std::to_string(got.levels[i].amount_cents) + " cents" +
                (got.levels[i].trigger ? " (committed)" : "") + ", engine " +
                std::to_string(want.levels[i].amount_cents) + " cents" +
                (want.levels[i].trigger ? " (committed)" : "") + ";";
      }
    }
    for (std::size_t t = 0; t < expected.tables.size() && t < shown.tables.size(); ++t) {
      if (!(expected.tables[t] == shown.tables[t])) {
        text += " table " + expected.tables[t].table + ": round or Dynamic Pays differ;";
      }
    }
    broken(kRuleSigns, "the signs differ from the committed engine:" + text);
  }

  // The auditor's identity per level over the transfers since the last step, between two
  // observations of the live engine.
  void reconcile(const std::string& link, const std::vector<std::pair<AccountRef, Money>>& live) {
    auto& cursor = reconciled_[link];
    const auto& transfers = transfers_[link];
    const std::span<const Transfer> since(transfers.data() + cursor, transfers.size() - cursor);
    cursor = transfers.size();
    std::map<std::uint32_t, std::int64_t> holdings;
    for (const auto& [account, amount] : live) {
      if (account.kind == AccountKind::meter || account.kind == AccountKind::reserve) {
        holdings[account.level] += amount.micros();
      }
    }
    auto& start = observed_[link];
    for (const auto& [level, end] : holdings) {
      const auto result =
          reconcile_level(level, Money::from_micros(start[level]), Money::from_micros(end), since);
      if (!result.balanced || result.unexplained.micros() != 0 || result.overflowed) {
        broken(kRuleReconcile, link + " level " + std::to_string(level) +
                                   " does not reconcile: " + "start " + result.start.to_string() +
                                   " end " + result.end.to_string() + " unexplained " +
                                   result.unexplained.to_string());
      }
      start[level] = end;
    }
  }

  // Every command answered OK is in the journal exactly once, with the answer the caller got.
  void check_acknowledged() {
    for (const auto& [key, answers] : answers_) {
      if (answers.size() > 1) {
        broken(kRuleAckLost, std::get<0>(key) + " round " + std::to_string(std::get<1>(key)) +
                                 ": a command is recorded " + std::to_string(answers.size()) +
                                 " times");
      }
    }
    for (const Ack& ack : acks_) {
      const auto found = answers_.find({ack.table, ack.round, static_cast<int>(ack.kind)});
      if (found == answers_.end() || found->second.front() != ack.answer) {
        broken(kRuleAckLost, ack.table + " round " + std::to_string(ack.round) + ": a " +
                                 (found == answers_.end() ? "command answered OK is not durable"
                                                          : "durable answer differs from the one "
                                                            "given"));
      }
    }
    for (const PayoutAck& ack : payout_acks_) {
      std::size_t times = 0;
      for (const Payout& record : payout_records_[ack.payout]) {
        const bool requested = ack.reject && ack.state == PayoutState::pending;
        const std::string* by = ack.state == PayoutState::rejected ? &record.rejected_by
                                : requested && !record.rejection_requested_by.empty()
                                    ? &record.rejection_requested_by.back()
                                : !requested && !record.approved_by.empty()
                                    ? &record.approved_by.back()
                                    : nullptr;
        if (record.state == ack.state && record.approved_by.size() == ack.approvals &&
            record.rejection_requested_by.size() == ack.rejection_requests && by != nullptr &&
            *by == ack.supervisor) {
          ++times;
        }
      }
      if (times != 1) {
        broken(kRuleAckLost, "payout " + std::to_string(ack.payout) + ": a decision answered OK " +
                                 "is in the journal " + std::to_string(times) + " times");
      }
    }
  }

  Options options_;
  Choices choose_;
  SimClock clock_;
  SplitMix64 engine_random_;
  Journal journal_;
  std::unique_ptr<EngineHost> host_;
  std::shared_ptr<FollowedBoard> signs_;  // The sign feed's board over host_.
  SimFloor floor_;
  std::map<std::string, TableModel> tables_;
  std::vector<Ack> acks_;
  std::vector<PayoutAck> payout_acks_;
  std::uint64_t decisions_ = 0;         // Payout decisions asked for, for their request ids.
  std::uint64_t supervisor_voids_ = 0;  // Supervisors' voids asked for, for their request ids.
  std::uint64_t adjustments_ = 0;       // Adjustments asked for, for their request ids.
  bool contributed_ = false;            // This step locked wagers.
  bool floor_unchanged_ = true;         // No floor edit took effect in this step.
  struct Known {
    Sha256Digest commitment{};
    Money shown;  // The highest meter the public saw: the range's low end, or contributions'.
  };
  std::map<std::string, Known> known_;    // By link: its Must-Hit-By level's point in force.
  std::vector<SimFloor> attempt_floors_;  // The floor at each attempt of the last command.
  std::uint32_t step_ = 0;
  std::deque<std::string> trace_;
  Stats stats_;

  // What absorb() has read from the journal.
  std::size_t absorbed_ = 0;
  Balances balances_;
  std::map<std::string, std::vector<Transfer>> transfers_;
  std::map<std::uint64_t, std::pair<std::string, std::uint64_t>> round_keys_;
  std::map<std::tuple<std::string, std::uint64_t, int>, std::vector<std::string>> answers_;
  std::map<std::uint64_t, std::vector<Payout>> payout_records_;
  std::map<std::uint64_t, Payout> payouts_;
  std::map<std::pair<std::string, std::uint32_t>, std::uint64_t> reset_epoch_;
  std::map<std::pair<std::string, std::uint32_t>, std::pair<Origin, std::int64_t>> reset_guarantee_;
  std::map<std::uint64_t, std::map<std::pair<std::string, std::uint32_t>, std::uint64_t>>
      epochs_at_lock_;
  std::map<std::string, std::size_t> reconciled_;
  std::map<std::string, std::map<std::uint32_t, std::int64_t>> observed_;
};

}  // namespace

Outcome simulate(std::uint64_t seed, const Options& options) {
  Outcome outcome;
  Simulation simulation(seed, options);
  try {
    simulation.run(outcome);
  } catch (const Broken& failure) {
    outcome.passed = false;
    outcome.rule = failure.rule;
    outcome.failure = failure.message;
    outcome.step = simulation.step();
    outcome.trace.assign(simulation.trace().begin(), simulation.trace().end());
    outcome.stats = simulation.stats();
  }
  return outcome;
}

}  // namespace jackpot::sim
