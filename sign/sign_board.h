#pragma once

// The committed floor as the signs show it, kept from the records of each committed batch: the
// meters (from the transfers on meter accounts), each link's status, each table's round and its
// Dynamic Pays, the published commitment of each hidden trigger, and the hits still on show. The
// daemon gives it only batches that committed, and starts it again from the engine as the
// database holds it after a recovery, so that a sign never shows a value a failed commit takes
// back. Plain values, no locks: the feed owns one and guards it.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "journal/records.h"
#include "meters/money.h"
#include "sign/sign_state.h"

namespace jackpot::sign {

// What does not change while the daemon runs: each link's levels and each table's paytables,
// in the floor's order. Amounts are scaled by the link's base wager, as tables pay them.
struct LevelFacts {
  std::uint32_t level = 0;
  std::string name;
  std::optional<Money> must_hit_by;
  std::optional<Money> ceiling;
};

struct LinkFacts {
  std::string link;
  std::vector<LevelFacts> levels;  // Level 1 first.
};

enum class RowKind : std::uint8_t { percent, fixed, dynamic, must_hit_by };

std::string_view to_string(RowKind kind);

// One paying row of a paytable as a placard prints it.
struct PaytableRowShown {
  std::string hand;
  RowKind kind = RowKind::fixed;
  std::uint32_t level = 0;                 // PERCENT and MUST_HIT_BY: the level it pays from.
  std::uint32_t percent = 0;               // PERCENT: of the level's meter.
  std::int64_t amount_cents = 0;           // FIXED, DYNAMIC's default, MUST_HIT_BY's amount.
  std::vector<std::int64_t> option_cents;  // DYNAMIC: the ten options, 1 first.
  std::int64_t envy_cents = 0;             // 0: no Envy pay.
  friend bool operator==(const PaytableRowShown&, const PaytableRowShown&) = default;
};

struct TableLinkFacts {
  std::string link;
  std::string paytable;
  std::vector<PaytableRowShown> rows;  // Every paying row, highest first; rows index the file's.
  std::vector<std::size_t> row_of;     // The file's row index -> rows' index (npos: no pay).
};

struct TableFacts {
  std::string table;
  std::vector<TableLinkFacts> links;  // In the table's order.
};

struct SignFloor {
  std::vector<LinkFacts> links;
  std::vector<TableFacts> tables;
};

// The committed state the board starts from (at the start, and after a recovery), per link and
// per table in the floor's order.
struct BoardStart {
  struct Link {
    LinkStatus status = LinkStatus::open;
    std::vector<Money> meters;                        // Per level, 1 first.
    std::vector<std::optional<TriggerShown>> hidden;  // Per level: a hidden trigger's commitment.
  };
  struct Table {
    std::uint64_t round_key = 0;  // The latest round; 0 when none.
    std::uint64_t round = 0;
    bool in_play = false;  // OPEN or LOCKED.
    // Per link of the table: the Dynamic Pays drawn for the round, as (file row, option 1..10).
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> dynamic;
  };
  std::vector<Link> links;
  std::vector<Table> tables;
  // The engine's last payout id: a hit of a batch reported failed landed when its payout's id is
  // at most this (ids only rise, and every batch after a failed one is abandoned).
  std::uint64_t last_payout_id = 0;
  // Every payout a supervisor rejected, ascending: their hits leave the signs (also a rejection
  // in a batch reported failed that landed after all).
  std::vector<std::uint64_t> rejected_payouts;
};

class SignBoard {
 public:
  // Hits stay on show for `hit_shown_us`; at most kMaxHitsShown per link at once (the latest).
  static constexpr std::size_t kMaxHitsShown = 16;
  SignBoard(SignFloor floor, const BoardStart& start, std::int64_t hit_shown_us);

  // The engine as the database holds it, after a recovery: every meter, status, round and
  // commitment from `start`; hits on show stay (they happened), and the hits of batches reported
  // failed (failed()) that landed after all join them, with their level's value in `start`.
  void reset(const BoardStart& start);

  // One committed command's records, in commit order: its transfers move the meters, a round
  // that opens shows its Dynamic Pays until it settles or is voided, a PERCENT or Must-Hit-By
  // payout that the command created is a hit (with its level's value after the command), a
  // rejected payout's hit leaves the signs, a hidden trigger drawn replaces its level's
  // commitment, a link status record sets the status.
  void apply(const Records& records);
  // One command of a batch reported failed: nothing of it is shown, but its hits are kept aside
  // until the next reset() tells whether the batch landed.
  void failed(const Records& records);

  // What the signs show at `now_us`: `available` false shows every link UNAVAILABLE (the daemon
  // cannot record changes) with the meters as last committed. Sequence 0: the publisher numbers.
  SignState state(std::int64_t now_us, bool available) const;

  const SignFloor& floor() const { return facts_->floor; }

 private:
  struct LinkNow {
    LinkStatus status = LinkStatus::open;
    std::vector<Money> meters;
    std::vector<std::optional<TriggerShown>> hidden;
  };
  std::optional<std::size_t> link_index(std::string_view link) const;
  std::optional<std::size_t> table_index(std::string_view table) const;

  // What does not change, shared by every copy of the board (the feed copies it to build a
  // state outside its lock).
  struct Facts {
    SignFloor floor;
    std::map<std::string, std::size_t, std::less<>> link_index;
    std::map<std::string, std::size_t, std::less<>> table_index;
  };
  std::shared_ptr<const Facts> facts_;
  std::int64_t hit_shown_us_;
  std::vector<LinkNow> links_;
  std::vector<BoardStart::Table> tables_;
  std::deque<HitShown> hits_;     // Oldest first.
  std::vector<HitShown> unsure_;  // Hits of batches reported failed, until the next reset().
  // The hits a command created, with `reset_cents` from the meters as they are now.
  std::vector<HitShown> hits_of(const Records& records) const;
  void keep_latest_hits();
};

}  // namespace jackpot::sign
