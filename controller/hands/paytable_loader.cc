#include "controller/hands/paytable_loader.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <map>
#include <set>

#include "controller/hands/text_format_errors.h"
#include "jackpot/config/v1/paytable.pb.h"

namespace jackpot {
namespace {

namespace pb = ::jackpot::config::v1;
using google::protobuf::FieldDescriptor;
using google::protobuf::TextFormat;

std::optional<GameRule> rule_of(pb::Game game) {
  switch (game) {
    case pb::HUH_PROGRESSIVE:
    case pb::HUH_DYNAMIC:
      return GameRule::heads_up_holdem;
    case pb::FIVE_CARD_LINKED:
      return GameRule::five_card_linked;
    case pb::SEVEN_CARD_LINKED:
      return GameRule::seven_card_linked;
    case pb::HCF_PROGRESSIVE:
      return GameRule::high_card_flush;
    case pb::MS_PROGRESSIVE:
      return GameRule::mississippi_stud;
    default:
      return std::nullopt;
  }
}

// Validates a parsed paytable, naming the position of what is wrong.
class Checker {
 public:
  Checker(std::string_view origin, const TextFormat::ParseInfoTree& tree)
      : origin_(origin), tree_(tree) {}

  Result<Paytable, PaytableError> check(const pb::Paytable& proto) {
    Paytable paytable;
    const auto* descriptor = pb::Paytable::descriptor();
    if (proto.id().empty()) return fail(top(nullptr), "the paytable has no id");
    paytable.id = Name(proto.id());
    const auto rule = rule_of(proto.game());
    if (!rule) return fail(top(descriptor->FindFieldByName("game")), "the paytable has no game");
    paytable.rule = *rule;
    paytable.game = pb::Game_Name(proto.game());
    paytable.source = proto.source();
    const auto base = Money::parse(proto.base_wager());
    if (!base || base->micros() <= 0 || !base->is_whole_cents()) {
      return fail(top(descriptor->FindFieldByName("base_wager")),
                  "base_wager '" + proto.base_wager() + "' must be a positive amount in cents");
    }
    paytable.base_wager = *base;
    if (proto.rows().empty()) return fail(top(nullptr), "the paytable has no rows");
    const FieldDescriptor* rows_field = descriptor->FindFieldByName("rows");
    for (int i = 0; i < proto.rows_size(); ++i) {
      auto row = check_row(proto.rows(i), paytable.rule, tree_.GetTreeForNested(rows_field, i),
                           position(tree_.GetLocation(rows_field, i)));
      if (!row) return row.error();
      paytable.rows.push_back(std::move(row).value());
    }
    if (auto error = check_rows_together(paytable, proto, rows_field)) return *error;
    if (auto error = check_dynamic_selection(paytable, proto)) return *error;
    paytable.facts_needed = facts_needed_by(paytable.rows);
    paytable.reaching = categories_reaching(paytable.rows);
    return paytable;
  }

 private:
  std::string position(TextFormat::ParseLocation location) const {
    const int line = location.line < 0 ? 0 : location.line;
    const int column = location.column < 0 ? 0 : location.column;
    return std::string(origin_) + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1);
  }
  std::string top(const FieldDescriptor* field) const {
    return field == nullptr ? std::string(origin_) + ":1:1"
                            : position(tree_.GetLocation(field, -1));
  }
  static PaytableError fail(const std::string& where, const std::string& what) {
    return PaytableError{where + ": " + what};
  }

  static std::optional<std::string> amount_problem(const std::string& text, Money& amount) {
    const auto parsed = Money::parse(text);
    if (!parsed) return "amount '" + text + "' is " + std::string(to_string(parsed.error()));
    if (parsed->micros() < 0 || !parsed->is_whole_cents()) {
      return "amount '" + text + "' must be a whole number of cents >= 0";
    }
    amount = *parsed;
    return std::nullopt;
  }

