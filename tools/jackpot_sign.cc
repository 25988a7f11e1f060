// jackpot-sign: a terminal sign for operators. Watches SignService.WatchMeters as a sign
// principal and keeps a live table of links and levels, the hits as they happen and the watched
// tables' Dynamic Pays on screen; says "LINK UNAVAILABLE" when jackpotd has not been heard for
// --lost-after seconds, and watches again (1 s, doubling to 30 s) when the stream ends.
//
//   jackpot-sign --pki DIR --as sign/lobby [--target HOST:PORT] [--link L]... [--table T]...
//                [--once] [--lost-after S] [--plaintext on]
//
// Exit codes: 0 done (--once printed a snapshot, or interrupted); 1 jackpotd refused the watch
// (its status and message are printed: not a sign, unknown link or table); 2 the command line is
// wrong or a certificate file cannot be read; 4 --once got no snapshot within --lost-after.
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "jackpot/v1/sign.grpc.pb.h"
#include "tools/client_identity.h"
#include "tools/sign_text.h"

namespace {

namespace pb = ::jackpot::v1;
using Steady = std::chrono::steady_clock;

constexpr int kOk = 0;
constexpr int kRefused = 1;
constexpr int kUsage = 2;
constexpr int kUnavailable = 4;

std::atomic<bool> interrupted{false};

// What the watching thread last heard, for the screen.
struct Heard {
  std::mutex mutex;
  std::condition_variable changed;
  std::optional<pb::MeterSnapshot> snapshot;
  Steady::time_point at = Steady::now();
  std::string lost_reason = "connecting";
  std::optional<grpc::Status> refused;  // A refusal no retry can cure.
  std::uint64_t version = 0;
};

bool retryable(grpc::StatusCode code) {
  return code == grpc::StatusCode::OK || code == grpc::StatusCode::UNAVAILABLE ||
         code == grpc::StatusCode::CANCELLED || code == grpc::StatusCode::DEADLINE_EXCEEDED ||
         code == grpc::StatusCode::RESOURCE_EXHAUSTED || code == grpc::StatusCode::UNKNOWN ||
         code == grpc::StatusCode::INTERNAL;
}

// Watches until interrupted or refused, again after each end with a pause (1 s doubling to 30 s,
// back to 1 s once a snapshot arrived).
void watch(const std::shared_ptr<grpc::Channel>& channel, const pb::WatchMetersRequest& request,
           Heard& heard) {
  auto stub = pb::SignService::NewStub(channel);
  std::chrono::milliseconds pause(1000);
  while (!interrupted.load()) {
    grpc::ClientContext context;
    auto reader = stub->WatchMeters(&context, request);
    pb::SignUpdate update;
    while (reader->Read(&update)) {
      std::lock_guard lock(heard.mutex);
      heard.at = Steady::now();
      if (update.has_meters()) {
        if (update.meters().paytables_size() > 0 || !heard.snapshot ||
            update.meters().sequence() > heard.snapshot->sequence()) {
          heard.snapshot = update.meters();
        }
        pause = std::chrono::milliseconds(1000);
      }
      heard.lost_reason.clear();
      ++heard.version;
      heard.changed.notify_all();
      if (interrupted.load()) context.TryCancel();
    }
    const grpc::Status status = reader->Finish();
    {
      std::lock_guard lock(heard.mutex);
      if (!retryable(status.error_code())) {
        heard.refused = status;
        ++heard.version;
        heard.changed.notify_all();
        return;
      }
      heard.lost_reason =
          status.ok() ? "jackpotd ended the watch (stopping); watching again"
                      : "no answer from jackpotd (" + status.error_message() + "); watching again";
      ++heard.version;
      heard.changed.notify_all();
    }
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::milliseconds>(pause * 2, std::chrono::seconds(30));
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "jackpot-sign: a terminal sign for operators, from jackpotd's sign feed. Watches as --as\n"
      "sign/ID over mutual TLS with that principal's certificate from --pki DIR (ops/pki).",
      "jackpot-sign"};
  jackpot::tools::Connection connection;
  std::string principal;
  std::string plaintext = "off";
  std::vector<std::string> links;
  std::vector<std::string> tables;
  bool once = false;
  double lost_after = 5.0;
  app.add_option("--target", connection.target, "jackpotd's gRPC address, HOST:PORT")
      ->capture_default_str();
  app.add_option("--pki", connection.pki_dir, "directory with ca.pem and sign-ID.pem/.key");
  app.add_option("--as", principal, "the sign principal to watch as: sign/ID")->required();
  app.add_option("--plaintext", plaintext,
                 "on: no TLS, against a daemon started with --plaintext on (development only)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--link", links, "a link to show (repeat; default every link)");
  app.add_option("--table", tables, "a table whose Dynamic Pays to show (repeat)");
  app.add_flag("--once", once, "print the first snapshot and exit");
  app.add_option("--lost-after", lost_after,
                 "seconds without a word from jackpotd before the sign says the links are "
                 "unavailable")
      ->check(CLI::Range(1.0, 600.0))
      ->capture_default_str();
  app.footer(
      "Exit codes: 0 done; 1 jackpotd refused the watch; 2 the command line is wrong or a\n"
      "certificate file cannot be read; 4 --once got no snapshot within --lost-after.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? kOk : kUsage;
  }
  constexpr std::string_view kSignPrefix = "sign/";
  if (principal.compare(0, kSignPrefix.size(), kSignPrefix) != 0 ||
      principal.size() == kSignPrefix.size()) {
    std::fprintf(stderr, "jackpot-sign: --as takes a sign principal, sign/ID\n");
    return kUsage;
  }
  connection.plaintext = plaintext == "on";
  std::string error;
  const auto channel = jackpot::tools::channel_as(connection, principal, {}, error);
  if (channel == nullptr) {
    std::fprintf(stderr, "jackpot-sign: %s\n", error.c_str());
    return kUsage;
  }
  pb::WatchMetersRequest request;
  request.set_sign_id(principal.substr(kSignPrefix.size()));
  for (const std::string& link : links) request.add_link_ids(link);
  for (const std::string& table : tables) request.add_table_ids(table);

  std::signal(SIGINT, [](int) { interrupted.store(true); });
  std::signal(SIGTERM, [](int) { interrupted.store(true); });
  // Shared with the watching thread, which is left running when main returns (a blocked read
  // ends with the process): the process ends with _Exit, never destroying what it uses.
  const auto shared = std::make_shared<Heard>();
  Heard& heard = *shared;
  std::thread watcher([channel, request, shared] { watch(channel, request, *shared); });
  watcher.detach();
  const auto finish = [](int code) {
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(code);
  };

  const bool terminal = isatty(STDOUT_FILENO) == 1;
  const auto lost_limit = std::chrono::duration<double>(lost_after);
  const std::string who = principal + " at " + connection.target;
  const auto started = Steady::now();
  std::uint64_t shown_version = 0;
  bool shown_lost = false;
  while (!interrupted.load()) {
    std::unique_lock lock(heard.mutex);
    heard.changed.wait_for(lock, std::chrono::milliseconds(250));
    if (heard.refused) {
      std::fprintf(stderr, "jackpot-sign: jackpotd refused the watch: %s\n",
                   heard.refused->error_message().c_str());
      finish(kRefused);
    }
    const std::chrono::duration<double> quiet = Steady::now() - heard.at;
    const bool lost = !heard.snapshot || quiet > lost_limit || !heard.lost_reason.empty();
    if (once) {
      if (heard.snapshot) {
        jackpot::tools::SignScreen screen{who, quiet.count(), false, ""};
        std::fputs(jackpot::tools::sign_screen(*heard.snapshot, screen).c_str(), stdout);
        finish(kOk);
      }
      if (Steady::now() - started > lost_limit) {
        std::fprintf(stderr, "jackpot-sign: no snapshot within %.1f s: %s\n", lost_after,
                     heard.lost_reason.c_str());
        finish(kUnavailable);
      }
      continue;
    }
    // A terminal redraws at least every second (the "heard" age); a log gets each change once.
    const bool changed = heard.version != shown_version || lost != shown_lost;
    if (!changed && !terminal) continue;
    shown_version = heard.version;
    shown_lost = lost;
    const std::string reason = !heard.lost_reason.empty()
                                   ? heard.lost_reason
                                   : "nothing heard from jackpotd for " +
                                         std::to_string(static_cast<int>(quiet.count())) + " s";
    jackpot::tools::SignScreen screen{who, quiet.count(), lost, reason};
    const std::string text = heard.snapshot
                                 ? jackpot::tools::sign_screen(*heard.snapshot, screen)
                                 : "jackpot-sign  " + who + "\nLINK UNAVAILABLE: " + reason + "\n";
    lock.unlock();
    if (terminal) std::fputs("\x1b[H\x1b[2J", stdout);
    std::fputs(text.c_str(), stdout);
    if (!terminal) std::fputs("\n", stdout);
    std::fflush(stdout);
  }
  finish(kOk);
}
