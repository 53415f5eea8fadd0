// story/story_firmware_test.cpp — the story firmware (firmware/story/) on the golden emulator, in
// both builds: the plain RV32IM build on emulator-1m and the vector unit's build on emulator-vector.
// Each gives the host reference's ids and text for the first 16 tokens, from BOS and with a prompt;
// the two builds print the same; malformed blobs get the same one-line errors from both; a model
// too big for the unit's memories is refused by the vector build with one line.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "emulator/emulator.h"
#include "program/machine_spec.h"
#include "story/firmware_request.h"
#include "story/quantiser.h"
#include "story/reference.h"
#include "toolchain/program_loader.h"

namespace rvformer::story {
namespace {

constexpr int kSteps = 16;

const program::ProgramImage& plain_firmware() {
  static const program::ProgramImage image = toolchain::load_firmware("story", program::kEmulator1MbMap);
  return image;
}

const program::ProgramImage& vector_firmware() {
  static const program::ProgramImage image = toolchain::load_firmware("story", program::kEmulatorVectorMap);
  return image;
}

const std::vector<std::uint8_t>& blob() {
  static const std::vector<std::uint8_t> bytes = quantise_story_files(stories260k_checkpoint(), stories260k_tokenizer());
  return bytes;
}

struct FirmwareRun {
  std::string output;
  bool exited = false;
  std::uint32_t exit_code = 0;
  std::uint64_t instructions = 0;
};

FirmwareRun run_firmware(const program::ProgramImage& firmware, const std::string& input) {
  emulator::Emulator machine(firmware);
  machine.set_input(emulator::text_input(input));
  FirmwareRun run;
  emulator::RunResult result =
      machine.run(2'000'000'000, [&](std::uint8_t c) { run.output.push_back(static_cast<char>(c)); });
  run.exited = result.reason == emulator::StopReason::kExited;
  run.exit_code = result.exit_code;
  run.instructions = machine.instructions_retired();
  return run;
}

std::vector<int> ids_of(const std::string& lines) {
  std::istringstream in(lines);
  std::vector<int> ids;
  for (int id; in >> id;) ids.push_back(id);
  return ids;
}

std::uint32_t word_at(const std::vector<std::uint8_t>& bytes, std::size_t offset) {
  std::uint32_t word = 0;
  for (int i = 0; i < 4; ++i) word |= static_cast<std::uint32_t>(bytes[offset + i]) << (8 * i);
  return word;
}

void set_word(std::vector<std::uint8_t>& bytes, std::size_t offset, std::uint32_t word) {
  for (int i = 0; i < 4; ++i) bytes[offset + i] = static_cast<std::uint8_t>(word >> (8 * i));
}

// A changed blob made consistent again: its checksum (FNV-1a of all but the last word) recomputed.
std::vector<std::uint8_t> with_checksum(std::vector<std::uint8_t> bytes) {
  std::uint32_t hash = 2166136261u;
  for (std::size_t i = 0; i + 4 < bytes.size(); ++i) hash = (hash ^ bytes[i]) * 16777619u;
  set_word(bytes, bytes.size() - 4, hash);
  return bytes;
}

std::string request(const std::vector<std::uint8_t>& model) {
  return firmware_request(model, kSteps, StoryOutput::kStory, "");
}

// The blob's header words (story_model.h).
enum HeaderWord { kDim = 1, kHiddenDim, kLayers, kHeads, kKvHeads, kVocabSize, kSeqLen, kEpsTerm, kPayloadBytes };

// stories260K's header with another number of layers, the payload grown to hold them: only the
// header is sent, which is all the vector build needs to see that the model does not fit.
std::string header_with_layers(std::uint32_t layers) {
  const std::vector<std::uint8_t>& model = blob();
  const std::uint32_t dim = word_at(model, 4 * kDim), hidden = word_at(model, 4 * kHiddenDim);
  const std::uint32_t kv_dim = dim / word_at(model, 4 * kHeads) * word_at(model, 4 * kKvHeads);
  const std::uint32_t layer_bytes =
      8 * (2 * dim + 2 * kv_dim + 2 * hidden + dim) + dim * (2 * dim + 2 * kv_dim + 3 * hidden);
  std::vector<std::uint8_t> header(model.begin(), model.begin() + 40);
  const std::uint32_t extra = (layers - word_at(model, 4 * kLayers)) * layer_bytes;
  set_word(header, 4 * kLayers, layers);
  set_word(header, 4 * kPayloadBytes, word_at(model, 4 * kPayloadBytes) + extra);
  return std::string(header.begin(), header.end());
}

// The firmware's ids for the first kSteps tokens after `prompt` are the host reference's.
void expect_reference_ids(const program::ProgramImage& firmware, const std::string& prompt) {
  ReferenceStory reference(blob());
  FirmwareRun run = run_firmware(firmware, firmware_request(blob(), kSteps, StoryOutput::kIds, prompt));
  ASSERT_TRUE(run.exited) << run.output;
  EXPECT_EQ(run.exit_code, 0u) << run.output;
  const std::vector<int> start = prompt.empty() ? std::vector<int>{1} : reference.encode(prompt);
  EXPECT_EQ(ids_of(run.output), reference.generate(start, kSteps).ids);
}

TEST(StoryFirmware, GivesTheReferenceIds) { expect_reference_ids(plain_firmware(), ""); }

TEST(StoryFirmware, PrintsThePromptAndTheStoryWithTheirCount) {
  ReferenceStory reference(blob());
  const std::string prompt = "Once upon a time";
  FirmwareRun run =
      run_firmware(plain_firmware(), firmware_request(blob(), kSteps, StoryOutput::kStoryAndCount, prompt));
  ASSERT_TRUE(run.exited) << run.output;
  StoryRun expected = reference.generate(reference.encode(prompt), kSteps);
  EXPECT_EQ(run.output,
            expected.text + "\n" + kStoryCountSeparator + std::to_string(expected.ids.size()) + "\n");
  EXPECT_EQ(run.output.substr(0, prompt.size()), prompt);
}

TEST(StoryVectorFirmware, GivesTheReferenceIds) { expect_reference_ids(vector_firmware(), ""); }

TEST(StoryVectorFirmware, GivesTheReferenceIdsAfterAPrompt) { expect_reference_ids(vector_firmware(), "Lily saw a big"); }

// The same ids and text from both builds; they differ only in the instructions that make them.
TEST(StoryVectorFirmware, PrintsWhatThePlainBuildPrints) {
  for (StoryOutput output : {StoryOutput::kIds, StoryOutput::kStoryAndCount}) {
    const std::string input = firmware_request(blob(), kSteps, output, "Once upon a time");
    FirmwareRun vector = run_firmware(vector_firmware(), input);
    FirmwareRun plain = run_firmware(plain_firmware(), input);
    ASSERT_TRUE(vector.exited && plain.exited) << vector.output << plain.output;
    EXPECT_EQ(vector.output, plain.output);
    EXPECT_EQ(vector.exit_code, 0u);
    EXPECT_LT(vector.instructions, plain.instructions);
  }
}

TEST(StoryFirmware, BothBuildsRejectMalformedBlobsWithTheSameLine) {
  const std::string whole = request(blob());
  std::vector<std::uint8_t> bad_magic = blob();
  bad_magic[0] ^= 1;
  std::vector<std::uint8_t> bad_dims = blob();
  bad_dims[4 * kHeads] = 3;  // 3 heads do not divide dim 64
  std::vector<std::uint8_t> corrupt_weights = blob();
  corrupt_weights[corrupt_weights.size() / 2] ^= 0x40;
  std::vector<std::uint8_t> corrupt_vocabulary = blob();
  corrupt_vocabulary[corrupt_vocabulary.size() - 20] ^= 0x40;
  // A zero shift, and a multiplier wider than 8 bits, in the first layer's wq, after the embedding's
  // pairs and rows.
  const std::uint32_t vocab = word_at(blob(), 4 * kVocabSize), dim = word_at(blob(), 4 * kDim);
  const std::uint32_t first_pair = 40 + 8 * vocab + vocab * dim;
  std::vector<std::uint8_t> bad_shift = blob();
  set_word(bad_shift, first_pair + 4, 0);
  std::vector<std::uint8_t> bad_multiplier = blob();
  set_word(bad_multiplier, first_pair, 256);
  const struct {
    std::string input;
    std::string line;
  } cases[] = {
      {whole.substr(0, whole.size() / 2), "story model blob is truncated"},
      {whole.substr(0, 20), "story model blob is truncated (header)"},
      {request(bad_magic), "not a story model blob (bad magic)"},
      {request(bad_dims), "story model blob has unsupported dimensions"},
      {request(corrupt_weights), "story model blob is corrupt (checksum mismatch)"},
      {request(corrupt_vocabulary), "story model blob is corrupt (checksum mismatch)"},
      {request(with_checksum(bad_shift)), "story model blob has bad requantisation parameters"},
      {request(with_checksum(bad_multiplier)), "story model blob has bad requantisation parameters"},
  };
  for (const auto& [input, line] : cases) {
    for (const program::ProgramImage* firmware : {&plain_firmware(), &vector_firmware()}) {
      FirmwareRun run = run_firmware(*firmware, input);
      EXPECT_TRUE(run.exited) << firmware->map.name << ": " << line;
      EXPECT_EQ(run.exit_code, 1u) << firmware->map.name << ": " << line;
      EXPECT_EQ(run.output, "error: " + line + "\n") << firmware->map.name;
    }
  }
}

// stories260K's 5 layers fit; 6 fit the weight memory but not their KV cache in the activation
// memory, 7 not even the weight memory.
TEST(StoryVectorFirmware, RefusesAModelTooBigForTheUnitsMemories) {
  FirmwareRun state = run_firmware(vector_firmware(), header_with_layers(6));
  EXPECT_EQ(state.exit_code, 1u);
  EXPECT_EQ(state.output,
            "error: the story model's state does not fit in the vector unit's activation memory (196,608 elements)\n");
  FirmwareRun weights = run_firmware(vector_firmware(), header_with_layers(7));
  EXPECT_EQ(weights.exit_code, 1u);
  EXPECT_EQ(weights.output,
            "error: the story model's weights do not fit in the vector unit's weight memory (384 KiB)\n");
}

}  // namespace
}  // namespace rvformer::story
