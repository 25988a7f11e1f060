// jackpotd-loadgen: simulated tables driving a running jackpotd over gRPC, for benchmarks.
//
//   jackpotd-loadgen --target HOST:PORT --tables N [--seconds S] [--link LINK[,LINK...]]
//                    [--seats K] [--table-prefix P] [--first-table K]   (tables P<K> .. P<K+N-1>)
//                    [--first-round R]   (each table's rounds R, R+1, ...; default 1)
//                    [--round-ms M]   (each table starts a round every M ms; default 0: at once)
//                    (--pki DIR | --plaintext on)
//
// Each table calls as itself: over mutual TLS with its certificate table-P<K>.pem from the
// directory ops/pki made, or against a --plaintext daemon naming itself
// (tools/client_identity.h), on its own connection, as a real table does.
// Each table runs in its own thread with one request in flight: open, lock (every seat wagers
// one unit on each link), settle (real shuffled cards). So N tables keep N requests in flight;
// with --round-ms, each table starts its rounds on its own clock (the tables' starts spread over
// the first M ms), at a fixed pace below what the daemon could take, a round late by more than
// M ms starting at once (never a burst to catch up).
// Prints requests/s and the p50/p99 latency of each command, and of the lock+settle pair.
#include <absl/synchronization/mutex.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "jackpot/v1/table.grpc.pb.h"
#include "tools/client_identity.h"

namespace {

namespace pb = ::jackpot::v1;
using Clock = std::chrono::steady_clock;

struct Options {
  jackpot::tools::Connection connection;
  int tables = 64;
  double seconds = 5;
  std::vector<std::string> links = {"bench-link"};  // Every seat wagers one unit on each.
  std::uint32_t seats = 6;
  std::string table_prefix = "T";
  int first_table = 0;  // Tables first_table .. first_table + tables - 1.
  // A later run continues the tables of an earlier one (ops/bench-recovery fills a journal in
  // several runs) from a round id above every round they have played.
  std::uint64_t first_round = 1;
  int round_ms = 0;  // Each table starts a round at most every round_ms; 0: at once.
};

struct Latencies {
  std::vector<double> open_us, lock_us, settle_us, pair_us;
  std::uint64_t errors = 0;
  std::string first_error;
};

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))];
}

std::string table_name(const Options& options, int table) {
  return options.table_prefix + std::to_string(options.first_table + table);
}

void run_table(const Options& options, pb::TableService::Stub& stub, int table,
               Clock::time_point until, Latencies& out) {
  std::mt19937_64 shuffle(static_cast<std::uint64_t>(table) + 1);
  std::vector<std::string> deck;
  for (const char rank : std::string("23456789TJQKA")) {
    for (const char suit : std::string("shdc")) deck.push_back({rank, suit});
  }
  const std::string table_id = table_name(options, table);
  const auto timed = [&](auto call, std::vector<double>& into) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    const auto start = Clock::now();
    const grpc::Status status = call(context);
    into.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    if (!status.ok() && out.errors++ == 0) out.first_error = status.error_message();
    return status.ok();
  };
  const auto period = std::chrono::milliseconds(options.round_ms);
  auto next_round = Clock::now() + period * table / std::max(options.tables, 1);
  for (std::uint64_t round = options.first_round; Clock::now() < until; ++round) {
    if (options.round_ms > 0) {
      std::this_thread::sleep_until(next_round);
      if (Clock::now() >= until) return;
      // The next one period after this one was due, or after now when this one was late by a
      // period or more: one round then, never several at once to catch up.
      next_round += period;
      if (next_round <= Clock::now()) next_round = Clock::now() + period;
    }
    pb::OpenRoundRequest open;
    open.set_table_id(table_id);
    open.set_round_id(round);
    pb::OpenRoundResponse opened;
    if (!timed([&](grpc::ClientContext& c) { return stub.OpenRound(&c, open, &opened); },
               out.open_us)) {
      return;
    }
    pb::LockWagersRequest lock;
    lock.set_table_id(table_id);
    lock.set_round_id(round);
    for (std::uint32_t seat = 1; seat <= options.seats; ++seat) {
      for (const std::string& link : options.links) {
        auto* wager = lock.add_wagers();
        wager->set_seat(seat);
        wager->set_link_id(link);
        wager->set_amount_cents(100);
      }
    }
    std::shuffle(deck.begin(), deck.end(), shuffle);
    pb::SettleRoundRequest settle;
    settle.set_table_id(table_id);
    settle.set_round_id(round);
    for (std::uint32_t seat = 1; seat <= options.seats; ++seat) {
      auto* hand = settle.add_seats();
      hand->set_seat(seat);
      hand->mutable_cards()->add_cards(deck[2 * seat]);
      hand->mutable_cards()->add_cards(deck[2 * seat + 1]);
    }
    for (int i = 0; i < 5; ++i) settle.add_community_cards(deck[30 + static_cast<std::size_t>(i)]);
    const auto pair_start = Clock::now();
    pb::LockWagersResponse locked;
    pb::SettleRoundResponse settled;
    if (!timed([&](grpc::ClientContext& c) { return stub.LockWagers(&c, lock, &locked); },
               out.lock_us) ||
        !timed([&](grpc::ClientContext& c) { return stub.SettleRound(&c, settle, &settled); },
               out.settle_us)) {
      return;
    }
    out.pair_us.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - pair_start).count());
  }
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  std::size_t start = 0;
  for (std::size_t comma; (comma = list.find(',', start)) != std::string::npos; start = comma + 1) {
    items.push_back(list.substr(start, comma - start));
  }
  items.push_back(list.substr(start));
  return items;
}

