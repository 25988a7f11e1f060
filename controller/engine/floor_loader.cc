#include "controller/engine/floor_loader.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <map>
#include <optional>
#include <set>
#include <string>

#include "controller/hands/text_format_errors.h"
#include "controller/limits/request_limits.h"
#include "jackpot/config/v1/floor.pb.h"

namespace jackpot {
namespace {

namespace pb = ::jackpot::config::v1;
using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::TextFormat;

const FieldDescriptor* field_of(const Descriptor* descriptor, const char* name) {
  const FieldDescriptor* field = descriptor->FindFieldByName(name);
  JACKPOT_INVARIANT(field != nullptr, "floor.proto has no field named as the loader expects");
  return field;
}

std::string quoted(const std::string& text) { return "'" + text + "'"; }

// Where an entry (a link, level, table or table link) starts: "origin:line:column" and its line.
struct Entry {
  std::string where;
  int line = 1;
};

// Converts a parsed floor, collecting every problem with the position of what is wrong.
class FloorChecker {
 public:
  FloorChecker(std::string_view origin, const TextFormat::ParseInfoTree& tree,
               const std::vector<Paytable>& paytables)
      : origin_(origin), tree_(tree), paytables_(paytables) {
    for (const Paytable& paytable : paytables) paytable_ids_.insert(paytable.id);
  }

  Result<EngineConfig, std::vector<std::string>> check(const pb::Floor& proto) {
    EngineConfig config;
    const FieldDescriptor* links_field = field_of(pb::Floor::descriptor(), "links");
    for (int i = 0; i < proto.links_size(); ++i) {
      const Entry entry = entry_at(tree_.GetLocation(links_field, i));
      link_where_.push_back(entry.where);
      config.links.push_back(
          check_link(proto.links(i), tree_.GetTreeForNested(links_field, i), entry));
    }
    const FieldDescriptor* tables_field = field_of(pb::Floor::descriptor(), "tables");
    for (int i = 0; i < proto.tables_size(); ++i) {
      const Entry entry = entry_at(tree_.GetLocation(tables_field, i));
      table_where_.push_back(entry.where);
      config.tables.push_back(
          check_table(proto.tables(i), tree_.GetTreeForNested(tables_field, i), entry));
    }
    if (!errors_.empty()) return errors_;
    for (const std::string& message : validate(config, paytables_)) {
      errors_.push_back(where_named(config, message) + ": " + message);
    }
    if (!errors_.empty()) return errors_;
    return config;
  }

 private:
  std::string position(TextFormat::ParseLocation location) const {
    const int line = location.line < 0 ? 0 : location.line;
    const int column = location.column < 0 ? 0 : location.column;
    return std::string(origin_) + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1);
  }

  Entry entry_at(TextFormat::ParseLocation location) const {
    return {position(location), location.line < 0 ? 1 : location.line + 1};
  }

  // The index-th entry of a repeated message field of `tree`, or `outer` when it is unknown.
  Entry nested_entry(const TextFormat::ParseInfoTree* tree, const FieldDescriptor* field, int index,
                     const Entry& outer) const {
    if (tree == nullptr) return outer;
    const TextFormat::ParseLocation location = tree->GetLocation(field, index);
    return location.line < 0 ? outer : entry_at(location);
  }

  // The position of a field of an entry, or of the entry when the field is not in the text.
  std::string at(const TextFormat::ParseInfoTree* tree, const FieldDescriptor* field,
                 const Entry& entry) const {
    if (tree == nullptr) return entry.where;
    const TextFormat::ParseLocation location = tree->GetLocation(field, -1);
    return location.line < 0 ? entry.where : position(location);
  }

  void fail(const std::string& where, const std::string& what) {
    errors_.push_back(where + ": " + what);
  }

  // Parses an amount; a problem is reported as "<owner>: <field> '<text>': <why>".
  std::optional<Money> amount(const std::string& text, const std::string& owner,
                              const char* field_name, const std::string& where) {
    const auto parsed = Money::parse(text);
    if (!parsed) {
      fail(where, owner + ": " + field_name + " " + quoted(text) + ": " +
                      std::string(to_string(parsed.error())));
      return std::nullopt;
    }
    return *parsed;
  }

