#include "controller/api/access_rules.h"

#include <algorithm>
#include <array>

#include "controller/limits/request_limits.h"

namespace jackpot {
namespace {

constexpr std::uint8_t kTable = role_bit(Role::table);
constexpr std::uint8_t kSign = role_bit(Role::sign);
constexpr std::uint8_t kSupervisor = role_bit(Role::supervisor);
constexpr std::uint8_t kAdmin = role_bit(Role::admin);
constexpr std::uint8_t kEveryRole = kTable | kSign | kSupervisor | kAdmin;

// Tables play rounds and watch their links; signs read the sign feed only; supervisors watch,
// approve and reject payouts and re-base a table's round counter; admins configure, adjust,
// open and close links and read reports, and cannot approve payouts. Every role may ask for the
// server's health.
constexpr std::array kRpcAccess = {
    RpcAccess{"/jackpot.v1.TableService/OpenRound", kTable, "table_id"},
    RpcAccess{"/jackpot.v1.TableService/LockWagers", kTable, "table_id"},
    RpcAccess{"/jackpot.v1.TableService/SettleRound", kTable, "table_id"},
    RpcAccess{"/jackpot.v1.TableService/VoidRound", kTable, "table_id"},
    RpcAccess{"/jackpot.v1.TableService/WatchLinkStatus", kTable, "table_id"},
    RpcAccess{"/jackpot.v1.SignService/WatchMeters", kSign, "sign_id"},
    RpcAccess{"/jackpot.v1.SupervisorService/WatchPendingPayouts", kSupervisor, ""},
    RpcAccess{"/jackpot.v1.SupervisorService/ApprovePayout", kSupervisor, ""},
    RpcAccess{"/jackpot.v1.SupervisorService/RejectPayout", kSupervisor, ""},
    RpcAccess{"/jackpot.v1.SupervisorService/RebaseRoundCounter", kSupervisor, ""},
    RpcAccess{"/jackpot.v1.SupervisorService/VoidRound", kSupervisor, ""},
    RpcAccess{"/jackpot.v1.AdminService/GetConfig", kAdmin, ""},
    RpcAccess{"/jackpot.v1.AdminService/ListMeters", kAdmin, ""},
    RpcAccess{"/jackpot.v1.AdminService/SetLinkStatus", kAdmin, ""},
    RpcAccess{"/jackpot.v1.AdminService/AdjustMeter", kAdmin, ""},
    RpcAccess{"/jackpot.v1.AdminService/GetReconciliationReport", kAdmin, ""},
    RpcAccess{"/jackpot.v1.AdminService/TakeBalanceSnapshot", kAdmin, ""},
    RpcAccess{"/jackpot.v1.AdminService/AuditBalances", kAdmin, ""},
    RpcAccess{"/jackpot.v1.AdminService/ReadAuditTrail", kAdmin, ""},
    RpcAccess{"/grpc.health.v1.Health/Check", kEveryRole, ""},
    RpcAccess{"/grpc.health.v1.Health/Watch", kEveryRole, ""},
    RpcAccess{"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", kAdmin, ""},
};

const RpcAccess* find(std::string_view method) {
  const auto* found =
      std::find_if(kRpcAccess.begin(), kRpcAccess.end(),
                   [&](const RpcAccess& access) { return access.method == method; });
  return found == kRpcAccess.end() ? nullptr : &*found;
}

}  // namespace

std::string_view to_string(Role role) {
  switch (role) {
    case Role::table:
      return "table";
    case Role::sign:
      return "sign";
    case Role::supervisor:
      return "supervisor";
    case Role::admin:
      return "admin";
  }
  return "?";
}

std::string to_string(const Principal& principal) {
  return std::string(to_string(principal.role)) + "/" + principal.id;
}

std::optional<Principal> principal_from_common_name(std::string_view common_name) {
  const std::size_t slash = common_name.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view role = common_name.substr(0, slash);
  const std::string_view id = common_name.substr(slash + 1);
  if (common_name.size() > kMaxCommonNameBytes || !is_principal_id(id)) return std::nullopt;
  for (const Role known : {Role::table, Role::sign, Role::supervisor, Role::admin}) {
    if (role == to_string(known)) return Principal{known, std::string(id)};
  }
  return std::nullopt;
}

std::span<const RpcAccess> rpc_access_table() { return kRpcAccess; }

std::string_view to_string(AccessRefusal refusal) {
  switch (refusal) {
    case AccessRefusal::no_certificate:
      return "no_certificate";
    case AccessRefusal::certificate_untrusted:
      return "certificate_untrusted";
    case AccessRefusal::not_a_principal:
      return "not_a_principal";
    case AccessRefusal::role_not_allowed:
      return "role_not_allowed";
    case AccessRefusal::unknown_method:
      return "unknown_method";
    case AccessRefusal::acts_for_another:
      return "acts_for_another";
    case AccessRefusal::not_on_roster:
      return "not_on_roster";
    case AccessRefusal::certificate_revoked:
      return "certificate_revoked";
  }
  return "?";
}

bool unauthenticated(AccessRefusal refusal) {
  switch (refusal) {
    case AccessRefusal::no_certificate:
    case AccessRefusal::certificate_untrusted:
    case AccessRefusal::not_a_principal:
    case AccessRefusal::certificate_revoked:
      return true;
    case AccessRefusal::role_not_allowed:
    case AccessRefusal::unknown_method:
    case AccessRefusal::acts_for_another:
    case AccessRefusal::not_on_roster:
      return false;
  }
  return false;
}

std::optional<AccessRefusal> method_refusal(const Principal& principal, std::string_view method) {
  const RpcAccess* access = find(method);
  if (access == nullptr) return AccessRefusal::unknown_method;
  if ((access->roles & role_bit(principal.role)) == 0) return AccessRefusal::role_not_allowed;
  return std::nullopt;
}

std::string_view caller_field(std::string_view method) {
  const RpcAccess* access = find(method);
  return access == nullptr ? std::string_view() : access->names_caller;
}

std::optional<AccessRefusal> acting_refusal(const Principal& principal, std::string_view method,
                                            std::string_view named) {
  const RpcAccess* access = find(method);
  if (access == nullptr) return AccessRefusal::unknown_method;
  if ((access->roles & role_bit(principal.role)) == 0) return AccessRefusal::role_not_allowed;
  if (access->names_caller.empty()) return std::nullopt;
  if (named != principal.id) return AccessRefusal::acts_for_another;
  return std::nullopt;
}

}  // namespace jackpot
