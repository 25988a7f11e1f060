// jackpot-tablesim: the tables of a floor playing against a running jackpotd, as real table
// controllers do, for the demo, the benchmarks and the fault scripts.
//
//   jackpot-tablesim --target HOST:PORT (--pki DIR | --plaintext on) --floor FILE
//                    [--tables ID,ID...] [--speed X | --fast] [--seconds S] [--rounds N]
//                    [--seed TEXT] [--state-dir DIR] [--wager-probability P] [--max-units N]
//                    [--void-probability P] [--threads N] [--deadline-ms MS]
//                    [--progress-seconds S] [--latencies]
//
// Each table of the floor (or of --tables) deals real shuffled decks from a seeded CSPRNG
// (tools/tablesim_deal.h: the same --seed, table and round id deal the same round), its seats
// wagering with the given probability, and plays open, lock, settle (or, now and then, void as a
// misdeal) through the TableService over mutual TLS with its own certificate (table-ID.pem under
// --pki) on its own connection. At casino pace a table starts a round every 60 s / --speed
// (±20%); --fast plays each table's rounds back to back.
//
// Cheap: gRPC's asynchronous API on a few completion-queue threads (--threads, default 2), each
// table one request in flight, not a thread per table.
//
// After UNAVAILABLE, DEADLINE_EXCEEDED or RESOURCE_EXHAUSTED a request is sent again, the same
// request with the same ids (jackpotd answers a repeat with its first answer), after 50 ms
// doubling to 2 s, for as long as it takes (each table reconnects within a second of jackpotd
// coming back). A link closed by an operator (link_closed) voids the round if it was open and
// pauses the table 5 s, again until the link opens; an unavailable link answers UNAVAILABLE and
// is retried; any other refusal ends the table (an unknown table, round ids that do not follow
// the table's rounds on jackpotd). With
// --state-dir, each table's round id and whether its round finished are kept in DIR/<table>.round
// (and the seed in DIR/seed when --seed is not given): a later run resumes an unfinished round with
// the same requests and goes on from the next id, as a table controller does after a restart (the
// record is not synced to disk: it survives the simulator being killed, not the machine losing
// power). Without it, rounds start at 1.
//
// Prints a progress line every --progress-seconds (default 5; 0: none), a line for each
// progressive hit (PERCENT, MUST_HIT_BY) and each payout that waits for a supervisor, and a
// summary at the end (with --latencies, each command's p50/p99 and the client's CPU). Stops at
// Ctrl-C or SIGTERM, after --seconds or after --rounds finished rounds: tables finish the round
// they are in (up to 15 s). Exits 1 when jackpotd refused something it should not have (a
// request the simulator got wrong, or a table it does not know), 2 on bad usage, 0 otherwise.
#include <absl/synchronization/mutex.h>
#include <fcntl.h>
#include <grpcpp/alarm.h>
#include <grpcpp/grpcpp.h>
#include <sodium.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "controller/engine/floor_loader.h"
#include "controller/hands/paytable_loader.h"
#include "jackpot/v1/table.grpc.pb.h"
#include "tools/client_identity.h"
#include "tools/tablesim_deal.h"

