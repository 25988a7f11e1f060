// The shipped paytable files (controller/hands/paytables/*.textproto) against
// tests/data/paytables.json, the transcription of the regulations' progressive paytables: one file
// per JSON paytable, named from its id, equal field by field and row by row. The JSON is read
// through a proto3 mirror of its structure (jackpot.testing.JsonPaytables) that rejects unknown
// keys, so a renamed key fails here instead of silently reading as empty.

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jackpot/config/v1/paytable.pb.h"
#include "jackpot/testing/paytables_json.pb.h"

namespace jackpot {
namespace {

namespace fs = std::filesystem;
using config::v1::Hand;
using config::v1::Paytable;
using config::v1::Row;
using testing::JsonEntry;
using testing::JsonPaytable;
using testing::JsonPaytables;

constexpr char kPaytablesDir[] = JACKPOTD_SOURCE_DIR "/controller/hands/paytables";
constexpr char kJsonPath[] = JACKPOTD_SOURCE_DIR "/tests/data/paytables.json";
constexpr int kPaytableCount = 61;

// Printed hand name -> Hand, by meaning. Kept here, independent of any code that ships.
const std::map<std::string, Hand, std::less<>>& HandsByLabel() {
  static const auto* const kHands = new std::map<std::string, Hand, std::less<>>{
      {"Royal Flush", config::v1::ROYAL_FLUSH},
      {"Royal Flush (Suit Specific)", config::v1::ROYAL_FLUSH_SUIT_SPECIFIC},
      {"Flopped Royal Flush", config::v1::FLOPPED_ROYAL_FLUSH},
      {"Flopped Royal Flush (Suit Specific)", config::v1::FLOPPED_ROYAL_FLUSH_SUIT_SPECIFIC},
      {"Flopped Straight Flush", config::v1::FLOPPED_STRAIGHT_FLUSH},
      {"Community Royal Flush", config::v1::COMMUNITY_ROYAL_FLUSH},
      {"Straight Flush", config::v1::STRAIGHT_FLUSH},
      {"Four-of-a-Kind", config::v1::FOUR_OF_A_KIND},
      {"4 of a Kind", config::v1::FOUR_OF_A_KIND},
      {"Full House", config::v1::FULL_HOUSE},
      {"Flush", config::v1::FLUSH},
      {"Straight", config::v1::STRAIGHT},
      {"Three-of-a-Kind", config::v1::THREE_OF_A_KIND},
      {"3 of a Kind", config::v1::THREE_OF_A_KIND},
      {"Two Pair", config::v1::TWO_PAIR},
      {"5-Card Royal Flush", config::v1::FIVE_CARD_ROYAL_FLUSH},
      {"5-Card Straight Flush", config::v1::STRAIGHT_FLUSH_RUN_5},
      {"4-Card Straight Flush", config::v1::STRAIGHT_FLUSH_RUN_4},
      {"5-Card Flush", config::v1::FLUSH_5},
      {"4-Card Flush", config::v1::FLUSH_4},
      {"7-Card Straignt Flush or 9TJQKA Suited", config::v1::STRAIGHT_FLUSH_RUN_7_OR_9TJQKA},
      {"7-Card Straight Flush", config::v1::STRAIGHT_FLUSH_RUN_7},
      {"6-Card Straight Flush or A23456-89TJQK Suited", config::v1::STRAIGHT_FLUSH_RUN_6},
      {"6-Card Straight Flush", config::v1::STRAIGHT_FLUSH_RUN_6},
      {"3-Card Straight Flush", config::v1::STRAIGHT_FLUSH_RUN_3},
      {"1-Card or 2-Card Straight Flush", config::v1::STRAIGHT_FLUSH_RUN_1},
      {"1 Card or 2-Card Straight Flush", config::v1::STRAIGHT_FLUSH_RUN_1},
      {"Must-Hit-By", config::v1::MUST_HIT_BY},
  };
  return *kHands;
}

// The id in lower case, every run of characters outside [a-z0-9] replaced by '-', + ".textproto".
std::string FileNameForId(std::string_view id) {
  std::string name;
  bool in_run = false;
  for (char c : id) {
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if ((lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9')) {
      name += lower;
      in_run = false;
    } else if (!in_run) {
      name += '-';
      in_run = true;
    }
  }
  return name + ".textproto";
}

std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

bool ReadFile(const fs::path& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream contents;
  contents << in.rdbuf();
  *text = contents.str();
  return true;
}

// Parses the JSON text (a top-level array of paytables) into the mirror; empty on success, else
// the parser's message.
std::string ParseJson(const std::string& array_text, JsonPaytables* out) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status = google::protobuf::util::JsonStringToMessage(
      "{\"paytables\": " + array_text + "}", out, options);
  return status.ok() ? std::string() : status.ToString();
}

class LineErrors : public google::protobuf::io::ErrorCollector {
 public:
  explicit LineErrors(std::string file) : file_(std::move(file)) {}
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    errors_.push_back(file_ + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) +
                      ": " + message);
  }
  void AddWarning(int line, google::protobuf::io::ColumnNumber column,
                  const std::string& message) override {
    AddError(line, column, "warning: " + message);
  }
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  std::string file_;
  std::vector<std::string> errors_;
};

