// story/story_firmware_test.cpp — the story firmware (firmware/story/) on the golden emulator, in
// both builds: the plain RV32IM build on emulator-1m and the vector unit's build on rvformer-vector.
// Each gives the host reference's ids and text for the first 16 tokens, from BOS and with a prompt;
// the two builds print the same; malformed blobs get one-line errors, the same from both builds for
// the faults both can see; a model too big for the unit's memories is refused by the vector build
// with one line. The vector build's loading also runs inside the compiled rvformer-vector machine.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cpu/machine.h"
#include "driver/compiled_machine.h"
#include "driver/model_machine.h"
#include "emulator/emulator.h"
#include "engine/fast_model.h"
#include "program/machine_spec.h"
#include "story/firmware_launch.h"
#include "story/quantiser.h"
#include "story/reference.h"
#include "story_model.h"
#include "support/error.h"
#include "toolchain/program_loader.h"
#include "verify/lockstep.h"

namespace rvformer::story {
namespace {

constexpr int kSteps = 16;

const program::ProgramImage& plain_firmware() {
  static const program::ProgramImage image = toolchain::load_firmware("story", program::kEmulator1MbMap);
  return image;
}

const program::ProgramImage& vector_firmware() {
  static const program::ProgramImage image = toolchain::load_firmware("story", program::kVectorMap);
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

FirmwareRun run_firmware(const FirmwareLaunch& launch) {
  emulator::Emulator machine(launch.image);
  machine.set_input(emulator::text_input(launch.input));
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

// The firmware run on `model`, asked for kSteps tokens after `prompt`.
FirmwareRun run_story(const program::ProgramImage& firmware, const std::vector<std::uint8_t>& model,
                      StoryOutput output = StoryOutput::kStory, const std::string& prompt = "") {
  return run_firmware(firmware_launch(firmware, model, kSteps, output, prompt));
}

// The blob's header words (story_model.h).
enum HeaderWord { kDim = 1, kHiddenDim, kLayers, kHeads, kKvHeads, kVocabSize, kSeqLen, kEpsTerm, kPayloadBytes };

// stories260K's header with another number of layers or of KV heads, the payload grown to hold
// them: the header alone is all the vector build needs to see that the model does not fit.
std::vector<std::uint8_t> header_with(std::uint32_t layers, std::uint32_t kv_heads) {
  const std::vector<std::uint8_t>& model = blob();
  const std::uint32_t dim = word_at(model, 4 * kDim), hidden = word_at(model, 4 * kHiddenDim);
  auto layer_bytes = [&](std::uint32_t heads) {
    const std::uint32_t kv_dim = dim / word_at(model, 4 * kHeads) * heads;
    return 8 * (2 * dim + 2 * kv_dim + 2 * hidden + dim) + dim * (2 * dim + 2 * kv_dim + 3 * hidden);
  };
  const std::uint32_t stories_layers = word_at(model, 4 * kLayers);
  std::vector<std::uint8_t> header(model.begin(), model.begin() + 40);
  const std::uint32_t payload = word_at(model, 4 * kPayloadBytes) - stories_layers * layer_bytes(word_at(model, 4 * kKvHeads));
  set_word(header, 4 * kLayers, layers);
  set_word(header, 4 * kKvHeads, kv_heads);
  set_word(header, 4 * kPayloadBytes, payload + layers * layer_bytes(kv_heads));
  return header;
}

// The firmware's ids for the first kSteps tokens after `prompt` are the host reference's.
void expect_reference_ids(const program::ProgramImage& firmware, const std::string& prompt) {
  ReferenceStory reference(blob());
  FirmwareRun run = run_story(firmware, blob(), StoryOutput::kIds, prompt);
  ASSERT_TRUE(run.exited) << run.output;
  EXPECT_EQ(run.exit_code, 0u) << run.output;
  const std::vector<int> start = prompt.empty() ? std::vector<int>{1} : reference.encode(prompt);
  EXPECT_EQ(ids_of(run.output), reference.generate(start, kSteps).ids);
}

TEST(StoryFirmware, GivesTheReferenceIds) { expect_reference_ids(plain_firmware(), ""); }

TEST(StoryFirmware, PrintsThePromptAndTheStoryWithTheirCount) {
  ReferenceStory reference(blob());
  const std::string prompt = "Once upon a time";
  FirmwareRun run = run_story(plain_firmware(), blob(), StoryOutput::kStoryAndCount, prompt);
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
    FirmwareRun vector = run_story(vector_firmware(), blob(), output, "Once upon a time");
    FirmwareRun plain = run_story(plain_firmware(), blob(), output, "Once upon a time");
    ASSERT_TRUE(vector.exited && plain.exited) << vector.output << plain.output;
    EXPECT_EQ(vector.output, plain.output);
    EXPECT_EQ(vector.exit_code, 0u);
    EXPECT_LT(vector.instructions, plain.instructions);
  }
}

// Blobs that are wrong in their header, their requantisation pairs or their length and checksum.
struct MalformedBlob {
  std::vector<std::uint8_t> bytes;
  std::string line;
  bool in_a_stream_only;  // a fault only the plain build, which reads the blob as a stream, sees
};

std::vector<MalformedBlob> malformed_blobs() {
  const std::vector<std::uint8_t>& whole = blob();
  std::vector<std::uint8_t> bad_magic = whole;
  bad_magic[0] ^= 1;
  std::vector<std::uint8_t> bad_dims = whole;
  bad_dims[4 * kHeads] = 3;  // 3 heads do not divide dim 64
  std::vector<std::uint8_t> corrupt_weights = whole;
  corrupt_weights[corrupt_weights.size() / 2] ^= 0x40;
  std::vector<std::uint8_t> corrupt_vocabulary = whole;
  corrupt_vocabulary[corrupt_vocabulary.size() - 20] ^= 0x40;
  // A zero shift, and a multiplier wider than 8 bits, in the first layer's wq, after the embedding's
  // pairs and rows.
  const std::uint32_t vocab = word_at(whole, 4 * kVocabSize), dim = word_at(whole, 4 * kDim);
  const std::uint32_t first_pair = (STORY_HEADER_BYTES + 8 * vocab + STORY_LINE_BYTES - 1) / STORY_LINE_BYTES * STORY_LINE_BYTES +
                                   vocab * STORY_ROW_STRIDE(dim);
  std::vector<std::uint8_t> bad_shift = whole;
  set_word(bad_shift, first_pair + 4, 0);
  std::vector<std::uint8_t> bad_multiplier = whole;
  set_word(bad_multiplier, first_pair, 256);
  return {
      {std::vector<std::uint8_t>(whole.begin(), whole.begin() + whole.size() / 2), "story model blob is truncated", true},
      {std::vector<std::uint8_t>(whole.begin(), whole.begin() + 20), "story model blob is truncated (header)", true},
      {{}, "story model blob is truncated (header)", true},
      {bad_magic, "not a story model blob (bad magic)", false},
      {bad_dims, "story model blob has unsupported dimensions", false},
      {corrupt_weights, "story model blob is corrupt (checksum mismatch)", true},
      {corrupt_vocabulary, "story model blob is corrupt (checksum mismatch)", true},
      {with_checksum(bad_shift), STORY_BAD_REQUANT, false},
      {with_checksum(bad_multiplier), STORY_BAD_REQUANT, false},
  };
}

void expect_refused(const FirmwareRun& run, const std::string& line, const std::string& build) {
  EXPECT_TRUE(run.exited) << build << ": " << line;
  EXPECT_EQ(run.exit_code, 1u) << build << ": " << line;
  EXPECT_EQ(run.output, "error: " + line + "\n") << build;
}

TEST(StoryFirmware, RejectsMalformedBlobsWithOneLine) {
  for (const MalformedBlob& malformed : malformed_blobs())
    expect_refused(run_story(plain_firmware(), malformed.bytes), malformed.line, "plain");
}

// The vector build reads its blob from the weight memory, whose image cannot be cut short or
// garbled in transit: it checks the header, the requantisation pairs and the vocabulary, with the
// plain build's lines; an empty weight memory is named as such.
TEST(StoryVectorFirmware, RejectsMalformedBlobsInItsWeightMemoryWithThePlainBuildsLine) {
  for (const MalformedBlob& malformed : malformed_blobs())
    if (!malformed.in_a_stream_only) expect_refused(run_story(vector_firmware(), malformed.bytes), malformed.line, "vector");
  expect_refused(run_story(vector_firmware(), {}), "the vector unit's weight memory holds no story model blob", "vector");
}

// stories260K with 8 KV heads (keys of 64 elements) fits the weight memory but not the KV cache's
// vectors of 32; with 7 layers not even the weight memory, whose image then cannot hold the blob
// either.
TEST(StoryVectorFirmware, RefusesAModelTooBigForTheUnitsMemories) {
  const std::uint32_t layers = word_at(blob(), 4 * kLayers), kv_heads = word_at(blob(), 4 * kKvHeads);
  expect_refused(run_story(vector_firmware(), header_with(layers, 8)),
                 "the story model's state does not fit in the vector unit's memories (32,768 activations, 4,096 KV "
                 "slots of 32 elements)",
                 "vector");
  expect_refused(run_story(vector_firmware(), header_with(7, kv_heads)), STORY_BLOB_TOO_BIG_FOR_WM, "vector");
  std::vector<std::uint8_t> too_big(program::kVectorWeightBytes + 4, 0);
  EXPECT_THROW(firmware_launch(vector_firmware(), too_big, kSteps, StoryOutput::kStory, ""), Error);
}

// Inside the compiled rvformer-vector machine, in lockstep with the golden machine: the loader puts
// the whole blob into the weight memory with the firmware's code and read-only data, and the
// firmware reads the header, the requantisation pairs and the vocabulary back with vu.wget and
// checks them, then stops at a request whose MODE is out of range, before its first operation on
// activations (those instructions are not in the weights yet).
TEST(StoryVectorFirmware, LoadsAndChecksItsModelInsideTheWeightsInLockstep) {
  FirmwareLaunch launch = firmware_launch(vector_firmware(), blob(), kSteps, StoryOutput::kStory, "");
  launch.input = "1 3\n";
  const FirmwareRun golden = run_firmware(launch);
  const std::unique_ptr<cpu::Machine> machine = cpu::build_machine(program::kVectorMachine);
  const auto checkpoint = driver::machine_checkpoint(*machine, std::nullopt, [](const std::string&) {});
  engine::FastModel model = engine::FastModel::load(checkpoint);
  driver::FastModelMachine weights(model);
  std::string console;
  std::size_t next = 0;
  verify::LockstepOptions options;
  options.console = [&](std::uint8_t c) { console.push_back(static_cast<char>(c)); };
  options.input = [&] { return next < launch.input.size() ? static_cast<unsigned char>(launch.input[next++]) : -1; };
  const verify::LockstepReport report =
      verify::run_lockstep(*machine, driver::read_machine_info(checkpoint).bank_heads, weights, launch.image, options);
  EXPECT_FALSE(report.difference) << *report.difference;
  EXPECT_EQ(report.ending, "exit 1");
  EXPECT_EQ(report.instructions, golden.instructions);
  EXPECT_EQ(console, golden.output);
  EXPECT_EQ(console, "error: the request's MODE must be 0, 1 or 2\n");
}

}  // namespace
}  // namespace rvformer::story
