// story/story_reference_test.cpp — the story program's reference (firmware/story/ on the host) with
// rvformer's quantisation of stories260K against llama2.c's greedy ids; the float model against the
// same ids; the prompt encoder; malformed blobs and checkpoints.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "story/float_model.h"
#include "story/quantiser.h"
#include "story/reference.h"
#include "support/error.h"
#include "support/file.h"
#include "toolchain/process.h"

namespace rvformer::story {
namespace {

// The first tokens of the quantised story that must equal llama2.c's (docs/story.md, "Accuracy").
constexpr std::size_t kRequiredAgreement = 64;

std::vector<int> llama2c_greedy_ids() {
  std::ifstream in(stories260k_checkpoint().parent_path() / "stories260K.greedy.ids.txt");
  std::vector<int> ids;
  for (int id; in >> id;) ids.push_back(id);
  return ids;
}

const Llama2Checkpoint& checkpoint() {
  static const Llama2Checkpoint model = read_llama2_checkpoint(stories260k_checkpoint());
  return model;
}

const std::vector<std::uint8_t>& blob() {
  static const std::vector<std::uint8_t> bytes =
      quantise_story(checkpoint(), read_llama2_vocabulary(stories260k_tokenizer(), checkpoint().config.vocab_size));
  return bytes;
}

std::string open_error(std::vector<std::uint8_t> bytes) {
  try {
    ReferenceStory story(std::move(bytes));
  } catch (const Error& error) {
    return error.what();
  }
  return "(opened)";
}

TEST(StoryFloatModel, ReproducesLlama2cGreedyIds) {
  const std::vector<int> expected = llama2c_greedy_ids();
  ASSERT_EQ(expected.size(), 345u);
  EXPECT_EQ(float_greedy_ids(checkpoint(), 512), expected);
}

TEST(StoryReference, FollowsLlama2cForTheFirstTokens) {
  const std::vector<int> expected = llama2c_greedy_ids();
  ReferenceStory story(blob());
  const std::vector<int> ids = story.generate({1}, 512).ids;
  std::size_t same = 0;
  while (same < ids.size() && same < expected.size() && ids[same] == expected[same]) ++same;
  // The float model's logits where the quantised story leaves llama2.c's: how close the call was.
  std::string where = "identical to llama2.c's greedy ids to the end";
  if (same < expected.size()) {
    FloatModel model(checkpoint());
    std::span<const float> logits;
    for (std::size_t pos = 0; pos <= same; ++pos) logits = model.forward(pos == 0 ? 1 : expected[pos - 1], pos);
    where = fmt::format("first differs at generated token {} (position {}): {} instead of {}; float logit margin "
                        "there {:.4f}",
                        same, same, same < ids.size() ? ids[same] : 1, expected[same], logit_margin(logits));
  }
  std::printf("stories260K quantised: %s\n", where.c_str());
  EXPECT_GE(same, kRequiredAgreement) << where;
}

TEST(StoryReference, PrintsLlama2cTextWhileTheIdsAgree) {
  std::ifstream in(stories260k_checkpoint().parent_path() / "stories260K.greedy.txt");
  const std::string llama2c_text{std::istreambuf_iterator<char>(in), {}};
  // The first 64 tokens hold a byte piece (<0x0A>, a newline) and the first piece's space removed.
  const std::string text = ReferenceStory(blob()).generate({1}, kRequiredAgreement).text;
  EXPECT_NE(text.find('\n'), std::string::npos);
  EXPECT_EQ(llama2c_text.substr(0, text.size()), text);
}

TEST(StoryReference, EncodesPromptsLikeLlama2c) {
  ReferenceStory story(blob());
  EXPECT_EQ(story.encode(""), std::vector<int>{1});
  const std::vector<int> once = story.encode("Once upon a time");
  ASSERT_GE(once.size(), 2u);
  EXPECT_EQ(once[0], 1);
  // Generating from the prompt first echoes its pieces (after BOS the leading space goes).
  StoryRun run = story.generate(once, static_cast<int>(once.size()));
  EXPECT_EQ(run.text.substr(0, 16), "Once upon a time");
  EXPECT_EQ(std::vector<int>(once.begin() + 1, once.end()),
            std::vector<int>(run.ids.begin(), run.ids.begin() + static_cast<long>(once.size()) - 1));
  // A character in the vocabulary is one piece ("\u20AC" is); one outside it falls back to its UTF-8
  // bytes' pieces (<0xNN> is id NN + 3).
  const int space = 410;
  EXPECT_EQ(story.encode("\xE2\x82\xAC"), (std::vector<int>{1, space, 503}));
  EXPECT_EQ(story.encode("\xE4\xB8\xAD"), (std::vector<int>{1, space, 0xE4 + 3, 0xB8 + 3, 0xAD + 3}));
}

TEST(StoryReference, RejectsMalformedBlobsWithOneLine) {
  std::vector<std::uint8_t> truncated(blob().begin(), blob().end() - 100);
  EXPECT_EQ(open_error(truncated), "story model blob is truncated or has trailing bytes");
  std::vector<std::uint8_t> header_only(blob().begin(), blob().begin() + 20);
  EXPECT_EQ(open_error(header_only), "story model blob is truncated (header)");
  std::vector<std::uint8_t> bad_magic = blob();
  bad_magic[0] ^= 1;
  EXPECT_EQ(open_error(bad_magic), "not a story model blob (bad magic)");
  std::vector<std::uint8_t> corrupt = blob();
  corrupt[corrupt.size() / 2] ^= 0x40;
  EXPECT_EQ(open_error(corrupt), "story model blob is corrupt (checksum mismatch)");
  std::vector<std::uint8_t> bad_dims = blob();
  bad_dims[16] = 3;  // 3 heads do not divide dim 64
  EXPECT_EQ(open_error(bad_dims), "story model blob has unsupported dimensions");
}

TEST(StoryQuantiser, RejectsATruncatedCheckpointWithOneLine) {
  toolchain::TemporaryDirectory directory;
  const std::filesystem::path truncated = directory.path() / "truncated.bin";
  std::vector<std::uint8_t> bytes = read_file_bytes(stories260k_checkpoint());
  bytes.resize(bytes.size() / 2);
  write_file_atomic(truncated, bytes);
  try {
    quantise_story_files(truncated, stories260k_tokenizer());
    ADD_FAILURE() << "a truncated checkpoint was quantised";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), truncated.string() + ": truncated (528270 bytes)");
  }
}

}  // namespace
}  // namespace rvformer::story
