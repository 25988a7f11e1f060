// jackpotd: the linked progressive jackpot controller daemon.
#include <absl/synchronization/mutex.h>

#include <csignal>
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

#include "controller/daemon/daemon.h"
#include "controller/daemon/daemon_options.h"

int main(int argc, char** argv) {
  // Block the stop signals before any library starts a thread, so that every thread inherits
  // the mask and only run_daemon's sigwait() sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);  // Re-reads the TLS files.
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // Debian builds Abseil without NDEBUG, which leaves gRPC's mutexes checking for lock-order
  // cycles on every acquisition: a debugging aid that costs every call some CPU.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  const std::vector<std::string> args(argv + 1, argv + argc);
  const auto parsed = jackpot::parse_daemon_options(args);
  if (const auto* error = std::get_if<jackpot::OptionsError>(&parsed)) {
    std::fprintf(stderr, "jackpotd: %s\n", error->message.c_str());
    return jackpot::kExitUsage;
  }
  const auto& options = std::get<jackpot::DaemonOptions>(parsed);
  if (options.show_help) {
    std::fputs(jackpot::daemon_usage().c_str(), stdout);
    return jackpot::kExitOk;
  }
  if (options.show_version) {
    std::printf("jackpotd %s\n", JACKPOTD_VERSION);
    return jackpot::kExitOk;
  }
  if (const auto problem = jackpot::transport_problem(options)) {
    std::fprintf(stderr, "jackpotd: %s\n", problem->c_str());
    return jackpot::kExitUsage;
  }
  return jackpot::run_daemon(options, signals);
}
