// jackpotctl: the command line of jackpotd's admins and supervisors (AdminService,
// SupervisorService), over mutual TLS as the principal whose certificate ops/pki made.
// `jackpotctl --help` and `jackpotctl COMMAND --help` say what each command does; the exit codes
// are in kExitCodes below (and every --help's footer).
#include <grpcpp/grpcpp.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "jackpot/v1/admin.grpc.pb.h"
#include "jackpot/v1/supervisor.grpc.pb.h"
#include "meters/digest.h"
#include "meters/money.h"
#include "tools/client_identity.h"
#include "tools/ctl_text.h"

namespace {

namespace pb = ::jackpot::v1;
using jackpot::tools::money_text;

constexpr int kOk = 0;
constexpr int kRefused = 1;      // jackpotd answered with an error.
constexpr int kUsage = 2;        // The command line is wrong, or a file cannot be read.
constexpr int kCheckFailed = 3;  // A check found a problem: unbalanced, broken chain, mismatch.
constexpr int kUnavailable = 4;  // No answer in time, or UNAVAILABLE: retry later.

constexpr const char* kExitCodes =
    "Exit codes: 0 done; 1 jackpotd refused the request (its status and message are printed);\n"
    "2 the command line is wrong or a certificate file cannot be read; 3 a check found a\n"
    "problem (a level that does not balance, balances that disagree, a broken audit chain, a\n"
    "trigger that does not match its commitment); 4 no answer within --deadline, or\n"
    "UNAVAILABLE (jackpotd stopped or unreachable, starting, or its database is down): retry.";

// Where and as whom to call, and how long to wait for each answer.
struct Session {
  jackpot::tools::Connection connection;
  std::string principal;
  double deadline_seconds = 10;
  std::shared_ptr<grpc::Channel> channel;

