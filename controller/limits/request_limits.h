// The limits every request is held to, in one place, and how client text is echoed back.
//
// docs/limits.md lists each limit with the status a client gets past it; a change here is a
// change there. The gRPC adapters check lengths and counts before a request reaches the engine
// (INVALID_ARGUMENT); the engine checks the same constants where it is the one that knows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace jackpot {

// Identifiers a client names: table, link, paytable ids and request ids.
inline constexpr std::size_t kMaxIdBytes = 64;
// Free text kept in the journal and the audit trail: void, link-status, adjustment and re-base
// reasons.
inline constexpr std::size_t kMaxReasonBytes = 512;
// A card's text ("As", "10s").
inline constexpr std::size_t kMaxCardBytes = 3;
// A keyed paytable row as the dealer types it ("Full House", "FULL_HOUSE").
inline constexpr std::size_t kMaxKeyedHandBytes = 64;
// Entries in one repeated field of a request (wagers, seats, cards, link ids).
inline constexpr std::size_t kMaxRepeatedEntries = 256;
// The largest request message the server reads; a bigger one is RESOURCE_EXHAUSTED by gRPC.
inline constexpr int kMaxReceiveMessageBytes = 64 * 1024;
// How much of a client's string an error message repeats.
inline constexpr std::size_t kEchoPrefixBytes = 40;

// A principal's id, as a client certificate's common name carries it after "ROLE/": letters,
// digits, '.', '_' and '-', non-empty (access_rules.h). With "table/" it must fit X.509's 64 bytes
// of common name, so a table a certificate can name has an id of at most kMaxTableIdBytes.
bool is_principal_id(std::string_view id);
inline constexpr std::size_t kMaxTableIdBytes = 64 - 6;

// `text` as an error message may repeat it: quoted, at most kEchoPrefixBytes of it (cut on a
// UTF-8 character boundary, control bytes as \xNN), and its full length when it was cut, e.g.
// 'aaaa…' (1048576 bytes).
std::string quote_prefix(std::string_view text);

}  // namespace jackpot
