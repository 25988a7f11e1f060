// jackpotd-signwatch: many signs watching a running jackpotd (SignService.WatchMeters), for
// ops/bench: how late each sign sees a committed change, and what the streams cost.
//
//   jackpotd-signwatch --target HOST:PORT --streams N --seconds S --probe-link LINK
//                      (--pki DIR | --plaintext on) [--probe-ms 500] [--probe-after-ms 0]
//                      [--streams-per-channel 100] [--sse HOST:PORT --sse-clients N]
//
// N streams as sign/bench (each watching every link), on gRPC's callback API: no thread per
// stream, a few connections. About every --probe-ms (at random, from half to one and a half
// times it, so that the probes fall at every phase of the feed's publications) an admin
// (admin/bench) raises level 1 of --probe-link by one cent (AdjustMeter); each stream that then
// shows the new amount (or more) counts one lag sample from the moment the adjustment was asked
// for, so the lag includes its commit. With --sse, N more signs read the web sign's event stream of
// the probe link (one thread, epoll) and count their lag the same way. Prints "watching N of M
// streams" once the streams have their first snapshot; the probes begin --probe-after-ms later
// (ops/bench starts the tables in between) and run for --seconds. Then it prints the snapshots
// received, the lag's p50/p99/max over every stream and probe (lag_ms), the same counted from
// each answered adjustment's answer, when its commit is on record (answer_lag_ms, with how many
// signs showed it before the answer came), how long each stream's snapshots took from their
// publication (their published_time) to this process while the probes ran (delivery_ms), and
// this process's CPU seconds. Exits 1 unless every stream and page watched and no probe failed.
#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "jackpot/v1/admin.grpc.pb.h"
#include "jackpot/v1/sign.grpc.pb.h"
#include "tools/client_identity.h"

namespace {

namespace pb = ::jackpot::v1;
using Steady = std::chrono::steady_clock;

// When each probe value (the probe level's cents) was asked for and when its answer came (the
// adjustment committed by then); shared by every stream and page.
class Probes {
 public:
  void asked(std::int64_t cents, Steady::time_point at) {
    std::lock_guard lock(mutex_);
    asked_[cents] = at;
  }
  void answered(std::int64_t cents, Steady::time_point at) {
    std::lock_guard lock(mutex_);
    answered_[cents] = at;
  }
  // A stream went from showing `from` to `to` cents at `now`: one sample per probe in (from, to],
  // from the asking now, from the answer once every answer is in (answered_lags()).
  void shown(std::int64_t from, std::int64_t to, Steady::time_point now) {
    std::lock_guard lock(mutex_);
    for (auto it = asked_.upper_bound(from); it != asked_.end() && it->first <= to; ++it) {
      asked_lags_ms_.push_back(milliseconds(now - it->second));
      shown_.emplace_back(it->first, now);
    }
  }
  // A snapshot whose state the feed built at `published_us` reached a sign at `now_us` (system
  // clock, both on this machine).
  void delivered(std::int64_t published_us, std::int64_t now_us) {
    std::lock_guard lock(mutex_);
    delivery_ms_.push_back(std::max<double>(0.0, static_cast<double>(now_us - published_us) / 1e3));
  }
  std::vector<double> asked_lags() {
    std::lock_guard lock(mutex_);
    return asked_lags_ms_;
  }
  // From each answered probe's answer until each sign showed it; a sign that showed it before
  // the answer arrived here counts 0 (and in `before_answer`). Probes without an answer (a
  // refusal, a deadline) count in neither.
  std::vector<double> answered_lags(std::size_t& before_answer) {
    std::lock_guard lock(mutex_);
    std::vector<double> lags;
    before_answer = 0;
    for (const auto& [cents, at] : shown_) {
      const auto answer = answered_.find(cents);
      if (answer == answered_.end()) continue;
      if (at < answer->second) ++before_answer;
      lags.push_back(milliseconds(at - answer->second));
    }
    return lags;
  }
  std::vector<double> deliveries() {
    std::lock_guard lock(mutex_);
    return delivery_ms_;
  }

