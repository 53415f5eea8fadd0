// story/reference.cpp — see reference.h.
#include "story/reference.h"

extern "C" {
#include "story_build.h"
}
#include "support/error.h"

namespace rvformer::story {

struct ReferenceStory::Model {
  StoryModel model;
};

ReferenceStory::ReferenceStory(std::vector<std::uint8_t> blob) : blob_(std::move(blob)), model_(std::make_unique<Model>()) {
  if (const char* error = story_model_open(&model_->model, blob_.data(), blob_.size())) fail("{}", error);
}

ReferenceStory::~ReferenceStory() = default;

std::vector<int> ReferenceStory::encode(const std::string& prompt) const {
  std::vector<int> tokens(model_->model.seq_len);
  int count = story_encode(&model_->model, reinterpret_cast<const std::uint8_t*>(prompt.data()),
                           static_cast<int>(prompt.size()), tokens.data(), static_cast<int>(tokens.size()));
  if (count < 0) fail("the prompt does not fit in the model's context");
  tokens.resize(count);
  return tokens;
}

StoryRun ReferenceStory::generate(const std::vector<int>& prompt, int steps) const {
  StoryState state;
  if (const char* error = story_state_init(&state, &model_->model)) {
    story_state_free(&state);
    fail("{}", error);
  }
  StoryRun run;
  auto emit = [](void* context, int token, const std::uint8_t* piece, int length) {
    auto* out = static_cast<StoryRun*>(context);
    out->ids.push_back(token);
    out->text.append(reinterpret_cast<const char*>(piece), length);
  };
  story_generate(&model_->model, &state, prompt.data(), static_cast<int>(prompt.size()), steps, emit, &run);
  story_state_free(&state);
  return run;
}

}  // namespace rvformer::story