namespace {

namespace pb = ::jackpot::v1;
using jackpot::tools::PlayStyle;
using jackpot::tools::RoundPlan;
using jackpot::tools::RoundRandom;
using jackpot::tools::Seed;
using jackpot::tools::TableShape;
using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t g_signal = 0;
void on_signal(int signal) { g_signal = signal; }

struct Options {
  jackpot::tools::Connection connection;
  std::string floor_file;
  std::vector<std::string> only_tables;
  double speed = 1;
  bool fast = false;
  double seconds = 0;
  std::uint64_t rounds = 0;
  std::string seed_text;
  std::string state_dir;
  PlayStyle style;
  int threads = 2;
  int deadline_ms = 10000;
  double progress_seconds = 5;
  bool latencies = false;
};

constexpr double kCasinoRoundSeconds = 60;
constexpr auto kRefusedPause = std::chrono::seconds(5);
constexpr auto kFinishGrace = std::chrono::seconds(15);
constexpr auto kAlarmSlice = std::chrono::milliseconds(250);  // Waits notice a stop this soon.

std::string money(std::int64_t cents) {
  char text[48];
  std::snprintf(text, sizeof text, "$%lld.%02lld", static_cast<long long>(cents / 100),
                static_cast<long long>(cents % 100));
  return text;
}

// Counters shared by every table, read by the progress line.
struct Totals {
  std::atomic<std::uint64_t> settled{0}, voided{0}, requests{0}, retries{0}, refused{0}, errors{0};
  std::atomic<std::uint64_t> fixed{0}, dynamic{0}, envy{0}, percent{0}, must_hit_by{0};
  std::atomic<std::uint64_t> pending{0};
  std::atomic<std::int64_t> paid_cents{0};
  std::atomic<int> tables_finished{0};
  std::uint64_t finished_rounds() const { return settled + voided; }
};

// Lines from several threads, whole.
std::mutex g_print_mutex;
void say(const std::string& line) {
  std::lock_guard lock(g_print_mutex);
  std::fprintf(stdout, "tablesim: %s\n", line.c_str());
  std::fflush(stdout);
}

// One completion on a completion queue: a finished call or an alarm.
struct Completion {
  virtual ~Completion() = default;
  virtual void done(bool ok) = 0;
};

// Latency samples of one completion-queue thread (only its tables write them).
// At most kMaxSamples per command and thread, a uniform sample of all (reservoir sampling), so
// that a run without an end keeps its memory bounded.
struct Samples {
  static constexpr std::size_t kMaxSamples = 100'000;
  std::map<std::string, std::vector<double>> us;  // By command.
  std::map<std::string, std::uint64_t> seen;
  std::mt19937_64 choose{1};
  void add(const std::string& command, double value) {
    std::vector<double>& kept = us[command];
    const std::uint64_t count = ++seen[command];
    if (kept.size() < kMaxSamples) {
      kept.push_back(value);
      return;
    }
    const std::uint64_t slot = std::uniform_int_distribution<std::uint64_t>(0, count - 1)(choose);
    if (slot < kMaxSamples) kept[slot] = value;
  }
};

class Table;

// A unary call in flight: its context, request and answer, and what to do with the answer.
template <typename Response>
struct Call final : Completion {
  grpc::ClientContext context;
  Response response;
  grpc::Status status;
  std::unique_ptr<grpc::ClientAsyncResponseReader<Response>> reader;
  std::function<void(const grpc::Status&, Response&)> then;
  void done(bool /*ok*/) override {
    auto next = std::move(then);
    next(status, response);
    delete this;
  }
};

// The state file of a table: "ROUND_ID open|done", the id right-aligned in 20 characters so that
// every record has the same length and overwrites the last in place (one pwrite of 26 bytes, no
// new file: cheap enough for a table playing flat out). Written before a round is opened and
// after it is finished.
class RoundRecord {
 public:
  RoundRecord(const std::string& dir, const std::string& table_id) {
    if (dir.empty()) return;
    path_ = dir + "/" + table_id + ".round";
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) say("cannot keep " + path_ + ": " + std::strerror(errno));
  }
  ~RoundRecord() {
    if (fd_ >= 0) ::close(fd_);
  }
  RoundRecord(const RoundRecord&) = delete;
  RoundRecord& operator=(const RoundRecord&) = delete;