  // An optional amount: empty text is `empty`.
  std::optional<Money> optional_amount(const std::string& text, std::optional<Money> empty,
                                       const std::string& owner, const Descriptor* descriptor,
                                       const char* field_name,
                                       const TextFormat::ParseInfoTree* tree, const Entry& entry) {
    if (text.empty()) return empty;
    return amount(text, owner, field_name, at(tree, field_of(descriptor, field_name), entry));
  }

  LinkSettings check_link(const pb::Link& proto, const TextFormat::ParseInfoTree* tree,
                          const Entry& entry) {
    const Descriptor* descriptor = pb::Link::descriptor();
    LinkSettings link;
    const std::string owner = "link " + quoted(proto.id());
    if (proto.id().empty()) {
      fail(entry.where, "the link has no id");
    } else {
      const auto [it, fresh] = link_line_.emplace(proto.id(), entry.line);
      if (!fresh) {
        fail(at(tree, field_of(descriptor, "id"), entry),
             "duplicate link id " + quoted(proto.id()) + " (first at line " +
                 std::to_string(it->second) + ")");
      }
    }
    link.meters.id = LinkId(proto.id());
    if (!proto.base_wager().empty()) {
      if (const auto base = amount(proto.base_wager(), owner, "base_wager",
                                   at(tree, field_of(descriptor, "base_wager"), entry))) {
        link.meters.base_wager = *base;
      }
    }
    const FieldDescriptor* levels_field = field_of(descriptor, "levels");
    for (int i = 0; i < proto.levels_size(); ++i) {
      const Entry level_entry = nested_entry(tree, levels_field, i, entry);
      link.meters.levels.push_back(check_level(
          proto.levels(i), owner,
          tree == nullptr ? nullptr : tree->GetTreeForNested(levels_field, i), level_entry));
    }
    switch (proto.simultaneous_hits()) {
      case pb::SIMULTANEOUS_HITS_UNSPECIFIED:
      case pb::SIMULTANEOUS_HITS_SEQUENTIAL:
        link.simultaneous_hits = HitPolicy::sequential;
        break;
      case pb::SIMULTANEOUS_HITS_SPLIT:
        link.simultaneous_hits = HitPolicy::split;
        break;
      default:
        unknown(owner, "simultaneous_hits", proto.simultaneous_hits(),
                at(tree, field_of(descriptor, "simultaneous_hits"), entry));
    }
    switch (proto.suit_specific()) {
      case pb::SUIT_UNSPECIFIED:
      case pb::SUIT_SPADES:
        link.suit_specific = Suit::spades;
        break;
      case pb::SUIT_HEARTS:
        link.suit_specific = Suit::hearts;
        break;
      case pb::SUIT_DIAMONDS:
        link.suit_specific = Suit::diamonds;
        break;
      case pb::SUIT_CLUBS:
        link.suit_specific = Suit::clubs;
        break;
      default:
        unknown(owner, "suit_specific", proto.suit_specific(),
                at(tree, field_of(descriptor, "suit_specific"), entry));
    }
    link.dynamic_count_weights.assign(proto.dynamic_count_weights().begin(),
                                      proto.dynamic_count_weights().end());
    link.dynamic_option_weights.assign(proto.dynamic_option_weights().begin(),
                                       proto.dynamic_option_weights().end());
    link.must_hit_by_weighted_by_wager = proto.must_hit_by_weighted_by_wager();
    if (proto.max_wager_units() != 0) link.max_wager_units = proto.max_wager_units();
    if (const auto threshold = optional_amount(proto.approval_threshold(), Money(), owner,
                                               descriptor, "approval_threshold", tree, entry)) {
      link.approval_threshold = *threshold;
    }
    link.dual_approval_threshold =
        optional_amount(proto.dual_approval_threshold(), std::nullopt, owner, descriptor,
                        "dual_approval_threshold", tree, entry);
    return link;
  }

