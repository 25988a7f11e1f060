#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace jackpot::testing {

// The real jackpotd binary (path from JACKPOTD_BINARY, set by ctest) running as a child process,
// its stdout on a pipe and its stderr in a temporary file. Killed if still running when the
// object goes away.
class DaemonProcess {
 public:
  // Serves mutual TLS with the test site's certificates (TestPki::site()) unless `args` choose
  // the transport themselves (--plaintext, --tls-*) or only ask for --help or --version.
  explicit DaemonProcess(const std::vector<std::string>& args);
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  // The next line the daemon prints on stdout, or nothing if it exits or times out first.
  std::optional<std::string> read_stdout_line(std::chrono::milliseconds timeout);

  void send_signal(int signal_number);
  pid_t pid() const { return pid_; }

  // The exit code once the process ends, or nothing if it is still running after `timeout` or
  // was killed by a signal.
  std::optional<int> wait_for_exit(std::chrono::milliseconds timeout);

  // Everything the daemon has written to stderr so far.
  std::string stderr_text() const;

  static std::string binary_path();

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string stdout_buffer_;
  std::string stderr_path_;
  bool exited_ = false;
  int wait_status_ = 0;
};

// A plain HTTP/1.0 GET on loopback (the metrics endpoint); the whole response, headers included.
std::string http_get(int port, const std::string& path);

}  // namespace jackpot::testing