  struct Saved {
    std::uint64_t round_id = 0;
    bool finished = true;
  };
  Saved load() const {
    Saved saved;
    if (path_.empty()) return saved;
    std::ifstream in(path_);
    std::string phase;
    if (!(in >> saved.round_id)) return {};
    // A record without its phase (cut short) may be of a round still open: resumed, to be safe.
    saved.finished = (in >> phase) && phase == "done";
    return saved;
  }
  void save(std::uint64_t round_id, bool finished) const {
    if (fd_ < 0) return;
    char record[32];
    const int length =
        std::snprintf(record, sizeof record, "%20llu %s\n",
                      static_cast<unsigned long long>(round_id), finished ? "done" : "open");
    if (::pwrite(fd_, record, static_cast<std::size_t>(length), 0) != length) {
      say("cannot write " + path_ + ": " + std::strerror(errno));
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
};

class Table {
 public:
  Table(TableShape shape, const Options& options, const Seed& seed,
        std::unique_ptr<pb::TableService::Stub> stub, grpc::CompletionQueue& queue,
        Samples& samples, Totals& totals, const std::atomic<bool>& stopping,
        const std::atomic<bool>& abandon)
      : shape_(std::move(shape)),
        options_(options),
        seed_(seed),
        stub_(std::move(stub)),
        queue_(queue),
        samples_(samples),
        totals_(totals),
        stopping_(stopping),
        abandon_(abandon),
        record_(options.state_dir, shape_.table_id),
        pace_(std::hash<std::string>{}(shape_.table_id)) {}

  // Resumes the round a previous run left unfinished, or waits a random part of a round's time
  // (so the tables do not play in step) and starts the next.
  void start() {
    const RoundRecord::Saved saved = record_.load();
    round_id_ = saved.round_id == 0 ? 1 : saved.round_id + (saved.finished ? 1 : 0);
    if (!saved.finished && saved.round_id != 0) {
      resumed_ = true;
      say(shape_.table_id + ": resuming round " + std::to_string(round_id_) +
          ", unfinished when the last run stopped");
      begin_round();
      return;
    }
    next_start_ = Clock::now();
    if (!options_.fast) {
      std::uniform_real_distribution<double> offset(0, period_seconds());
      next_start_ += seconds(offset(pace_));
    }
    wait_then([this] { begin_round(); }, next_start_);
  }

 private:
  using Then = std::function<void()>;

  double period_seconds() const { return kCasinoRoundSeconds / options_.speed; }
  static Clock::duration seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }

  // The table plays no more: every path that ends its chain of calls and alarms comes here once.
  void finish() {
    if (finished_) return;
    finished_ = true;
    totals_.tables_finished.fetch_add(1);
  }

  // Sets an alarm at `when` (in slices, so a stop is noticed) and then runs `then`. A stop while
  // the table waits between rounds ends it here.
  struct Alarm final : Completion {
    Table* table = nullptr;
    void done(bool /*ok*/) override { table->on_alarm(); }
  };
  void wait_then(Then then, Clock::time_point when, bool between_rounds = true) {
    after_alarm_ = std::move(then);
    alarm_at_ = when;
    alarm_between_rounds_ = between_rounds;
    on_alarm_pending();
  }
  void on_alarm_pending() {
    if ((alarm_between_rounds_ && stopping_) || abandon_) {
      finish();
      return;
    }
    const auto now = Clock::now();
    if (now >= alarm_at_) {
      auto then = std::move(after_alarm_);
      then();
      return;
    }
    alarm_tag_.table = this;
    const auto wait = std::min(alarm_at_ - now, Clock::duration(kAlarmSlice));
    alarm_.Set(&queue_, std::chrono::system_clock::now() + wait, &alarm_tag_);
  }
  void on_alarm() { on_alarm_pending(); }

  // Sends a request and passes its answer on; retries what waiting can cure, with the same
  // request, for as long as it takes.
  template <typename Request, typename Response>
  void send(const char* command,
            std::unique_ptr<grpc::ClientAsyncResponseReader<Response>> (
                pb::TableService::Stub::*prepare)(grpc::ClientContext*, const Request&,
                                                  grpc::CompletionQueue*),
            std::shared_ptr<const Request> request,
            std::function<void(const grpc::Status&, Response&)> then, int attempt = 0) {
    if (abandon_) {
      finish();
      return;
    }
    auto* call = new Call<Response>;
    call->context.set_deadline(std::chrono::system_clock::now() +
                               std::chrono::milliseconds(options_.deadline_ms));
    const auto sent = Clock::now();
    call->then = [this, command, prepare, request, then = std::move(then), attempt, sent](
                     const grpc::Status& status, Response& response) {
      totals_.requests.fetch_add(1);
      if (retryable(status.error_code())) {
        totals_.retries.fetch_add(1);
        if (attempt == 0 || attempt % 20 == 0) {
          say(shape_.table_id + ": " + command + " round " + std::to_string(round_id_) + ": " +
              status_text(status) + "; sending it again");
        }
        const auto backoff = std::chrono::milliseconds(std::min(2000, 50 << std::min(attempt, 6)));
        wait_then([this, command, prepare, request, then,
                   attempt] { send(command, prepare, request, then, attempt + 1); },
                  Clock::now() + backoff, false);
        return;
      }
      if (options_.latencies && status.ok()) {
        samples_.add(command,
                     std::chrono::duration<double, std::micro>(Clock::now() - sent).count());
      }
      if (attempt > 0 && status.ok()) say(shape_.table_id + ": " + command + " answered");
      then(status, response);
    };
    call->reader = (stub_.get()->*prepare)(&call->context, *request, &queue_);
    call->reader->StartCall();
    call->reader->Finish(&call->response, &call->status, call);
  }

  // A refusal because an operator closed a link of the table (docs/refusals.md: the refusal's
  // name starts the message). An unavailable link answers UNAVAILABLE: retried as it is.
  static bool link_not_open(const grpc::Status& status) {
    return status.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
           status.error_message().rfind("link_closed:", 0) == 0;
  }

  static bool retryable(grpc::StatusCode code) {
    return code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::DEADLINE_EXCEEDED ||
           code == grpc::StatusCode::RESOURCE_EXHAUSTED;
  }
  static std::string status_text(const grpc::Status& status) {
    return std::string(jackpot::tools::status_code_name(status.error_code())) + " " +
           status.error_message();
  }

  // A refusal the simulator cannot explain: a bug here or in jackpotd. Counted (exit status 1).
  void unexpected(const char* command, const grpc::Status& status) {
    totals_.errors.fetch_add(1);
    say(shape_.table_id + ": " + command + " round " + std::to_string(round_id_) +
        " refused: " + status_text(status));
  }

  void begin_round() {
    if (stopping_ && !resumed_) {
      finish();
      return;
    }
    RoundRandom random(seed_, shape_.table_id, round_id_);
    plan_ = jackpot::tools::plan_round(shape_, options_.style, random);
    record_.save(round_id_, false);
    auto request = std::make_shared<pb::OpenRoundRequest>();
    request->set_table_id(shape_.table_id);
    request->set_round_id(round_id_);
    send<pb::OpenRoundRequest, pb::OpenRoundResponse>(
        "OpenRound", &pb::TableService::Stub::PrepareAsyncOpenRound, request,
        [this](const grpc::Status& status, pb::OpenRoundResponse&) { opened(status); });
  }

  void opened(const grpc::Status& status) {
    // A resumed round may be past OPEN already: its lock is answered as a repeat.
    if (status.ok() || (resumed_ && status.error_code() == grpc::StatusCode::FAILED_PRECONDITION)) {
      lock();
      return;
    }
    if (link_not_open(status)) {
      // An operator closed a link of the table: waiting cures it.
      refused("OpenRound", status);
      wait_then([this] { begin_round(); }, Clock::now() + kRefusedPause);
      return;
    }
    unexpected("OpenRound", status);
    if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
      say(shape_.table_id + ": round " + std::to_string(round_id_) +
          " does not follow the table's rounds on jackpotd (another run played the table "
          "without this --state-dir, or its state was lost): play with the state directory of "
          "the run before, or a new database");
    }
    finish();  // Unknown table, wrong certificate, a counter ahead: nothing waiting cures.
  }