 private:
  static double milliseconds(Steady::duration d) {
    return std::max(0.0, std::chrono::duration<double, std::milli>(d).count());
  }
  std::mutex mutex_;
  std::map<std::int64_t, Steady::time_point> asked_;
  std::map<std::int64_t, Steady::time_point> answered_;
  std::vector<double> asked_lags_ms_;
  std::vector<std::pair<std::int64_t, Steady::time_point>> shown_;  // Probe cents, when shown.
  std::vector<double> delivery_ms_;
};

std::int64_t unix_now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::atomic<bool> probing{false};  // Deliveries count while the probes run.

std::atomic<std::uint64_t> snapshots{0};
std::atomic<std::uint64_t> heartbeats{0};
std::atomic<int> opened{0};
std::atomic<int> ended{0};

class Watch final : public grpc::ClientReadReactor<pb::SignUpdate> {
 public:
  Watch(pb::SignService::Stub& stub, const std::string& probe_link, Probes& probes)
      : probe_link_(probe_link), probes_(probes) {
    pb::WatchMetersRequest request;
    request.set_sign_id("bench");
    stub.async()->WatchMeters(&context_, &request, this);
    StartRead(&update_);
    StartCall();
  }
  void OnReadInitialMetadataDone(bool) override {}
  void OnReadDone(bool ok) override {
    if (!ok) return;  // OnDone follows.
    const auto now = Steady::now();
    if (update_.has_meters()) {
      if (!counted_open_) {
        counted_open_ = true;
        opened.fetch_add(1);
      }
      snapshots.fetch_add(1);
      if (probing.load()) {
        const auto& at = update_.meters().published_time();
        probes_.delivered(at.seconds() * 1'000'000 + at.nanos() / 1'000, unix_now_us());
      }
      for (const pb::LevelMeter& level : update_.meters().levels()) {
        if (level.link_id() != probe_link_ || level.level() != 1) continue;
        if (shown_ >= 0 && level.amount_cents() > shown_) {
          probes_.shown(shown_, level.amount_cents(), now);
        }
        shown_ = level.amount_cents();
      }
    } else {
      heartbeats.fetch_add(1);
    }
    StartRead(&update_);
  }
  void OnDone(const grpc::Status& status) override {
    if (!status.ok() && status.error_code() != grpc::StatusCode::CANCELLED) {
      std::lock_guard lock(error_mutex);
      if (first_error.empty()) first_error = status.error_message();
    }
    ended.fetch_add(1);
  }
  void cancel() { context_.TryCancel(); }

  static inline std::mutex error_mutex;
  static inline std::string first_error;

 private:
  grpc::ClientContext context_;
  pb::SignUpdate update_;
  const std::string probe_link_;
  Probes& probes_;
  std::int64_t shown_ = -1;
  bool counted_open_ = false;
};

// Web sign pages: raw sockets reading /sign/events?link=<probe link>, on one epoll thread.
class SseClients {
 public:
  SseClients(const std::string& address, int clients, const std::string& probe_link, Probes& probes)
      : probe_link_(probe_link), probes_(probes) {
    epoll_ = epoll_create1(0);
    const auto colon = address.rfind(':');
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<std::uint16_t>(std::atoi(address.substr(colon + 1).c_str())));
    inet_pton(AF_INET, address.substr(0, colon).c_str(), &to.sin_addr);
    const std::string request = "GET /sign/events?link=" + probe_link +
                                " HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n";
    for (int c = 0; c < clients; ++c) {
      const int fd = socket(AF_INET, SOCK_STREAM, 0);
      if (fd < 0 || connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0 ||
          send(fd, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size())) {
        if (fd >= 0) close(fd);
        continue;
      }
      epoll_event event{};
      event.events = EPOLLIN;
      event.data.u64 = connections_.size();
      connections_.push_back({fd, {}, -1, false});
      epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &event);
    }
    thread_ = std::thread([this] { run(); });
  }
  ~SseClients() {
    stop_.store(true);
    thread_.join();
    for (const Connection& connection : connections_) close(connection.fd);
    close(epoll_);
  }
  int connected() const { return static_cast<int>(connections_.size()); }
  int watching() const { return watching_.load(); }