  Result<PaytableRow, PaytableError> check_row(const pb::Row& proto, GameRule rule,
                                               const TextFormat::ParseInfoTree* row_tree,
                                               const std::string& where) {
    PaytableRow row;
    const auto event = hand_event_named(pb::Hand_Name(proto.hand()));
    if (proto.hand() == pb::HAND_UNSPECIFIED || !event) {
      return fail(where, "the row has no hand");
    }
    row.hand = *event;
    const std::string hand = pb::Hand_Name(proto.hand());
    if (!game_can_make(rule, row.hand)) {
      return fail(where, hand + " cannot happen in " + std::string(to_string(rule)));
    }
    if (proto.label().empty()) return fail(where, hand + " has no label");
    row.label = Name(proto.label());
    if (!proto.envy().empty()) {
      Money envy;
      if (auto problem = amount_problem(proto.envy(), envy)) return fail(where, "envy " + *problem);
      row.envy = envy;
    }
    std::string pay_where = where;
    if (row_tree != nullptr && proto.pay_case() != pb::Row::PAY_NOT_SET) {
      const auto* field = pb::Row::descriptor()->FindFieldByNumber(proto.pay_case());
      pay_where = position(row_tree->GetLocation(field, -1));
    }
    if (auto problem = check_pay(proto, row)) return fail(pay_where, hand + ": " + *problem);
    if ((row.hand == HandEvent::must_hit_by) != (row.kind == PayKind::must_hit_by)) {
      return fail(pay_where, hand + ": only the MUST_HIT_BY row pays must_hit_by");
    }
    return row;
  }

  static std::optional<std::string> check_pay(const pb::Row& proto, PaytableRow& row) {
    switch (proto.pay_case()) {
      case pb::Row::kPercent:
        row.kind = PayKind::percent;
        row.percent = proto.percent().percent();
        row.level = proto.percent().level();
        if (row.level == 0) return "percent without a level";
        if (row.percent < 1 || row.percent > 100) return "percent must be 1..100";
        return std::nullopt;
      case pb::Row::kFixed:
        row.kind = PayKind::fixed;
        return amount_problem(proto.fixed().amount(), row.amount);
      case pb::Row::kDynamic: {
        row.kind = PayKind::dynamic;
        if (auto problem = amount_problem(proto.dynamic().default_amount(), row.amount)) {
          return "default " + *problem;
        }
        if (proto.dynamic().options_size() != 10) {
          return "a dynamic row needs ten options, has " +
                 std::to_string(proto.dynamic().options_size());
        }
        for (int i = 0; i < 10; ++i) {
          if (auto problem = amount_problem(proto.dynamic().options(i),
                                            row.options[static_cast<std::size_t>(i)])) {
            return "option " + std::to_string(i + 1) + " " + *problem;
          }
        }
        return std::nullopt;
      }
      case pb::Row::kMustHitBy:
        row.kind = PayKind::must_hit_by;
        row.level = proto.must_hit_by().level();
        if (row.level == 0) return "must_hit_by without a level";
        if (auto problem = amount_problem(proto.must_hit_by().amount(), row.amount)) return problem;
        if (row.amount.micros() == 0) return "the Must-Hit-By amount must be above zero";
        return std::nullopt;
      case pb::Row::kLoss:
        row.kind = PayKind::loss;
        return std::nullopt;
      case pb::Row::PAY_NOT_SET:
        break;
    }
    return "the row says nothing about what it pays";
  }

  std::optional<PaytableError> check_rows_together(Paytable& paytable, const pb::Paytable& proto,
                                                   const FieldDescriptor* rows_field) {
    std::map<HandEvent, int> first_row;
    std::map<std::string, int> first_label;  // By hand_key(): a keyed hand names one row.
    std::set<std::uint32_t> percent_levels;
    std::set<std::uint32_t> must_hit_by_levels;
    for (int i = 0; i < proto.rows_size(); ++i) {
      const PaytableRow& row = paytable.rows[static_cast<std::size_t>(i)];
      const std::string where = position(tree_.GetLocation(rows_field, i));
      const auto [it, fresh] = first_row.emplace(row.hand, i);
      if (!fresh) {
        return fail(where,
                    "duplicate row for " + std::string(to_string(row.hand)) + " (first at line " +
                        std::to_string(tree_.GetLocation(rows_field, it->second).line + 1) + ")");
      }
      if (auto problem = label_key_problem(row)) return fail(where, *problem);
      const auto [same_key, fresh_key] = first_label.emplace(hand_key(row.label.view()), i);
      if (!fresh_key) {
        return fail(where,
                    "label '" + row.label.str() + "' keys like label '" +
                        paytable.rows[static_cast<std::size_t>(same_key->second)].label.str() +
                        "' (first at line " +
                        std::to_string(tree_.GetLocation(rows_field, same_key->second).line + 1) +
                        "): a dealer keying it could mean either row");
      }
      if (row.kind == PayKind::percent) percent_levels.insert(row.level);
      if (row.kind == PayKind::must_hit_by) {
        if (percent_levels.count(row.level) != 0 || !must_hit_by_levels.insert(row.level).second) {
          return fail(where, "level " + std::to_string(row.level) +
                                 " of a Must-Hit-By row must be its own meter");
        }
      } else if (row.kind == PayKind::percent && must_hit_by_levels.count(row.level) != 0) {
        return fail(where, "level " + std::to_string(row.level) + " is a Must-Hit-By level");
      }
      if (row.hand == HandEvent::community_royal_flush) paytable.lists_community_royal = true;
    }
    return std::nullopt;
  }

