// jackpotd-admin: the operator's command line for a running jackpotd (AdminService, and
// SupervisorService for a re-base).
//
//   jackpotd-admin CONNECTION meters [LINK...]
//   jackpotd-admin CONNECTION report [--from UNIX_SECONDS] [--to UNIX_SECONDS] [LINK...]
//   jackpotd-admin CONNECTION link LINK open|closed REASON
//   jackpotd-admin CONNECTION snapshot
//   jackpotd-admin CONNECTION audit
//   jackpotd-admin CONNECTION config [--paytables]
//   jackpotd-admin CONNECTION adjust LINK LEVEL AMOUNT REQUEST_ID REASON
//   jackpotd-admin CONNECTION rebase TABLE NEXT_ROUND_ID REQUEST_ID REASON
//
// CONNECTION is [--target HOST:PORT] --as PRINCIPAL (--pki DIR | --plaintext on): the principal's
// certificate from the directory ops/pki made (tools/client_identity.h).
// `config` prints the floor in force (its file, version and SHA-256, then its text) and with
// --paytables the text of every paytable its tables use.
// `rebase` re-bases a table's round counter after a controller card swap (a supervisor's act,
// journaled and audited; repeating it with the same REQUEST_ID answers the same).
// `report` exits 3 when a level does not balance, `audit` when the snapshot path and the full
// re-sum of the transfers differ.
// Amounts print as currency units with six decimals (micros), exactly as the ledger holds them.
// `adjust` takes its AMOUNT the same way ("25", "-0.01", "12.345678"; a sign for a lowering) and
// a REQUEST_ID of the operator's choosing: running the same command again applies it once.
#include <grpcpp/grpcpp.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jackpot/v1/admin.grpc.pb.h"
#include "jackpot/v1/supervisor.grpc.pb.h"
#include "meters/money.h"
#include "tools/client_identity.h"

namespace {

namespace pb = ::jackpot::v1;

std::string money(std::int64_t micros) {
  const bool negative = micros < 0;
  const std::uint64_t magnitude =
      negative ? 0 - static_cast<std::uint64_t>(micros) : static_cast<std::uint64_t>(micros);
  char text[48];
  std::snprintf(text, sizeof text, "%s%llu.%06llu", negative ? "-" : "",
                static_cast<unsigned long long>(magnitude / 1'000'000),
                static_cast<unsigned long long>(magnitude % 1'000'000));
  return text;
}

// "1764547200.123456" for a time, as Unix seconds with microseconds.
std::string seconds(const google::protobuf::Timestamp& time) {
  char text[48];
  std::snprintf(text, sizeof text, "%lld.%06d", static_cast<long long>(time.seconds()),
                time.nanos() / 1000);
  return text;
}

int usage() {
  std::fprintf(stderr,
               "usage: jackpotd-admin CONNECTION meters [LINK...]\n"
               "       jackpotd-admin CONNECTION report [--from UNIX_SECONDS] "
               "[--to UNIX_SECONDS] [LINK...]\n"
               "       jackpotd-admin CONNECTION link LINK open|closed REASON\n"
               "       jackpotd-admin CONNECTION snapshot\n"
               "       jackpotd-admin CONNECTION audit\n"
               "       jackpotd-admin CONNECTION config [--paytables]\n"
               "       jackpotd-admin CONNECTION adjust LINK LEVEL AMOUNT REQUEST_ID "
               "REASON\n"
               "       jackpotd-admin CONNECTION rebase TABLE NEXT_ROUND_ID REQUEST_ID "
               "REASON\n"
               "CONNECTION: [--target HOST:PORT] --as PRINCIPAL (--pki DIR | --plaintext on)\n"
               "  PRINCIPAL is admin/NAME, or supervisor/NAME for rebase; DIR is where ops/pki\n"
               "  made ca.pem and the principal's certificate (ROLE-NAME.pem, .key)\n");
  return 2;
}

int failed(const grpc::Status& status) {
  std::fprintf(stderr, "jackpotd-admin: %s\n", status.error_message().c_str());
  return 1;
}

int meters(pb::AdminService::Stub& stub, const std::vector<std::string>& links) {
  pb::ListMetersRequest request;
  for (const auto& link : links) request.add_link_ids(link);
  pb::ListMetersResponse response;
  grpc::ClientContext context;
  if (auto status = stub.ListMeters(&context, request, &response); !status.ok()) {
    return failed(status);
  }
  std::printf("%-16s %5s  %-24s %20s %20s\n", "link", "level", "name", "meter", "reserve");
  for (const auto& level : response.levels()) {
    std::printf("%-16s %5u  %-24s %20s %20s\n", level.link_id().c_str(), level.level(),
                level.name().c_str(), money(level.meter_micros()).c_str(),
                money(level.reserve_micros()).c_str());
  }
  return 0;
}

int report(pb::AdminService::Stub& stub, std::vector<std::string> args) {
  pb::ReconciliationReportRequest request;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if ((args[i] == "--from" || args[i] == "--to") && i + 1 < args.size()) {
      auto* time = args[i] == "--from" ? request.mutable_from_time() : request.mutable_to_time();
      time->set_seconds(std::stoll(args[++i]));
    } else {
      request.add_link_ids(args[i]);
    }
  }
  pb::ReconciliationReport response;
  grpc::ClientContext context;
  if (auto status = stub.GetReconciliationReport(&context, request, &response); !status.ok()) {
    return failed(status);
  }
  bool all_balanced = true;
  for (const auto& level : response.levels()) {
    const std::string verdict =
        level.balanced() ? "BALANCED" : "DOES NOT BALANCE by " + money(level.difference_micros());
    std::printf(
        "%s level %u: start %s + contributions %s + seeds %s + overflow in %s + "
        "adjustments %s - awards %s - overflow out %s = end %s  %s  (transfers after %llu "
        "through %llu; snapshots at %s and %s)\n",
        level.link_id().c_str(), level.level(), money(level.start_micros()).c_str(),
        money(level.contributions_micros()).c_str(), money(level.seeds_micros()).c_str(),
        money(level.overflow_in_micros()).c_str(), money(level.adjustments_micros()).c_str(),
        money(level.awards_micros()).c_str(), money(level.overflow_out_micros()).c_str(),
        money(level.end_micros()).c_str(), verdict.c_str(),
        static_cast<unsigned long long>(level.start_through_transfer_id()),
        static_cast<unsigned long long>(level.end_through_transfer_id()),
        level.has_start_snapshot_time() ? seconds(level.start_snapshot_time()).c_str()
                                        : "the beginning",
        seconds(level.end_snapshot_time()).c_str());
    all_balanced = all_balanced && level.balanced();
  }
  return all_balanced ? 0 : 3;
}