  void refused(const char* command, const grpc::Status& status) {
    totals_.refused.fetch_add(1);
    const std::string text = status_text(status);
    if (text != last_refusal_) {
      say(shape_.table_id + ": " + command + " round " + std::to_string(round_id_) +
          " refused: " + text + " (pausing " +
          std::to_string(std::chrono::seconds(kRefusedPause).count()) + " s)");
    }
    last_refusal_ = text;
  }

  void lock() {
    auto request = std::make_shared<pb::LockWagersRequest>();
    request->set_table_id(shape_.table_id);
    request->set_round_id(round_id_);
    for (const RoundPlan::Wager& wager : plan_.wagers) {
      auto* out = request->add_wagers();
      out->set_seat(wager.seat);
      out->set_link_id(wager.link_id);
      out->set_amount_cents(wager.amount_cents);
    }
    send<pb::LockWagersRequest, pb::LockWagersResponse>(
        "LockWagers", &pb::TableService::Stub::PrepareAsyncLockWagers, request,
        [this](const grpc::Status& status, pb::LockWagersResponse& response) {
          locked(status, response);
        });
  }

  void locked(const grpc::Status& status, const pb::LockWagersResponse& response) {
    if (status.ok()) {
      // A round in which a Must-Hit-By level hit is never voided: that takes a supervisor.
      if (plan_.void_after_lock && response.must_hit_by_hits().empty()) {
        void_round("misdeal");
      } else {
        settle();
      }
      return;
    }
    if (link_not_open(status) && !resumed_) {
      refused("LockWagers", status);
      pause_after_void_ = true;
      void_round("wagers refused: " + status.error_message());
      return;
    }
    if (resumed_) {
      // Voided or settled in the run that stopped (the void is refused then, and ignored), or
      // dealt from another seed: it cannot be played on, so it is voided.
      void_round("simulator restarted during the round");
      return;
    }
    unexpected("LockWagers", status);
    void_round("simulator error");
  }

