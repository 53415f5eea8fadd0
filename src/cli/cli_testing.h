// cli/cli_testing.h — running the `rvformer` binary from tests: a scratch directory for sources and
// outputs, and the last line of a stream (where --stats and verify put their summaries).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "toolchain/process.h"

namespace rvformer::cli {

inline toolchain::ProcessResult run_rvformer(std::vector<std::string> arguments, std::chrono::seconds timeout) {
  arguments.insert(arguments.begin(), RVFORMER_BINARY);
  return toolchain::run_process(arguments, {.capture_output = true, .timeout = timeout});
}

inline std::string last_line(const std::string& text) {
  std::string trimmed = text.substr(0, text.find_last_not_of('\n') + 1);
  return trimmed.substr(trimmed.find_last_of('\n') + 1);
}

class CommandTest : public ::testing::Test {
 protected:
  std::string write_source(const std::string& name, const std::string& text) {
    std::filesystem::path path = directory_.path() / name;
    std::ofstream(path) << text;
    return path.string();
  }
  std::string path(const std::string& name) { return (directory_.path() / name).string(); }

  toolchain::TemporaryDirectory directory_;
};

}  // namespace rvformer::cli