struct ShippedFile {
  std::string name;
  Paytable paytable;
};

// Every *.textproto in the paytables directory, sorted by name. Read and parse errors go to
// *errors as "file:line:column: message".
std::vector<ShippedFile> LoadShippedFiles(std::vector<std::string>* errors) {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(kPaytablesDir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".textproto") {
      paths.push_back(entry.path());
    }
  }
  std::sort(paths.begin(), paths.end());
  std::vector<ShippedFile> files;
  for (const auto& path : paths) {
    std::string text;
    if (!ReadFile(path, &text)) {
      errors->push_back(path.string() + ": cannot read");
      continue;
    }
    ShippedFile file;
    file.name = path.filename().string();
    LineErrors collector(path.string());
    google::protobuf::TextFormat::Parser parser;
    parser.RecordErrorsTo(&collector);
    const bool parsed = parser.ParseFromString(text, &file.paytable);
    errors->insert(errors->end(), collector.errors().begin(), collector.errors().end());
    if (!parsed) {
      if (collector.errors().empty()) errors->push_back(path.string() + ": does not parse");
      continue;
    }
    files.push_back(std::move(file));
  }
  return files;
}

JsonPaytables LoadJson(std::string* error) {
  JsonPaytables json;
  std::string text;
  if (!ReadFile(kJsonPath, &text)) {
    *error = std::string(kJsonPath) + ": cannot read";
    return json;
  }
  *error = ParseJson(text, &json);
  return json;
}

