// toolchain/process.cpp — posix_spawn with pipes, a poll loop for output and the time limit.
#include "toolchain/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "support/error.h"

extern char** environ;

namespace rvformer::toolchain {
namespace {

using Clock = std::chrono::steady_clock;

// A pipe whose ends close themselves; both ends are close-on-exec in this process.
class Pipe {
 public:
  Pipe() {
    if (::pipe2(ends_.data(), O_CLOEXEC) != 0) fail("cannot create a pipe: {}", std::strerror(errno));
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;

  int read_end() const { return ends_[0]; }
  int write_end() const { return ends_[1]; }
  void close_read() { close_end(0); }
  void close_write() { close_end(1); }

 private:
  void close_end(int index) {
    if (ends_[index] >= 0) ::close(ends_[index]);
    ends_[index] = -1;
  }
  std::array<int, 2> ends_{-1, -1};
};

class SpawnActions {
 public:
  SpawnActions() { posix_spawn_file_actions_init(&actions_); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&actions_); }
  SpawnActions(const SpawnActions&) = delete;
  SpawnActions& operator=(const SpawnActions&) = delete;

  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

int exit_status_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 255;
}

// Reads what is available on `fd` into `text`; false at end of file.
bool drain(int fd, std::string& text) {
  std::array<char, 65536> buffer;
  ssize_t count = ::read(fd, buffer.data(), buffer.size());
  if (count < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (count <= 0) return false;
  text.append(buffer.data(), static_cast<std::size_t>(count));
  return true;
}

bool still_running(pid_t child) {
  siginfo_t info{};
  return ::waitid(P_PID, child, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0;
}

struct CapturedStream {
  int fd;
  std::string* text;
};

// Collects the child's output until its pipes close and it has exited, killing it when the time
// limit passes.
void collect(pid_t child, std::vector<CapturedStream> streams, const ProcessOptions& options,
             ProcessResult& result) {
  std::optional<Clock::time_point> deadline;
  if (options.timeout) deadline = Clock::now() + *options.timeout;
  while (!streams.empty() || still_running(child)) {
    int wait_ms = 50;
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
      if (left.count() <= 0 && !result.timed_out) {
        ::kill(child, SIGKILL);
        result.timed_out = true;
      }
      wait_ms = static_cast<int>(std::clamp<long long>(left.count(), 1, 50));
    }
    std::vector<pollfd> watched;
    for (const CapturedStream& stream : streams) watched.push_back({stream.fd, POLLIN, 0});
    ::poll(watched.data(), watched.size(), wait_ms);
    for (std::size_t i = watched.size(); i-- > 0;) {
      if (watched[i].revents != 0 && !drain(streams[i].fd, *streams[i].text)) {
        streams.erase(streams.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
  }
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& arguments,
                          const ProcessOptions& options) {
  if (arguments.empty()) fail("no program to run");
  std::optional<Pipe> output, error;
  SpawnActions actions;
  posix_spawn_file_actions_addopen(actions.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (options.capture_output) {
    output.emplace();
    error.emplace();
    posix_spawn_file_actions_adddup2(actions.get(), output->write_end(), STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(actions.get(), error->write_end(), STDERR_FILENO);
  }
  std::vector<char*> argv;
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);

  pid_t child;
  int spawn_error = ::posix_spawnp(&child, argv[0], actions.get(), nullptr, argv.data(), environ);
  if (spawn_error != 0) fail("cannot run {}: {}", arguments[0], std::strerror(spawn_error));
  if (output) output->close_write();
  if (error) error->close_write();

  ProcessResult result;
  std::vector<CapturedStream> streams;
  if (options.capture_output) {
    streams = {{output->read_end(), &result.standard_output},
               {error->read_end(), &result.standard_error}};
  }
  collect(child, streams, options, result);
  int wait_status = 0;
  while (::waitpid(child, &wait_status, 0) < 0 && errno == EINTR) {
  }
  result.exit_status = exit_status_of(wait_status);
  return result;
}

std::optional<std::filesystem::path> find_executable(std::string_view name) {
  const char* path = std::getenv("PATH");
  std::string_view directories = path ? path : "";
  while (!directories.empty()) {
    std::size_t colon = directories.find(':');
    std::filesystem::path candidate =
        std::filesystem::path(directories.substr(0, colon)) / std::string(name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) break;
    directories.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

TemporaryDirectory::TemporaryDirectory() {
  std::string pattern = (std::filesystem::temp_directory_path() / "rvformer-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    fail("cannot create a temporary directory: {}", std::strerror(errno));
  }
  path_ = pattern;
}

TemporaryDirectory::~TemporaryDirectory() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace rvformer::toolchain
