// story/firmware_request.h — the console input the story firmware reads (firmware/story/story_main.c):
// the model blob, the request line "STEPS MODE\n" and the prompt.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rvformer::story {

enum class StoryOutput {
  kStory = 0,          // the pieces as produced, then a newline
  kStoryAndCount = 1,  // the same, then kStoryCountSeparator, the number of story tokens and a newline
  kIds = 2,            // each token's id and a newline
};

inline constexpr char kStoryCountSeparator = '\x1e';

std::string firmware_request(const std::vector<std::uint8_t>& blob, int steps, StoryOutput output,
                             const std::string& prompt);

}  // namespace rvformer::story
