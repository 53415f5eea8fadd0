// story/firmware_launch.cpp — see firmware_launch.h.
#include "story/firmware_launch.h"

#include <fmt/format.h>

#include "story_model.h"
#include "support/error.h"

namespace rvformer::story {

FirmwareLaunch firmware_launch(program::ProgramImage image, const std::vector<std::uint8_t>& blob, int steps,
                               StoryOutput output, const std::string& prompt) {
  FirmwareLaunch launch{std::move(image), {}};
  if (launch.image.map.vector_unit) {
    if (blob.size() > program::kVectorWeightBytes) fail(STORY_BLOB_TOO_BIG_FOR_WM);
    launch.image.weights = blob;
  } else {
    launch.input.assign(blob.begin(), blob.end());
  }
  launch.input += fmt::format("{} {}\n", steps, static_cast<int>(output));
  launch.input += prompt;
  return launch;
}

}  // namespace rvformer::story
