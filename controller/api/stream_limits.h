#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace jackpot {

// How many streams of one kind (WatchLinkStatus, WatchPendingPayouts, WatchMeters) the daemon
// holds at once: each costs memory, none a thread.
struct StreamLimits {
  std::size_t per_server = 4096;
  // Per client host: one table controller holds one stream; a process opening many from one
  // address cannot take every slot of the server.
  std::size_t per_peer = 64;
  // What the refusals name: the streams, and the flags' common start (`<flag>-max`,
  // `<flag>-per-peer-max`).
  std::string_view kind = "link status streams";
  std::string_view flag = "--streams";
};

// The client host of a gRPC peer string, without the port: "ipv4:10.0.0.7:51234" ->
// "ipv4:10.0.0.7", "ipv6:[::1]:5000" -> "ipv6:[::1]"; anything else (a unix socket, a name
// gRPC did not give a port) as it is.
std::string peer_host(std::string_view peer);

// The streams held, per peer host and in all, against the limits. Not thread-safe: its owner
// locks.
class StreamSlots {
 public:
  explicit StreamSlots(StreamLimits limits) : limits_(limits) {}
  // Counts a stream from `peer` (a peer_host()); nothing on success, else the refusal's message,
  // which names the bound passed.
  std::optional<std::string> take(const std::string& peer);
  // Uncounts a stream that take() counted.
  void give_back(const std::string& peer);
  std::size_t held() const { return held_; }
  std::size_t held_by(const std::string& peer) const;

 private:
  StreamLimits limits_;
  std::size_t held_ = 0;
  std::map<std::string, std::size_t> by_peer_;
};

}  // namespace jackpot
