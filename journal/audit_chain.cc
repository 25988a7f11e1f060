#include "journal/audit_chain.h"

#include <vector>

namespace jackpot {
namespace {

void append_i64(std::vector<std::uint8_t>& out, std::int64_t value) {
  const auto bits = static_cast<std::uint64_t>(value);
  for (int shift = 56; shift >= 0; shift -= 8) {
    out.push_back(static_cast<std::uint8_t>(bits >> shift));
  }
}

void append_text(std::vector<std::uint8_t>& out, std::string_view text) {
  append_i64(out, static_cast<std::int64_t>(text.size()));
  out.insert(out.end(), text.begin(), text.end());
}

}  // namespace

Sha256Digest audit_event_hash(const Sha256Digest& prev_hash, std::int64_t seq, std::int64_t at_us,
                              std::string_view principal, std::string_view action,
                              std::string_view detail) {
  std::vector<std::uint8_t> message(prev_hash.begin(), prev_hash.end());
  append_i64(message, seq);
  append_i64(message, at_us);
  append_text(message, principal);
  append_text(message, action);
  append_text(message, detail);
  return sha256(message);
}

std::optional<std::string> audit_chain_break(const AuditChainPosition& previous,
                                             const AuditEvent& event) {
  const std::string which = "event " + std::to_string(event.seq);
  if (event.seq != previous.seq + 1) {
    return which + " follows event " + std::to_string(previous.seq) + ": " +
           (event.seq > previous.seq ? "events are missing" : "events are out of order") +
           " between them";
  }
  if (event.prev_hash != previous.hash) {
    return which + " names " + to_hex(event.prev_hash) + " as the hash before it, but event " +
           std::to_string(previous.seq) + " hashes to " + to_hex(previous.hash);
  }
  const Sha256Digest recomputed = audit_event_hash(event.prev_hash, event.seq, event.at_us,
                                                   event.principal, event.action, event.detail);
  if (recomputed != event.hash) {
    return which + " (" + event.principal + " " + event.action +
           ") was changed after it was chained: its contents hash to " + to_hex(recomputed) +
           ", not the recorded " + to_hex(event.hash);
  }
  return std::nullopt;
}

std::optional<std::string> audit_head_break(const AuditChainPosition& last,
                                            const AuditChainPosition& head) {
  if (last == head) return std::nullopt;
  if (last.seq < head.seq) {
    return "the chain ends at event " + std::to_string(last.seq) + " but its head names event " +
           std::to_string(head.seq) + ": events are missing from the end";
  }
  if (last.seq > head.seq) {
    return "the chain runs to event " + std::to_string(last.seq) + " but its head names event " +
           std::to_string(head.seq);
  }
  return "the head names event " + std::to_string(head.seq) + " with hash " + to_hex(head.hash) +
         ", but that event hashes to " + to_hex(last.hash);
}

}  // namespace jackpot
