// A dealer keys a seat's hand as the paytable prints it (proto/jackpot/v1/table.proto,
// SeatHand.keyed_hand): hand_key() is the one rule that says which texts name the same row, and
// the loaders make sure a key never names two hands at a table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "controller/engine/engine.h"
#include "controller/engine/engine_config.h"
#include "controller/hands/paytable.h"
#include "controller/hands/paytable_loader.h"
#include "meters/random.h"

namespace jackpot {
namespace {

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

struct KeyCase {
  const char* text;
  const char* key;
};

TEST(HandKey, IgnoresCaseSpacesTabsHyphensAndUnderscores) {
  const KeyCase cases[] = {
      {"Full House", "fullhouse"},
      {"full house", "fullhouse"},
      {"FULL_HOUSE", "fullhouse"},
      {"FULL HOUSE", "fullhouse"},
      {"Full-House", "fullhouse"},
      {"  Full\tHouse  ", "fullhouse"},
      {"Four-of-a-Kind", "fourofakind"},
      {"FOUR_OF_A_KIND", "fourofakind"},
      {"4 of a Kind", "4ofakind"},
      {"Royal Flush (Suit Specific)", "royalflush(suitspecific)"},
      {"ROYAL_FLUSH_SUIT_SPECIFIC", "royalflushsuitspecific"},
      {"6-Card Straight Flush or A23456-89TJQK Suited", "6cardstraightflushora2345689tjqksuited"},
      {"Must-Hit-By", "musthitby"},
      {"MUST_HIT_BY", "musthitby"},
      {"", ""},
      {" -_\t", ""},
      {"Full.House", "full.house"},  // Only the four separators are ignored.
      {"\xc3\x89", "\xc3\x89"},      // Bytes outside ASCII stay as they are.
  };
  for (const KeyCase& test : cases) {
    EXPECT_EQ(hand_key(test.text), test.key) << test.text;
    for (const KeyCase& other : cases) {
      EXPECT_EQ(same_hand_key(test.text, other.text), hand_key(test.text) == hand_key(other.text))
          << "'" << test.text << "' and '" << other.text << "'";
    }
  }
}

TEST(HandKey, EventNamesKeyTheirEvent) {
  for (std::uint8_t value = 1; value <= kHandEventCount; ++value) {
    const auto event = static_cast<HandEvent>(value);
    EXPECT_EQ(hand_event_keyed(to_string(event)), event);
    std::string lower(to_string(event));
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(hand_event_keyed(lower), event) << lower;
  }
  EXPECT_EQ(hand_event_keyed("Full House"), HandEvent::full_house);
  EXPECT_EQ(hand_event_keyed("ROYAL"), std::nullopt);
  EXPECT_EQ(hand_event_keyed(""), std::nullopt);
}

struct KeyedCase {
  std::vector<const char*> paytables;
  const char* keyed;
  std::optional<HandEvent> event;
};

TEST(KeyedEvent, NamesTheRowAsPrintedOnAnyPaytableOfTheTable) {
  const KeyedCase cases[] = {
      {{"PT-BJS-HUH-5CP-01"}, "Full House", HandEvent::full_house},
      {{"PT-BJS-HUH-5CP-01"}, "full house", HandEvent::full_house},
      {{"PT-BJS-HUH-5CP-01"}, "FULL_HOUSE", HandEvent::full_house},
      {{"PT-BJS-HUH-5CP-01"}, "Four-of-a-Kind", HandEvent::four_of_a_kind},
      {{"PT-BJS-HUH-5CP-01"}, "four of a kind", HandEvent::four_of_a_kind},
      {{"PT-BJS-HUH-5CP-01"},
       "Flopped Royal Flush (Suit Specific)",
       HandEvent::flopped_royal_flush_suit_specific},
      {{"PT-BJS-HUH-5CP-01"},
       "FLOPPED_ROYAL_FLUSH_SUIT_SPECIFIC",
       HandEvent::flopped_royal_flush_suit_specific},
      // Not a row of 5CP-01, but a hand event: it resolves as dealt cards would.
      {{"PT-BJS-HUH-5CP-01"}, "TWO_PAIR", HandEvent::two_pair},
      {{"PT-BJS-HUH-5CP-01"}, "Two Pair", HandEvent::two_pair},
      // "3 of a Kind" is printed on MS Stud-01 only: keyed at a table that plays it.
      {{"PT-BJS-HUH-5CP-01"}, "3 of a Kind", std::nullopt},
      {{"PT-BJS-HUH-5CP-01", "MS Stud-01"}, "3 of a Kind", HandEvent::three_of_a_kind},
      {{"MS Stud-01"}, "3 OF A KIND", HandEvent::three_of_a_kind},
      {{"PT-PRG-HUH-MLP-01"}, "Must-Hit-By", HandEvent::must_hit_by},
      {{"PT-BJS-HUH-5CP-01"}, "Full Houses", std::nullopt},
      {{"PT-BJS-HUH-5CP-01"}, "ROYAL", std::nullopt},
      {{"PT-BJS-HUH-5CP-01"}, "", std::nullopt},
      {{}, "FULL_HOUSE", HandEvent::full_house},
      {{}, "Full House", HandEvent::full_house},
  };
  for (const KeyedCase& test : cases) {
    std::vector<const Paytable*> paytables;
    for (const char* id : test.paytables) paytables.push_back(&shipped_paytable(id));
    EXPECT_EQ(keyed_event(paytables, test.keyed), test.event) << "'" << test.keyed << "'";
  }
}

// ---- The loaders keep a key to one hand -----------------------------------------------------

std::string paytable_text(const std::string& id, const std::string& rows) {
  return "id: \"" + id + "\" game: HUH_PROGRESSIVE base_wager: \"1.00\" source: \"test\" " + rows;
}

std::string fixed_row(const char* hand, const char* label, const char* amount = "10.00") {
  return std::string("rows { hand: ") + hand + " label: \"" + label + "\" fixed { amount: \"" +
         amount + "\" } } ";
}

// Across every shipped paytable, a printed label names one hand: what a keyed hand means does not
// depend on which paytables a table plays, so a settle replay compared by hand
// (request_canonical.h) means the same after a restart that gave the table other paytables.
TEST(KeyedLabels, EveryShippedLabelNamesOneHandOnEveryPaytable) {
  std::map<std::string, std::pair<HandEvent, std::string>> meaning;  // Key -> (hand, where).
  std::size_t labels = 0;
  for (const Paytable& paytable : shipped()) {
    for (const PaytableRow& row : paytable.rows) {
      ++labels;
      const std::string key = hand_key(row.label.view());
      const auto [it, added] = meaning.try_emplace(key, row.hand, paytable.id);
      EXPECT_TRUE(added || it->second.first == row.hand)
          << "'" << row.label.view() << "' on " << paytable.id << " is " << to_string(row.hand)
          << " but " << to_string(it->second.first) << " on " << it->second.second;
    }
  }
  EXPECT_GT(labels, 390U);
}

TEST(KeyedLabels, APaytableWhoseLabelsKeyAlikeIsRefused) {
  const auto refused = load_paytable(
      paytable_text("T-1", fixed_row("FULL_HOUSE", "Big Hand") + fixed_row("FLUSH", "big-hand")),
      "t.textproto");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("label 'big-hand' keys like label 'Big Hand'"),
            std::string::npos)
      << refused.error().message;

