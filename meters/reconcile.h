#pragma once

#include <cstdint>
#include <span>

#include "meters/ledger.h"
#include "meters/money.h"

namespace jackpot {

// The auditor's reconciliation of one level over a span of transfers. The level's holdings are
// its meter plus its reserve (money moving between the two, at an overflow into the reserve or
// a reset, stays in the level). Reversals count against the term of what they reverse.
//   start + contributions + seeds + overflow_in + adjustments - awards - overflow_out = end
struct LevelReconciliation {
  std::uint32_t level = 0;
  Money start;
  Money contributions;
  Money seeds;
  Money overflow_in;
  Money adjustments;
  Money awards;
  Money overflow_out;
  Money end;
  // Movements of the level's money that fit no term (a transfer kind that should never touch a
  // meter or reserve that way). Non-zero means the books are wrong.
  Money unexplained;
  // end - (start + contributions + seeds + overflow_in + adjustments - awards - overflow_out):
  // what the observed end holds beyond what the transfers explain. A transfer that the journal
  // lost shows here as its amount, a doubled one as minus its amount.
  Money difference;
  bool balanced = false;
  bool overflowed = false;  // A term left the int64 range: the span cannot be reconciled.
};

// Sorts each transfer of `transfers` touching the level into its term and checks the identity
// against the `end` holdings (meter + reserve) the caller observed.
LevelReconciliation reconcile_level(std::uint32_t level, Money start, Money end,
                                    std::span<const Transfer> transfers);

}  // namespace jackpot
