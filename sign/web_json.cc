#include "sign/web_json.h"

#include <cstdio>

#include "meters/digest.h"

namespace jackpot::sign {

namespace {

std::string_view status_name(LinkShownStatus status) {
  switch (status) {
    case LinkShownStatus::open:
      return "open";
    case LinkShownStatus::closed:
      return "closed";
    case LinkShownStatus::unavailable:
      return "unavailable";
  }
  return "unavailable";
}

// Appends `"key":` to `out`.
void key(std::string& out, std::string_view name) {
  out += '"';
  out += name;
  out += "\":";
}

void number(std::string& out, std::string_view name, std::int64_t value) {
  key(out, name);
  out += std::to_string(value);
}

void text(std::string& out, std::string_view name, std::string_view value) {
  key(out, name);
  out += json_string(value);
}

}  // namespace

std::string json_string(std::string_view value) {
  std::string out = "\"";
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (byte < 0x20 || c == '<' || c == '>' || c == '&' || byte == 0x7F) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(byte));
      out += escaped;
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string state_json(const SignState& state, const Watch& watch, const SignFloor* placards) {
  std::string out = "{";
  text(out, "sequence", std::to_string(state.sequence));
  out += ",\"links\":[";
  bool first_link = true;
  for (const LinkShown& link : state.links) {
    if (!watch.shows_link(link.link)) continue;
    if (!first_link) out += ',';
    first_link = false;
    out += '{';
    text(out, "link", link.link);
    out += ',';
    text(out, "status", status_name(link.status));
    out += ",\"levels\":[";
    for (std::size_t i = 0; i < link.levels.size(); ++i) {
      const LevelShown& level = link.levels[i];
      if (i > 0) out += ',';
      out += '{';
      number(out, "level", level.level);
      out += ',';
      text(out, "name", level.name);
      out += ',';
      number(out, "cents", level.amount_cents);
      out += ',';
      number(out, "must_hit_by_cents", level.must_hit_by_cents);
      out += ',';
      number(out, "ceiling_cents", level.ceiling_cents);
      if (level.trigger) {
        out += ',';
        text(out, "commitment", to_hex(level.trigger->commitment));
        out += ',';
        number(out, "commitment_above_micros", level.trigger->above.micros());
        out += ',';
        number(out, "commitment_up_to_micros", level.trigger->up_to.micros());
      }
      out += '}';
    }
    out += "]}";
  }
  out += "],\"tables\":[";
  bool first_table = true;
  for (const TableShown& table : state.tables) {
    if (watch.tables.count(table.table) == 0) continue;
    if (!first_table) out += ',';
    first_table = false;
    out += '{';
    text(out, "table", table.table);
    out += ',';
    text(out, "round", std::to_string(table.round));
    out += ",\"links\":[";
    for (std::size_t i = 0; i < table.links.size(); ++i) {
      const TableShown::LinkPays& link = table.links[i];
      if (i > 0) out += ',';
      out += '{';
      text(out, "link", link.link);
      out += ',';
      text(out, "paytable", link.paytable);
      out += ",\"pays\":[";
      for (std::size_t p = 0; p < link.pays.size(); ++p) {
        if (p > 0) out += ',';
        out += '{';
        text(out, "hand", link.pays[p].hand);
        out += ',';
        number(out, "option", link.pays[p].option);
        out += ',';
        number(out, "cents", link.pays[p].amount_cents);
        out += '}';
      }
      out += "]}";
    }
    out += "]}";
  }
  out += "],\"hits\":[";
  bool first_hit = true;
  for (const HitShown& hit : state.hits) {
    if (!watch.shows_link(hit.link)) continue;
    if (!first_hit) out += ',';
    first_hit = false;
    out += '{';
    text(out, "link", hit.link);
    out += ',';
    number(out, "level", hit.level);
    out += ',';
    text(out, "table", hit.table);
    out += ',';
    text(out, "round", std::to_string(hit.round));
    out += ',';
    number(out, "seat", hit.seat);
    out += ',';
    text(out, "hand", hit.hand);
    out += ',';
    number(out, "cents", hit.amount_cents);
    out += ',';
    number(out, "reset_cents", hit.reset_cents);
    out += ',';
    number(out, "hit_us", hit.hit_us);
    out += '}';
  }
  out += ']';
  if (placards != nullptr) {
    out += ",\"paytables\":[";
    bool first_card = true;
    for (const TableFacts& table : placards->tables) {
      if (watch.tables.count(table.table) == 0) continue;
      for (const TableLinkFacts& link : table.links) {
        if (!first_card) out += ',';
        first_card = false;
        out += '{';
        text(out, "table", table.table);
        out += ',';
        text(out, "link", link.link);
        out += ',';
        text(out, "paytable", link.paytable);
        out += ",\"lines\":[";
        for (std::size_t i = 0; i < link.rows.size(); ++i) {
          const PaytableRowShown& row = link.rows[i];
          if (i > 0) out += ',';
          out += '{';
          text(out, "hand", row.hand);
          out += ',';
          text(out, "kind", to_string(row.kind));
          out += ',';
          number(out, "level", row.level);
          out += ',';
          number(out, "percent", row.percent);
          out += ',';
          number(out, "cents", row.amount_cents);
          out += ",\"options\":[";
          for (std::size_t o = 0; o < row.option_cents.size(); ++o) {
            if (o > 0) out += ',';
            out += std::to_string(row.option_cents[o]);
          }
          out += "],";
          number(out, "envy_cents", row.envy_cents);
          out += '}';
        }
        out += "]}";
      }
    }
    out += ']';
  }
  out += '}';
  return out;
}

std::string server_sent_event(std::string_view name, std::string_view data) {
  std::string out = "event: ";
  out += name;
  out += '\n';
  std::size_t start = 0;
  while (start <= data.size()) {
    const std::size_t end = data.find('\n', start);
    const std::string_view line =
        data.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    out += "data: ";
    out += line;
    out += '\n';
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  out += '\n';
  return out;
}

}  // namespace jackpot::sign
