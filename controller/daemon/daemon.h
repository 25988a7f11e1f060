#pragma once

#include <csignal>

#include "controller/daemon/daemon_options.h"

namespace jackpot {

// Exit codes of jackpotd.
enum ExitCode : int {
  kExitOk = 0,
  kExitStartupFailed = 1,  // Database unreachable, migration failed, address in use, ...
  kExitUsage = 2,          // Bad flags or config file.
  // A stop that something (a database wait) held two seconds past the shutdown grace: the
  // process left without it. Everything acknowledged was durable before it was answered.
  kExitStopForced = 3,
};

// Runs the daemon until SIGTERM or SIGINT: connects to PostgreSQL and applies the migrations,
// starts the metrics exposer and the gRPC server, prints one "serving" line to stdout, then waits
// for a signal and stops cleanly. `signals` must already be blocked in every thread (the caller
// blocks them first thing in main, before any library starts a thread).
int run_daemon(const DaemonOptions& options, const sigset_t& signals);

}  // namespace jackpot