bool parse(int argc, char** argv, Options& options) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--target")
      options.connection.target = value;
    else if (flag == "--pki")
      options.connection.pki_dir = value;
    else if (flag == "--plaintext" && (value == "on" || value == "off"))
      options.connection.plaintext = value == "on";
    else if (flag == "--tables")
      options.tables = std::stoi(value);
    else if (flag == "--seconds")
      options.seconds = std::stod(value);
    else if (flag == "--link")
      options.links = split(value);
    else if (flag == "--seats")
      options.seats = static_cast<std::uint32_t>(std::stoul(value));
    else if (flag == "--table-prefix")
      options.table_prefix = value;
    else if (flag == "--first-table")
      options.first_table = std::stoi(value);
    else if (flag == "--first-round")
      options.first_round = std::stoull(value);
    else if (flag == "--round-ms" && std::stoi(value) >= 0)
      options.round_ms = std::stoi(value);
    else
      return false;
  }
  return argc % 2 == 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Debian builds Abseil without NDEBUG, which leaves gRPC's mutexes checking for lock-order
  // cycles on every acquisition: a debugging aid that costs every call some CPU.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  Options options;
  if (!parse(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: jackpotd-loadgen --target HOST:PORT --tables N [--seconds S] "
                 "[--link LINK[,LINK...]] [--seats K] [--table-prefix P] [--first-table K] "
                 "[--first-round R] [--round-ms M] (--pki DIR | --plaintext on)\n");
    return 2;
  }
  // Each table on its own connection, with its own certificate.
  std::vector<std::unique_ptr<pb::TableService::Stub>> stubs;
  for (int t = 0; t < options.tables; ++t) {
    grpc::ChannelArguments arguments;
    arguments.SetInt("jackpotd.channel", t);  // Distinct arguments: distinct connections.
    std::string error;
    auto channel = jackpot::tools::channel_as(options.connection, "table/" + table_name(options, t),
                                              arguments, error);
    if (channel == nullptr) {
      std::fprintf(stderr, "jackpotd-loadgen: %s\n", error.c_str());
      return 2;
    }
    stubs.push_back(pb::TableService::NewStub(channel));
  }
  std::vector<Latencies> results(static_cast<std::size_t>(options.tables));
  const auto start = Clock::now();
  const auto until = start + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(options.seconds));
  std::vector<std::thread> threads;
  for (int t = 0; t < options.tables; ++t) {
    threads.emplace_back([&, t] {
      run_table(options, *stubs[static_cast<std::size_t>(t)], t, until,
                results[static_cast<std::size_t>(t)]);
    });
  }
  for (auto& thread : threads) thread.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  Latencies all;
  for (const auto& result : results) {
    all.open_us.insert(all.open_us.end(), result.open_us.begin(), result.open_us.end());
    all.lock_us.insert(all.lock_us.end(), result.lock_us.begin(), result.lock_us.end());
    all.settle_us.insert(all.settle_us.end(), result.settle_us.begin(), result.settle_us.end());
    all.pair_us.insert(all.pair_us.end(), result.pair_us.begin(), result.pair_us.end());
    all.errors += result.errors;
    if (all.first_error.empty()) all.first_error = result.first_error;
  }
  const std::size_t requests = all.open_us.size() + all.lock_us.size() + all.settle_us.size();
  std::printf("tables=%d in_flight=%s seconds=%.1f requests=%zu errors=%llu\n", options.tables,
              options.round_ms > 0 ? "paced" : std::to_string(options.tables).c_str(), elapsed,
              requests, static_cast<unsigned long long>(all.errors));
  std::printf("requests/s %.0f   lock+settle pairs/s %.0f\n",
              static_cast<double>(requests) / elapsed,
              static_cast<double>(all.pair_us.size()) / elapsed);
  const auto line = [](const char* name, const std::vector<double>& values) {
    std::printf("%-12s p50 %8.0f us   p99 %8.0f us\n", name, percentile(values, 0.5),
                percentile(values, 0.99));
  };
  line("open", all.open_us);
  line("lock", all.lock_us);
  line("settle", all.settle_us);
  line("lock+settle", all.pair_us);
  if (all.errors > 0) std::printf("first error: %s\n", all.first_error.c_str());
  return all.errors == 0 ? 0 : 1;
}
