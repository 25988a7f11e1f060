#include "controller/api/stream_limits.h"

#include <gtest/gtest.h>

namespace jackpot {
namespace {

TEST(StreamLimits, APeerIsItsHostWithoutThePort) {
  const struct {
    const char* peer;
    const char* host;
  } cases[] = {
      {"ipv4:127.0.0.1:54321", "ipv4:127.0.0.1"},
      {"ipv4:10.0.0.7:1", "ipv4:10.0.0.7"},
      {"ipv6:[::1]:5000", "ipv6:[::1]"},
      {"ipv6:[fe80::1%eth0]:443", "ipv6:[fe80::1%eth0]"},
      {"ipv6:[::1]", "ipv6:[::1]"},              // No port: as it is.
      {"ipv4:127.0.0.1", "ipv4:127.0.0.1"},      // No port: as it is.
      {"ipv4:127.0.0.1:x", "ipv4:127.0.0.1:x"},  // Not a port.
      {"unix:/run/jackpotd.sock", "unix:/run/jackpotd.sock"},
      {"", ""},
  };
  for (const auto& c : cases) EXPECT_EQ(peer_host(c.peer), c.host) << c.peer;
}

TEST(StreamLimits, SlotsBoundEachPeerAndTheServer) {
  StreamSlots slots(StreamLimits{3, 2});
  EXPECT_EQ(slots.take("a"), std::nullopt);
  EXPECT_EQ(slots.take("a"), std::nullopt);
  const auto per_peer = slots.take("a");
  ASSERT_TRUE(per_peer);
  EXPECT_NE(per_peer->find("--streams-per-peer-max"), std::string::npos) << *per_peer;
  EXPECT_EQ(slots.held_by("a"), 2U);
  EXPECT_EQ(slots.take("b"), std::nullopt);
  const auto per_server = slots.take("c");
  ASSERT_TRUE(per_server);
  EXPECT_NE(per_server->find("--streams-max"), std::string::npos) << *per_server;
  EXPECT_EQ(slots.held(), 3U);
  EXPECT_EQ(slots.held_by("c"), 0U);

  // A stream that ends gives its slot back, to its peer and to the server.
  slots.give_back("a");
  EXPECT_EQ(slots.held(), 2U);
  EXPECT_EQ(slots.take("c"), std::nullopt);
  EXPECT_TRUE(slots.take("b"));  // The server is full again.
  slots.give_back("b");
  slots.give_back("c");
  slots.give_back("a");
  EXPECT_EQ(slots.held(), 0U);
  slots.give_back("nobody");  // Nothing to give back: nothing changes.
  EXPECT_EQ(slots.held(), 0U);
}

}  // namespace
}  // namespace jackpot
