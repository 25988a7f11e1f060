#include "storage/connection.h"

#include <libpq-fe.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <pqxx/pqxx>
#include <string_view>
#include <thread>
#include <utility>

namespace jackpot::storage {
namespace {

// libpq's messages span lines ("...failed: ...\n\tIs the server running...?\n"); a log line
// should not.
std::string one_line(std::string_view text) {
  std::string line;
  for (const char c : text) {
    if (c == '\n' || c == '\t' || c == '\r') {
      if (!line.empty() && line.back() != ' ') line.push_back(' ');
    } else {
      line.push_back(c);
    }
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

}  // namespace

namespace {

// A connection string as libpq parses it (every option it knows, `val` null where the string
// sets none, ended by a null keyword), freed with it; null when libpq cannot parse the string.
using Options = std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)>;
Options parse_dsn(const std::string& dsn) {
  char* error = nullptr;
  Options options(PQconninfoParse(dsn.c_str(), &error), &PQconninfoFree);
  PQfreemem(error);
  return options;
}

// What libpq marks secret ("*": password, sslpassword).
bool secret(const PQconninfoOption& option) {
  return option.dispchar != nullptr && option.dispchar[0] == '*';
}

}  // namespace

bool dsn_parses(const std::string& dsn) { return parse_dsn(dsn) != nullptr; }

bool dsn_has_password(const std::string& dsn) {
  const Options options = parse_dsn(dsn);
  if (!options) return false;
  for (const PQconninfoOption* option = options.get(); option->keyword != nullptr; ++option) {
    if (secret(*option) && option->val != nullptr && option->val[0] != '\0') return true;
  }
  return false;
}

std::string redact_dsn(const std::string& dsn) {
  const Options options = parse_dsn(dsn);
  if (!options) return "<unparsable connection string>";
  std::string shown;
  for (const PQconninfoOption* option = options.get(); option->keyword != nullptr; ++option) {
    if (option->val == nullptr || secret(*option)) continue;
    if (!shown.empty()) shown += ' ';
    shown += option->keyword;
    shown += '=';
    shown += option->val;
  }
  return shown;
}

std::string with_network_timeouts(const std::string& dsn) {
  const Options options = parse_dsn(dsn);
  if (!options) return dsn;
  static constexpr std::pair<std::string_view, std::string_view> kDefaults[] = {
      {"connect_timeout", "10"},    {"keepalives", "1"},       {"keepalives_idle", "10"},
      {"keepalives_interval", "5"}, {"keepalives_count", "3"}, {"tcp_user_timeout", "15000"},
  };
  std::string out;
  const auto add = [&](std::string_view keyword, std::string_view value) {
    if (!out.empty()) out += ' ';
    out += keyword;
    out += "='";
    for (const char c : value) {
      if (c == '\\' || c == '\'') out += '\\';
      out += c;
    }
    out += '\'';
  };
  for (const PQconninfoOption* option = options.get(); option->keyword != nullptr; ++option) {
    if (option->val != nullptr) add(option->keyword, option->val);
  }
  for (const auto& [keyword, value] : kDefaults) {
    bool set = false;
    for (const PQconninfoOption* option = options.get(); option->keyword != nullptr; ++option) {
      if (option->val != nullptr && keyword == option->keyword) set = true;
    }
    if (!set) add(keyword, value);
  }
  return out;
}

std::unique_ptr<pqxx::connection> connect(const std::string& dsn) {
  try {
    auto connection = std::make_unique<pqxx::connection>(with_network_timeouts(dsn));
    // What the record writer's literals assume, whatever the server's defaults.
    pqxx::nontransaction(*connection, "session")
        .exec("SET standard_conforming_strings = on; SET client_encoding = 'UTF8'");
    return connection;
  } catch (const pqxx::broken_connection& error) {
    throw ConnectError("cannot connect to PostgreSQL (" + redact_dsn(dsn) +
                       "): " + one_line(error.what()));
  } catch (const pqxx::failure& error) {
    throw ConnectError("cannot connect to PostgreSQL (" + redact_dsn(dsn) +
                       "): " + one_line(error.what()));
  }
}

std::unique_ptr<pqxx::connection> connect(const std::string& dsn, const SessionLimits& limits,
                                          const std::string& name) {
  std::string named = dsn;
  if (const Options options = parse_dsn(dsn)) {
    bool has_name = false;
    for (const PQconninfoOption* option = options.get(); option->keyword != nullptr; ++option) {
      if (option->val != nullptr && std::string_view(option->keyword) == "application_name") {
        has_name = true;
      }
    }
    if (!has_name) named = with_network_timeouts(dsn) + " application_name='" + name + "'";
  }
  auto connection = connect(named);
  try {
    pqxx::nontransaction(*connection, "limits")
        .exec("SET statement_timeout = " + std::to_string(limits.statement.count()) +
              "; SET lock_timeout = " + std::to_string(limits.lock.count()) +
              // A transaction left open by a daemon whose thread was stopped holds its locks and
              // snapshot no longer than this.
              "; SET idle_in_transaction_session_timeout = " +
              std::to_string(limits.statement.count()));
  } catch (const pqxx::failure& failure) {
    throw ConnectError("cannot set the session's limits (" + redact_dsn(dsn) +
                       "): " + one_line(failure.what()));
  }
  return connection;
}

struct DatabaseWaits::Entry {
  int socket = -1;
  std::chrono::steady_clock::time_point deadline;
  std::chrono::milliseconds limit{0};
  bool abortable = true;
  bool fired = false;
  std::string reason;
};

class DatabaseWaits::State {
 public:
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::uint64_t, Entry> entries;
  std::uint64_t next_id = 1;
  bool aborted = false;
  bool watching = false;  // The watch thread runs (started with the first guard).
};

DatabaseWaits::DatabaseWaits() : state_(new State), abort_fd_(eventfd(0, EFD_CLOEXEC)) {}

// Never destroyed: guards may live until the process exits, and the watch thread with them.
DatabaseWaits& DatabaseWaits::instance() {
  static DatabaseWaits* const waits = new DatabaseWaits;
  return *waits;
}

namespace {

// Ends every blocked read and write on the socket; the descriptor itself stays open (libpq owns
// it), so it cannot be reused under the waiting thread.
void shut(int socket) {
  if (socket >= 0) ::shutdown(socket, SHUT_RDWR);
}

}  // namespace

DatabaseWaits::Guard DatabaseWaits::guard(pqxx::connection& connection,
                                          std::chrono::milliseconds deadline, bool abortable) {
  return guard_socket(connection.sock(), deadline, abortable);
}

DatabaseWaits::Guard DatabaseWaits::guard_socket(int socket, std::chrono::milliseconds deadline,
                                                 bool abortable) {
  std::lock_guard lock(state_->mutex);
  const std::uint64_t id = state_->next_id++;
  Entry entry{socket, std::chrono::steady_clock::now() + deadline, deadline, abortable, false, ""};
  if (abortable && state_->aborted) {
    entry.fired = true;
    entry.reason = "the daemon is stopping";
    shut(socket);
  }
  state_->entries.emplace(id, std::move(entry));
  if (!state_->watching) {
    state_->watching = true;
    std::thread([this] { watch_loop(); }).detach();
  }
  state_->changed.notify_all();
  return Guard(this, id);
}

void DatabaseWaits::watch_loop() {
  std::unique_lock lock(state_->mutex);
  for (;;) {
    auto next = std::chrono::steady_clock::time_point::max();
    const auto now = std::chrono::steady_clock::now();
    for (auto& [id, entry] : state_->entries) {
      if (entry.fired) continue;
      if (entry.deadline <= now) {
        entry.fired = true;
        entry.reason =
            "no answer from PostgreSQL within " + std::to_string(entry.limit.count()) + " ms";
        shut(entry.socket);
      } else {
        next = std::min(next, entry.deadline);
      }
    }
    if (next == std::chrono::steady_clock::time_point::max()) {
      state_->changed.wait(lock);
    } else {
      state_->changed.wait_until(lock, next);
    }
  }
}

void DatabaseWaits::abort_all() {
  std::lock_guard lock(state_->mutex);
  if (state_->aborted) return;
  state_->aborted = true;
  for (auto& [id, entry] : state_->entries) {
    if (!entry.abortable || entry.fired) continue;
    entry.fired = true;
    entry.reason = "the daemon is stopping";
    shut(entry.socket);
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto written = ::write(abort_fd_, &one, sizeof one);
}

bool DatabaseWaits::aborted() const {
  std::lock_guard lock(state_->mutex);
  return state_->aborted;
}

DatabaseWaits::Guard::Guard(Guard&& other) noexcept : owner_(other.owner_), id_(other.id_) {
  other.owner_ = nullptr;
}

DatabaseWaits::Guard::~Guard() {
  if (owner_ == nullptr) return;
  std::lock_guard lock(owner_->state_->mutex);
  owner_->state_->entries.erase(id_);
}

bool DatabaseWaits::Guard::fired() const {
  if (owner_ == nullptr) return false;
  std::lock_guard lock(owner_->state_->mutex);
  const auto found = owner_->state_->entries.find(id_);
  return found != owner_->state_->entries.end() && found->second.fired;
}

std::string DatabaseWaits::Guard::reason() const {
  if (owner_ == nullptr) return {};
  std::lock_guard lock(owner_->state_->mutex);
  const auto found = owner_->state_->entries.find(id_);
  return found == owner_->state_->entries.end() ? std::string() : found->second.reason;
}

}  // namespace jackpot::storage
