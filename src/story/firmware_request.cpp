// story/firmware_request.cpp — see firmware_request.h.
#include "story/firmware_request.h"

#include <fmt/format.h>

namespace rvformer::story {

std::string firmware_request(const std::vector<std::uint8_t>& blob, int steps, StoryOutput output,
                             const std::string& prompt) {
  std::string input(blob.begin(), blob.end());
  input += fmt::format("{} {}\n", steps, static_cast<int>(output));
  return input + prompt;
}

}  // namespace rvformer::story
