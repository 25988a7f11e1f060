#pragma once

// The web sign: jackpotd serves the sign pages and their live feed over plain HTTP (civetweb),
// read-only and without secrets (meters as signs show them, statuses, Dynamic Pays, placards,
// hits and trigger commitments; never a reserve or a hidden point). docs/signs.md describes it.
//
//   GET /sign/                 an index of the floor's links and tables
//   GET /sign/<link>           one link's meters
//   GET /sign/table/<table>    one table's links and its placard, this round's Dynamic Pays lit
//   GET /sign/events?link=<link> | ?table=<table>
//                              Server-Sent Events: a "snapshot" at once (with the table's
//                              placard), then one at each publication of the sign feed, and a
//                              "heartbeat" after 2 s without one
//   GET /sign/sign.js, /sign/sign.css   the pages' script and style, shipped in the binary
//   GET /sign/status           {"event_streams":N,"event_streams_max":M}: pages live now
//
// An unknown link or table is 404; a query that names neither (or both) 400; anything but GET
// and HEAD 405; before jackpotd's start is on record, and past clients_max open event streams
// (or clients_per_peer from one address), 503 with Retry-After. Each event stream holds one of
// the server's threads.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "controller/api/sign_feed.h"

namespace jackpot {

struct WebSignOptions {
  std::string address;                // HOST:PORT as civetweb takes it; port 0 picks one.
  std::size_t clients_max = 256;      // Event streams at once,
  std::size_t clients_per_peer = 32;  // and from one client address.
  // Whether jackpotd serves yet (its start is on record): until then every answer is 503, as
  // every gRPC call is UNAVAILABLE. Empty: at once.
  std::function<bool()> serving;
};

class WebSign {
 public:
  // Serving on `options.address`, or why it cannot. `feed` must outlive the WebSign.
  static std::unique_ptr<WebSign> start(SignFeed& feed, const WebSignOptions& options,
                                        std::string& error);
  ~WebSign();  // Stops serving: the event streams end when the feed stops (stop it first).
  WebSign(const WebSign&) = delete;
  WebSign& operator=(const WebSign&) = delete;

  // The address served, with the port bound.
  const std::string& address() const { return address_; }
  std::size_t clients() const;

  struct Impl;

 private:
  explicit WebSign(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::string address_;
};

}  // namespace jackpot