  void settle() {
    auto request = std::make_shared<pb::SettleRoundRequest>();
    request->set_table_id(shape_.table_id);
    request->set_round_id(round_id_);
    for (std::uint32_t seat = 1; seat < plan_.seat_cards.size(); ++seat) {
      if (plan_.seat_cards[seat].empty()) continue;
      auto* hand = request->add_seats();
      hand->set_seat(seat);
      for (const std::string& card : plan_.seat_cards[seat]) hand->mutable_cards()->add_cards(card);
    }
    for (const std::string& card : plan_.board) request->add_community_cards(card);
    for (const std::string& card : plan_.link_cards) request->add_link_cards(card);
    send<pb::SettleRoundRequest, pb::SettleRoundResponse>(
        "SettleRound", &pb::TableService::Stub::PrepareAsyncSettleRound, request,
        [this](const grpc::Status& status, pb::SettleRoundResponse& response) {
          settled(status, response);
        });
  }

  void settled(const grpc::Status& status, const pb::SettleRoundResponse& response) {
    if (!status.ok()) {
      if (resumed_ && status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
        round_finished();  // Voided in the run that stopped.
        return;
      }
      unexpected("SettleRound", status);
      void_round("simulator error");
      return;
    }
    totals_.settled.fetch_add(1);
    for (const pb::SeatResult& result : response.results()) {
      for (const pb::Award& award : result.awards()) count_award(result, award);
    }
    round_finished();
  }

  void count_award(const pb::SeatResult& result, const pb::Award& award) {
    switch (award.kind()) {
      case pb::AWARD_KIND_FIXED:
        totals_.fixed.fetch_add(1);
        break;
      case pb::AWARD_KIND_DYNAMIC:
        totals_.dynamic.fetch_add(1);
        break;
      case pb::AWARD_KIND_ENVY:
        totals_.envy.fetch_add(1);
        break;
      case pb::AWARD_KIND_PERCENT:
        totals_.percent.fetch_add(1);
        break;
      case pb::AWARD_KIND_MUST_HIT_BY:
        totals_.must_hit_by.fetch_add(1);
        break;
      default:
        return;
    }
    const bool pending = award.payout_state() == pb::PAYOUT_STATE_PENDING;
    if (pending) {
      totals_.pending.fetch_add(1);
    } else {
      totals_.paid_cents.fetch_add(award.amount_cents());
    }
    const bool jackpot =
        award.kind() == pb::AWARD_KIND_PERCENT || award.kind() == pb::AWARD_KIND_MUST_HIT_BY;
    if (jackpot || pending) {
      say(shape_.table_id + " round " + std::to_string(round_id_) + " seat " +
          std::to_string(result.seat()) + ": " + award.hand() + " on " + award.link_id() + " " +
          money(award.amount_cents()) + " (payout " + std::to_string(award.payout_id()) +
          (pending ? ", waits for a supervisor)" : ", paid)"));
    }
  }

  void void_round(const std::string& reason) {
    auto request = std::make_shared<pb::VoidRoundRequest>();
    request->set_table_id(shape_.table_id);
    request->set_round_id(round_id_);
    request->set_reason(reason);
    send<pb::VoidRoundRequest, pb::VoidRoundResponse>(
        "VoidRound", &pb::TableService::Stub::PrepareAsyncVoidRound, request,
        [this](const grpc::Status& status, pb::VoidRoundResponse&) {
          if (status.ok()) {
            totals_.voided.fetch_add(1);
          } else if (!resumed_) {
            unexpected("VoidRound", status);
          }
          round_finished();
        });
  }

  // Records the round as finished and waits for the next one's start: a round's time after the
  // last one started (or at once when that has passed: never several at once to catch up).
  void round_finished() {
    record_.save(round_id_, true);
    ++round_id_;
    resumed_ = false;
    auto when = Clock::now();
    if (pause_after_void_) {
      when += kRefusedPause;
      pause_after_void_ = false;
    } else if (!options_.fast) {
      std::uniform_real_distribution<double> jitter(0.8, 1.2);
      next_start_ += seconds(period_seconds() * jitter(pace_));
      when = std::max(when, next_start_);
      next_start_ = when;
    }
    if (options_.rounds > 0 && totals_.finished_rounds() >= options_.rounds) {
      finish();
      return;
    }
    wait_then([this] { begin_round(); }, when);
  }

