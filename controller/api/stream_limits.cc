#include "controller/api/stream_limits.h"

#include <algorithm>

namespace jackpot {

std::string peer_host(std::string_view peer) {
  const bool ipv4 = peer.rfind("ipv4:", 0) == 0;
  const bool ipv6 = peer.rfind("ipv6:", 0) == 0;
  if (!ipv4 && !ipv6) return std::string(peer);
  const auto colon = peer.rfind(':');
  // ipv6 addresses come bracketed: the port's colon follows the closing bracket.
  if (ipv6 && (colon == 0 || peer[colon - 1] != ']')) return std::string(peer);
  if (colon <= 4) return std::string(peer);  // "ipv4:" alone: no port.
  const std::string_view port = peer.substr(colon + 1);
  const bool numeric = !port.empty() && std::all_of(port.begin(), port.end(),
                                                    [](char c) { return c >= '0' && c <= '9'; });
  return numeric ? std::string(peer.substr(0, colon)) : std::string(peer);
}

std::optional<std::string> StreamSlots::take(const std::string& peer) {
  if (held_ >= limits_.per_server) {
    return "the controller holds its most " + std::string(limits_.kind) + " (" +
           std::to_string(limits_.per_server) + ", " + std::string(limits_.flag) +
           "-max); retry later";
  }
  std::size_t& mine = by_peer_[peer];
  if (mine >= limits_.per_peer) {
    return "this client holds its most " + std::string(limits_.kind) + " (" +
           std::to_string(limits_.per_peer) + ", " + std::string(limits_.flag) +
           "-per-peer-max); end one first";
  }
  ++mine;
  ++held_;
  return std::nullopt;
}

void StreamSlots::give_back(const std::string& peer) {
  const auto it = by_peer_.find(peer);
  if (it == by_peer_.end()) return;
  if (--it->second == 0) by_peer_.erase(it);
  --held_;
}

std::size_t StreamSlots::held_by(const std::string& peer) const {
  const auto it = by_peer_.find(peer);
  return it == by_peer_.end() ? 0 : it->second;
}

}  // namespace jackpot
