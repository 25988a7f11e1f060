#include "controller/api/web_sign.h"

#include <civetweb.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "controller/api/stream_limits.h"
#include "sign/encodings.h"
#include "sign/web_files.h"
#include "sign/web_json.h"

namespace jackpot {

namespace {

std::int64_t unix_now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The most bytes of a link or table id in a query (the API's own limit).
constexpr int kMaxIdBytes = 64;

// Headers every answer carries: nothing is cached, nothing sniffed, the pages run only their own
// script and style.
constexpr std::string_view kCommonHeaders =
    "Cache-Control: no-store\r\n"
    "X-Content-Type-Options: nosniff\r\n"
    "Content-Security-Policy: default-src 'self'; frame-ancestors 'none'\r\n"
    "Connection: close\r\n";

bool write_all(mg_connection* connection, std::string_view bytes) {
  return mg_write(connection, bytes.data(), bytes.size()) == static_cast<int>(bytes.size());
}

int answer(mg_connection* connection, int status, std::string_view reason,
           std::string_view content_type, std::string_view body,
           std::string_view extra_headers = {}) {
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
  head += "Content-Type: ";
  head += content_type;
  head += "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  head += kCommonHeaders;
  head += extra_headers;
  head += "\r\n";
  write_all(connection, head);
  if (std::string_view(mg_get_request_info(connection)->request_method) != "HEAD") {
    write_all(connection, body);
  }
  return status;
}

int plain_error(mg_connection* connection, int status, std::string_view reason,
                std::string_view message) {
  return answer(connection, status, reason, "text/plain; charset=utf-8",
                std::string(message) + "\n");
}

// A shipped file by name ("sign.html", ...), or nothing.
std::optional<std::string_view> web_file(std::string_view name) {
  for (const auto& [file, text] : sign::web_files()) {
    if (file == name) return text;
  }
  return std::nullopt;
}

// One query variable, at most kMaxIdBytes; nothing when absent; `too_long` when longer.
std::optional<std::string> query_value(const char* query, const char* name, bool& too_long) {
  if (query == nullptr) return std::nullopt;
  char value[kMaxIdBytes + 1];
  const int length =
      mg_get_var(query, std::char_traits<char>::length(query), name, value, sizeof value);
  if (length == -2) too_long = true;
  if (length < 0) return std::nullopt;
  return std::string(value, static_cast<std::size_t>(length));
}

}  // namespace

struct WebSign::Impl {
  Impl(SignFeed& signs, const WebSignOptions& options)
      : feed(signs),
        clients_max(options.clients_max),
        serving(options.serving),
        slots(StreamLimits{options.clients_max, options.clients_per_peer, "web sign event streams",
                           "--sign-http-clients"}) {}
  SignFeed& feed;
  const std::size_t clients_max;
  const std::function<bool()> serving;
  std::atomic<std::size_t> clients{0};
  std::mutex slots_mutex;
  StreamSlots slots;  // Per client address and in all.
  mg_context* context = nullptr;

  sign::LatestEncodings<std::string> encodings;  // Per watch (links and tables joined).

