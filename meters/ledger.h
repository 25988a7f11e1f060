#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "meters/ids.h"
#include "meters/invariant.h"
#include "meters/money.h"

namespace jackpot {

enum class AccountKind : std::uint8_t {
  // Per link.
  wagers,          // Source of contributions: minus everything contributed.
  seed_funding,    // Source of seeds and meter adjustments: what the house put in.
  awards_payable,  // Awards decided and waiting for approval; never below zero.
  paid,            // Awards paid out.
  tray_paid,       // Source of fixed, dynamic and Envy pays made from the table tray.
  // Per level.
  meter,    // The visible meter; never below zero.
  reserve,  // The hidden reserve added at the next reset; never below zero.
};

std::string_view to_string(AccountKind kind);

struct AccountRef {
  AccountKind kind = AccountKind::wagers;
  std::uint32_t level = 0;  // 1..N for meter and reserve, 0 for link accounts.

  static constexpr AccountRef link(AccountKind kind) { return {kind, 0}; }
  static constexpr AccountRef meter(std::uint32_t level) { return {AccountKind::meter, level}; }
  static constexpr AccountRef reserve(std::uint32_t level) { return {AccountKind::reserve, level}; }
  friend constexpr bool operator==(AccountRef, AccountRef) = default;
};

std::string to_string(AccountRef account);

enum class TransferKind : std::uint8_t {
  contribution,           // wagers -> meter or reserve, when wagers lock.
  overflow,               // meter -> its reserve or another level's meter, above the ceiling.
  award,                  // meter -> awards_payable: a PERCENT or Must-Hit-By award.
  seed,                   // seed_funding -> meter, at a reset.
  reserve_release,        // reserve -> meter, at a reset.
  adjustment,             // seed_funding <-> meter: an operator's correction with a reason.
  tray_pay,               // tray_paid -> awards_payable: a fixed, dynamic or Envy pay.
  payout,                 // awards_payable -> paid, once approved.
  contribution_reversal,  // Compensates a contribution (void).
  overflow_reversal,      // Compensates an overflow (void).
  award_reversal,         // Compensates an award (payout rejected): back to the meter.
  tray_pay_reversal,      // Compensates a tray pay (payout rejected).
  // seed_funding -> wagers: the house refunds, for a void, a contribution (or overflow) of the
  // round that an award on its level has paid out since the lock; names what it refunds.
  house_funded_refund,
};

std::string_view to_string(TransferKind kind);

// What a transfer belongs to: the round (an engine-wide round number) and the payout; 0 = none.
struct Origin {
  std::uint64_t round = 0;
  std::uint64_t payout = 0;
  friend constexpr bool operator==(Origin, Origin) = default;
};

// One movement of money: `amount` (> 0) leaves `debit` and arrives in `credit`.
struct Transfer {
  TransferId id;
  AccountRef debit;
  AccountRef credit;
  Money amount;
  TransferKind kind = TransferKind::contribution;
  Origin origin;
  TransferId corrects;  // For a reversal, the transfer it compensates; 0 otherwise.
  friend bool operator==(const Transfer&, const Transfer&) = default;
};

enum class PostError : std::uint8_t {
  insufficient_balance,  // The debit account may not go below zero.
  overflow,              // A balance would leave the int64 range.
};

// The double-entry ledger of one link: a balance per account and the next transfer id.
// Transfers are not kept here (the caller persists them); they are appended to the caller's
// buffer as they are posted, so an operation can be undone exactly if a later step fails.
class Ledger {
 public:
  explicit Ledger(std::uint32_t levels);

  std::uint32_t levels() const { return levels_; }
  bool has(AccountRef account) const {
    const bool per_level =
        account.kind == AccountKind::meter || account.kind == AccountKind::reserve;
    return per_level ? account.level >= 1 && account.level <= levels_ : account.level == 0;
  }
  Money balance(AccountRef account) const { return Money::from_micros(balances_[index(account)]); }
  TransferId next_id() const { return next_id_; }

  // Accounts that are sources of money (wagers, seed_funding, tray_paid) go below zero by
  // design; every other account never does.
  static bool may_go_negative(AccountKind kind) {
    return kind == AccountKind::wagers || kind == AccountKind::seed_funding ||
           kind == AccountKind::tray_paid;
  }

  // Moves `amount` (> 0) and appends the transfer to `out`; or, if that would break a bound,
  // changes nothing and says why. Inline: it is the innermost step of every contribution.
  std::optional<PostError> post(AccountRef debit, AccountRef credit, Money amount,
                                TransferKind kind, Origin origin, TransferId corrects,
                                std::vector<Transfer>& out) {
    JACKPOT_INVARIANT(amount.micros() > 0, "a transfer moves a positive amount");
    JACKPOT_INVARIANT(!(debit == credit), "a transfer moves money between two accounts");
    std::int64_t& from = balances_[index(debit)];
    std::int64_t& to = balances_[index(credit)];
    std::int64_t new_from = 0;
    std::int64_t new_to = 0;
    if (__builtin_sub_overflow(from, amount.micros(), &new_from) ||
        __builtin_add_overflow(to, amount.micros(), &new_to)) {
      return PostError::overflow;
    }
    if (new_from < 0 && !may_go_negative(debit.kind)) return PostError::insufficient_balance;
    from = new_from;
    to = new_to;
    // Built in place, field by field: a temporary Transfer copied with wide moves stalls on
    // store forwarding and cost a third of a contribution.
    Transfer& transfer = out.emplace_back();
    transfer.id = next_id_;
    transfer.debit = debit;
    transfer.credit = credit;
    transfer.amount = amount;
    transfer.kind = kind;
    transfer.origin = origin;
    transfer.corrects = corrects;
    next_id_ = TransferId(next_id_.value() + 1);
    return std::nullopt;
  }

  // Undoes, newest first, the transfers this ledger appended to `out` after `mark`, and removes
  // them: the state is exactly as it was when out.size() was `mark`.
  void undo_since(std::vector<Transfer>& out, std::size_t mark);

  // Every account and its balance, for reports and checks.
  std::vector<std::pair<AccountRef, Money>> balances() const;

  // A description of the first broken ledger invariant (balances sum to zero, no forbidden
  // negative balance), or nothing when all hold.
  std::optional<std::string> check() const;

  // Restores state read back from storage; `balances` as returned by balances().
  void restore(const std::vector<std::pair<AccountRef, Money>>& balances, TransferId next_id);

 private:
  static constexpr std::size_t kLinkAccounts = 5;
  std::size_t index(AccountRef account) const {
    JACKPOT_INVARIANT(has(account), "account is not in this ledger");
    if (account.kind == AccountKind::meter) return kLinkAccounts + 2 * (account.level - 1);
    if (account.kind == AccountKind::reserve) return kLinkAccounts + 2 * (account.level - 1) + 1;
    return static_cast<std::size_t>(account.kind);
  }

  std::uint32_t levels_;
  std::vector<std::int64_t> balances_;
  TransferId next_id_{1};
};

}  // namespace jackpot
