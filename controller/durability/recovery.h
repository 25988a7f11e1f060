#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "controller/engine/engine_config.h"
#include "controller/engine/engine_snapshot.h"
#include "journal/records.h"
#include "meters/random.h"
#include "meters/result.h"
#include "storage/state_loader.h"

namespace jackpot {

// True when the database holds no engine state yet (a first start).
bool is_empty(const storage::StoredState& state);

// The engine snapshot the stored state describes on this configuration: every link's balances
// (all accounts, in ledger order), hidden triggers and status; each table's last two rounds with
// their decoded requests and answers; pending payouts; counters. Refused, naming what, when the
// state does not fit the configuration (docs/architecture.md §7b): a link missing or with another
// number of levels, an OPEN or LOCKED round of a table no longer on the floor or with data on a
// link the table no longer plays or with wagers priced at another base wager, an answer that
// does not decode.
Result<EngineSnapshot, std::vector<std::string>> snapshot_from(const storage::StoredState& state,
                                                               const EngineConfig& config);

// The OPEN and LOCKED rounds of tables whose game, or a link's paytable or community source,
// differs between `previous` (the floor of the last start, under which the rounds were opened
// and locked) and `config`: a round's wagers were taken, and its Dynamic Pays drawn, under the
// table's paytables then. One message per such round, naming the table, round, link and both
// paytables; empty when none.
std::vector<std::string> live_rounds_changed(const storage::StoredState& state,
                                             const EngineConfig& previous,
                                             const EngineConfig& config);

// The links of the floor that the stored state does not hold yet, opened at their seeds: their
// opening transfers and hidden-trigger draws (numbered on from the state's last draw, recorded at
// `now_us`), and each one's id and number of levels, for the `links` table. What a start writes
// before it restores the engine. Refused when a new link's configuration is.
struct NewLinks {
  Records opening;
  std::vector<std::pair<LinkId, std::uint32_t>> added;
};
Result<NewLinks, std::vector<std::string>> open_new_links(const storage::StoredState& state,
                                                          const EngineConfig& config,
                                                          RandomSource& random,
                                                          std::int64_t now_us);

}  // namespace jackpot