  // A label that keys as another hand's name: a dealer keying FLUSH would mean two hands.
  const auto named = load_paytable(
      paytable_text("T-2", fixed_row("FULL_HOUSE", "Full House") + fixed_row("STRAIGHT", "Flush")),
      "t.textproto");
  ASSERT_FALSE(named.ok());
  EXPECT_NE(named.error().message.find("label 'Flush' of a STRAIGHT row keys like the hand FLUSH"),
            std::string::npos)
      << named.error().message;

  const auto empty =
      load_paytable(paytable_text("T-3", fixed_row("FULL_HOUSE", " - ")), "t.textproto");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("has nothing a dealer could key"), std::string::npos)
      << empty.error().message;

  EXPECT_TRUE(load_paytable(paytable_text("T-4", fixed_row("FULL_HOUSE", "Full House") +
                                                     fixed_row("FLUSH", "Any Flush")),
                            "t.textproto")
                  .ok());
}

LinkSettings plain_link(const std::string& id) {
  LinkSettings link;
  link.meters.id = LinkId(id);
  link.meters.base_wager = Money::from_micros(Money::kMicrosPerUnit);
  LevelConfig level;
  level.level = 1;
  level.name = Name("Royal Flush");
  level.seed = *Money::parse("1000.00");
  level.meter_rate_ppm = 10'000;
  link.meters.levels.push_back(level);
  return link;
}