// Compares one JSON row with one file row; appends differences prefixed with `where`.
void CompareRow(const std::string& where, const JsonEntry& entry, const Row& row,
                std::vector<std::string>* diffs) {
  const auto add = [&](const std::string& what) { diffs->push_back(where + ": " + what); };
  if (row.label() != entry.hand()) {
    add("label " + Quoted(row.label()) + " in the file, hand " + Quoted(entry.hand()) +
        " in the JSON");
  }
  const auto hand = HandsByLabel().find(entry.hand());
  if (hand == HandsByLabel().end()) {
    add("JSON hand " + Quoted(entry.hand()) + " has no entry in the test's hand table");
  } else if (row.hand() != hand->second) {
    add("hand " + config::v1::Hand_Name(row.hand()) + " in the file, " +
        config::v1::Hand_Name(hand->second) + " expected for " + Quoted(entry.hand()));
  }

  const auto& pay = entry.pay();
  const std::string& kind = pay.kind();
  const bool has_options = entry.dynamic_options_size() > 0;
  // The JSON carries only the keys its kind uses (so nothing it says is left out of the file).
  const bool wants_percent = kind == "PERCENT" || kind == "MUST_HIT_BY";
  if (pay.has_percent() != wants_percent || pay.has_level() != wants_percent ||
      pay.has_amount() != (kind == "FIXED") || pay.has_ceiling() != (kind == "MUST_HIT_BY")) {
    add("JSON pay of kind " + kind + " has unexpected or missing keys");
  }
  if (has_options && kind != "FIXED") add("JSON dynamic_options on a " + kind + " pay");

  if (kind == "PERCENT") {
    if (!row.has_percent()) {
      add("pay is not percent in the file (JSON PERCENT)");
    } else {
      if (row.percent().percent() != pay.percent()) {
        add("percent " + std::to_string(row.percent().percent()) + " in the file, " +
            std::to_string(pay.percent()) + " in the JSON");
      }
      if (row.percent().level() != pay.level()) {
        add("percent level " + std::to_string(row.percent().level()) + " in the file, " +
            std::to_string(pay.level()) + " in the JSON");
      }
    }
  } else if (kind == "FIXED" && !has_options) {
    if (!row.has_fixed()) {
      add("pay is not fixed in the file (JSON FIXED without dynamic_options)");
    } else if (row.fixed().amount() != pay.amount()) {
      add("fixed amount " + Quoted(row.fixed().amount()) + " in the file, " + Quoted(pay.amount()) +
          " in the JSON");
    }
  } else if (kind == "FIXED") {
    if (!row.has_dynamic()) {
      add("pay is not dynamic in the file (JSON FIXED with dynamic_options)");
    } else {
      const auto& dynamic = row.dynamic();
      if (dynamic.default_amount() != pay.amount()) {
        add("dynamic default_amount " + Quoted(dynamic.default_amount()) + " in the file, " +
            Quoted(pay.amount()) + " in the JSON");
      }
      if (dynamic.options_size() != entry.dynamic_options_size()) {
        add(std::to_string(dynamic.options_size()) + " dynamic options in the file, " +
            std::to_string(entry.dynamic_options_size()) + " in the JSON");
      }
      const int common = std::min(dynamic.options_size(), entry.dynamic_options_size());
      for (int i = 0; i < common; ++i) {
        if (dynamic.options(i) != entry.dynamic_options(i)) {
          add("dynamic option " + std::to_string(i) + " " + Quoted(dynamic.options(i)) +
              " in the file, " + Quoted(entry.dynamic_options(i)) + " in the JSON");
        }
      }
    }
  } else if (kind == "MUST_HIT_BY") {
    // MustHitBy has no percent: the level is always paid in full (100%).
    if (pay.percent() != 100) {
      add("JSON Must-Hit-By percent " + std::to_string(pay.percent()) +
          " cannot be expressed (the file's must_hit_by always pays 100%)");
    }
    if (!row.has_must_hit_by()) {
      add("pay is not must_hit_by in the file (JSON MUST_HIT_BY)");
    } else {
      if (row.must_hit_by().amount() != pay.ceiling()) {
        add("must_hit_by amount " + Quoted(row.must_hit_by().amount()) + " in the file, ceiling " +
            Quoted(pay.ceiling()) + " in the JSON");
      }
      if (row.must_hit_by().level() != pay.level()) {
        add("must_hit_by level " + std::to_string(row.must_hit_by().level()) + " in the file, " +
            std::to_string(pay.level()) + " in the JSON");
      }
    }
  } else if (kind == "LOSS") {
    if (!row.has_loss()) add("pay is not loss in the file (JSON LOSS)");
  } else {
    add("unknown JSON pay kind " + Quoted(kind));
  }

  if (entry.has_envy()) {
    if (row.envy() != entry.envy()) {
      add("envy " + Quoted(row.envy()) + " in the file, " + Quoted(entry.envy()) + " in the JSON");
    }
  } else if (!row.envy().empty()) {
    add("envy " + Quoted(row.envy()) + " in the file, none (null) in the JSON");
  }
}

