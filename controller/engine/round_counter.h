// The rules for the round ids a table's controller sends: which ids exist at all, which round a
// command names, and how far OpenRound may move the table's counter. Pure functions with
// table-driven tests (tests/unit/round_counter_test.cc); the engine applies them in this order
// before anything changes, and docs/limits.md ("Rounds and round ids") lists each with the
// status a client gets.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "journal/records.h"

namespace jackpot {

// The largest round id: the journal keeps round ids as PostgreSQL bigint. Above it, and 0, a
// round id is INVALID_ARGUMENT.
inline constexpr std::uint64_t kMaxRoundId =
    static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

// How far one OpenRound may move a table's counter: a new round id is at most this much above
// the table's counter base (its latest round id; after a re-base, the re-based next id − 1; for a
// table that never played, 0). A larger jump is FAILED_PRECONDITION and changes nothing, so a
// mistyped or hostile id cannot use up the table's counter (OpenRound then VoidRound with
// 2^63−1 would otherwise refuse every later id for good). A table whose counter really moved
// further (a controller card swap) is re-based by a supervisor (RebaseRoundCounter).
inline constexpr std::uint64_t kMaxRoundIdJump = 1'000'000;

// 1..kMaxRoundId.
constexpr bool round_id_in_range(std::uint64_t id) { return id >= 1 && id <= kMaxRoundId; }

// A round's phase as the API names it (table.proto), for messages.
constexpr std::string_view round_phase_name(RoundPhase phase) {
  switch (phase) {
    case RoundPhase::open:
      return "OPEN";
    case RoundPhase::locked:
      return "LOCKED";
    case RoundPhase::settled:
      return "SETTLED";
    case RoundPhase::voided:
      return "VOIDED";
  }
  return "UNKNOWN";
}

// A table's counter as the rules see it: the id a new round must be above, and the phase of the
// table's latest round when that round has that id (absent for a table that never played, or
// whose counter was re-based since its latest round).
struct RoundCounter {
  std::uint64_t base = 0;
  std::optional<RoundPhase> latest_phase;
};

// What an OpenRound for `id` (already in range) means.
enum class OpenRoundRule : std::uint8_t {
  open_new,         // A new round.
  replay,           // The table's latest round, still OPEN: answer its first answer.
  not_latest_open,  // The latest round's id, but the round moved on (LOCKED, SETTLED, VOIDED):
                    // FAILED_PRECONDITION, never the old round's answer.
  not_increasing,   // At or below the base: FAILED_PRECONDITION.
  previous_open,    // Above the base while the latest round is OPEN or LOCKED: FAILED_PRECONDITION.
  jump_too_far,     // More than kMaxRoundIdJump above the base: FAILED_PRECONDITION.
};

constexpr OpenRoundRule open_round_rule(const RoundCounter& counter, std::uint64_t id) {
  if (id == counter.base && counter.latest_phase) {
    return *counter.latest_phase == RoundPhase::open ? OpenRoundRule::replay
                                                     : OpenRoundRule::not_latest_open;
  }
  if (id <= counter.base) return OpenRoundRule::not_increasing;
  if (counter.latest_phase &&
      (*counter.latest_phase == RoundPhase::open || *counter.latest_phase == RoundPhase::locked)) {
    return OpenRoundRule::previous_open;
  }
  if (id - counter.base > kMaxRoundIdJump) return OpenRoundRule::jump_too_far;
  return OpenRoundRule::open_new;
}

// Whether a supervisor may re-base a table's counter now (RebaseRoundCounter): not while its
// latest round is OPEN or LOCKED, whose commands still name the old ids. After a re-base to
// next round id n the counter is {n - 1, no latest round}: the table's next round id is n up to
// n - 1 + kMaxRoundIdJump, and rounds from before the re-base answer no command.
constexpr bool rebase_allowed(const RoundCounter& counter) {
  return !counter.latest_phase ||
         (*counter.latest_phase != RoundPhase::open && *counter.latest_phase != RoundPhase::locked);
}
constexpr RoundCounter rebased_counter(std::uint64_t next_round_id) {
  return {next_round_id - 1, std::nullopt};
}

// Which round a LockWagers, SettleRound or VoidRound for `id` (already in range) names. The
// engine keeps a table's latest round and the one before it (for replays), both since the
// latest re-base.
enum class CommandRoundRule : std::uint8_t {
  latest,        // The table's latest round.
  previous,      // The round before it.
  superseded,    // Two or more rounds behind the latest, or at or below a re-based counter:
                 // FAILED_PRECONDITION.
  never_opened,  // Above every round the table opened since its latest re-base (a round of that
                 // id from before the re-base is not named): NOT_FOUND.
};

constexpr CommandRoundRule command_round_rule(std::uint64_t base,
                                              std::optional<std::uint64_t> latest,
                                              std::optional<std::uint64_t> previous,
                                              std::uint64_t id) {
  if (latest && id == *latest) return CommandRoundRule::latest;
  if (previous && id == *previous) return CommandRoundRule::previous;
  return id <= base ? CommandRoundRule::superseded : CommandRoundRule::never_opened;
}

}  // namespace jackpot