  TableShape shape_;
  const Options& options_;
  const Seed& seed_;
  std::unique_ptr<pb::TableService::Stub> stub_;
  grpc::CompletionQueue& queue_;
  Samples& samples_;
  Totals& totals_;
  const std::atomic<bool>& stopping_;
  const std::atomic<bool>& abandon_;
  RoundRecord record_;
  std::mt19937_64 pace_;  // Pace only: never the cards.

  std::uint64_t round_id_ = 1;
  bool finished_ = false;
  bool resumed_ = false;
  bool pause_after_void_ = false;
  RoundPlan plan_;
  Clock::time_point next_start_;
  std::string last_refusal_;

  grpc::Alarm alarm_;
  Alarm alarm_tag_;
  Then after_alarm_;
  Clock::time_point alarm_at_;
  bool alarm_between_rounds_ = true;
};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

// The seed: --seed's text; else the one a previous run kept in the state directory; else a new
// random one (kept there when there is one). Printed, so any run can be replayed.
std::string choose_seed(const Options& options) {
  if (!options.seed_text.empty()) return options.seed_text;
  const std::string kept_path = options.state_dir.empty() ? "" : options.state_dir + "/seed";
  if (!kept_path.empty()) {
    std::ifstream in(kept_path);
    std::string kept;
    if (std::getline(in, kept) && !kept.empty()) return kept;
  }
  unsigned char bytes[8];
  randombytes_buf(bytes, sizeof bytes);
  char text[17];
  for (int i = 0; i < 8; ++i) std::snprintf(text + 2 * i, 3, "%02x", bytes[i]);
  if (!kept_path.empty()) std::ofstream(kept_path) << text << "\n";
  return text;
}

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// The value below which a share p of the total weight lies.
double weighted_percentile(std::vector<std::pair<double, double>>& values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  double total = 0;
  for (const auto& [value, weight] : values) total += weight;
  double below = 0;
  for (const auto& [value, weight] : values) {
    below += weight;
    if (below >= p * total) return value;
  }
  return values.back().first;
}

std::string progress(const Totals& totals, double elapsed) {
  const auto count = [](const std::atomic<std::uint64_t>& value) {
    return static_cast<unsigned long long>(value.load());
  };
  char line[512];
  std::snprintf(
      line, sizeof line,
      "%.0f s: %llu rounds (%llu voided, %.1f/s); jackpots %llu (percent %llu, "
      "must-hit-by %llu); fixed, dynamic and envy pays %llu; %llu payouts held for a "
      "supervisor; %llu retries, %llu refused, %llu errors",
      elapsed, static_cast<unsigned long long>(totals.finished_rounds()), count(totals.voided),
      elapsed > 0 ? static_cast<double>(totals.finished_rounds()) / elapsed : 0.0,
      count(totals.percent) + count(totals.must_hit_by), count(totals.percent),
      count(totals.must_hit_by), count(totals.fixed) + count(totals.dynamic) + count(totals.envy),
      count(totals.pending), count(totals.retries), count(totals.refused), count(totals.errors));
  return line;
}

