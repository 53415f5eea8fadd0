// story/story_firmware_test.cpp — the story firmware (firmware/story/) built for RV32IM and run on
// the golden emulator's emulator-1m map: the same ids and text as the host reference for the first
// 16 tokens, the prompt echoed, and a one-line error for a truncated blob.
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

const program::ProgramImage& firmware() {
  static const program::ProgramImage image = toolchain::load_firmware("story", program::kEmulator1MbMap);
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

FirmwareRun run_firmware(const std::string& input) {
  emulator::Emulator machine(firmware());
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

TEST(StoryFirmware, GivesTheReferenceIds) {
  ReferenceStory reference(blob());
  FirmwareRun run = run_firmware(firmware_request(blob(), kSteps, StoryOutput::kIds, ""));
  ASSERT_TRUE(run.exited) << run.output;
  EXPECT_EQ(run.exit_code, 0u) << run.output;
  EXPECT_EQ(ids_of(run.output), reference.generate({1}, kSteps).ids);
}

TEST(StoryFirmware, PrintsThePromptAndTheStoryWithTheirCount) {
  ReferenceStory reference(blob());
  const std::string prompt = "Once upon a time";
  FirmwareRun run = run_firmware(firmware_request(blob(), kSteps, StoryOutput::kStoryAndCount, prompt));
  ASSERT_TRUE(run.exited) << run.output;
  StoryRun expected = reference.generate(reference.encode(prompt), kSteps);
  EXPECT_EQ(run.output,
            expected.text + "\n" + kStoryCountSeparator + std::to_string(expected.ids.size()) + "\n");
  EXPECT_EQ(run.output.substr(0, prompt.size()), prompt);
}

TEST(StoryFirmware, RejectsATruncatedBlobWithOneLine) {
  std::string input = firmware_request(blob(), kSteps, StoryOutput::kStory, "");
  FirmwareRun run = run_firmware(input.substr(0, input.size() / 2));
  EXPECT_TRUE(run.exited);
  EXPECT_EQ(run.exit_code, 1u);
  EXPECT_EQ(run.output, "error: story model blob is truncated\n");
}

}  // namespace
}  // namespace rvformer::story
