// story/reference.h — the story program's reference implementation (firmware/story/, compiled for
// the host) behind a C++ interface: opens a blob, encodes a prompt, generates greedily.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rvformer::story {

struct StoryRun {
  std::vector<int> ids;  // the generated tokens, prompt tokens after BOS included
  std::string text;      // their pieces, as the firmware prints them (without the final newline)
};

class ReferenceStory {
 public:
  // Throws rvformer::Error with the reference's one-line message when the blob is malformed.
  explicit ReferenceStory(std::vector<std::uint8_t> blob);
  ~ReferenceStory();
  ReferenceStory(const ReferenceStory&) = delete;
  ReferenceStory& operator=(const ReferenceStory&) = delete;

  std::vector<int> encode(const std::string& prompt) const;
  // Greedy generation from `prompt` (BOS first), `steps` forward passes at most.
  StoryRun generate(const std::vector<int>& prompt, int steps) const;

 private:
  struct Model;
  std::vector<std::uint8_t> blob_;
  std::unique_ptr<Model> model_;
};

}  // namespace rvformer::story
