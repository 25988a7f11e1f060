#include "meters/ledger.h"

#include "meters/int128.h"
#include "meters/invariant.h"

namespace jackpot {

std::string_view to_string(AccountKind kind) {
  switch (kind) {
    case AccountKind::wagers:
      return "wagers";
    case AccountKind::seed_funding:
      return "seed_funding";
    case AccountKind::awards_payable:
      return "awards_payable";
    case AccountKind::paid:
      return "paid";
    case AccountKind::tray_paid:
      return "tray_paid";
    case AccountKind::meter:
      return "meter";
    case AccountKind::reserve:
      return "reserve";
  }
  return "unknown";
}

std::string to_string(AccountRef account) {
  std::string name(to_string(account.kind));
  if (account.level != 0) name += "[" + std::to_string(account.level) + "]";
  return name;
}

std::string_view to_string(TransferKind kind) {
  switch (kind) {
    case TransferKind::contribution:
      return "contribution";
    case TransferKind::overflow:
      return "overflow";
    case TransferKind::award:
      return "award";
    case TransferKind::seed:
      return "seed";
    case TransferKind::reserve_release:
      return "reserve_release";
    case TransferKind::adjustment:
      return "adjustment";
    case TransferKind::tray_pay:
      return "tray_pay";
    case TransferKind::payout:
      return "payout";
    case TransferKind::contribution_reversal:
      return "contribution_reversal";
    case TransferKind::overflow_reversal:
      return "overflow_reversal";
    case TransferKind::award_reversal:
      return "award_reversal";
    case TransferKind::tray_pay_reversal:
      return "tray_pay_reversal";
    case TransferKind::house_funded_refund:
      return "house_funded_refund";
  }
  return "unknown";
}

Ledger::Ledger(std::uint32_t levels)
    : levels_(levels), balances_(kLinkAccounts + 2 * std::size_t{levels}, 0) {}

void Ledger::undo_since(std::vector<Transfer>& out, std::size_t mark) {
  JACKPOT_INVARIANT(mark <= out.size(), "undo mark past the end");
  while (out.size() > mark) {
    const Transfer& transfer = out.back();
    JACKPOT_INVARIANT(transfer.id.value() + 1 == next_id_.value(),
                      "undo only what this ledger posted last");
    // Exactly restores the values the post replaced, so it cannot overflow.
    balances_[index(transfer.debit)] += transfer.amount.micros();
    balances_[index(transfer.credit)] -= transfer.amount.micros();
    next_id_ = transfer.id;
    out.pop_back();
  }
}

std::vector<std::pair<AccountRef, Money>> Ledger::balances() const {
  std::vector<std::pair<AccountRef, Money>> all;
  for (std::size_t kind = 0; kind < kLinkAccounts; ++kind) {
    const auto account = AccountRef::link(static_cast<AccountKind>(kind));
    all.emplace_back(account, balance(account));
  }
  for (std::uint32_t level = 1; level <= levels_; ++level) {
    all.emplace_back(AccountRef::meter(level), balance(AccountRef::meter(level)));
    all.emplace_back(AccountRef::reserve(level), balance(AccountRef::reserve(level)));
  }
  return all;
}

std::optional<std::string> Ledger::check() const {
  Int128 sum = 0;
  for (const auto& [account, amount] : balances()) {
    sum += amount.micros();
    if (amount.micros() < 0 && !may_go_negative(account.kind)) {
      return to_string(account) + " is below zero: " + amount.to_string();
    }
  }
  if (sum != 0) return "balances do not sum to zero";
  return std::nullopt;
}

void Ledger::restore(const std::vector<std::pair<AccountRef, Money>>& balances,
                     TransferId next_id) {
  std::fill(balances_.begin(), balances_.end(), 0);
  for (const auto& [account, amount] : balances) balances_[index(account)] = amount.micros();
  next_id_ = next_id;
}

}  // namespace jackpot
