#pragma once

#include <cstdint>
#include <optional>
#include <pqxx/connection>
#include <string>
#include <vector>

#include "meters/ledger.h"

namespace jackpot::storage {

// What an auditor's reconciliation of a link over a period needs: the holdings (meter +
// reserve) of every level when the period starts and ends, and the transfers in between.
struct PeriodTransfers {
  std::vector<Money> start;  // Per level (index level - 1).
  std::vector<Money> end;
  std::vector<Transfer> transfers;  // Posted in [from, to), in id order.
};

// `from_us`/`to_us` are Unix microseconds; nothing means from the first / up to the last.
PeriodTransfers load_period(pqxx::connection& connection, const std::string& link_id,
                            std::uint32_t levels, std::optional<std::int64_t> from_us,
                            std::optional<std::int64_t> to_us);

}  // namespace jackpot::storage