int run(const Options& options) {
  std::ifstream floor_in(options.floor_file);
  if (!floor_in) {
    std::fprintf(stderr, "jackpot-tablesim: cannot read %s\n", options.floor_file.c_str());
    return 2;
  }
  const std::string floor_text((std::istreambuf_iterator<char>(floor_in)), {});
  const auto paytables = jackpot::load_paytables(jackpot::embedded_paytables());
  if (!paytables) {
    std::fprintf(stderr, "jackpot-tablesim: the shipped paytables do not load\n");
    return 2;
  }
  const auto floor = jackpot::load_floor(floor_text, options.floor_file, *paytables);
  if (!floor) {
    for (const std::string& problem : floor.error()) std::fprintf(stderr, "%s\n", problem.c_str());
    return 2;
  }
  std::string error;
  std::vector<TableShape> shapes = jackpot::tools::table_shapes(*floor, *paytables, error);
  if (!error.empty()) {
    std::fprintf(stderr, "jackpot-tablesim: %s\n", error.c_str());
    return 2;
  }
  if (!options.only_tables.empty()) {
    for (const std::string& id : options.only_tables) {
      if (std::none_of(shapes.begin(), shapes.end(),
                       [&](const TableShape& s) { return s.table_id == id; })) {
        std::fprintf(stderr, "jackpot-tablesim: no table %s on the floor\n", id.c_str());
        return 2;
      }
    }
    std::erase_if(shapes, [&](const TableShape& s) {
      return std::find(options.only_tables.begin(), options.only_tables.end(), s.table_id) ==
             options.only_tables.end();
    });
  }
  if (shapes.empty()) {
    std::fprintf(stderr, "jackpot-tablesim: the floor has no table to play\n");
    return 2;
  }
  if (!options.state_dir.empty()) std::filesystem::create_directories(options.state_dir);
  const std::string seed_text = choose_seed(options);
  const Seed seed = jackpot::tools::seed_from_text(seed_text);

  std::vector<std::unique_ptr<grpc::CompletionQueue>> queues;
  std::vector<Samples> samples(static_cast<std::size_t>(options.threads));
  for (int i = 0; i < options.threads; ++i)
    queues.push_back(std::make_unique<grpc::CompletionQueue>());
  Totals totals;
  std::atomic<bool> stopping{false}, abandon{false};
  std::vector<std::unique_ptr<Table>> tables;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    grpc::ChannelArguments arguments;
    arguments.SetInt("jackpotd.channel", static_cast<int>(i));  // A connection per table.
    // Reconnect within a second of jackpotd coming back (gRPC's default backs off to 2 min).
    arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    auto channel = jackpot::tools::channel_as(options.connection, "table/" + shapes[i].table_id,
                                              arguments, error);
    if (channel == nullptr) {
      std::fprintf(stderr, "jackpot-tablesim: %s\n", error.c_str());
      return 2;
    }
    const std::size_t queue = i % queues.size();
    tables.push_back(std::make_unique<Table>(std::move(shapes[i]), options, seed,
                                             pb::TableService::NewStub(channel), *queues[queue],
                                             samples[queue], totals, stopping, abandon));
  }
  char pace[64];
  std::snprintf(pace, sizeof pace, "a round every %.1f s per table",
                kCasinoRoundSeconds / options.speed);
  say(std::to_string(tables.size()) + " tables, " +
      (options.fast ? std::string("as fast as jackpotd answers") : std::string(pace)) + ", seed " +
      seed_text + ", " + std::to_string(options.threads) + " threads");

  const double cpu_start = cpu_seconds();
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (auto& queue : queues) {
    threads.emplace_back([&queue] {
      void* tag = nullptr;
      bool ok = false;
      while (queue->Next(&tag, &ok)) static_cast<Completion*>(tag)->done(ok);
    });
  }
  // Each table starts on its own queue's thread: an alarm due now.
  struct Starter final : Completion {
    Table* table = nullptr;
    grpc::Alarm alarm;
    void done(bool) override { table->start(); }
  };
  std::vector<std::unique_ptr<Starter>> starters;
  for (std::size_t i = 0; i < tables.size(); ++i) {
    auto starter = std::make_unique<Starter>();
    starter->table = tables[i].get();
    starter->alarm.Set(queues[i % queues.size()].get(), std::chrono::system_clock::now(),
                       starter.get());
    starters.push_back(std::move(starter));
  }

  const int table_count = static_cast<int>(tables.size());
  auto next_progress = start + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(options.progress_seconds));
  Clock::time_point stop_at{};
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  while (totals.tables_finished < table_count) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const bool out_of_time = options.seconds > 0 && elapsed() >= options.seconds;
    const bool enough_rounds = options.rounds > 0 && totals.finished_rounds() >= options.rounds;
    if (!stopping && (g_signal != 0 || out_of_time || enough_rounds)) {
      stopping = true;
      stop_at = Clock::now();
    }
    if (stopping && !abandon && Clock::now() - stop_at > kFinishGrace) {
      say("tables still in a round after " +
          std::to_string(std::chrono::seconds(kFinishGrace).count()) +
          " s: leaving them (--state-dir resumes them)");
      abandon = true;
    }
    if (options.progress_seconds > 0 && Clock::now() >= next_progress) {
      say(progress(totals, elapsed()));
      next_progress += std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(options.progress_seconds));
    }
  }
  const double seconds = elapsed();
  const double cpu = cpu_seconds() - cpu_start;
  for (auto& queue : queues) queue->Shutdown();
  for (auto& thread : threads) thread.join();

  say("done: " + progress(totals, seconds) + ", " + money(totals.paid_cents) + " paid at once");
  if (options.latencies) {
    // Each thread's kept samples stand for all the calls it saw: weighted by seen / kept.
    std::map<std::string, std::vector<std::pair<double, double>>> all;
    std::map<std::string, std::uint64_t> calls;
    for (const Samples& sample : samples) {
      for (const auto& [command, values] : sample.us) {
        const std::uint64_t seen = sample.seen.at(command);
        calls[command] += seen;
        const double weight = static_cast<double>(seen) / static_cast<double>(values.size());
        for (const double value : values) all[command].emplace_back(value, weight);
      }
    }
    char line[256];
    const double requests = static_cast<double>(totals.requests.load());
    std::snprintf(line, sizeof line, "requests %.0f, %.0f requests/s, client CPU %.1f us/request",
                  requests, requests / seconds, requests > 0 ? cpu * 1e6 / requests : 0.0);
    say(line);
    for (auto& [command, values] : all) {
      std::snprintf(line, sizeof line, "%-12s p50 %8.0f us   p99 %8.0f us   (%llu)",
                    command.c_str(), weighted_percentile(values, 0.5),
                    weighted_percentile(values, 0.99),
                    static_cast<unsigned long long>(calls[command]));
      say(line);
    }
  }
  return totals.errors == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Debian builds Abseil without NDEBUG, which leaves gRPC's mutexes checking for lock-order
  // cycles on every acquisition: a debugging aid that costs every call some CPU.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  if (sodium_init() < 0) {
    std::fprintf(stderr, "jackpot-tablesim: libsodium did not start\n");
    return 2;
  }
  Options options;
  std::string plaintext = "off", tables;
  CLI::App app{"jackpot-tablesim: the tables of a floor playing against jackpotd"};
  app.add_option("--target", options.connection.target, "jackpotd's gRPC address")
      ->capture_default_str();
  app.add_option("--pki", options.connection.pki_dir,
                 "ops/pki's directory: ca.pem and table-ID.pem/.key for each table");
  app.add_option("--plaintext", plaintext, "on: no TLS (a jackpotd run with --plaintext on)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--floor", options.floor_file, "the floor jackpotd runs (textproto)")->required();
  app.add_option("--tables", tables, "play only these tables (comma-separated ids)");
  app.add_option("--speed", options.speed, "casino pace (a round a minute per table) times X")
      ->check(CLI::Range(0.001, 1e6))
      ->capture_default_str();
  app.add_flag("--fast", options.fast, "each table plays its rounds back to back");
  app.add_option("--seconds", options.seconds, "stop after S seconds (0: at Ctrl-C)")
      ->check(CLI::Range(0.0, 1e9));
  app.add_option("--rounds", options.rounds, "stop after N finished rounds in all (0: no limit)");
  app.add_option("--seed", options.seed_text, "deal reproducibly from this seed");
  app.add_option("--state-dir", options.state_dir,
                 "keep each table's round id here; a later run resumes from it");
  app.add_option("--wager-probability", options.style.wager_probability,
                 "each seat wagers on each link with this probability")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--max-units", options.style.max_units, "wagers of 1..N base wagers")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--void-probability", options.style.void_probability,
                 "a round is voided as a misdeal with this probability")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--threads", options.threads, "completion-queue threads")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--deadline-ms", options.deadline_ms, "each request's deadline")
      ->check(CLI::Range(1, 3600000))
      ->capture_default_str();
  app.add_option("--progress-seconds", options.progress_seconds, "progress line every S (0: none)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_flag("--latencies", options.latencies, "print each command's latency and the CPU used");
  CLI11_PARSE(app, argc, argv);
  options.connection.plaintext = plaintext == "on";
  options.only_tables = split(tables);
  if (!options.connection.plaintext && options.connection.pki_dir.empty()) {
    std::fprintf(stderr,
                 "jackpot-tablesim: say how to reach jackpotd: --pki DIR or --plaintext on\n");
    return 2;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  return run(options);
}
