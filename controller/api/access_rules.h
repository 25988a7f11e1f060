#pragma once

// Who may call what: the principals that client certificates name and the one table of RPC to
// roles. Pure rules, no gRPC.
//
// A principal is "ROLE/ID" in the subject common name of a client certificate signed by the
// site's CA (ops/pki makes them): table/<table id>, sign/<sign id>, supervisor/<name>,
// admin/<name>.
//
// Applied to every call before any handler runs (call_authorization.h, transport_security.h);
// the one rule that needs the request, a table acting only for itself, where the request is read
// (grpc_services.cc).

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace jackpot {

enum class Role : std::uint8_t { table, sign, supervisor, admin };

std::string_view to_string(Role role);

struct Principal {
  Role role = Role::table;
  std::string id;
  friend bool operator==(const Principal&, const Principal&) = default;
};

// "table/HUH-1", as the certificate names it.
std::string to_string(const Principal& principal);

// The principal a certificate's subject common name names, or nothing: a known role, '/', then an
// id of letters, digits, '.', '_' and '-', the whole at most kMaxCommonNameBytes (X.509's limit on
// a common name, so a table id longer than 64 - 6 bytes cannot be a principal). ops/pki makes
// exactly these.
inline constexpr std::size_t kMaxCommonNameBytes = 64;
std::optional<Principal> principal_from_common_name(std::string_view common_name);

// What an RPC asks of its caller. `names_caller` is the request field that must name the
// caller's own id ("table_id": a table acts only for itself), or empty.
struct RpcAccess {
  std::string_view method;  // "/jackpot.v1.TableService/OpenRound"
  std::uint8_t roles = 0;   // A bit per Role (role_bit()).
  std::string_view names_caller;
};

constexpr std::uint8_t role_bit(Role role) {
  return static_cast<std::uint8_t>(1U << static_cast<unsigned>(role));
}

// Every RPC jackpotd serves, with the roles that may call it; a method not listed is refused
// to everyone.
std::span<const RpcAccess> rpc_access_table();

enum class AccessRefusal : std::uint8_t {
  no_certificate,         // UNAUTHENTICATED: the caller presented no client certificate.
  certificate_untrusted,  // UNAUTHENTICATED: not the site CA's, expired, or not for clients.
  not_a_principal,        // UNAUTHENTICATED: the certificate's common name names no principal.
  certificate_revoked,    // UNAUTHENTICATED: the site revoked the certificate (revocations.h).
  role_not_allowed,       // PERMISSION_DENIED: the caller's role may not call the method.
  unknown_method,         // PERMISSION_DENIED: a method no role may call.
  acts_for_another,       // PERMISSION_DENIED: a table (or sign) naming another one in its request.
  not_on_roster,          // PERMISSION_DENIED: a supervisor or admin the roster does not name.
};

std::string_view to_string(AccessRefusal refusal);

// Whether the refusal is about who the caller is (UNAUTHENTICATED) rather than what it may do
// (PERMISSION_DENIED).
bool unauthenticated(AccessRefusal refusal);

// Every refusal, for counting them by reason.
inline constexpr std::array kAccessRefusals = {
    AccessRefusal::no_certificate,  AccessRefusal::certificate_untrusted,
    AccessRefusal::not_a_principal, AccessRefusal::role_not_allowed,
    AccessRefusal::unknown_method,  AccessRefusal::acts_for_another,
    AccessRefusal::not_on_roster,   AccessRefusal::certificate_revoked};

// Whether `principal` may call `method`; nothing when it may.
std::optional<AccessRefusal> method_refusal(const Principal& principal, std::string_view method);

// The request field that must name the caller's own id for `method` ("table_id"), or empty.
std::string_view caller_field(std::string_view method);

// Whether `principal` may send a request to `method` whose `names_caller` field holds `named`:
// a table may act only for the table its certificate names, a sign only as itself. Nothing when
// it may (also for a method whose requests name no caller).
std::optional<AccessRefusal> acting_refusal(const Principal& principal, std::string_view method,
                                            std::string_view named);

}  // namespace jackpot
