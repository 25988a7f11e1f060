#include "meters/reconcile.h"

#include <limits>

#include "meters/int128.h"

namespace jackpot {
namespace {

struct Terms {
  Int128 contributions = 0;
  Int128 seeds = 0;
  Int128 overflow_in = 0;
  Int128 adjustments = 0;
  Int128 awards = 0;
  Int128 overflow_out = 0;
  Int128 unexplained = 0;
};

bool in_level(AccountRef account, std::uint32_t level) {
  return account.level == level &&
         (account.kind == AccountKind::meter || account.kind == AccountKind::reserve);
}

bool other_level_meter(AccountRef account, std::uint32_t level) {
  return account.kind == AccountKind::meter && account.level != level;
}

// Adds one transfer's effect on the level to its term. `into` is +amount when money enters the
// level, -amount when it leaves.
void classify(const Transfer& transfer, std::uint32_t level, Terms& terms) {
  const bool debit_in = in_level(transfer.debit, level);
  const bool credit_in = in_level(transfer.credit, level);
  if (debit_in == credit_in) return;  // Not this level's, or internal (meter <-> reserve).
  const Int128 into = credit_in ? transfer.amount.micros() : -Int128{transfer.amount.micros()};
  const AccountRef other = credit_in ? transfer.debit : transfer.credit;
  switch (transfer.kind) {
    case TransferKind::contribution:
      if (into > 0 && other.kind == AccountKind::wagers) return void(terms.contributions += into);
      break;
    case TransferKind::contribution_reversal:
      if (into < 0 && other.kind == AccountKind::wagers) return void(terms.contributions += into);
      break;
    case TransferKind::seed:
      if (into > 0 && other.kind == AccountKind::seed_funding) return void(terms.seeds += into);
      break;
    case TransferKind::adjustment:
      if (other.kind == AccountKind::seed_funding) return void(terms.adjustments += into);
      break;
    case TransferKind::award:
      if (into < 0 && other.kind == AccountKind::awards_payable) {
        return void(terms.awards -= into);
      }
      break;
    case TransferKind::award_reversal:
      if (into > 0 && other.kind == AccountKind::awards_payable) {
        return void(terms.awards -= into);
      }
      break;
    case TransferKind::overflow:
      if (other_level_meter(other, level)) {
        return void(into > 0 ? terms.overflow_in += into : terms.overflow_out -= into);
      }
      break;
    case TransferKind::overflow_reversal:
      if (other_level_meter(other, level)) {
        return void(into > 0 ? terms.overflow_out -= into : terms.overflow_in += into);
      }
      break;
    default:
      break;
  }
  terms.unexplained += into;
}

bool fits(Int128 value) {
  return value >= std::numeric_limits<std::int64_t>::min() &&
         value <= std::numeric_limits<std::int64_t>::max();
}

Money money(Int128 value) { return Money::from_micros(static_cast<std::int64_t>(value)); }

}  // namespace

LevelReconciliation reconcile_level(std::uint32_t level, Money start, Money end,
                                    std::span<const Transfer> transfers) {
  Terms terms;
  for (const Transfer& transfer : transfers) classify(transfer, level, terms);
  LevelReconciliation report;
  report.level = level;
  report.start = start;
  report.end = end;
  for (const Int128 term : {terms.contributions, terms.seeds, terms.overflow_in, terms.adjustments,
                            terms.awards, terms.overflow_out, terms.unexplained}) {
    if (!fits(term)) report.overflowed = true;
  }
  if (report.overflowed) return report;
  report.contributions = money(terms.contributions);
  report.seeds = money(terms.seeds);
  report.overflow_in = money(terms.overflow_in);
  report.adjustments = money(terms.adjustments);
  report.awards = money(terms.awards);
  report.overflow_out = money(terms.overflow_out);
  report.unexplained = money(terms.unexplained);
  const Int128 expected = Int128{start.micros()} + terms.contributions + terms.seeds +
                          terms.overflow_in + terms.adjustments - terms.awards - terms.overflow_out;
  const Int128 difference = Int128{end.micros()} - expected;
  if (!fits(difference)) {
    report.overflowed = true;
    return report;
  }
  report.difference = money(difference);
  report.balanced = terms.unexplained == 0 && difference == 0;
  return report;
}

}  // namespace jackpot
