// jackpotd-echo: a TableService that does no work, for the benchmark's "bare gRPC" baseline.
// It answers every call at once with a response of the size jackpotd sends for the same call
// (meters of two levels; a settlement of six seats), so that loadgen measures the transport.
//
//   jackpotd-echo [--listen HOST:PORT]   prints "serving gRPC on HOST:PORT" when ready
#include <absl/synchronization/mutex.h>
#include <grpcpp/grpcpp.h>

#include <csignal>
#include <cstdio>
#include <string>

#include "jackpot/v1/table.grpc.pb.h"

namespace {

namespace pb = ::jackpot::v1;

void add_meters(google::protobuf::RepeatedPtrField<pb::LevelMeter>* meters) {
  for (std::uint32_t level = 1; level <= 2; ++level) {
    auto* meter = meters->Add();
    meter->set_link_id("bench-link");
    meter->set_level(level);
    meter->set_name(level == 1 ? "Royal Flush" : "Must-Hit-By $250");
    meter->set_amount_cents(123'456'78);
  }
}

class Echo final : public pb::TableService::Service {
  grpc::Status OpenRound(grpc::ServerContext*, const pb::OpenRoundRequest* request,
                         pb::OpenRoundResponse* response) override {
    response->set_table_id(request->table_id());
    response->set_round_id(request->round_id());
    return grpc::Status::OK;
  }
  grpc::Status LockWagers(grpc::ServerContext*, const pb::LockWagersRequest* request,
                          pb::LockWagersResponse* response) override {
    response->set_table_id(request->table_id());
    response->set_round_id(request->round_id());
    add_meters(response->mutable_meters());
    return grpc::Status::OK;
  }
  grpc::Status SettleRound(grpc::ServerContext*, const pb::SettleRoundRequest* request,
                           pb::SettleRoundResponse* response) override {
    response->set_table_id(request->table_id());
    response->set_round_id(request->round_id());
    for (const auto& seat : request->seats()) {
      auto* result = response->add_results();
      result->set_seat(seat.seat());
      result->set_link_id("bench-link");
      result->set_paytable_id("PT-BJS-HUH-5CP-01");
    }
    add_meters(response->mutable_meters());
    return grpc::Status::OK;
  }
};

}  // namespace

int main(int argc, char** argv) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // Debian builds Abseil without NDEBUG, which leaves gRPC's mutexes checking for lock-order
  // cycles on every acquisition: a debugging aid that costs every call some CPU.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  std::string listen = "127.0.0.1:0";
  if (argc == 3 && std::string(argv[1]) == "--listen") listen = argv[2];
  Echo service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  if (!server) return 1;
  std::printf("serving gRPC on %s:%d\n", listen.substr(0, listen.rfind(':')).c_str(), port);
  std::fflush(stdout);
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  server->Shutdown();
  return 0;
}
