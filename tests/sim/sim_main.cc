// Runs the whole-system simulation (tests/sim/simulation.h) over a range of seeds, or replays one.
//
//   sim_driver [--seeds N] [--first F] [--seed S] [--steps K] [--trace] [--keep-going]
//
// Seeds F..F+N-1 (F = 1, N = 100 by default), or exactly S. Each failure prints its seed, the
// rule it broke, what was seen and the last steps; `--seed S --trace` replays it step by step.
// Stops at the first failing seed unless --keep-going. Exits 1 when a seed failed. A signal
// (a crash of the engine itself) prints the seed first. The host's own messages on standard
// error (one per simulated commit failure and recovery) are dropped unless --trace.

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "tests/sim/simulation.h"

namespace {

volatile std::sig_atomic_t g_seed_known = 0;
char g_crash_line[160];
int g_stderr = 2;  // The original standard error.

void on_signal(int signal) {
  if (g_seed_known) {
    const ssize_t written = write(g_stderr, g_crash_line, std::strlen(g_crash_line));
    (void)written;
  }
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

std::uint64_t number(const char* text) { return std::strtoull(text, nullptr, 0); }

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t first = 1;
  std::uint64_t seeds = 100;
  bool one = false;
  bool keep_going = false;
  jackpot::sim::Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--seeds" && has_value) {
      seeds = number(argv[++i]);
    } else if (arg == "--first" && has_value) {
      first = number(argv[++i]);
    } else if (arg == "--seed" && has_value) {
      first = number(argv[++i]);
      seeds = 1;
      one = true;
    } else if (arg == "--steps" && has_value) {
      options.steps = static_cast<std::uint32_t>(number(argv[++i]));
    } else if (arg == "--trace") {
      options.trace = true;
    } else if (arg == "--keep-going") {
      keep_going = true;
    } else {
      std::fprintf(stderr, "sim: unknown argument %s (see tests/sim/sim_main.cc)\n", arg.c_str());
      return 2;
    }
  }
  for (int signal : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) std::signal(signal, on_signal);
  if (!options.trace) {
    g_stderr = dup(2);
    const int null = open("/dev/null", O_WRONLY);
    if (g_stderr < 0 || null < 0 || dup2(null, 2) < 0) g_stderr = 2;
  }

  std::map<std::string, std::uint64_t> failures;  // By rule.
  std::uint64_t run = 0;
  std::uint64_t steps = 0;
  std::uint64_t commands = 0;
  jackpot::sim::Stats total;
  const auto started = std::chrono::steady_clock::now();
  for (std::uint64_t seed = first; seed < first + seeds; ++seed) {
    std::snprintf(g_crash_line, sizeof g_crash_line,
                  "\nsim: seed %llu crashed the process; replay (with the engine's message): "
                  "ops/sim --seed %llu --trace\n",
                  static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
    g_seed_known = 1;
    if (options.trace) std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
    const jackpot::sim::Outcome outcome = jackpot::sim::simulate(seed, options);
    g_seed_known = 0;
    ++run;
    steps += outcome.passed ? options.steps : outcome.step;
    commands += outcome.stats.commands;
    total.restarts += outcome.stats.restarts;
    total.crashes += outcome.stats.crashes;
    total.faults += outcome.stats.faults;
    total.floor_edits += outcome.stats.floor_edits;
    total.floors_refused += outcome.stats.floors_refused;
    total.settles += outcome.stats.settles;
    total.voids += outcome.stats.voids;
    total.supervisor_voids += outcome.stats.supervisor_voids;
    total.percent_hits += outcome.stats.percent_hits;
    total.must_hit_by_hits += outcome.stats.must_hit_by_hits;
    total.approvals += outcome.stats.approvals;
    total.rejections += outcome.stats.rejections;
    total.replays += outcome.stats.replays;
    total.adjustments += outcome.stats.adjustments;
    total.adjustments_refused += outcome.stats.adjustments_refused;
    total.secrecy_checks += outcome.stats.secrecy_checks;
    if (outcome.passed) continue;
    ++failures[outcome.rule];
    std::printf("FAIL seed %llu: %s at step %u: %s\n", static_cast<unsigned long long>(seed),
                outcome.rule.c_str(), outcome.step, outcome.failure.c_str());
    if (!keep_going || one) {
      std::printf("  last steps:\n");
      for (const std::string& line : outcome.trace) std::printf("    %s\n", line.c_str());
      std::printf("  replay: ops/sim --seed %llu --trace\n", static_cast<unsigned long long>(seed));
    }
    if (!keep_going) break;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf(
      "sim: %llu seeds (from %llu), %llu steps, %llu commands in %.2f s (%.1f ms a seed); "
      "%llu restarts (%llu floor edits, %llu refused), %llu crashes, %llu faults; %llu settles, "
      "%llu voids (%llu by supervisors), %llu percent and %llu Must-Hit-By hits, %llu approvals, "
      "%llu rejections, "
      "%llu replays, %llu adjustments (%llu refused), %llu hidden-point secrecy checks\n",
      static_cast<unsigned long long>(run), static_cast<unsigned long long>(first),
      static_cast<unsigned long long>(steps), static_cast<unsigned long long>(commands), seconds,
      run ? 1000.0 * seconds / static_cast<double>(run) : 0.0,
      static_cast<unsigned long long>(total.restarts),
      static_cast<unsigned long long>(total.floor_edits),
      static_cast<unsigned long long>(total.floors_refused),
      static_cast<unsigned long long>(total.crashes), static_cast<unsigned long long>(total.faults),
      static_cast<unsigned long long>(total.settles), static_cast<unsigned long long>(total.voids),
      static_cast<unsigned long long>(total.supervisor_voids),
      static_cast<unsigned long long>(total.percent_hits),
      static_cast<unsigned long long>(total.must_hit_by_hits),
      static_cast<unsigned long long>(total.approvals),
      static_cast<unsigned long long>(total.rejections),
      static_cast<unsigned long long>(total.replays),
      static_cast<unsigned long long>(total.adjustments),
      static_cast<unsigned long long>(total.adjustments_refused),
      static_cast<unsigned long long>(total.secrecy_checks));
  for (const auto& [rule, count] : failures) {
    std::printf("sim: %llu seed(s) broke %s\n", static_cast<unsigned long long>(count),
                rule.c_str());
  }
  return failures.empty() ? 0 : 1;
}