  // A label is keyed by its hand_key() (controller/hands/paytable.h): it must key something, and
  // not the name of another hand event, which a dealer may key too.
  static std::optional<std::string> label_key_problem(const PaytableRow& row) {
    if (hand_key(row.label.view()).empty()) {
      return "label '" + row.label.str() + "' has nothing a dealer could key";
    }
    const auto named = hand_event_keyed(row.label.view());
    if (named && *named != row.hand) {
      return "label '" + row.label.str() + "' of a " + std::string(to_string(row.hand)) +
             " row keys like the hand " + std::string(to_string(*named));
    }
    return std::nullopt;
  }

  std::optional<PaytableError> check_dynamic_selection(Paytable& paytable,
                                                       const pb::Paytable& proto) {
    std::uint32_t dynamic_rows = 0;
    for (const PaytableRow& row : paytable.rows) dynamic_rows += row.kind == PayKind::dynamic;
    const auto* field = pb::Paytable::descriptor()->FindFieldByName("dynamic_selection");
    if (!proto.has_dynamic_selection()) {
      if (dynamic_rows == 0) return std::nullopt;
      return fail(top(nullptr), "DYNAMIC rows need a dynamic_selection");
    }
    const auto& selection = proto.dynamic_selection();
    if (dynamic_rows == 0) return fail(top(field), "dynamic_selection without DYNAMIC rows");
    if (selection.min_selected() < 1 || selection.min_selected() > selection.max_selected() ||
        selection.max_selected() > dynamic_rows) {
      return fail(top(field),
                  "dynamic_selection must satisfy 1 <= min_selected <= max_selected "
                  "<= " +
                      std::to_string(dynamic_rows) + " (the DYNAMIC rows)");
    }
    paytable.dynamic_min_selected = selection.min_selected();
    paytable.dynamic_max_selected = selection.max_selected();
    return std::nullopt;
  }

  std::string_view origin_;
  const TextFormat::ParseInfoTree& tree_;
};

}  // namespace

// Generated from paytables/*.textproto (controller/CMakeLists.txt): (file name, text).
const std::vector<std::pair<std::string_view, std::string_view>>& paytable_files();

const std::vector<PaytableSource>& embedded_paytables() {
  static const std::vector<PaytableSource> sources = [] {
    std::vector<PaytableSource> all;
    for (const auto& [name, text] : paytable_files()) {
      all.push_back({"controller/hands/paytables/" + std::string(name), std::string(text)});
    }
    return all;
  }();
  return sources;
}

Result<Paytable, PaytableError> load_paytable(std::string_view text, std::string_view origin) {
  pb::Paytable proto;
  TextFormat::ParseInfoTree tree;
  FirstTextFormatError errors;
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&tree);
  if (!parser.ParseFromString(std::string(text), &proto)) {
    return PaytableError{std::string(origin) + ":" + errors.message()};
  }
  return Checker(origin, tree).check(proto);
}

Result<std::vector<Paytable>, std::vector<PaytableError>> load_paytables(
    const std::vector<PaytableSource>& sources) {
  std::vector<Paytable> paytables;
  std::vector<PaytableError> errors;
  std::map<std::string, std::string> origin_of_id;
  for (const PaytableSource& source : sources) {
    auto paytable = load_paytable(source.text, source.origin);
    if (!paytable) {
      errors.push_back(paytable.error());
      continue;
    }
    const auto [it, fresh] = origin_of_id.emplace(paytable->id, source.origin);
    if (!fresh) {
      errors.push_back({source.origin + ":1:1: paytable id " + paytable->id +
                        " is already used by " + it->second});
      continue;
    }
    paytables.push_back(std::move(paytable).value());
  }
  if (!errors.empty()) return errors;
  return paytables;
}

}  // namespace jackpot