  LevelConfig check_level(const pb::Level& proto, const std::string& link_owner,
                          const TextFormat::ParseInfoTree* tree, const Entry& entry) {
    const Descriptor* descriptor = pb::Level::descriptor();
    LevelConfig level;
    level.level = proto.level();
    const std::string owner = link_owner + " level " + std::to_string(proto.level());
    level.name = proto.name();
    if (proto.seed().empty()) {
      fail(entry.where, owner + ": seed is missing");
    } else if (const auto seed = amount(proto.seed(), owner, "seed",
                                        at(tree, field_of(descriptor, "seed"), entry))) {
      level.seed = *seed;
    }
    level.meter_rate_ppm = proto.meter_rate_ppm();
    level.reserve_rate_ppm = proto.reserve_rate_ppm();
    level.ceiling =
        optional_amount(proto.ceiling(), std::nullopt, owner, descriptor, "ceiling", tree, entry);
    level.overflow_level = proto.overflow_level();
    level.must_hit_by = optional_amount(proto.must_hit_by(), std::nullopt, owner, descriptor,
                                        "must_hit_by", tree, entry);
    switch (proto.trigger()) {
      case pb::TRIGGER_UNSPECIFIED:
      case pb::TRIGGER_AT_AMOUNT:
        level.trigger = TriggerMode::at_amount;
        break;
      case pb::TRIGGER_HIDDEN_UNIFORM:
        level.trigger = TriggerMode::hidden_uniform;
        break;
      default:
        unknown(owner, "trigger", proto.trigger(),
                at(tree, field_of(descriptor, "trigger"), entry));
    }
    return level;
  }

  // An enum number the text gave as an integer that the enum does not define (proto3 keeps it).
  void unknown(const std::string& owner, const char* field_name, int value,
               const std::string& where) {
    fail(where, owner + ": " + field_name + " " + std::to_string(value) + " is not a known value");
  }

  TableSettings check_table(const pb::Table& proto, const TextFormat::ParseInfoTree* tree,
                            const Entry& entry) {
    const Descriptor* descriptor = pb::Table::descriptor();
    TableSettings table;
    const std::string owner = "table " + quoted(proto.id());
    if (proto.id().empty()) {
      fail(entry.where, "the table has no id");
    } else if (!is_principal_id(proto.id()) || proto.id().size() > kMaxTableIdBytes) {
      // Its certificate names it (table/<id> in the common name): another id could never play.
      fail(at(tree, field_of(descriptor, "id"), entry),
           "table id " + quoted(proto.id()) + " cannot be named by a client certificate: at most " +
               std::to_string(kMaxTableIdBytes) + " letters, digits, '.', '_' or '-'");
    } else {
      const auto [it, fresh] = table_line_.emplace(proto.id(), entry.line);
      if (!fresh) {
        fail(at(tree, field_of(descriptor, "id"), entry),
             "duplicate table id " + quoted(proto.id()) + " (first at line " +
                 std::to_string(it->second) + ")");
      }
    }
    table.id = TableId(proto.id());
    bool high_card_flush = false;
    switch (proto.game()) {
      case pb::TABLE_GAME_HEADS_UP_HOLDEM:
        table.game = GameRule::heads_up_holdem;
        break;
      case pb::TABLE_GAME_MISSISSIPPI_STUD:
        table.game = GameRule::mississippi_stud;
        break;
      case pb::TABLE_GAME_HIGH_CARD_FLUSH:
        table.game = GameRule::high_card_flush;
        high_card_flush = true;
        break;
      case pb::TABLE_GAME_UNSPECIFIED:
        fail(entry.where, owner + " has no game");
        break;
      default:
        unknown(owner, "game", proto.game(), at(tree, field_of(descriptor, "game"), entry));
    }
    table.seats = proto.seats();
    if (proto.seats() < 1 || proto.seats() > kMaxSeats) {
      fail(at(tree, field_of(descriptor, "seats"), entry),
           owner + ": seats must be 1.." + std::to_string(kMaxSeats) + ", not " +
               std::to_string(proto.seats()));
    }
    const FieldDescriptor* links_field = field_of(descriptor, "links");
    std::map<std::string, int> first_line;
    for (int i = 0; i < proto.links_size(); ++i) {
      const pb::TableLink& link = proto.links(i);
      const Entry link_entry = nested_entry(tree, links_field, i, entry);
      const TextFormat::ParseInfoTree* link_tree =
          tree == nullptr ? nullptr : tree->GetTreeForNested(links_field, i);
      table.links.push_back(
          check_table_link(link, owner, high_card_flush, link_tree, link_entry, first_line));
    }
    return table;
  }