// Every difference between a JSON paytable and a shipped one; empty when they agree.
std::vector<std::string> ComparePaytable(const JsonPaytable& json, const Paytable& file) {
  std::vector<std::string> diffs;
  const std::string where = json.id();
  const auto add = [&](const std::string& what) { diffs.push_back(where + ": " + what); };
  const auto compare = [&](const char* field, const std::string& in_file,
                           const std::string& in_json) {
    if (in_file != in_json) {
      add(std::string(field) + " " + Quoted(in_file) + " in the file, " + Quoted(in_json) +
          " in the JSON");
    }
  };
  compare("id", file.id(), json.id());
  compare("game", config::v1::Game_Name(file.game()), json.game());
  compare("base_wager", file.base_wager(), json.base_wager());
  compare("source", file.source(), json.source());

  if (json.has_dynamic()) {
    if (!file.has_dynamic_selection()) {
      add("no dynamic_selection in the file; the JSON has dynamic");
    } else {
      const auto& selection = file.dynamic_selection();
      if (selection.min_selected() != json.dynamic().min_selected() ||
          selection.max_selected() != json.dynamic().max_selected()) {
        add("dynamic_selection " + std::to_string(selection.min_selected()) + ".." +
            std::to_string(selection.max_selected()) + " in the file, " +
            std::to_string(json.dynamic().min_selected()) + ".." +
            std::to_string(json.dynamic().max_selected()) + " in the JSON");
      }
    }
    // from_hands is implied by the file's dynamic rows.
    std::vector<std::string> dynamic_labels;
    for (const auto& row : file.rows()) {
      if (row.has_dynamic()) dynamic_labels.push_back(row.label());
    }
    const std::vector<std::string> from_hands(json.dynamic().from_hands().begin(),
                                              json.dynamic().from_hands().end());
    if (dynamic_labels != from_hands) {
      std::string labels;
      for (const auto& label : dynamic_labels) labels += (labels.empty() ? "" : ", ") + label;
      add("the file's dynamic rows (" + labels + ") are not the JSON's dynamic.from_hands");
    }
  } else if (file.has_dynamic_selection()) {
    add("dynamic_selection in the file; the JSON's dynamic is null");
  }

  if (file.rows_size() != json.entries_size()) {
    add(std::to_string(file.rows_size()) + " rows in the file, " +
        std::to_string(json.entries_size()) + " entries in the JSON");
  }
  const int common = std::min(file.rows_size(), json.entries_size());
  for (int i = 0; i < common; ++i) {
    CompareRow(where + " row " + std::to_string(i) + " (" + json.entries(i).hand() + ")",
               json.entries(i), file.rows(i), &diffs);
  }
  return diffs;
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += "  " + line + "\n";
  return text;
}

class PaytableFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string json_error;
    json_ = LoadJson(&json_error);
    ASSERT_EQ(json_error, "") << kJsonPath;
    // A file that does not parse is missing from files_; EveryFileParses reports why.
    files_ = LoadShippedFiles(&parse_errors_);
  }

  // The parsed file for a JSON id, or nullptr.
  const ShippedFile* FileFor(std::string_view id) const {
    const std::string name = FileNameForId(id);
    for (const auto& file : files_) {
      if (file.name == name) return &file;
    }
    return nullptr;
  }

  const JsonPaytable* JsonFor(std::string_view id) const {
    for (const auto& paytable : json_.paytables()) {
      if (paytable.id() == id) return &paytable;
    }
    return nullptr;
  }

  JsonPaytables json_;
  std::vector<ShippedFile> files_;
  std::vector<std::string> parse_errors_;
};

TEST(PaytableFileNames, AreTheLowerCaseIdWithRunsOfOtherCharactersAsHyphens) {
  EXPECT_EQ(FileNameForId("PT-BJS-HUH-5CP-01"), "pt-bjs-huh-5cp-01.textproto");
  EXPECT_EQ(FileNameForId("MS Stud-01"), "ms-stud-01.textproto");
  EXPECT_EQ(FileNameForId("HCF-PROG-PAYTABLE-1"), "hcf-prog-paytable-1.textproto");
  EXPECT_EQ(FileNameForId("A -- b_(c)"), "a-b-c-.textproto");
}

TEST_F(PaytableFilesTest, JsonHasTheSixtyOnePaytablesWithUniqueIds) {
  EXPECT_EQ(json_.paytables_size(), kPaytableCount);
  std::set<std::string> ids;
  std::set<std::string> names;
  for (const auto& paytable : json_.paytables()) {
    EXPECT_FALSE(paytable.id().empty());
    EXPECT_TRUE(ids.insert(paytable.id()).second) << "duplicate id " << paytable.id();
    EXPECT_TRUE(names.insert(FileNameForId(paytable.id())).second)
        << "two ids give the file name " << FileNameForId(paytable.id());
  }
}

TEST_F(PaytableFilesTest, EveryFileParses) {
  EXPECT_TRUE(parse_errors_.empty()) << Joined(parse_errors_);
}