int snapshot(pb::AdminService::Stub& stub) {
  pb::TakeBalanceSnapshotResponse response;
  grpc::ClientContext context;
  if (auto status = stub.TakeBalanceSnapshot(&context, {}, &response); !status.ok()) {
    return failed(status);
  }
  for (const auto& link : response.links()) {
    std::printf("%s: balances through transfer %llu\n", link.link_id().c_str(),
                static_cast<unsigned long long>(link.through_transfer_id()));
  }
  return 0;
}

int audit(pb::AdminService::Stub& stub) {
  pb::AuditBalancesResponse response;
  grpc::ClientContext context;
  if (auto status = stub.AuditBalances(&context, {}, &response); !status.ok()) {
    return failed(status);
  }
  std::printf("%-16s %-16s %5s %20s %20s\n", "link", "account", "level", "from snapshot",
              "full sum");
  for (const auto& account : response.accounts()) {
    const bool equal = account.from_snapshot_micros() == account.full_sum_micros();
    std::printf("%-16s %-16s %5u %20s %20s%s\n", account.link_id().c_str(),
                account.account().c_str(), account.level(),
                money(account.from_snapshot_micros()).c_str(),
                money(account.full_sum_micros()).c_str(), equal ? "" : "  DIFFERS");
  }
  std::printf("%s\n", response.consistent() ? "CONSISTENT" : "INCONSISTENT");
  return response.consistent() ? 0 : 3;
}

int link_status(pb::AdminService::Stub& stub, const std::vector<std::string>& args) {
  if (args.size() != 3 || (args[1] != "open" && args[1] != "closed")) return usage();
  pb::SetLinkStatusRequest request;
  request.set_link_id(args[0]);
  request.set_status(args[1] == "open" ? pb::LINK_STATUS_OPEN : pb::LINK_STATUS_CLOSED);
  request.set_reason(args[2]);
  pb::SetLinkStatusResponse response;
  grpc::ClientContext context;
  if (auto status = stub.SetLinkStatus(&context, request, &response); !status.ok()) {
    return failed(status);
  }
  std::printf("link %s is %s\n", args[0].c_str(), args[1].c_str());
  return 0;
}

int config(pb::AdminService::Stub& stub, const std::vector<std::string>& args) {
  if (args.size() > 1 || (args.size() == 1 && args[0] != "--paytables")) return usage();
  pb::GetConfigResponse response;
  grpc::ClientContext context;
  if (auto status = stub.GetConfig(&context, {}, &response); !status.ok()) return failed(status);
  std::printf("# floor %s, version %llu, sha256 %s (jackpotd %s)\n", response.floor_file().c_str(),
              static_cast<unsigned long long>(response.config_version()),
              response.floor_sha256().c_str(), response.daemon_version().c_str());
  std::printf("%s", response.config_text().c_str());
  for (const auto& paytable : response.paytables()) {
    if (args.empty()) {
      std::printf("# uses paytable %s\n", paytable.paytable_id().c_str());
    } else {
      std::printf("# paytable %s\n%s", paytable.paytable_id().c_str(), paytable.text().c_str());
    }
  }
  return 0;
}

