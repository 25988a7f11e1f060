// jackpotd-streams: opens many WatchLinkStatus streams on one completion queue (no client thread
// per stream), reports how many streamed and how many were refused, and holds them until its
// standard input closes. For ops/bench-streams.
//
//   jackpotd-streams --target HOST:PORT [--table T1] [--streams 2000] (--pki DIR | --plaintext on)
#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "jackpot/v1/table.grpc.pb.h"
#include "tools/client_identity.h"

namespace pb = ::jackpot::v1;

namespace {

struct Call {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientAsyncReader<pb::LinkStatusUpdate>> reader;
  pb::LinkStatusUpdate update;
  grpc::Status status;
};

enum Step : std::uintptr_t { kStarted, kRead, kFinished };
void* tag(std::size_t index, Step step) {
  return reinterpret_cast<void*>(index * 4 + static_cast<std::uintptr_t>(step));
}

}  // namespace

int main(int argc, char** argv) {
  jackpot::tools::Connection connection;
  connection.target.clear();
  std::string table = "T1";
  long streams = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--target") {
      connection.target = argv[i + 1];
    } else if (flag == "--pki") {
      connection.pki_dir = argv[i + 1];
    } else if (flag == "--plaintext") {
      connection.plaintext = std::string(argv[i + 1]) == "on";
    } else if (flag == "--table") {
      table = argv[i + 1];
    } else if (flag == "--streams") {
      streams = std::stol(argv[i + 1]);
    } else {
      std::fprintf(stderr, "jackpotd-streams: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (connection.target.empty() || streams <= 0) {
    std::fprintf(stderr,
                 "usage: jackpotd-streams --target HOST:PORT [--table T1] [--streams N] "
                 "(--pki DIR | --plaintext on)\n");
    return 2;
  }
  std::string error;
  auto channel = jackpot::tools::channel_as(connection, "table/" + table, {}, error);
  if (channel == nullptr) {
    std::fprintf(stderr, "jackpotd-streams: %s\n", error.c_str());
    return 2;
  }
  auto stub = pb::TableService::NewStub(channel);
  grpc::CompletionQueue cq;
  std::vector<std::unique_ptr<Call>> calls;
  for (long i = 0; i < streams; ++i) {
    auto call = std::make_unique<Call>();
    pb::WatchLinkStatusRequest request;
    request.set_table_id(table);
    call->reader = stub->PrepareAsyncWatchLinkStatus(&call->context, request, &cq);
    call->reader->StartCall(tag(calls.size(), kStarted));
    calls.push_back(std::move(call));
  }
  long waiting = streams;
  long streaming = 0;
  std::map<std::string, long> refused;
  while (waiting > 0) {
    void* got = nullptr;
    bool ok = false;
    if (!cq.Next(&got, &ok)) break;
    const auto value = reinterpret_cast<std::uintptr_t>(got);
    Call& call = *calls[value / 4];
    switch (static_cast<Step>(value % 4)) {
      case kStarted:
        call.reader->Read(&call.update, tag(value / 4, kRead));
        break;
      case kRead:
        if (ok) {
          ++streaming;
          --waiting;
        } else {
          call.reader->Finish(&call.status, tag(value / 4, kFinished));
        }
        break;
      case kFinished:
        ++refused[std::to_string(call.status.error_code()) + " " + call.status.error_message()];
        --waiting;
        break;
    }
  }
  std::printf("streaming %ld of %ld\n", streaming, streams);
  for (const auto& [why, count] : refused) std::printf("refused %ld: %s\n", count, why.c_str());
  std::fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  for (auto& call : calls) call->context.TryCancel();
  cq.Shutdown();
  void* got = nullptr;
  bool ok = false;
  while (cq.Next(&got, &ok)) {
  }
  return 0;
}
