#include "tests/support/daemon_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "tests/support/test_pki.h"

extern char** environ;

namespace jackpot::testing {
namespace {

using Clock = std::chrono::steady_clock;

void check(int result, const char* what) {
  if (result != 0) throw std::runtime_error(std::string(what) + " failed");
}

}  // namespace

std::string DaemonProcess::binary_path() {
  const char* path = std::getenv("JACKPOTD_BINARY");
  if (path == nullptr || *path == '\0') {
    throw std::runtime_error("JACKPOTD_BINARY is not set: run the tests through ctest");
  }
  return path;
}

namespace {

std::vector<std::string> with_transport(std::vector<std::string> args) {
  const bool chosen = std::any_of(args.begin(), args.end(), [](const std::string& arg) {
    return arg.rfind("--plaintext", 0) == 0 || arg.rfind("--tls-", 0) == 0 || arg == "--help" ||
           arg == "--version";
  });
  if (chosen) return args;
  const auto tls = TestPki::site().daemon_args();
  args.insert(args.end(), tls.begin(), tls.end());
  return args;
}

}  // namespace

DaemonProcess::DaemonProcess(const std::vector<std::string>& given) {
  const std::vector<std::string> args = with_transport(given);
  char stderr_template[] = "/tmp/jackpotd-e2e-stderr.XXXXXX";
  const int stderr_fd = mkstemp(stderr_template);
  if (stderr_fd < 0) throw std::runtime_error("mkstemp failed");
  stderr_path_ = stderr_template;

  int pipe_fds[2];
  check(pipe2(pipe_fds, O_CLOEXEC), "pipe2");
  stdout_fd_ = pipe_fds[0];

  posix_spawn_file_actions_t actions;
  check(posix_spawn_file_actions_init(&actions), "posix_spawn_file_actions_init");
  check(posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO), "adddup2");
  check(posix_spawn_file_actions_adddup2(&actions, stderr_fd, STDERR_FILENO), "adddup2");
  posix_spawnattr_t attributes;
  check(posix_spawnattr_init(&attributes), "posix_spawnattr_init");
  sigset_t none;
  sigemptyset(&none);
  check(posix_spawnattr_setsigmask(&attributes, &none), "setsigmask");
  check(posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK), "setflags");

  const std::string binary = binary_path();
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const int spawned =
      posix_spawn(&pid_, binary.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(pipe_fds[1]);
  close(stderr_fd);
  check(spawned, "posix_spawn");
}

DaemonProcess::~DaemonProcess() {
  if (!exited_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &wait_status_, 0);
  }
  if (stdout_fd_ >= 0) close(stdout_fd_);
  if (!stderr_path_.empty()) unlink(stderr_path_.c_str());
}

std::optional<std::string> DaemonProcess::read_stdout_line(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (const auto newline = stdout_buffer_.find('\n'); newline != std::string::npos) {
      std::string line = stdout_buffer_.substr(0, newline);
      stdout_buffer_.erase(0, newline + 1);
      return line;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd descriptor{stdout_fd_, POLLIN, 0};
    if (poll(&descriptor, 1, static_cast<int>(left.count())) <= 0) continue;
    char chunk[4096];
    const ssize_t n = read(stdout_fd_, chunk, sizeof chunk);
    if (n <= 0) return std::nullopt;  // The daemon closed stdout: it exited.
    stdout_buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

void DaemonProcess::send_signal(int signal_number) {
  if (!exited_) kill(pid_, signal_number);
}

std::optional<int> DaemonProcess::wait_for_exit(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!exited_) {
    const pid_t done = waitpid(pid_, &wait_status_, WNOHANG);
    if (done == pid_) {
      exited_ = true;
      break;
    }
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!WIFEXITED(wait_status_)) return std::nullopt;
  return WEXITSTATUS(wait_status_);
}

std::string DaemonProcess::stderr_text() const {
  std::ifstream in(stderr_path_);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A plain HTTP/1.0 GET on loopback; returns the whole response, headers included.
std::string http_get(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return "<connect failed>";
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return "<write failed>";
  }
  std::string response;
  char chunk[4096];
  for (ssize_t n; (n = read(fd, chunk, sizeof chunk)) > 0;) {
    response.append(chunk, static_cast<std::size_t>(n));
  }
  close(fd);
  return response;
}

}  // namespace jackpot::testing