 private:
  struct Connection {
    int fd;
    std::string pending;
    std::int64_t shown;
    bool counted;
  };
  void run() {
    epoll_event events[256];
    char buffer[16384];
    while (!stop_.load()) {
      const int ready = epoll_wait(epoll_, events, 256, 100);
      for (int e = 0; e < ready; ++e) {
        Connection& connection = connections_[events[e].data.u64];
        const ssize_t got = recv(connection.fd, buffer, sizeof buffer, 0);
        if (got <= 0) {
          epoll_ctl(epoll_, EPOLL_CTL_DEL, connection.fd, nullptr);
          continue;
        }
        connection.pending.append(buffer, static_cast<std::size_t>(got));
        read_events(connection);
      }
    }
  }
  // Each complete "snapshot" event: the probe level's cents.
  void read_events(Connection& connection) {
    std::size_t end;
    while ((end = connection.pending.find("\n\n")) != std::string::npos) {
      const std::string event = connection.pending.substr(0, end);
      connection.pending.erase(0, end + 2);
      if (event.find("event: snapshot") == std::string::npos) continue;
      if (!connection.counted) {
        connection.counted = true;
        watching_.fetch_add(1);
      }
      const std::string marker = "\"link\":\"" + probe_link_ + "\"";
      const auto link = event.find(marker);
      const auto cents = event.find("\"cents\":", link == std::string::npos ? 0 : link);
      if (link == std::string::npos || cents == std::string::npos) continue;
      const std::int64_t shown = std::atoll(event.c_str() + cents + 8);
      if (connection.shown >= 0 && shown > connection.shown) {
        probes_.shown(connection.shown, shown, Steady::now());
      }
      connection.shown = shown;
    }
  }

  const std::string probe_link_;
  Probes& probes_;
  int epoll_ = -1;
  std::vector<Connection> connections_;
  std::atomic<int> watching_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))];
}

