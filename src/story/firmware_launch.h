// story/firmware_launch.h — what the story firmware (firmware/story/story_main.c) starts from: its
// program image and its console input. The plain build reads the model blob from console input; the
// vector build finds it in the vector unit's weight memory, the image's third part. Both then read
// the request line "STEPS MODE\n" and the prompt.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "program/program_image.h"

namespace rvformer::story {

enum class StoryOutput {
  kStory = 0,          // the pieces as produced, then a newline
  kStoryAndCount = 1,  // the same, then kStoryCountSeparator, the number of story tokens and a newline
  kIds = 2,            // each token's id and a newline
};

inline constexpr char kStoryCountSeparator = '\x1e';

struct FirmwareLaunch {
  program::ProgramImage image;
  std::string input;
};

// The firmware `image` (either build, told apart by its map) given `blob`, asked for `steps` forward
// passes after `prompt`. Fails with the vector build's own line when the blob does not fit its
// weight memory.
FirmwareLaunch firmware_launch(program::ProgramImage image, const std::vector<std::uint8_t>& blob, int steps,
                               StoryOutput output, const std::string& prompt);

}  // namespace rvformer::story