int adjust(pb::AdminService::Stub& stub, const std::vector<std::string>& args) {
  if (args.size() != 5) return usage();
  // The engine's own parser: digits with at most six decimals, bounded (no wrap-around).
  const auto amount = jackpot::Money::parse(args[2]);
  char* end = nullptr;
  const unsigned long level = std::strtoul(args[1].c_str(), &end, 10);
  if (!amount || args[1].empty() || *end != '\0' || level > UINT32_MAX) {
    std::fprintf(stderr,
                 "jackpotd-admin: LEVEL is a level number and AMOUNT currency units with at most "
                 "six decimals, e.g. 25 or -0.01\n");
    return 2;
  }
  pb::AdjustMeterRequest request;
  request.set_link_id(args[0]);
  request.set_level(static_cast<std::uint32_t>(level));
  request.set_amount_micros(amount->micros());
  request.set_request_id(args[3]);
  request.set_reason(args[4]);
  pb::AdjustMeterResponse response;
  grpc::ClientContext context;
  if (auto status = stub.AdjustMeter(&context, request, &response); !status.ok()) {
    return failed(status);
  }
  const auto& balance = response.balance();
  std::printf("%s level %u adjusted by %s (transfer %llu): meter %s, reserve %s\n",
              balance.link_id().c_str(), balance.level(), money(amount->micros()).c_str(),
              static_cast<unsigned long long>(response.transfer_id()),
              money(balance.meter_micros()).c_str(), money(balance.reserve_micros()).c_str());
  return 0;
}

int rebase(const std::shared_ptr<grpc::Channel>& channel, const std::vector<std::string>& args) {
  if (args.size() != 4) return usage();
  std::uint64_t next_round = 0;
  try {
    std::size_t used = 0;
    next_round = std::stoull(args[1], &used);
    if (used != args[1].size() || args[1].front() == '-') return usage();
  } catch (const std::exception&) {
    return usage();
  }
  pb::RebaseRoundCounterRequest request;
  request.set_table_id(args[0]);
  request.set_next_round_id(next_round);
  request.set_request_id(args[2]);
  request.set_reason(args[3]);
  pb::RebaseRoundCounterResponse response;
  grpc::ClientContext context;
  auto stub = pb::SupervisorService::NewStub(channel);
  if (auto status = stub->RebaseRoundCounter(&context, request, &response); !status.ok()) {
    return failed(status);
  }
  std::printf(
      "table %s: round counter re-based (epoch %llu): latest round was %llu, next round id "
      "%llu; by %s at %s\n",
      response.table_id().c_str(), static_cast<unsigned long long>(response.epoch()),
      static_cast<unsigned long long>(response.last_round_id()),
      static_cast<unsigned long long>(response.next_round_id()), response.requested_by().c_str(),
      seconds(response.rebased_time()).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  jackpot::tools::Connection connection;
  std::string principal;
  while (!args.empty() && args[0].rfind("--", 0) == 0) {
    if (args.size() < 2) return usage();
    if (args[0] == "--plaintext" && (args[1] == "on" || args[1] == "off")) {
      connection.plaintext = args[1] == "on";
    } else if (args[0] == "--target") {
      connection.target = args[1];
    } else if (args[0] == "--pki") {
      connection.pki_dir = args[1];
    } else if (args[0] == "--as") {
      principal = args[1];
    } else {
      return usage();
    }
    args.erase(args.begin(), args.begin() + 2);
  }
  if (args.empty() || principal.empty()) return usage();
  const std::string command = args[0];
  args.erase(args.begin());
  std::string error;
  const auto channel = jackpot::tools::channel_as(connection, principal, {}, error);
  if (channel == nullptr) {
    std::fprintf(stderr, "jackpotd-admin: %s\n", error.c_str());
    return 2;
  }
  if (command == "rebase") return rebase(channel, args);
  auto stub = pb::AdminService::NewStub(channel);
  if (command == "meters") return meters(*stub, args);
  if (command == "report") return report(*stub, args);
  if (command == "link") return link_status(*stub, args);
  if (command == "snapshot" && args.empty()) return snapshot(*stub);
  if (command == "audit" && args.empty()) return audit(*stub);
  if (command == "config") return config(*stub, args);
  if (command == "adjust") return adjust(*stub, args);
  return usage();
}