  std::unique_ptr<grpc::ClientContext> context() const {
    auto made = std::make_unique<grpc::ClientContext>();
    made->set_deadline(
        std::chrono::system_clock::now() +
        std::chrono::microseconds(static_cast<std::int64_t>(deadline_seconds * 1e6)));
    return made;
  }
};

int failed(const grpc::Status& status) {
  std::fprintf(stderr, "jackpotctl: %s: %s\n",
               jackpot::tools::status_code_name(status.error_code()),
               status.error_message().c_str());
  const bool retry = status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
                     status.error_code() == grpc::StatusCode::UNAVAILABLE;
  return retry ? kUnavailable : kRefused;
}

std::string time_of(const google::protobuf::Timestamp& time) {
  return jackpot::tools::time_text(time.seconds() * 1'000'000 + time.nanos() / 1000);
}

std::string hex_of(const std::string& bytes) {
  return jackpot::to_hex(std::span<const std::uint8_t>(
      reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

// ---- AdminService ---------------------------------------------------------------------------

int meters(Session& session, const std::vector<std::string>& links) {
  pb::ListMetersRequest request;
  for (const auto& link : links) request.add_link_ids(link);
  pb::ListMetersResponse response;
  auto stub = pb::AdminService::NewStub(session.channel);
  if (auto status = stub->ListMeters(session.context().get(), request, &response); !status.ok()) {
    return failed(status);
  }
  std::printf("%-16s %5s  %-24s %20s %20s\n", "link", "level", "name", "meter", "reserve");
  for (const auto& level : response.levels()) {
    std::printf("%-16s %5u  %-24s %20s %20s\n", level.link_id().c_str(), level.level(),
                level.name().c_str(), money_text(level.meter_micros()).c_str(),
                money_text(level.reserve_micros()).c_str());
  }
  for (const auto& trigger : response.trigger_commitments()) {
    std::printf("%s level %u: hidden trigger in (%s, %s], commitment %s\n",
                trigger.link_id().c_str(), trigger.level(),
                money_text(trigger.above_micros()).c_str(),
                money_text(trigger.up_to_micros()).c_str(), hex_of(trigger.commitment()).c_str());
  }
  return kOk;
}

int config(Session& session, bool paytables) {
  pb::GetConfigResponse response;
  auto stub = pb::AdminService::NewStub(session.channel);
  if (auto status = stub->GetConfig(session.context().get(), {}, &response); !status.ok()) {
    return failed(status);
  }
  std::printf("# floor %s, version %llu, sha256 %s (jackpotd %s)\n", response.floor_file().c_str(),
              static_cast<unsigned long long>(response.config_version()),
              response.floor_sha256().c_str(), response.daemon_version().c_str());
  std::printf("%s", response.config_text().c_str());
  for (const auto& paytable : response.paytables()) {
    if (!paytables) {
      std::printf("# uses paytable %s\n", paytable.paytable_id().c_str());
    } else {
      std::printf("# paytable %s\n%s", paytable.paytable_id().c_str(), paytable.text().c_str());
    }
  }
  return kOk;
}

int link_status(Session& session, const std::string& link, bool open, const std::string& reason) {
  pb::SetLinkStatusRequest request;
  request.set_link_id(link);
  request.set_status(open ? pb::LINK_STATUS_OPEN : pb::LINK_STATUS_CLOSED);
  request.set_reason(reason);
  pb::SetLinkStatusResponse response;
  auto stub = pb::AdminService::NewStub(session.channel);
  if (auto status = stub->SetLinkStatus(session.context().get(), request, &response);
      !status.ok()) {
    return failed(status);
  }
  std::printf("link %s is %s\n", link.c_str(), open ? "open" : "closed");
  return kOk;
}

int adjust(Session& session, const std::string& link, std::uint32_t level,
           const std::string& amount_text, const std::string& request_id,
           const std::string& reason) {
  // The engine's own parser: digits with at most six decimals, bounded (no wrap-around).
  const auto amount = jackpot::Money::parse(amount_text);
  if (!amount) {
    std::fprintf(stderr,
                 "jackpotctl: AMOUNT is currency units with at most six decimals, e.g. 25 or "
                 "-0.01, not '%s'\n",
                 amount_text.c_str());
    return kUsage;
  }
  pb::AdjustMeterRequest request;
  request.set_link_id(link);
  request.set_level(level);
  request.set_amount_micros(amount->micros());
  request.set_request_id(request_id);
  request.set_reason(reason);
  pb::AdjustMeterResponse response;
  auto stub = pb::AdminService::NewStub(session.channel);
  if (auto status = stub->AdjustMeter(session.context().get(), request, &response); !status.ok()) {
    return failed(status);
  }
  const auto& balance = response.balance();
  std::printf("%s level %u adjusted by %s (transfer %llu): meter %s, reserve %s\n",
              balance.link_id().c_str(), balance.level(), money_text(amount->micros()).c_str(),
              static_cast<unsigned long long>(response.transfer_id()),
              money_text(balance.meter_micros()).c_str(),
              money_text(balance.reserve_micros()).c_str());
  return kOk;
}

int report(Session& session, const std::optional<std::string>& from,
           const std::optional<std::string>& to, const std::vector<std::string>& links) {
  pb::ReconciliationReportRequest request;
  for (const auto& [text, time] :
       {std::pair{from, request.mutable_from_time()}, std::pair{to, request.mutable_to_time()}}) {
    if (!text) continue;
    const auto seconds = jackpot::tools::parse_time(*text);
    if (!seconds) {
      std::fprintf(stderr,
                   "jackpotctl: '%s' is not a time: give Unix seconds (1764547200) or UTC as "
                   "2025-12-01, 2025-12-01T08:00Z or 2025-12-01T08:00:00Z\n",
                   text->c_str());
      return kUsage;
    }
    time->set_seconds(*seconds);
  }
  if (!from) request.clear_from_time();
  if (!to) request.clear_to_time();
  for (const auto& link : links) request.add_link_ids(link);
  pb::ReconciliationReport response;
  auto stub = pb::AdminService::NewStub(session.channel);
  if (auto status = stub->GetReconciliationReport(session.context().get(), request, &response);
      !status.ok()) {
    return failed(status);
  }
  bool all_balanced = true;
  for (const auto& level : response.levels()) {
    const std::string verdict =
        level.balanced() ? "BALANCED"
                         : "DOES NOT BALANCE by " + money_text(level.difference_micros());
    std::printf(
        "%s level %u: start %s + contributions %s + seeds %s + overflow in %s + "
        "adjustments %s - awards %s - overflow out %s = end %s  %s  (transfers after %llu "
        "through %llu; snapshots at %s and %s)\n",
        level.link_id().c_str(), level.level(), money_text(level.start_micros()).c_str(),
        money_text(level.contributions_micros()).c_str(), money_text(level.seeds_micros()).c_str(),
        money_text(level.overflow_in_micros()).c_str(),
        money_text(level.adjustments_micros()).c_str(), money_text(level.awards_micros()).c_str(),
        money_text(level.overflow_out_micros()).c_str(), money_text(level.end_micros()).c_str(),
        verdict.c_str(), static_cast<unsigned long long>(level.start_through_transfer_id()),
        static_cast<unsigned long long>(level.end_through_transfer_id()),
        level.has_start_snapshot_time() ? time_of(level.start_snapshot_time()).c_str()
                                        : "the beginning",
        time_of(level.end_snapshot_time()).c_str());
    all_balanced = all_balanced && level.balanced();
  }
  return all_balanced ? kOk : kCheckFailed;
}

int snapshot(Session& session) {
  pb::TakeBalanceSnapshotResponse response;
  auto stub = pb::AdminService::NewStub(session.channel);
  if (auto status = stub->TakeBalanceSnapshot(session.context().get(), {}, &response);
      !status.ok()) {
    return failed(status);
  }
  for (const auto& link : response.links()) {
    std::printf("%s: balances through transfer %llu\n", link.link_id().c_str(),
                static_cast<unsigned long long>(link.through_transfer_id()));
  }
  return kOk;
}

int balances(Session& session) {
  pb::AuditBalancesResponse response;
  auto stub = pb::AdminService::NewStub(session.channel);
  if (auto status = stub->AuditBalances(session.context().get(), {}, &response); !status.ok()) {
    return failed(status);
  }
  std::printf("%-16s %-16s %5s %20s %20s\n", "link", "account", "level", "from snapshot",
              "full sum");
  for (const auto& account : response.accounts()) {
    const bool equal = account.from_snapshot_micros() == account.full_sum_micros();
    std::printf("%-16s %-16s %5u %20s %20s%s\n", account.link_id().c_str(),
                account.account().c_str(), account.level(),
                money_text(account.from_snapshot_micros()).c_str(),
                money_text(account.full_sum_micros()).c_str(), equal ? "" : "  DIFFERS");
  }
  std::printf("%s\n", response.consistent() ? "CONSISTENT" : "INCONSISTENT");
  return response.consistent() ? kOk : kCheckFailed;
}

// Walks the audit trail a page at a time and checks every link of the chain here, not in the
// daemon: the first event that breaks it is named. With an anchor (a head printed before and
// kept elsewhere) the walk also checks that its event still hashes the same; `from_anchor` starts
// the walk there instead of at event 1 (what came before was verified when the anchor was made).
int audit_verify(Session& session, std::uint32_t page_size, bool print,
                 const std::optional<std::string>& anchor_text, bool from_anchor,
                 const std::optional<std::string>& anchors_file) {
  std::optional<jackpot::AuditChainPosition> anchor;
  if (anchor_text) {
    anchor = jackpot::tools::parse_anchor(*anchor_text);
    if (!anchor) {
      std::fprintf(stderr,
                   "jackpotctl: --anchor is SEQ:HASH, an event number and its 64 hex digit "
                   "hash, as verify prints its head\n");
      return kUsage;
    }
  } else if (from_anchor) {
    std::fprintf(stderr, "jackpotctl: --from-anchor needs --anchor SEQ:HASH\n");
    return kUsage;
  }
  // Every anchor to check: the one given, and each head jackpotd's log recorded.
  std::map<std::int64_t, jackpot::AuditChainPosition> anchors;
  if (anchor) anchors[anchor->seq] = *anchor;
  std::size_t logged = 0;
  if (anchors_file) {
    std::ifstream file(*anchors_file, std::ios::binary);
    if (!file) {
      std::fprintf(stderr, "jackpotctl: cannot read %s\n", anchors_file->c_str());
      return kUsage;
    }
    const std::string log((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    for (const auto& found : jackpot::tools::anchors_in_log(log)) {
      const auto [kept, added] = anchors.emplace(found.seq, found);
      if (!added && kept->second.hash != found.hash) {
        std::printf("BROKEN: the log names two hashes for event %lld: %s and %s\n",
                    static_cast<long long>(found.seq), jackpot::to_hex(kept->second.hash).c_str(),
                    jackpot::to_hex(found.hash).c_str());
        return kCheckFailed;
      }
      ++logged;
    }
    if (logged == 0) {
      std::fprintf(
          stderr,
          "jackpotctl: %s holds no \"audit chain head (seq=N, hash=HEX)\" line of jackpotd's\n",
          anchors_file->c_str());
      return kUsage;
    }
  }
  const auto broken = [](const std::string& why) {
    std::printf("BROKEN: %s\n", why.c_str());
    return kCheckFailed;
  };
  auto stub = pb::AdminService::NewStub(session.channel);
  jackpot::tools::AuditWalk walk;
  if (from_anchor) walk.start_at(*anchor);
  std::size_t anchors_seen = 0;
  std::map<std::string, std::uint64_t> actions;
  for (;;) {
    pb::ReadAuditTrailRequest request;
    request.set_after_seq(static_cast<std::uint64_t>(walk.position().seq));
    request.set_limit(page_size);
    pb::ReadAuditTrailResponse response;
    if (auto status = stub->ReadAuditTrail(session.context().get(), request, &response);
        !status.ok()) {
      // Rows the chain's schema would refuse: altered, as surely as a hash that does not match.
      if (status.error_code() == grpc::StatusCode::DATA_LOSS) {
        return broken(status.error_message());
      }
      return failed(status);
    }
    for (const auto& wire : response.events()) {
      if (wire.prev_hash().size() != 32 || wire.hash().size() != 32) {
        return broken("event " + std::to_string(wire.seq()) + ": its hashes are not 32 bytes");
      }
      jackpot::AuditEvent event;
      event.seq = static_cast<std::int64_t>(wire.seq());
      event.at_us = wire.time().seconds() * 1'000'000 + wire.time().nanos() / 1000;
      event.principal = wire.principal();
      event.action = wire.action();
      event.detail = wire.detail_json();
      std::copy(wire.prev_hash().begin(), wire.prev_hash().end(), event.prev_hash.begin());
      std::copy(wire.hash().begin(), wire.hash().end(), event.hash.begin());
      if (!walk.feed(event)) return broken(walk.broken());
      if (const auto kept = anchors.find(event.seq); kept != anchors.end()) {
        ++anchors_seen;
        if (event.hash != kept->second.hash) {
          return broken("event " + std::to_string(event.seq) + " hashes to " +
                        jackpot::to_hex(event.hash) + ", not the anchor's " +
                        jackpot::to_hex(kept->second.hash));
        }
      }
      ++actions[event.action];
      if (print) {
        std::printf("%llu %s %s %s %s\n", static_cast<unsigned long long>(wire.seq()),
                    time_of(wire.time()).c_str(), event.principal.c_str(), event.action.c_str(),
                    event.detail.c_str());
      }
    }
    if (static_cast<std::uint32_t>(response.events_size()) < page_size) {
      jackpot::AuditChainPosition head;
      head.seq = static_cast<std::int64_t>(response.head_seq());
      if (response.head_hash().size() != head.hash.size()) {
        return broken("the chain's head hash is not 32 bytes");
      }
      std::copy(response.head_hash().begin(), response.head_hash().end(), head.hash.begin());
      if (!walk.finish(head)) return broken(walk.broken());
      break;
    }
  }
  // An anchor the walk did not meet: past the chain's end (the chain was cut back), or before
  // where a --from-anchor walk started (not checked, and said so).
  const std::int64_t first = from_anchor ? anchor->seq : 1;
  for (const auto& [seq, kept] : anchors) {
    if (seq > walk.position().seq) {
      return broken("the chain ends at event " + std::to_string(walk.position().seq) +
                    ", before the anchor's event " + std::to_string(seq));
    }
  }
  const std::size_t skipped = anchors.size() - anchors_seen;
  std::string anchored;
  if (anchor && !anchors_file) {
    anchored = ", the anchor among them";
  } else if (!anchors.empty()) {
    anchored = ", " + std::to_string(anchors_seen) + " anchor" + (anchors_seen == 1 ? "" : "s") +
               " among them" +
               (skipped > 0 ? " (" + std::to_string(skipped) + " before event " +
                                  std::to_string(first) + " not checked)"
                            : "");
  }
  std::printf("VERIFIED: events %lld to %lld chained without a break%s; head %lld:%s\n",
              static_cast<long long>(first), static_cast<long long>(walk.position().seq),
              anchored.c_str(), static_cast<long long>(walk.position().seq),
              jackpot::to_hex(walk.position().hash).c_str());
  for (const auto& [action, count] : actions) {
    std::printf("  %-24s %llu\n", action.c_str(), static_cast<unsigned long long>(count));
  }
  return kOk;
}

// ---- SupervisorService ----------------------------------------------------------------------

const char* state_name(pb::PayoutState state) {
  switch (state) {
    case pb::PAYOUT_STATE_PENDING:
      return "PENDING";
    case pb::PAYOUT_STATE_PAID:
      return "PAID";
    case pb::PAYOUT_STATE_REJECTED:
      return "REJECTED";
    default:
      return "UNSPECIFIED";
  }
}

void print_payout(const pb::Payout& payout) {
  std::string approvals;
  for (const auto& by : payout.approved_by()) approvals += (approvals.empty() ? "" : ",") + by;
  std::printf(
      "payout %llu %s: %s.%02lld on %s level %u (%s) at %s round %llu seat %u; approvals "
      "%d of %u%s%s",
      static_cast<unsigned long long>(payout.payout_id()), state_name(payout.state()),
      std::to_string(payout.amount_cents() / 100).c_str(),
      static_cast<long long>(payout.amount_cents() % 100), payout.link_id().c_str(), payout.level(),
      payout.hand().c_str(), payout.table_id().c_str(),
      static_cast<unsigned long long>(payout.round_id()), payout.seat(), payout.approved_by_size(),
      payout.approvals_required(), approvals.empty() ? "" : " by ", approvals.c_str());
  if (payout.state() == pb::PAYOUT_STATE_REJECTED) {
    std::printf("; rejected by %s: %s", payout.rejected_by().c_str(),
                payout.rejected_reason().c_str());
  }
  if (payout.rejection_requested_by_size() > 0) {
    std::printf("; rejection asked by %s, a second supervisor must decide",
                payout.rejection_requested_by(0).c_str());
  }
  std::printf("; since %s\n", time_of(payout.created_time()).c_str());
}

// A live list: what waits, then each change as jackpotd commits it, until interrupted or the
// daemon stops (exit 0). A stream that was open and then fell behind (RESOURCE_EXHAUSTED) or was
// ended by a rebuild of the controller's state (UNAVAILABLE) is watched again after a pause
// (1 s, doubling to 30 s): the list comes first again. A stream refused at its opening (over the
// stream limits) is an error. `--exit-when-idle` ends the watch once nothing has come for that
// long (scripts).
int payouts_watch(Session& session, const std::vector<std::string>& links, double idle_seconds) {
  using Clock = std::chrono::steady_clock;
  auto pause = std::chrono::seconds(1);
  for (;;) {
    // The connection within the deadline; then the stream lasts as long as it is wanted.
    if (!session.channel->WaitForConnected(
            std::chrono::system_clock::now() +
            std::chrono::microseconds(static_cast<std::int64_t>(session.deadline_seconds * 1e6)))) {
      std::fprintf(stderr, "jackpotctl: UNAVAILABLE: no connection to %s within %.1f s\n",
                   session.connection.target.c_str(), session.deadline_seconds);
      return kUnavailable;
    }
    pb::WatchPendingPayoutsRequest request;
    for (const auto& link : links) request.add_link_ids(link);
    auto stub = pb::SupervisorService::NewStub(session.channel);
    grpc::ClientContext context;
    std::map<std::uint64_t, pb::Payout> waiting;
    auto reader = stub->WatchPendingPayouts(&context, request);
    // jackpotd sends its initial metadata as soon as it takes the stream: from then on it was
    // open, even before the first payout.
    reader->WaitForInitialMetadata();
    const bool opened = context.GetServerInitialMetadata().count("jackpot-watch") > 0;
    pb::PayoutEvent event;
    std::mutex mutex;
    std::condition_variable changed;
    bool done = false;
    bool idle_cancelled = false;
    auto last = Clock::now();
    std::thread idle;
    if (idle_seconds > 0) {
      const auto limit =
          std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(idle_seconds));
      idle = std::thread([&, limit] {
        std::unique_lock lock(mutex);
        while (!done) {
          if (Clock::now() - last >= limit) {
            idle_cancelled = true;
            context.TryCancel();
            return;
          }
          changed.wait_until(lock, last + limit);
        }
      });
    }
    bool served = false;
    while (reader->Read(&event)) {
      served = true;
      pause = std::chrono::seconds(1);
      {
        const std::lock_guard lock(mutex);
        last = Clock::now();
      }
      const pb::Payout& payout = event.payout();
      if (payout.state() == pb::PAYOUT_STATE_PENDING) {
        waiting[payout.payout_id()] = payout;
      } else {
        waiting.erase(payout.payout_id());
      }
      print_payout(payout);
      std::printf("  %zu waiting\n", waiting.size());
      std::fflush(stdout);
    }
    const grpc::Status status = reader->Finish();
    {
      const std::lock_guard lock(mutex);
      done = true;
    }
    changed.notify_all();
    if (idle.joinable()) idle.join();
    if (status.ok() || idle_cancelled) return kOk;
    const bool again =
        (opened || served) && (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED ||
                               status.error_code() == grpc::StatusCode::UNAVAILABLE);
    if (!again) return failed(status);
    std::printf("-- the watch ended (%s: %s); watching again in %lld s\n",
                jackpot::tools::status_code_name(status.error_code()),
                status.error_message().c_str(), static_cast<long long>(pause.count()));
    std::fflush(stdout);
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::seconds(30));
  }
}

int payout_decision(Session& session, std::uint64_t payout_id, const std::string& request_id,
                    const std::optional<std::string>& reject_reason) {
  auto stub = pb::SupervisorService::NewStub(session.channel);
  grpc::Status status;
  pb::Payout payout;
  if (reject_reason) {
    pb::RejectPayoutRequest request;
    request.set_payout_id(payout_id);
    request.set_request_id(request_id);
    request.set_reason(*reject_reason);
    pb::RejectPayoutResponse response;
    status = stub->RejectPayout(session.context().get(), request, &response);
    payout = response.payout();
  } else {
    pb::ApprovePayoutRequest request;
    request.set_payout_id(payout_id);
    request.set_request_id(request_id);
    pb::ApprovePayoutResponse response;
    status = stub->ApprovePayout(session.context().get(), request, &response);
    payout = response.payout();
  }
  if (!status.ok()) return failed(status);
  print_payout(payout);
  return kOk;
}

int rebase(Session& session, const std::string& table, std::uint64_t next_round,
           const std::string& request_id, const std::string& reason) {
  pb::RebaseRoundCounterRequest request;
  request.set_table_id(table);
  request.set_next_round_id(next_round);
  request.set_request_id(request_id);
  request.set_reason(reason);
  pb::RebaseRoundCounterResponse response;
  auto stub = pb::SupervisorService::NewStub(session.channel);
  if (auto status = stub->RebaseRoundCounter(session.context().get(), request, &response);
      !status.ok()) {
    return failed(status);
  }
  std::printf(
      "table %s: round counter re-based (epoch %llu): latest round was %llu, next round id "
      "%llu; by %s at %s\n",
      response.table_id().c_str(), static_cast<unsigned long long>(response.epoch()),
      static_cast<unsigned long long>(response.last_round_id()),
      static_cast<unsigned long long>(response.next_round_id()), response.requested_by().c_str(),
      time_of(response.rebased_time()).c_str());
  return kOk;
}

int void_round(Session& session, const std::string& table, std::uint64_t round,
               const std::string& request_id, const std::string& reason) {
  pb::SupervisorVoidRoundRequest request;
  request.set_table_id(table);
  request.set_round_id(round);
  request.set_request_id(request_id);
  request.set_reason(reason);
  pb::SupervisorVoidRoundResponse response;
  auto stub = pb::SupervisorService::NewStub(session.channel);
  if (auto status = stub->VoidRound(session.context().get(), request, &response); !status.ok()) {
    return failed(status);
  }
  std::string payouts;
  for (const std::uint64_t payout : response.payout_ids()) {
    payouts += (payouts.empty() ? "" : ", ") + std::to_string(payout);
  }
  if (response.state() == pb::ROUND_VOID_STATE_VOIDED) {
    std::printf("table %s round %llu: VOIDED, %s refunded; hit payouts rejected: %s; by %s at %s\n",
                response.table_id().c_str(), static_cast<unsigned long long>(response.round_id()),
                money_text(response.reversed_micros()).c_str(),
                payouts.empty() ? "none" : payouts.c_str(), response.requested_by().c_str(),
                time_of(response.voided_time()).c_str());
  } else {
    std::printf(
        "table %s round %llu: void REQUESTED by %s at %s; hit payouts %s need a second "
        "supervisor's void (or rejection)\n",
        response.table_id().c_str(), static_cast<unsigned long long>(response.round_id()),
        response.requested_by().c_str(), time_of(response.voided_time()).c_str(), payouts.c_str());
  }
  return kOk;
}

// ---- Local checks ---------------------------------------------------------------------------

int trigger_verify(const std::string& commitment_hex, std::int64_t point_micros,
                   const std::string& salt_hex) {
  const auto commitment = jackpot::tools::parse_hex(commitment_hex, 32);
  const auto salt = jackpot::tools::parse_hex(salt_hex, 32);
  if (!commitment || !salt) {
    std::fprintf(stderr, "jackpotctl: the %s must be 64 hex digits (32 bytes)\n",
                 !commitment ? "commitment" : "salt");
    return kUsage;
  }
  if (const auto mismatch = jackpot::tools::trigger_mismatch(point_micros, *salt, *commitment)) {
    std::printf("MISMATCH: %s\n", mismatch->c_str());
    return kCheckFailed;
  }
  std::printf("MATCHES: point %s and the salt open commitment %s\n",
              money_text(point_micros).c_str(), commitment_hex.c_str());
  return kOk;
}

// An integer read in decimal digits only (CLI11's own conversion takes "010" as octal 8, "0x10"
// as 16 and "-1" as 2^64 - 1): anything else is a usage error naming the option.
template <typename Integer>
CLI::Option* add_decimal(CLI::App* command, const std::string& name, Integer& into,
                         std::uint64_t min, std::uint64_t max, const std::string& help) {
  return command->add_option_function<std::string>(
      name,
      [name, &into, min, max](const std::string& text) {
        const auto value = jackpot::tools::parse_decimal(text, max);
        if (!value || *value < min) {
          throw CLI::ValidationError(name, "'" + text + "' is not a whole number from " +
                                               std::to_string(min) + " to " + std::to_string(max) +
                                               " in decimal digits");
        }
        into = static_cast<Integer>(*value);
      },
      help);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "jackpotctl: the command line of jackpotd's admins and supervisors. Every call goes over\n"
      "mutual TLS as --as PRINCIPAL, with that principal's certificate from the directory ops/pki\n"
      "made (--pki DIR), and waits at most --deadline seconds for its answer.",
      "jackpotctl"};
  app.require_subcommand(1);
  Session session;
  app.add_option("--target", session.connection.target, "jackpotd's gRPC address, HOST:PORT")
      ->capture_default_str();
  app.add_option("--pki", session.connection.pki_dir,
                 "directory with ca.pem and ROLE-ID.pem/.key (ops/pki)");
  app.add_option("--as", session.principal, "the principal to call as: admin/ID or supervisor/ID");
  std::string plaintext = "off";
  app.add_option("--plaintext", plaintext,
                 "on: no TLS, against a daemon started with --plaintext on (development only)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--deadline", session.deadline_seconds,
                 "seconds to wait for each answer (and for a watch's connection)")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();

  std::function<int()> run;
  bool connects = true;

  auto* meters_cmd = app.add_subcommand(
      "meters", "every level's meter and reserve, and each hidden trigger's commitment (admin)");
  std::vector<std::string> links;
  meters_cmd->add_option("LINK", links, "only these links (default: every link)");
  meters_cmd->callback([&] { run = [&] { return meters(session, links); }; });

  auto* config_cmd = app.add_subcommand("config", "the floor in force and its version (admin)");
  bool with_paytables = false;
  config_cmd->add_flag("--paytables", with_paytables, "also print every paytable's text");
  config_cmd->callback([&] { run = [&] { return config(session, with_paytables); }; });

  auto* links_cmd =
      app.add_subcommand("links", "open or close a link for progressive wagers (admin)");
  links_cmd->require_subcommand(1);
  std::string link;
  std::string reason;
  for (const bool open : {true, false}) {
    auto* sub = links_cmd->add_subcommand(open ? "open" : "close",
                                          open ? "open a link: its tables take wagers again"
                                               : "close a link: its tables stop taking wagers");
    sub->add_option("LINK", link, "the link")->required();
    sub->add_option("--reason", reason, "why, for the journal and the audit trail")->required();
    sub->callback(
        [&, open] { run = [&, open] { return link_status(session, link, open, reason); }; });
  }

  auto* adjust_cmd = app.add_subcommand(
      "adjust",
      "raise or lower a meter from or back to seed funding, journaled and audited (admin); "
      "running it again with the same --request-id applies it once");
  std::uint32_t level = 0;
  std::string amount;
  std::string request_id;
  adjust_cmd->add_option("LINK", link, "the link")->required();
  add_decimal(adjust_cmd, "LEVEL", level, 1, UINT32_MAX, "the level number, from 1")->required();
  adjust_cmd
      ->add_option("AMOUNT", amount,
                   "currency units, at most six decimals; negative lowers (e.g. 25, -0.01)")
      ->required()
      ->allow_extra_args(false);
  adjust_cmd->add_option("--request-id", request_id, "your idempotency key, 1..64 bytes")
      ->required();
  adjust_cmd->add_option("--reason", reason, "why, for the journal and the audit trail")
      ->required();
  adjust_cmd->callback(
      [&] { run = [&] { return adjust(session, link, level, amount, request_id, reason); }; });

  auto* report_cmd = app.add_subcommand(
      "report",
      "the reconciliation of each level over a period (admin); exit 3 when one does "
      "not balance");
  std::optional<std::string> from;
  std::optional<std::string> to;
  report_cmd->add_option("--from", from,
                         "start: Unix seconds or UTC (2025-12-01, 2025-12-01T08:00:00Z)");
  report_cmd->add_option("--to", to, "end, as --from (default: now)");
  report_cmd->add_option("LINK", links, "only these links (default: every link)");
  report_cmd->callback([&] { run = [&] { return report(session, from, to, links); }; });

  auto* snapshot_cmd =
      app.add_subcommand("snapshot", "record a balance snapshot of every link now (admin)");
  snapshot_cmd->callback([&] { run = [&] { return snapshot(session); }; });

  auto* balances_cmd = app.add_subcommand(
      "balances",
      "every account from its snapshot and from the full journal (admin); exit 3 "
      "when they differ");
  balances_cmd->callback([&] { run = [&] { return balances(session); }; });

  auto* audit_cmd = app.add_subcommand("audit", "the audit trail (admin)");
  audit_cmd->require_subcommand(1);
  auto* verify_cmd = audit_cmd->add_subcommand(
      "verify",
      "walk the whole hash chain and check every event here; names the first broken event "
      "(exit 3)");
  std::uint32_t page_size = 500;
  bool print_events = false;
  add_decimal(verify_cmd, "--page", page_size, 1, 500, "events per call, 1..500 (default 500)");
  verify_cmd->add_flag("--print", print_events, "print every event as it is checked");
  std::optional<std::string> anchor;
  bool from_anchor = false;
  verify_cmd->add_option("--anchor", anchor,
                         "SEQ:HASH, a head an earlier verify printed and you kept elsewhere: "
                         "fails unless that event still hashes to HASH");
  verify_cmd->add_flag("--from-anchor", from_anchor,
                       "start the walk at the anchor's event instead of event 1 (what came "
                       "before was verified when the anchor was printed)");
  std::optional<std::string> anchors_file;
  verify_cmd->add_option(
      "--anchors-from", anchors_file,
      "FILE: jackpotd's log (text or JSON); fails unless every event it names "
      "in an \"audit chain head (seq=N, hash=HEX)\" line (or its JSON form) still hashes to HEX");
  verify_cmd->callback([&] {
    run = [&] {
      return audit_verify(session, page_size, print_events, anchor, from_anchor, anchors_file);
    };
  });

  auto* payouts_cmd = app.add_subcommand("payouts", "payouts that wait for a supervisor");
  payouts_cmd->require_subcommand(1);
  auto* watch_cmd = payouts_cmd->add_subcommand(
      "watch",
      "a live list: every pending payout, then each change as it is committed "
      "(supervisor); Ctrl-C ends it");
  double idle_seconds = 0;
  watch_cmd->add_option("--link", links, "only these links");
  watch_cmd
      ->add_option("--exit-when-idle", idle_seconds,
                   "end (exit 0) once nothing has come for this many seconds (0.1..86400)")
      ->check(CLI::Range(0.1, 86400.0));
  watch_cmd->callback([&] { run = [&] { return payouts_watch(session, links, idle_seconds); }; });
  std::uint64_t payout_id = 0;
  auto* approve_cmd = payouts_cmd->add_subcommand(
      "approve",
      "approve a pending payout as --as (supervisor); repeating the same "
      "--request-id answers the first answer");
  add_decimal(approve_cmd, "PAYOUT_ID", payout_id, 1, UINT64_MAX, "the payout")->required();
  approve_cmd->add_option("--request-id", request_id, "your idempotency key, 1..64 bytes")
      ->required();
  approve_cmd->callback(
      [&] { run = [&] { return payout_decision(session, payout_id, request_id, std::nullopt); }; });
  auto* reject_cmd = payouts_cmd->add_subcommand(
      "reject", "reject a pending payout: the award returns to the meter (supervisor)");
  add_decimal(reject_cmd, "PAYOUT_ID", payout_id, 1, UINT64_MAX, "the payout")->required();
  reject_cmd->add_option("--request-id", request_id, "your idempotency key, 1..64 bytes")
      ->required();
  reject_cmd->add_option("--reason", reason, "why, for the journal and the audit trail")
      ->required();
  reject_cmd->callback(
      [&] { run = [&] { return payout_decision(session, payout_id, request_id, reason); }; });

  auto* rebase_cmd = app.add_subcommand(
      "rebase", "re-base a table's round counter after a controller card swap (supervisor)");
  std::string table;
  std::uint64_t next_round = 0;
  rebase_cmd->add_option("TABLE", table, "the table")->required();
  add_decimal(rebase_cmd, "NEXT_ROUND_ID", next_round, 1, INT64_MAX,
              "the first round id it may open after")
      ->required();
  rebase_cmd->add_option("--request-id", request_id, "your idempotency key, 1..64 bytes")
      ->required();
  rebase_cmd->add_option("--reason", reason, "why, for the journal and the audit trail")
      ->required();
  rebase_cmd->callback(
      [&] { run = [&] { return rebase(session, table, next_round, request_id, reason); }; });

  auto* void_cmd = app.add_subcommand(
      "void-round",
      "void a table's round, e.g. one whose lock hit a Must-Hit-By level: its pending hit payouts "
      "are rejected and its contributions refunded (supervisor; two above the dual threshold)");
  std::uint64_t void_round_id = 0;
  void_cmd->add_option("TABLE", table, "the table")->required();
  add_decimal(void_cmd, "ROUND_ID", void_round_id, 1, INT64_MAX, "the round")->required();
  void_cmd->add_option("--request-id", request_id, "your idempotency key, 1..64 bytes")->required();
  void_cmd->add_option("--reason", reason, "why, for the journal and the audit trail")->required();
  void_cmd->callback(
      [&] { run = [&] { return void_round(session, table, void_round_id, request_id, reason); }; });

  auto* trigger_cmd = app.add_subcommand("trigger", "hidden Must-Hit-By triggers");
  trigger_cmd->require_subcommand(1);
  auto* trigger_verify_cmd = trigger_cmd->add_subcommand(
      "verify",
      "check a revealed hidden trigger against the commitment published before it (no call to "
      "jackpotd): SHA-256(i64(point_micros) || salt) == commitment; exit 3 when not");
  std::string commitment_hex;
  std::string salt_hex;
  std::int64_t point_micros = 0;
  trigger_verify_cmd->add_option("--commitment", commitment_hex, "64 hex digits")->required();
  add_decimal(trigger_verify_cmd, "--point-micros", point_micros, 0, INT64_MAX,
              "the revealed point, in micros")
      ->required();
  trigger_verify_cmd->add_option("--salt", salt_hex, "the revealed salt, 64 hex digits")
      ->required();
  trigger_verify_cmd->callback([&] {
    connects = false;
    run = [&] { return trigger_verify(commitment_hex, point_micros, salt_hex); };
  });

  // Every command's --help ends with the exit codes.
  const std::function<void(CLI::App*)> with_footer = [&](CLI::App* command) {
    command->footer(kExitCodes);
    for (CLI::App* sub : command->get_subcommands({})) with_footer(sub);
  };
  with_footer(&app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? kOk : kUsage;
  }
  if (!run) {
    std::fprintf(stderr, "jackpotctl: no command (see --help)\n");
    return kUsage;
  }
  // CLI::Range lets NaN through (every comparison with it is false).
  if (std::isnan(session.deadline_seconds) || std::isnan(idle_seconds)) {
    std::fprintf(stderr, "jackpotctl: --deadline and --exit-when-idle take a number of seconds\n");
    return kUsage;
  }
  if (connects) {
    session.connection.plaintext = plaintext == "on";
    if (session.principal.empty()) {
      std::fprintf(stderr, "jackpotctl: --as PRINCIPAL is required (admin/ID or supervisor/ID)\n");
      return kUsage;
    }
    std::string error;
    session.channel = jackpot::tools::channel_as(session.connection, session.principal, {}, error);
    if (session.channel == nullptr) {
      std::fprintf(stderr, "jackpotctl: %s\n", error.c_str());
      return kUsage;
    }
  }
  return run();
}