TEST(KeyedLabels, ATableWhereOneLabelMeansTwoHandsIsRefused) {
  // Each paytable is fine alone; at one table "Big Hand" would be a full house on one link and
  // four of a kind on the other.
  std::vector<Paytable> paytables = shipped();
  for (const auto& [id, row] : {std::pair{"T-A", fixed_row("FULL_HOUSE", "Big Hand")},
                                std::pair{"T-B", fixed_row("FOUR_OF_A_KIND", "Big Hand")},
                                std::pair{"T-C", fixed_row("FULL_HOUSE", "BIG_HAND")}}) {
    auto loaded = load_paytable(paytable_text(id, row), "t.textproto");
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    paytables.push_back(std::move(loaded).value());
  }
  const auto table = [](const char* second) {
    TableSettings settings;
    settings.id = TableId("T");
    settings.game = GameRule::heads_up_holdem;
    settings.seats = 6;
    settings.links = {{LinkId("A"), "T-A", CommunitySource::board},
                      {LinkId("B"), second, CommunitySource::board}};
    return settings;
  };
  EngineConfig config;
  config.links = {plain_link("A"), plain_link("B")};
  config.tables = {table("T-B")};
  const auto problems = validate(config, paytables);
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_EQ(problems[0],
            "table 'T': label 'Big Hand' is FOUR_OF_A_KIND on paytable T-B but label 'Big Hand' is "
            "FULL_HOUSE on paytable T-A: a hand keyed at the table must mean one hand on all its "
            "paytables");
  config.tables = {table("T-C")};  // The same hand under both spellings: fine.
  EXPECT_TRUE(validate(config, paytables).empty());
}

// ---- Every row of every shipped paytable, keyed as printed ----------------------------------

