// jackpotd-echo: a TableService that does no work, for the benchmark's "bare gRPC" baseline.
// It answers every call at once with a response of the size jackpotd sends for the same call
// (meters of two levels; a settlement with a result per seat), so that a client measures the
// transport alone.
//
//   jackpotd-echo [--listen HOST:PORT] [--threads N]
//
// Prints "serving gRPC on HOST:PORT" when ready; stops at SIGTERM or SIGINT. The most efficient
// server gRPC allows: the asynchronous (completion-queue) API, each of N threads (default 2)
// polling its own queue, no thread per call. Plaintext.
#include <absl/synchronization/mutex.h>
#include <grpcpp/grpcpp.h>

#include <csignal>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "jackpot/v1/table.grpc.pb.h"

namespace {

namespace pb = ::jackpot::v1;
using Service = pb::TableService::AsyncService;

void add_meters(google::protobuf::RepeatedPtrField<pb::LevelMeter>* meters) {
  for (std::uint32_t level = 1; level <= 2; ++level) {
    auto* meter = meters->Add();
    meter->set_link_id("bench-link");
    meter->set_level(level);
    meter->set_name(level == 1 ? "Royal Flush" : "Must-Hit-By $250");
    meter->set_amount_cents(123'456'78);
  }
}

void answer(const pb::OpenRoundRequest& request, pb::OpenRoundResponse& response) {
  response.set_table_id(request.table_id());
  response.set_round_id(request.round_id());
}
void answer(const pb::LockWagersRequest& request, pb::LockWagersResponse& response) {
  response.set_table_id(request.table_id());
  response.set_round_id(request.round_id());
  add_meters(response.mutable_meters());
}
void answer(const pb::SettleRoundRequest& request, pb::SettleRoundResponse& response) {
  response.set_table_id(request.table_id());
  response.set_round_id(request.round_id());
  for (const auto& seat : request.seats()) {
    auto* result = response.add_results();
    result->set_seat(seat.seat());
    result->set_link_id("bench-link");
    result->set_paytable_id("PT-BJS-HUH-5CP-01");
  }
  add_meters(response.mutable_meters());
}
void answer(const pb::VoidRoundRequest& request, pb::VoidRoundResponse& response) {
  response.set_table_id(request.table_id());
  response.set_round_id(request.round_id());
  add_meters(response.mutable_meters());
}

struct Completion {
  virtual ~Completion() = default;
  virtual void done(bool ok) = 0;
};

// One call of one method: asks the queue for the next call, answers it when it comes (and asks
// for another in its place), and goes once the answer is sent.
template <typename Request, typename Response>
class Call final : public Completion {
 public:
  using Requester = void (Service::*)(grpc::ServerContext*, Request*,
                                      grpc::ServerAsyncResponseWriter<Response>*,
                                      grpc::CompletionQueue*, grpc::ServerCompletionQueue*, void*);
  Call(Service& service, grpc::ServerCompletionQueue& queue, Requester requester)
      : service_(service), queue_(queue), requester_(requester) {
    (service_.*requester_)(&context_, &request_, &writer_, &queue_, &queue_, this);
  }
  void done(bool ok) override {
    if (answered_ || !ok) {  // Sent, or the server is shutting down.
      delete this;
      return;
    }
    new Call(service_, queue_, requester_);
    Response response;
    answer(request_, response);
    answered_ = true;
    writer_.Finish(response, grpc::Status::OK, this);
  }

 private:
  Service& service_;
  grpc::ServerCompletionQueue& queue_;
  Requester requester_;
  grpc::ServerContext context_;
  Request request_;
  grpc::ServerAsyncResponseWriter<Response> writer_{&context_};
  bool answered_ = false;
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
  int threads = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--listen") {
      listen = argv[i + 1];
    } else if (flag == "--threads" && std::atoi(argv[i + 1]) > 0) {
      threads = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: jackpotd-echo [--listen HOST:PORT] [--threads N]\n");
      return 2;
    }
  }
  Service service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::vector<std::unique_ptr<grpc::ServerCompletionQueue>> queues;
  for (int i = 0; i < threads; ++i) queues.push_back(builder.AddCompletionQueue());
  auto server = builder.BuildAndStart();
  if (!server) return 1;
  // Each queue waits for every method's calls, several at once.
  for (auto& queue : queues) {
    for (int i = 0; i < 16; ++i) {
      new Call<pb::OpenRoundRequest, pb::OpenRoundResponse>(service, *queue,
                                                            &Service::RequestOpenRound);
      new Call<pb::LockWagersRequest, pb::LockWagersResponse>(service, *queue,
                                                              &Service::RequestLockWagers);
      new Call<pb::SettleRoundRequest, pb::SettleRoundResponse>(service, *queue,
                                                                &Service::RequestSettleRound);
      new Call<pb::VoidRoundRequest, pb::VoidRoundResponse>(service, *queue,
                                                            &Service::RequestVoidRound);
    }
  }
  std::vector<std::thread> pollers;
  for (auto& queue : queues) {
    pollers.emplace_back([&queue] {
      void* tag = nullptr;
      bool ok = false;
      while (queue->Next(&tag, &ok)) static_cast<Completion*>(tag)->done(ok);
    });
  }
  std::printf("serving gRPC on %s:%d\n", listen.substr(0, listen.rfind(':')).c_str(), port);
  std::fflush(stdout);
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  server->Shutdown();
  for (auto& queue : queues) queue->Shutdown();
  for (auto& poller : pollers) poller.join();
  return 0;
}
