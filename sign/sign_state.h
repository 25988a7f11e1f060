#pragma once

// What a progressive sign shows, as plain values: per link every level's amount in whole cents
// with its Must-Hit-By amount and the link's status, per table the Dynamic Pays of its round,
// and the hits still on show. Built by the daemon from committed state only (sign/README.md);
// no reserves and no hidden points, only the published commitment of a hidden trigger.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "meters/digest.h"
#include "meters/money.h"

namespace jackpot::sign {

enum class LinkShownStatus : std::uint8_t { open, closed, unavailable };

// A hidden Must-Hit-By trigger as published before any play can hit it: the commitment and the
// range the point was drawn from, never the point or its salt (common.proto TriggerCommitment).
struct TriggerShown {
  Sha256Digest commitment{};
  Money above;
  Money up_to;
  friend bool operator==(const TriggerShown&, const TriggerShown&) = default;
};

struct LevelShown {
  std::uint32_t level = 0;
  std::string name;
  std::int64_t amount_cents = 0;        // shown_cents(): never above the ceiling or the MHB.
  std::int64_t must_hit_by_cents = 0;   // 0: not a Must-Hit-By level.
  std::int64_t ceiling_cents = 0;       // 0: no ceiling.
  std::optional<TriggerShown> trigger;  // A hidden trigger's published commitment.
  friend bool operator==(const LevelShown&, const LevelShown&) = default;
};

struct LinkShown {
  std::string link;
  LinkShownStatus status = LinkShownStatus::unavailable;
  std::vector<LevelShown> levels;
  friend bool operator==(const LinkShown&, const LinkShown&) = default;
};

struct DynamicPayShown {
  std::string hand;
  std::uint32_t option = 0;
  std::int64_t amount_cents = 0;
  friend bool operator==(const DynamicPayShown&, const DynamicPayShown&) = default;
};

struct TableShown {
  std::string table;
  std::uint64_t round = 0;  // The round the Dynamic Pays belong to; 0 before its first.
  struct LinkPays {
    std::string link;
    std::string paytable;
    std::vector<DynamicPayShown> pays;
    friend bool operator==(const LinkPays&, const LinkPays&) = default;
  };
  std::vector<LinkPays> links;
  friend bool operator==(const TableShown&, const TableShown&) = default;
};

struct HitShown {
  std::string link;
  std::uint32_t level = 0;
  std::string table;
  std::uint64_t round = 0;
  std::uint32_t seat = 0;
  std::string hand;
  std::int64_t amount_cents = 0;
  std::int64_t reset_cents = 0;  // The level's value after its reset.
  std::int64_t hit_us = 0;       // Unix microseconds.
  std::uint64_t payout = 0;      // The payout it made (not shown: a rejection takes it off).
  friend bool operator==(const HitShown&, const HitShown&) = default;
};

// Everything the signs show at one committed moment. `sequence` increases with every change.
struct SignState {
  std::uint64_t sequence = 0;
  std::vector<LinkShown> links;
  std::vector<TableShown> tables;
  std::vector<HitShown> hits;  // Oldest first; each shown until hit_us + the configured time.
  std::int64_t built_us = 0;   // When the feed built it (Unix µs): what a sign is told.
  // The content without the sequence and the time: two states show the same when these are equal.
  bool shows_same_as(const SignState& other) const {
    return links == other.links && tables == other.tables && hits == other.hits;
  }
};

// What one sign watches: links (empty: every link) and tables.
struct Watch {
  std::set<std::string> links;
  std::set<std::string> tables;
  bool shows_link(const std::string& link) const { return links.empty() || links.count(link) > 0; }
  // The key the encodings of one state are shared by (sign/encodings.h).
  std::string key() const {
    std::string joined;
    for (const std::string& link : links) joined.append(link).push_back('\n');
    joined.push_back('|');
    for (const std::string& table : tables) joined.append(table).push_back('\n');
    return joined;
  }
};

// The amount a sign shows for a meter: whole cents rounded down, and never more than the
// ceiling nor the Must-Hit-By amount (each rounded down too), nor below zero.
std::int64_t shown_cents(Money meter, std::optional<Money> ceiling,
                         std::optional<Money> must_hit_by);

}  // namespace jackpot::sign