TEST_F(PaytableFilesTest, ThereIsExactlyOneFilePerJsonPaytableNamedFromItsId) {
  EXPECT_EQ(static_cast<int>(files_.size()), kPaytableCount);
  std::set<std::string> expected;
  for (const auto& paytable : json_.paytables()) expected.insert(FileNameForId(paytable.id()));
  std::set<std::string> ids;
  for (const auto& file : files_) {
    EXPECT_EQ(expected.count(file.name), 1u) << file.name << " matches no JSON paytable";
    EXPECT_EQ(file.name, FileNameForId(file.paytable.id()))
        << file.name << " holds id " << file.paytable.id();
    EXPECT_TRUE(ids.insert(file.paytable.id()).second)
        << "id " << file.paytable.id() << " is in more than one file";
  }
  for (const auto& paytable : json_.paytables()) {
    EXPECT_NE(FileFor(paytable.id()), nullptr)
        << "no file " << FileNameForId(paytable.id()) << " for " << paytable.id();
  }
}

TEST_F(PaytableFilesTest, EveryFileMatchesItsJsonPaytableRowByRow) {
  ASSERT_EQ(json_.paytables_size(), kPaytableCount);
  int rows = 0;
  for (const auto& paytable : json_.paytables()) {
    const ShippedFile* file = FileFor(paytable.id());
    if (file == nullptr) {
      ADD_FAILURE() << "no parsed file for " << paytable.id();
      continue;
    }
    const auto diffs = ComparePaytable(paytable, file->paytable);
    EXPECT_TRUE(diffs.empty()) << file->name << ":\n" << Joined(diffs);
    rows += paytable.entries_size();
  }
  // Every row the JSON holds was compared (a sanity bound on the transcription's size).
  EXPECT_GT(rows, 300);
}

TEST_F(PaytableFilesTest, EveryJsonHandIsInTheHandTable) {
  for (const auto& paytable : json_.paytables()) {
    for (const auto& entry : paytable.entries()) {
      EXPECT_EQ(HandsByLabel().count(entry.hand()), 1u)
          << paytable.id() << ": " << Quoted(entry.hand());
    }
  }
}

// Negative tests: the comparison really sees a change.

bool AnyMentions(const std::vector<std::string>& diffs, std::string_view needle) {
  return std::any_of(diffs.begin(), diffs.end(), [&](const std::string& diff) {
    return diff.find(needle) != std::string::npos;
  });
}

TEST_F(PaytableFilesTest, ComparisonReportsAChangedFixedAmount) {
  const JsonPaytable* json = JsonFor("PT-BJS-HUH-5CP-01");
  const ShippedFile* file = FileFor("PT-BJS-HUH-5CP-01");
  ASSERT_NE(json, nullptr);
  ASSERT_NE(file, nullptr);
  ASSERT_TRUE(ComparePaytable(*json, file->paytable).empty());

  Paytable changed = file->paytable;
  int fixed_row = -1;
  for (int i = 0; i < changed.rows_size() && fixed_row < 0; ++i) {
    if (changed.rows(i).has_fixed()) fixed_row = i;
  }
  ASSERT_GE(fixed_row, 0);
  changed.mutable_rows(fixed_row)->mutable_fixed()->set_amount("199.99");
  const auto diffs = ComparePaytable(*json, changed);
  EXPECT_EQ(diffs.size(), 1u) << Joined(diffs);
  EXPECT_TRUE(AnyMentions(diffs, "PT-BJS-HUH-5CP-01 row " + std::to_string(fixed_row)))
      << Joined(diffs);
  EXPECT_TRUE(AnyMentions(diffs, "199.99")) << Joined(diffs);
}

TEST_F(PaytableFilesTest, ComparisonReportsADroppedRow) {
  const JsonPaytable* json = JsonFor("PT-BJS-HUH-5CP-01");
  const ShippedFile* file = FileFor("PT-BJS-HUH-5CP-01");
  ASSERT_NE(json, nullptr);
  ASSERT_NE(file, nullptr);

  Paytable last_dropped = file->paytable;
  last_dropped.mutable_rows()->RemoveLast();
  EXPECT_TRUE(AnyMentions(ComparePaytable(*json, last_dropped), "rows in the file"));

  // Dropping a middle row also shifts every row below it.
  Paytable middle_dropped = file->paytable;
  middle_dropped.mutable_rows()->DeleteSubrange(2, 1);
  const auto diffs = ComparePaytable(*json, middle_dropped);
  EXPECT_TRUE(AnyMentions(diffs, "rows in the file")) << Joined(diffs);
  EXPECT_TRUE(AnyMentions(diffs, "PT-BJS-HUH-5CP-01 row 2")) << Joined(diffs);
}

