// toolchain/process.h — runs an external program (the cross compiler, QEMU) without a shell, with
// an optional time limit and optional capture of its output. Its standard input is /dev/null.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rvformer::toolchain {

struct ProcessOptions {
  bool capture_output = false;  // otherwise the child writes to our stdout and stderr
  std::optional<std::chrono::milliseconds> timeout;  // then the child is killed
};

struct ProcessResult {
  int exit_status = 0;  // 128 + signal number when a signal ended it
  bool timed_out = false;
  std::string standard_output;  // when captured
  std::string standard_error;   // when captured
};

// arguments[0] is looked up on PATH. Throws rvformer::Error when it cannot be started.
ProcessResult run_process(const std::vector<std::string>& arguments,
                          const ProcessOptions& options = {});

// The full path of `name` on PATH, or nothing.
std::optional<std::filesystem::path> find_executable(std::string_view name);

// A fresh directory under the system's temporary directory, removed with everything in it when
// this object goes away.
class TemporaryDirectory {
 public:
  TemporaryDirectory();
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace rvformer::toolchain