// "NAME p50 X p99 Y max Z samples N REST", the figures "-" when there is no sample (ops/bench
// then shows "-", never a 0 that was not measured).
void print_figures(const char* name, const std::vector<double>& values, const std::string& rest) {
  if (values.empty()) {
    std::printf("%s p50 - p99 - max - samples 0 %s\n", name, rest.c_str());
    return;
  }
  std::printf("%s p50 %.1f p99 %.1f max %.1f samples %zu %s\n", name, percentile(values, 0.5),
              percentile(values, 0.99), percentile(values, 1.0), values.size(), rest.c_str());
}

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  jackpot::tools::Connection connection;
  int streams = 1000;
  int per_channel = 100;
  double seconds = 5;
  int probe_ms = 500;
  int probe_after_ms = 0;
  std::string probe_link;
  std::string sse_address;
  int sse_clients = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--target") {
      connection.target = value;
    } else if (flag == "--pki") {
      connection.pki_dir = value;
    } else if (flag == "--plaintext") {
      connection.plaintext = value == "on";
    } else if (flag == "--streams") {
      streams = std::atoi(value.c_str());
    } else if (flag == "--streams-per-channel") {
      per_channel = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--seconds") {
      seconds = std::atof(value.c_str());
    } else if (flag == "--probe-ms") {
      probe_ms = std::max(10, std::atoi(value.c_str()));
    } else if (flag == "--probe-after-ms") {
      probe_after_ms = std::max(0, std::atoi(value.c_str()));
    } else if (flag == "--probe-link") {
      probe_link = value;
    } else if (flag == "--sse") {
      sse_address = value;
    } else if (flag == "--sse-clients") {
      sse_clients = std::atoi(value.c_str());
    } else {
      std::fprintf(stderr, "jackpotd-signwatch: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (probe_link.empty() || streams < 0) {
    std::fprintf(stderr, "jackpotd-signwatch: --probe-link LINK and --streams N are required\n");
    return 2;
  }
  std::string error;
  std::vector<std::unique_ptr<pb::SignService::Stub>> stubs;
  for (int c = 0; c * per_channel < streams; ++c) {
    grpc::ChannelArguments arguments;
    arguments.SetInt("jackpotd.channel", c);  // Distinct arguments: distinct connections.
    auto channel = jackpot::tools::channel_as(connection, "sign/bench", arguments, error);
    if (channel == nullptr) {
      std::fprintf(stderr, "jackpotd-signwatch: %s\n", error.c_str());
      return 2;
    }
    stubs.push_back(pb::SignService::NewStub(channel));
  }
  auto admin_channel = jackpot::tools::channel_as(connection, "admin/bench", {}, error);
  if (admin_channel == nullptr) {
    std::fprintf(stderr, "jackpotd-signwatch: %s\n", error.c_str());
    return 2;
  }
  auto admin = pb::AdminService::NewStub(admin_channel);

  const double cpu_before = cpu_seconds();
  Probes probes;
  std::vector<std::unique_ptr<Watch>> watches;
  for (int s = 0; s < streams; ++s) {
    watches.push_back(std::make_unique<Watch>(*stubs[static_cast<std::size_t>(s / per_channel)],
                                              probe_link, probes));
  }
  std::unique_ptr<SseClients> pages;
  if (!sse_address.empty() && sse_clients > 0) {
    pages = std::make_unique<SseClients>(sse_address, sse_clients, probe_link, probes);
  }
  // Every stream's and page's first snapshot before the probes start (at most 30 s).
  const auto open_by = Steady::now() + std::chrono::seconds(30);
  while ((opened.load() + ended.load() < streams || (pages && pages->watching() < sse_clients)) &&
         Steady::now() < open_by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const int pages_watching = pages ? pages->watching() : 0;
  std::printf("watching %d of %d streams and %d of %d pages\n", opened.load(), streams,
              pages_watching, sse_clients);
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::milliseconds(probe_after_ms));
  probing.store(true);
  const auto started = Steady::now();
  const auto until = started + std::chrono::duration<double>(seconds);
  std::uint64_t probe = 0;
  const std::string run =
      std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  std::uint64_t refused = 0;
  // The probe level's cents now; each probe is counted from before it is asked for, so that a
  // sign that shows it before the answer arrives here is not missed.
  std::int64_t cents = -1;
  {
    pb::ListMetersRequest request;
    request.add_link_ids(probe_link);
    pb::ListMetersResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (admin->ListMeters(&context, request, &response).ok() && response.levels_size() > 0) {
      cents = response.levels(0).meter_micros() / 10'000;
    }
  }
  std::mt19937 jitter(std::random_device{}());
  std::uniform_int_distribution<int> gap(probe_ms / 2, probe_ms + probe_ms / 2);
  if (cents < 0) std::printf("first error: ListMeters of the probe link failed\n");
  while (Steady::now() < until && cents >= 0) {
    const auto asked_at = Steady::now();
    probes.asked(cents + 1, asked_at);
    pb::AdjustMeterRequest request;
    request.set_link_id(probe_link);
    request.set_level(1);
    request.set_amount_micros(10'000);
    request.set_reason("sign lag probe");
    request.set_request_id("probe-" + run + "-" + std::to_string(++probe));
    pb::AdjustMeterResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (admin->AdjustMeter(&context, request, &response).ok()) {
      probes.answered(cents + 1, Steady::now());
      cents = response.balance().meter_micros() / 10'000;
    } else {
      ++refused;
    }
    // Between half and one and a half --probe-ms apart, at random: a probe at a fixed period
    // would keep one phase against the feed's publications and measure that phase's lag only.
    std::this_thread::sleep_until(asked_at + std::chrono::milliseconds(gap(jitter)));
  }
  probing.store(false);
  // The last probe's lag, at most a second more.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double elapsed = std::chrono::duration<double>(Steady::now() - started).count();
  const std::vector<double> lags = probes.asked_lags();
  std::size_t before_answer = 0;
  const std::vector<double> commit_lags = probes.answered_lags(before_answer);
  const std::vector<double> deliveries = probes.deliveries();
  const double cpu = cpu_seconds() - cpu_before;
  for (auto& watch : watches) watch->cancel();
  const auto end_by = Steady::now() + std::chrono::seconds(10);
  while (ended.load() < streams && Steady::now() < end_by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::printf(
      "streams=%d opened=%d seconds=%.1f snapshots=%llu heartbeats=%llu probes=%llu "
      "probes_refused=%llu\n",
      streams, opened.load(), elapsed, static_cast<unsigned long long>(snapshots.load()),
      static_cast<unsigned long long>(heartbeats.load()), static_cast<unsigned long long>(probe),
      static_cast<unsigned long long>(refused));
  std::printf("pages=%d watching=%d\n", sse_clients, pages_watching);
  print_figures(
      "lag_ms", lags,
      "(expected " +
          std::to_string((probe - refused) * static_cast<unsigned>(streams + pages_watching)) +
          ")");
  print_figures("answer_lag_ms", commit_lags, "before_answer " + std::to_string(before_answer));
  print_figures("delivery_ms", deliveries, "");
  std::printf("cpu_seconds %.2f\n", cpu);
  if (!Watch::first_error.empty()) std::printf("first error: %s\n", Watch::first_error.c_str());
  std::fflush(stdout);
  // Streams still open at this point end with the process.
  const bool whole = opened.load() == streams && pages_watching == sse_clients && cents >= 0 &&
                     refused == 0 && Watch::first_error.empty();
  std::_Exit(whole ? 0 : 1);
}
