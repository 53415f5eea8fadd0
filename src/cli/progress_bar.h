// cli/progress_bar.h — a progress bar on stderr for commands that write large checkpoints.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace rvformer::cli {

// A progress bar on stderr, redrawn at every whole percent.
class ProgressBar {
 public:
  explicit ProgressBar(std::string label) : label_(std::move(label)) {}
  void operator()(std::uint64_t done, std::uint64_t total) {
    const int percent = total == 0 ? 100 : static_cast<int>(100 * done / total);
    if (percent == shown_) return;
    shown_ = percent;
    constexpr int width = 40;
    const std::string bar(static_cast<std::size_t>(percent * width / 100), '#');
    fmt::print(stderr, "\rrvformer: {} [{:<{}}] {:3d}%  {:.2f} / {:.2f} GB", label_, bar, width, percent,
               static_cast<double>(done) / 1e9, static_cast<double>(total) / 1e9);
    if (percent == 100) fmt::print(stderr, "\n");
  }

 private:
  std::string label_;
  int shown_ = -1;
};

}  // namespace rvformer::cli