TEST_F(PaytableFilesTest, ComparisonReportsAChangedDynamicOption) {
  const JsonPaytable* json = JsonFor("PT-PRG-HUH-D03");
  const ShippedFile* file = FileFor("PT-PRG-HUH-D03");
  ASSERT_NE(json, nullptr);
  ASSERT_NE(file, nullptr);
  ASSERT_TRUE(ComparePaytable(*json, file->paytable).empty());

  int dynamic_row = -1;
  for (int i = 0; i < file->paytable.rows_size() && dynamic_row < 0; ++i) {
    if (file->paytable.rows(i).has_dynamic()) dynamic_row = i;
  }
  ASSERT_GE(dynamic_row, 0);
  const std::string row_prefix = "PT-PRG-HUH-D03 row " + std::to_string(dynamic_row);

  Paytable changed = file->paytable;
  changed.mutable_rows(dynamic_row)->mutable_dynamic()->set_options(9, "1.00");
  auto diffs = ComparePaytable(*json, changed);
  EXPECT_EQ(diffs.size(), 1u) << Joined(diffs);
  EXPECT_TRUE(AnyMentions(diffs, row_prefix)) << Joined(diffs);
  EXPECT_TRUE(AnyMentions(diffs, "dynamic option 9")) << Joined(diffs);

  Paytable dropped_option = file->paytable;
  dropped_option.mutable_rows(dynamic_row)->mutable_dynamic()->mutable_options()->RemoveLast();
  diffs = ComparePaytable(*json, dropped_option);
  EXPECT_TRUE(AnyMentions(diffs, "9 dynamic options in the file")) << Joined(diffs);
}

TEST_F(PaytableFilesTest, ComparisonReportsOtherSingleFieldChanges) {
  const JsonPaytable* json = JsonFor("PT-PRG-HUH-MLP-01");
  const ShippedFile* file = FileFor("PT-PRG-HUH-MLP-01");
  ASSERT_NE(json, nullptr);
  ASSERT_NE(file, nullptr);
  ASSERT_TRUE(ComparePaytable(*json, file->paytable).empty());

  const std::vector<std::pair<const char*, std::function<void(Paytable*)>>> changes = {
      {"base_wager", [](Paytable* p) { p->set_base_wager("5.00"); }},
      {"game", [](Paytable* p) { p->set_game(config::v1::HUH_DYNAMIC); }},
      {"dynamic_selection", [](Paytable* p) { p->mutable_dynamic_selection(); }},
      {"hand", [](Paytable* p) { p->mutable_rows(0)->set_hand(config::v1::ROYAL_FLUSH); }},
      {"label", [](Paytable* p) { p->mutable_rows(0)->set_label("Royal Flush"); }},
      {"percent level", [](Paytable* p) { p->mutable_rows(1)->mutable_percent()->set_level(1); }},
      {"envy", [](Paytable* p) { p->mutable_rows(1)->set_envy("1.00"); }},
      {"must_hit_by level",
       [](Paytable* p) { p->mutable_rows(2)->mutable_must_hit_by()->set_level(2); }},
      {"must_hit_by amount",
       [](Paytable* p) { p->mutable_rows(2)->mutable_must_hit_by()->set_amount("500.00"); }},
      {"pay is not percent", [](Paytable* p) { p->mutable_rows(3)->mutable_loss(); }},
  };
  for (const auto& [what, change] : changes) {
    Paytable changed = file->paytable;
    change(&changed);
    const auto diffs = ComparePaytable(*json, changed);
    EXPECT_TRUE(AnyMentions(diffs, what)) << what << ":\n" << Joined(diffs);
  }
}

TEST(PaytablesJson, ARenamedKeyFailsToParse) {
  JsonPaytables json;
  const std::string good =
      R"([{"id": "X", "entries": [{"hand": "Flush", "pay": {"kind": "FIXED", "amount": "5.00"},)"
      R"( "envy": null, "dynamic_options": null}], "dynamic": null}])";
  EXPECT_EQ(ParseJson(good, &json), "");
  EXPECT_FALSE(json.paytables(0).entries(0).has_envy());

  std::string renamed = good;
  renamed.replace(renamed.find("\"amount\""), 8, "\"amonut\"");
  EXPECT_NE(ParseJson(renamed, &json), "");
}

}  // namespace
}  // namespace jackpot