  int handle(mg_connection* connection);
  int index(mg_connection* connection);
  int events(mg_connection* connection, const char* query);
  std::string encoded(const sign::SignState& state, const sign::Watch& watch);
};

std::string WebSign::Impl::encoded(const sign::SignState& state, const sign::Watch& watch) {
  return *encodings.get(watch.key(), state.sequence, [&] {
    return std::optional<std::string>(
        sign::server_sent_event("snapshot", sign::state_json(state, watch)));
  });
}

int WebSign::Impl::handle(mg_connection* connection) {
  const mg_request_info* request = mg_get_request_info(connection);
  const std::string_view method = request->request_method;
  if (method != "GET" && method != "HEAD") {
    return answer(connection, 405, "Method Not Allowed", "text/plain; charset=utf-8",
                  "the sign is read-only: GET only\n", "Allow: GET, HEAD\r\n");
  }
  if (serving && !serving()) {
    return answer(connection, 503, "Service Unavailable", "text/plain; charset=utf-8",
                  "jackpotd is starting: its start is not on record yet; retry\n",
                  "Retry-After: 1\r\n");
  }
  const std::string_view path = request->local_uri != nullptr ? request->local_uri : "";
  constexpr std::string_view prefix = "/sign/";
  if (path == "/sign" || path == prefix) return index(connection);
  if (path.substr(0, prefix.size()) != prefix)
    return plain_error(connection, 404, "Not Found", "no such page");
  const std::string_view rest = path.substr(prefix.size());
  if (rest == "events") return events(connection, request->query_string);
  if (rest == "status") {
    return answer(connection, 200, "OK", "application/json",
                  "{\"event_streams\":" + std::to_string(clients.load()) +
                      ",\"event_streams_max\":" + std::to_string(clients_max) + "}\n");
  }
  if (rest == "sign.js") {
    return answer(connection, 200, "OK", "text/javascript; charset=utf-8", *web_file("sign.js"));
  }
  if (rest == "sign.css") {
    return answer(connection, 200, "OK", "text/css; charset=utf-8", *web_file("sign.css"));
  }
  const sign::SignFloor& floor = feed.floor();
  constexpr std::string_view table_prefix = "table/";
  if (rest.substr(0, table_prefix.size()) == table_prefix) {
    const std::string_view table = rest.substr(table_prefix.size());
    const bool known =
        std::any_of(floor.tables.begin(), floor.tables.end(),
                    [&](const sign::TableFacts& facts) { return facts.table == table; });
    if (!known) return plain_error(connection, 404, "Not Found", "no such table on this floor");
  } else {
    const bool known =
        std::any_of(floor.links.begin(), floor.links.end(),
                    [&](const sign::LinkFacts& facts) { return facts.link == rest; });
    if (!known) return plain_error(connection, 404, "Not Found", "no such link on this floor");
  }
  return answer(connection, 200, "OK", "text/html; charset=utf-8", *web_file("sign.html"));
}

// The floor's links and tables, each a link to its sign.
int WebSign::Impl::index(mg_connection* connection) {
  const auto escaped = [](std::string_view text) {
    std::string out;
    for (const char c : text) {
      switch (c) {
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '&':
          out += "&amp;";
          break;
        case '"':
          out += "&quot;";
          break;
        default:
          out += c;
      }
    }
    return out;
  };
  const auto path_escaped = [](std::string_view text) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (const char c : text) {
      const auto byte = static_cast<unsigned char>(c);
      if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
          c == '_' || c == '.' || c == '~') {
        out += c;
      } else {
        out += '%';
        out += kHex[byte >> 4];
        out += kHex[byte & 0xF];
      }
    }
    return out;
  };
  std::string body =
      "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Signs</title>"
      "<link rel=\"stylesheet\" href=\"/sign/sign.css\"></head><body><header><h1>Signs</h1>"
      "</header><main><section class=\"placard\"><h2>Links</h2><ul>";
  for (const sign::LinkFacts& link : feed.floor().links) {
    body +=
        "<li><a href=\"/sign/" + path_escaped(link.link) + "\">" + escaped(link.link) + "</a></li>";
  }
  body += "</ul></section><section class=\"placard\"><h2>Tables</h2><ul>";
  for (const sign::TableFacts& table : feed.floor().tables) {
    body += "<li><a href=\"/sign/table/" + path_escaped(table.table) + "\">" +
            escaped(table.table) + "</a></li>";
  }
  body += "</ul></section></main></body></html>\n";
  return answer(connection, 200, "OK", "text/html; charset=utf-8", body);
}