class StillClock final : public Clock {
 public:
  std::int64_t now_us() override { return 1'767'225'600'000'000; }
};

// A floor with one link that fits the paytable (its PERCENT and Must-Hit-By levels) and one
// table that plays it with the cards its rule needs.
EngineConfig floor_for(const Paytable& paytable) {
  LinkSettings link;
  link.meters.id = LinkId("L");
  link.meters.base_wager = paytable.base_wager;
  std::uint32_t levels = 1;
  for (const PaytableRow& row : paytable.rows) levels = std::max(levels, row.level);
  for (std::uint32_t number = 1; number <= levels; ++number) {
    LevelConfig level;
    level.level = number;
    level.name = Name("Level " + std::to_string(number));
    level.seed = *Money::parse("1000.00");
    level.meter_rate_ppm = 10'000;
    for (const PaytableRow& row : paytable.rows) {
      if (row.kind == PayKind::must_hit_by && row.level == number) {
        level.seed = *Money::parse("10.00");
        level.meter_rate_ppm = 1'000;
        level.must_hit_by = row.amount;
      }
    }
    link.meters.levels.push_back(level);
  }
  TableSettings table;
  table.id = TableId("T");
  table.seats = 2;
  CommunitySource community = CommunitySource::board;
  switch (paytable.rule) {
    case GameRule::heads_up_holdem:
      table.game = GameRule::heads_up_holdem;
      break;
    case GameRule::five_card_linked:
      table.game = GameRule::heads_up_holdem;
      community = CommunitySource::flop;
      break;
    case GameRule::seven_card_linked:
      table.game = GameRule::heads_up_holdem;
      community = CommunitySource::link_cards;
      break;
    case GameRule::high_card_flush:
      table.game = GameRule::high_card_flush;
      community = CommunitySource::none;
      break;
    case GameRule::mississippi_stud:
      table.game = GameRule::mississippi_stud;
      break;
  }
  table.links = {{LinkId("L"), paytable.id.str(), community}};
  EngineConfig config;
  config.links = {link};
  config.tables = {table};
  return config;
}

std::string upper_snake(std::string text) {
  for (char& c : text) {
    c = c == ' ' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return text;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// tests/unit/paytable_files_test.cc holds every label to tests/data/paytables.json, the
// transcription of the printed paytables: these are the rows as printed.
TEST(KeyedHands, EveryRowOfEveryPaytableKeyedAsPrintedSettlesAsThatRow) {
  std::size_t settled = 0;
  std::size_t must_hit_by_refused = 0;
  std::size_t rows = 0;
  for (const Paytable& paytable : shipped()) {
    SCOPED_TRACE(paytable.id.str());
    const EngineConfig config = floor_for(paytable);
    const auto problems = validate(config, shipped());
    ASSERT_TRUE(problems.empty()) << problems.front();
    StillClock clock;
    SplitMix64 random(7);
    Records records;
    auto created = Engine::create(config, shipped(), clock, random, records);
    ASSERT_TRUE(created.ok());
    Engine& engine = **created;
    const std::int64_t wager_cents = paytable.base_wager.micros() / Money::kMicrosPerCent;
    std::uint64_t round = 0;
    for (const PaytableRow& row : paytable.rows) {
      ++rows;
      for (const std::string& keyed :
           {row.label.str(), lower(row.label.str()), upper_snake(row.label.str())}) {
        SCOPED_TRACE("keyed '" + keyed + "'");
        ++round;
        records.clear();
        ASSERT_TRUE(engine.open_round({TableId("T"), RoundId(round)}, records).ok());
        ASSERT_TRUE(
            engine
                .lock_wagers({TableId("T"), RoundId(round), {{1, LinkId("L"), wager_cents}}},
                             records)
                .ok());
        const SettleRoundRequest settle{TableId("T"), RoundId(round), {{1, {}, keyed}}, {}, {}};
        records.clear();
        auto answer = engine.settle_round(settle, records);
        if (row.hand == HandEvent::must_hit_by) {
          ASSERT_FALSE(answer.ok());
          EXPECT_EQ(answer.error().code, EngineError::keyed_hand_not_a_hand);
          EXPECT_NE(answer.error().message.find("is not a hand: a Must-Hit-By level is won by the "
                                                "draw at the lock"),
                    std::string::npos)
              << answer.error().message;
          EXPECT_TRUE(records.transfers.empty() && records.payouts.empty());
          ++must_hit_by_refused;
          ASSERT_TRUE(
              engine.void_round({TableId("T"), RoundId(round), "keyed Must-Hit-By"}, records).ok());
          continue;
        }
        ASSERT_TRUE(answer.ok()) << answer.error().message;
        ASSERT_EQ(answer->results.size(), 1U);
        EXPECT_EQ(answer->results[0].hand, row.label);
        EXPECT_TRUE(answer->results[0].dealer_keyed);
        ++settled;
      }
      EXPECT_EQ(engine.check_invariants(), std::nullopt);
    }
  }
  // 399 rows on the 61 paytables; the 4 Must-Hit-By rows are won by the draw, never keyed.
  EXPECT_EQ(rows, 399U);
  EXPECT_EQ(settled, 3 * 395U);
  EXPECT_EQ(must_hit_by_refused, 3 * 4U);
}

TEST(KeyedHands, AKeyedTextThatIsNoRowIsRefusedEchoingAShortPrefix) {
  const Paytable& paytable = shipped_paytable("PT-BJS-HUH-5CP-01");
  StillClock clock;
  SplitMix64 random(7);
  Records records;
  auto created = Engine::create(floor_for(paytable), shipped(), clock, random, records);
  ASSERT_TRUE(created.ok());
  Engine& engine = **created;
  ASSERT_TRUE(engine.open_round({TableId("T"), RoundId(1)}, records).ok());
  ASSERT_TRUE(
      engine.lock_wagers({TableId("T"), RoundId(1), {{1, LinkId("L"), 100}}}, records).ok());
  for (const std::string& keyed : {std::string("Full Houses"), std::string(""),
                                   std::string("3 of a Kind"), std::string(1000, 'x')}) {
    records.clear();
    auto answer =
        engine.settle_round({TableId("T"), RoundId(1), {{1, {}, keyed}}, {}, {}}, records);
    ASSERT_FALSE(answer.ok()) << keyed;
    EXPECT_EQ(answer.error().code, EngineError::keyed_hand_unknown);
    EXPECT_NE(answer.error().message.find("is no row of the table's paytables"), std::string::npos);
    EXPECT_LT(answer.error().message.size(), 200U) << answer.error().message;
    EXPECT_TRUE(records.transfers.empty() && records.hands.empty());
  }
}

}  // namespace
}  // namespace jackpot