  TableLinkSettings check_table_link(const pb::TableLink& proto, const std::string& owner,
                                     bool high_card_flush, const TextFormat::ParseInfoTree* tree,
                                     const Entry& entry, std::map<std::string, int>& first_line) {
    const Descriptor* descriptor = pb::TableLink::descriptor();
    TableLinkSettings link;
    link.link = LinkId(proto.link_id());
    link.paytable_id = proto.paytable_id();
    if (proto.link_id().empty()) {
      fail(entry.where, owner + ": a link entry has no link_id");
    } else if (link_line_.count(proto.link_id()) == 0) {
      fail(at(tree, field_of(descriptor, "link_id"), entry),
           owner + ": unknown link " + quoted(proto.link_id()));
    } else {
      const auto [it, fresh] = first_line.emplace(proto.link_id(), entry.line);
      if (!fresh) {
        fail(entry.where, owner + ": link " + quoted(proto.link_id()) +
                              " is listed twice (first at line " + std::to_string(it->second) +
                              ")");
      }
    }
    if (proto.paytable_id().empty()) {
      fail(entry.where, owner + ": link " + quoted(proto.link_id()) + " has no paytable_id");
    } else if (paytable_ids_.count(proto.paytable_id()) == 0) {
      fail(at(tree, field_of(descriptor, "paytable_id"), entry),
           owner + ": unknown paytable " + quoted(proto.paytable_id()));
    }
    switch (proto.community()) {
      case pb::COMMUNITY_UNSPECIFIED:
        link.community = high_card_flush ? CommunitySource::none : CommunitySource::board;
        break;
      case pb::COMMUNITY_BOARD:
        link.community = CommunitySource::board;
        break;
      case pb::COMMUNITY_FLOP:
        link.community = CommunitySource::flop;
        break;
      case pb::COMMUNITY_LINK_CARDS:
        link.community = CommunitySource::link_cards;
        break;
      case pb::COMMUNITY_NONE:
        link.community = CommunitySource::none;
        break;
      default:
        unknown(owner + ": link " + quoted(proto.link_id()), "community", proto.community(),
                at(tree, field_of(descriptor, "community"), entry));
    }
    return link;
  }

  // The position of the link or table a validate() message names ("link '<id>' ...",
  // "table '<id>' ..."); the start of the text when it names neither.
  std::string where_named(const EngineConfig& config, const std::string& message) const {
    std::string where = std::string(origin_) + ":1:1";
    std::size_t matched = 0;
    const auto consider = [&](const std::string& kind, const std::string& id,
                              const std::string& entry) {
      const std::string prefix = kind + " " + quoted(id);
      if (prefix.size() > matched && message.compare(0, prefix.size(), prefix) == 0) {
        matched = prefix.size();
        where = entry;
      }
    };
    for (std::size_t i = 0; i < config.links.size(); ++i) {
      consider("link", config.links[i].meters.id.value(), link_where_[i]);
    }
    for (std::size_t i = 0; i < config.tables.size(); ++i) {
      consider("table", config.tables[i].id.value(), table_where_[i]);
    }
    return where;
  }

  std::string_view origin_;
  const TextFormat::ParseInfoTree& tree_;
  const std::vector<Paytable>& paytables_;
  std::set<std::string> paytable_ids_;
  std::map<std::string, int> link_line_;   // Link id -> line of its first entry.
  std::map<std::string, int> table_line_;  // Table id -> line of its first entry.
  std::vector<std::string> link_where_;    // Position of each link entry, in file order.
  std::vector<std::string> table_where_;   // Position of each table entry, in file order.
  std::vector<std::string> errors_;
};

}  // namespace

Result<EngineConfig, std::vector<std::string>> load_floor(std::string_view text,
                                                          std::string_view origin,
                                                          const std::vector<Paytable>& paytables) {
  pb::Floor proto;
  TextFormat::ParseInfoTree tree;
  FirstTextFormatError errors;
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&tree);
  if (!parser.ParseFromString(std::string(text), &proto)) {
    return std::vector<std::string>{std::string(origin) + ":" + errors.message()};
  }
  FloorChecker checker(origin, tree, paytables);
  return checker.check(proto);
}

std::vector<std::string> unservable_floor(const EngineConfig& floor, std::string_view origin) {
  std::vector<std::string> problems;
  if (floor.links.empty()) {
    problems.push_back(std::string(origin) +
                       ": the floor has no link (is the file empty, or only comments?)");
  }
  if (floor.tables.empty()) {
    problems.push_back(std::string(origin) + ": the floor has no table");
  }
  return problems;
}

}  // namespace jackpot
