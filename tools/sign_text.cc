#include "tools/sign_text.h"

#include <cstdio>
#include <ctime>

namespace jackpot::tools {

namespace pb = ::jackpot::v1;

namespace {

const char* status_text(pb::LinkStatus status) {
  switch (status) {
    case pb::LINK_STATUS_OPEN:
      return "OPEN";
    case pb::LINK_STATUS_CLOSED:
      return "CLOSED";
    case pb::LINK_STATUS_UNAVAILABLE:
      return "UNAVAILABLE";
    default:
      return "UNKNOWN";
  }
}

std::string padded(const std::string& text, std::size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

std::string right(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string hex_prefix(const std::string& bytes, std::size_t count) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < bytes.size() && i < count; ++i) {
    const auto byte = static_cast<unsigned char>(bytes[i]);
    out += kHex[byte >> 4];
    out += kHex[byte & 0xF];
  }
  return out;
}

std::string clock_text(const google::protobuf::Timestamp& time) {
  const auto seconds = static_cast<std::time_t>(time.seconds());
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[16];
  std::strftime(text, sizeof text, "%H:%M:%S", &utc);
  return text;
}

}  // namespace

std::string dollars(std::int64_t cents) {
  const bool negative = cents < 0;
  const std::uint64_t magnitude =
      negative ? 0 - static_cast<std::uint64_t>(cents) : static_cast<std::uint64_t>(cents);
  std::string units = std::to_string(magnitude / 100);
  for (std::size_t at = units.size(); at > 3; at -= 3) units.insert(at - 3, ",");
  char rest[4];
  std::snprintf(rest, sizeof rest, "%02u", static_cast<unsigned>(magnitude % 100));
  return std::string(negative ? "-$" : "$") + units + "." + rest;
}

std::string sign_screen(const pb::MeterSnapshot& snapshot, const SignScreen& screen) {
  std::string out =
      "jackpot-sign  " + screen.who + "  sequence " + std::to_string(snapshot.sequence());
  char heard[48];
  std::snprintf(heard, sizeof heard, "  heard %.1f s ago", screen.heard_seconds_ago);
  out += heard;
  out += '\n';
  if (screen.lost) out += "LINK UNAVAILABLE: " + screen.lost_reason + "\n";
  out += "\n" + padded("LINK", 16) + padded("STATUS", 13) + padded("LEVEL", 28) +
         right("AMOUNT", 16) + right("MUST HIT BY", 16) + "\n";
  std::string previous_link;
  for (const pb::LevelMeter& level : snapshot.levels()) {
    const bool first = level.link_id() != previous_link;
    previous_link = level.link_id();
    pb::LinkStatus status = pb::LINK_STATUS_UNSPECIFIED;
    for (const pb::SignLinkStatus& link : snapshot.links()) {
      if (link.link_id() == level.link_id()) status = link.status();
    }
    if (screen.lost) status = pb::LINK_STATUS_UNAVAILABLE;
    out += padded(first ? level.link_id() : "", 16) + padded(first ? status_text(status) : "", 13) +
           padded(std::to_string(level.level()) + " " + level.name(), 28) +
           right(dollars(level.amount_cents()), 16) +
           right(level.must_hit_by_cents() > 0 ? dollars(level.must_hit_by_cents()) : "", 16);
    for (const pb::TriggerCommitment& commitment : snapshot.trigger_commitments()) {
      if (commitment.link_id() == level.link_id() && commitment.level() == level.level()) {
        out += "  hidden trigger " + hex_prefix(commitment.commitment(), 8) + "...";
      }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  }
  if (snapshot.hits_size() > 0) {
    out += "\nHITS\n";
    for (const pb::HitAnnouncement& hit : snapshot.hits()) {
      out += "  " + clock_text(hit.hit_time()) + "  " + padded(hit.link_id(), 14) +
             padded(hit.hand(), 22) + right(dollars(hit.amount_cents()), 14) + "  table " +
             hit.table_id() + " round " + std::to_string(hit.round_id()) + " seat " +
             std::to_string(hit.seat()) + "  (now " + dollars(hit.reset_cents()) + ")\n";
    }
  }
  if (snapshot.tables_size() > 0) {
    out += "\nTABLES\n";
    for (const pb::TableDynamicPays& table : snapshot.tables()) {
      out += "  " + padded(table.table_id(), 12) + "round " + std::to_string(table.round_id());
      bool any = false;
      for (const pb::DynamicPaySelection& selection : table.selections()) {
        for (const pb::DynamicPay& pay : selection.pays()) {
          out += any ? ", " : "  Dynamic Pays: ";
          out += pay.hand() + " " + dollars(pay.amount_cents());
          any = true;
        }
      }
      out += '\n';
    }
  }
  return out;
}

}  // namespace jackpot::tools