// One page's event stream: its watch from the query, then the snapshot with its placard, then the
// latest state at each publication it is woken for, or a heartbeat after a quiet spell, until the
// page goes or the feed stops.
int WebSign::Impl::events(mg_connection* connection, const char* query) {
  bool too_long = false;
  const auto link = query_value(query, "link", too_long);
  const auto table = query_value(query, "table", too_long);
  if (too_long) return plain_error(connection, 400, "Bad Request", "an id is longer than 64 bytes");
  if (link.has_value() == table.has_value()) {
    return plain_error(connection, 400, "Bad Request", "name one link= or one table=");
  }
  const sign::SignFloor& floor = feed.floor();
  sign::Watch watch;
  if (link) {
    const bool known =
        std::any_of(floor.links.begin(), floor.links.end(),
                    [&](const sign::LinkFacts& facts) { return facts.link == *link; });
    if (!known) return plain_error(connection, 404, "Not Found", "no such link on this floor");
    watch.links.insert(*link);
  } else {
    const auto facts =
        std::find_if(floor.tables.begin(), floor.tables.end(),
                     [&](const sign::TableFacts& each) { return each.table == *table; });
    if (facts == floor.tables.end()) {
      return plain_error(connection, 404, "Not Found", "no such table on this floor");
    }
    watch.tables.insert(*table);
    for (const sign::TableLinkFacts& played : facts->links) watch.links.insert(played.link);
  }
  constexpr std::string_view kStreamHeaders = "X-Accel-Buffering: no\r\n";  // Proxies: pass on.
  if (std::string_view(mg_get_request_info(connection)->request_method) == "HEAD") {
    return answer(connection, 200, "OK", "text/event-stream", "", kStreamHeaders);
  }
  const std::string peer = mg_get_request_info(connection)->remote_addr;
  {
    const std::lock_guard lock(slots_mutex);
    if (auto refused = slots.take(peer)) {
      return answer(connection, 503, "Service Unavailable", "text/plain; charset=utf-8",
                    *refused + "\n", "Retry-After: 5\r\n");
    }
  }
  clients.fetch_add(1);
  std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n";
  head += kCommonHeaders;
  head += kStreamHeaders;
  head += "\r\nretry: 2000\n\n";
  // Woken by each publication (and the feed's tick); the wake-up outlives this call safely.
  struct Waiter {
    std::mutex mutex;
    std::condition_variable woken;
    bool pending = false;
  };
  const auto waiter = std::make_shared<Waiter>();
  sign::SignPublisher& publisher = feed.publisher();
  const std::uint64_t subscription = publisher.subscribe([waiter] {
    {
      const std::lock_guard lock(waiter->mutex);
      waiter->pending = true;
    }
    waiter->woken.notify_one();
  });
  std::shared_ptr<const sign::SignState> latest = publisher.latest();
  bool open = write_all(connection, head) &&
              write_all(connection, sign::server_sent_event(
                                        "snapshot", sign::state_json(*latest, watch, &floor)));
  std::uint64_t sent = latest->sequence;
  std::int64_t last_sent_us = unix_now_us();
  while (open && !feed.stopping()) {
    {
      std::unique_lock lock(waiter->mutex);
      waiter->woken.wait_for(lock, std::chrono::microseconds(feed.pace().heartbeat_us),
                             [&] { return waiter->pending; });
      waiter->pending = false;
    }
    if (feed.stopping()) break;
    latest = publisher.latest();
    const std::int64_t now = unix_now_us();
    switch (sign::pace(latest->sequence, sent, last_sent_us, now, feed.pace()).kind) {
      case sign::PaceDecision::Kind::wait:
        continue;
      case sign::PaceDecision::Kind::send_state:
        feed.counts().web_skipped.fetch_add(latest->sequence - sent - 1);
        open = write_all(connection, encoded(*latest, watch));
        sent = latest->sequence;
        break;
      case sign::PaceDecision::Kind::send_heartbeat:
        open = write_all(
            connection, sign::server_sent_event("heartbeat",
                                                "{\"sequence\":\"" + std::to_string(sent) + "\"}"));
        break;
    }
    last_sent_us = now;
  }
  publisher.unsubscribe(subscription);
  clients.fetch_sub(1);
  {
    const std::lock_guard lock(slots_mutex);
    slots.give_back(peer);
  }
  return 200;
}

WebSign::WebSign(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

WebSign::~WebSign() {
  if (impl_->context != nullptr) mg_stop(impl_->context);
  mg_exit_library();
}

std::size_t WebSign::clients() const { return impl_->clients.load(); }

std::unique_ptr<WebSign> WebSign::start(SignFeed& feed, const WebSignOptions& options,
                                        std::string& error) {
  mg_init_library(0);
  auto impl = std::make_unique<Impl>(feed, options);
  // One thread per event stream, and a few for pages and refusals past the bound.
  const std::string threads = std::to_string(options.clients_max + 8);
  const char* configuration[] = {"listening_ports",
                                 options.address.c_str(),
                                 "num_threads",
                                 threads.c_str(),
                                 "request_timeout_ms",
                                 "10000",
                                 "enable_keep_alive",
                                 "no",
                                 nullptr};
  mg_callbacks callbacks{};
  char error_text[256] = "";
  unsigned error_code = 0;
  mg_error_data error_data{&error_code, error_text, sizeof error_text};
  mg_init_data init{&callbacks, impl.get(), configuration};
  impl->context = mg_start2(&init, &error_data);
  if (impl->context == nullptr) {
    error = error_text[0] != '\0' ? error_text : "civetweb could not start";
    mg_exit_library();
    return nullptr;
  }
  mg_set_request_handler(
      impl->context, "/sign",
      [](mg_connection* connection, void* data) {
        return static_cast<Impl*>(data)->handle(connection);
      },
      impl.get());
  mg_server_port ports[4] = {};
  const int count = mg_get_server_ports(impl->context, 4, ports);
  std::unique_ptr<WebSign> made(new WebSign(std::move(impl)));
  made->address_ = options.address;
  if (count > 0) {
    made->address_ =
        options.address.substr(0, options.address.rfind(':') + 1) + std::to_string(ports[0].port);
  }
  return made;
}

}  // namespace jackpot
