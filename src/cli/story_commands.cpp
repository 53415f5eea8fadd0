// cli/story_commands.cpp — `rvformer story`: stories260K quantised by rvformer (src/story/) and
// generated greedily by the story firmware (firmware/story/), which reads the model blob, the
// request and the prompt as console input. It runs on the golden emulator: the vector unit's build
// on the rvformer-vector map, or with --plain the plain RV32IM build on emulator-1m. Inside the
// weights it needs the vector unit's operations, which the compiled rvformer-vector machine does not
// have yet (docs/story.md).
#include <cctype>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/program_run.h"
#include "cli/whole_number_option.h"
#include "emulator/emulator.h"
#include "program/machine_spec.h"
#include "story/firmware_launch.h"
#include "story/quantiser.h"
#include "support/error.h"
#include "support/file.h"
#include "toolchain/program_loader.h"

namespace rvformer::cli {
namespace {

struct StoryOptions {
  int steps = 256;
  std::string prompt;
  std::string on = "emulator";
  bool plain = false;  // the plain RV32IM build on emulator-1m instead of the vector unit's
  bool stats = false;
  std::optional<std::uint64_t> max_instructions;
  std::string checkpoint = story::stories260k_checkpoint().string();
  std::string tokenizer = story::stories260k_tokenizer().string();
  std::optional<std::string> write_blob;  // write the quantised model there instead of running it
};

// With --stats: passes the story through to stdout, keeping back the firmware's closing count
// record (separator, digits, newline). A separator byte the story itself prints is passed on as soon
// as what follows it is not such a record, or the story goes on after it, or the run ends without
// the record (finish).
class StoryOutputWatch {
 public:
  void byte(std::uint8_t c) {
    if (!held_.empty() && !continues_record(c)) flush();
    if (held_.empty() && c != story::kStoryCountSeparator)
      write_console_byte(c);
    else
      held_.push_back(static_cast<char>(c));
  }
  // The count of the record that ended the output, or 0 when it did not end with one.
  std::uint64_t story_tokens() const { return complete() ? std::stoull(held_.substr(1, held_.size() - 2)) : 0; }
  // After the run: bytes held back that did not become the record go out after all.
  void finish() {
    if (!complete()) flush();
  }

 private:
  bool complete() const { return held_.size() > 2 && held_.back() == '\n'; }
  // Whether `c` can extend the held bytes to a count record: digits, then a newline after one.
  bool continues_record(std::uint8_t c) const {
    if (held_.back() == '\n') return false;
    return std::isdigit(c) || (c == '\n' && held_.size() > 1);
  }
  void flush() {
    for (char held : held_) write_console_byte(static_cast<std::uint8_t>(held));
    held_.clear();
  }
  std::string held_;
};

// The map each build of the firmware runs on, and its name in the --stats line.
struct StoryBuild {
  const program::MemoryMap& map;
  std::string name;
};

StoryBuild story_build(const StoryOptions& options) {
  if (options.plain) return {program::kEmulator1MbMap, "plain"};
  return {program::kVectorMap, "vector"};
}

int story_command(const StoryOptions& options) {
  if (options.on == "weights")
    fail("the story program cannot run inside the weights yet: it needs the vector unit's attention and its "
         "matrix products over more than 64 columns, which the rvformer-vector machine's weights do not have yet (or, "
         "with --plain, 1 MB of RAM, which no compiled machine has); run it with --on emulator");
  std::vector<std::uint8_t> blob = story::quantise_story_files(options.checkpoint, options.tokenizer);
  if (options.write_blob) {
    write_file_atomic(*options.write_blob, blob);
    return 0;
  }
  const StoryBuild build = story_build(options);
  const story::StoryOutput output = options.stats ? story::StoryOutput::kStoryAndCount : story::StoryOutput::kStory;
  const story::FirmwareLaunch launch = story::firmware_launch(toolchain::load_firmware("story", build.map), blob,
                                                              options.steps, output, options.prompt);
  ProgramRunOptions run;
  run.on = "emulator";
  run.stats = options.stats;
  run.max_instructions = options.max_instructions;
  auto input = emulator::text_input(launch.input);
  if (!options.stats) return run_program_image(launch.image, run, {input, write_console_byte});
  StoryOutputWatch watch;
  int status = run_program_image(launch.image, run, {input, [&watch](std::uint8_t c) { watch.byte(c); }}, [&watch, &build] {
    return std::vector<std::pair<std::string, StatsValue>>{{"story_tokens", watch.story_tokens()},
                                                           {"build", build.name}};
  });
  watch.finish();
  return status;
}

}  // namespace

void add_story_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<StoryOptions>();
  CLI::App* story = app.add_subcommand(
      "story", "Tell a story with stories260K (llama2.c), quantised by rvformer, greedily from BOS (the story firmware)");
  add_whole_number_option(*story, "--steps", options->steps,
                          "Forward passes at most (default 256; 0: the model's seq_len, 512)", 0, 512);
  story->add_option("--prompt", options->prompt, "Text the story starts with (encoded with the model's BPE vocabulary)");
  story->add_option("--on", options->on,
                    "Where to run it: emulator (default; the golden emulator: rvformer-vector, or emulator-1m with "
                    "--plain) or weights (needs the vector unit's operations, not in the weights yet)")
      ->check(CLI::IsMember({"emulator", "weights"}));
  story->add_flag("--plain", options->plain,
                  "Run the plain RV32IM build (no vector unit) on the emulator-1m map instead of the vector unit's "
                  "build on rvformer-vector: the same tokens, other instructions");
  story->add_flag("--stats", options->stats,
                  "Print story tokens, instructions, seconds and the build (vector or plain) as one JSON line, the last "
                  "line of stderr");
  add_whole_number_option(*story, "--max-instructions", options->max_instructions,
                          "Stop with an error after N instructions");
  story->add_option("--checkpoint", options->checkpoint, "llama2.c model file (default models/stories260K/stories260K.bin)")
      ->check(CLI::ExistingFile);
  story->add_option("--tokenizer", options->tokenizer, "llama2.c tokenizer file (default models/stories260K/tok512.bin)")
      ->check(CLI::ExistingFile);
  story->add_option("--write-blob", options->write_blob,
                    "Write the quantised model (the blob the firmware reads) to FILE instead of running it")
      ->option_text("FILE");
  story->callback([options, &action] { action = [options] { return story_command(*options); }; });
}

}  // namespace rvformer::cli
