// story_profile — where the story firmware (firmware/story/) spends its instructions on the golden
// emulator: stories260K greedy from BOS for --steps tokens, every retired instruction attributed to
// the firmware function holding its pc (the ELF's symbols, read with the cross toolchain's nm), as
// instructions per story token. Loading the blob (the console reads, the checksum) is listed apart.
// The plain build by default; --vector profiles the vector unit's build on rvformer-vector, where
// each vu.* instruction counts as one. Needs the RISC-V cross compiler.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "emulator/emulator.h"
#include "program/elf_loader.h"
#include "program/machine_spec.h"
#include "story/firmware_launch.h"
#include "story/quantiser.h"
#include "support/error.h"
#include "toolchain/compiler.h"
#include "toolchain/process.h"
#include "toolchain/source_tree.h"

namespace {

using namespace rvformer;

struct Function {
  std::uint32_t start = 0;
  std::uint32_t size = 0;
  std::string name;
};

// The code symbols of `elf` with their sizes, sorted by address.
std::vector<Function> functions_of(const std::filesystem::path& elf) {
  std::string compiler = toolchain::checked_cross_compiler();
  std::string nm = compiler.substr(0, compiler.rfind("gcc")) + "nm";
  toolchain::ProcessResult listed = toolchain::run_process({nm, "--print-size", "--defined-only", elf.string()},
                                                           {.capture_output = true, .timeout = std::chrono::seconds(60)});
  if (listed.exit_status != 0) fail("{} failed: {}", nm, listed.standard_error);
  std::vector<Function> functions;
  std::istringstream lines(listed.standard_output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string address, size, type, name;
    if (!(words >> address >> size >> type >> name) || (type != "T" && type != "t")) continue;
    functions.push_back({static_cast<std::uint32_t>(std::stoul(address, nullptr, 16)),
                         static_cast<std::uint32_t>(std::stoul(size, nullptr, 16)), name});
  }
  std::sort(functions.begin(), functions.end(), [](const Function& a, const Function& b) { return a.start < b.start; });
  return functions;
}

std::string function_at(const std::vector<Function>& functions, std::uint32_t pc) {
  auto after = std::upper_bound(functions.begin(), functions.end(), pc,
                                [](std::uint32_t address, const Function& f) { return address < f.start; });
  if (after == functions.begin()) return "?";
  const Function& f = *(after - 1);
  return pc < f.start + f.size ? f.name : "?";
}

int profile(int steps, bool vector) {
  const program::MemoryMap& map = vector ? program::kVectorMap : program::kEmulator1MbMap;
  toolchain::TemporaryDirectory build;
  const std::filesystem::path elf = build.path() / "story.elf";
  std::vector<std::filesystem::path> sources;
  for (const auto& entry : std::filesystem::directory_iterator(toolchain::firmware_directory("story")))
    if (entry.path().extension() == ".c") sources.push_back(entry.path());
  std::sort(sources.begin(), sources.end());
  toolchain::compile_program({.sources = sources, .output = elf, .optimization_level = 2, .map = map});
  const std::vector<Function> functions = functions_of(elf);

  std::vector<std::uint8_t> blob = story::quantise_story_files(story::stories260k_checkpoint(), story::stories260k_tokenizer());
  const story::FirmwareLaunch launch =
      story::firmware_launch(program::load_elf_file(elf, map), blob, steps, story::StoryOutput::kStoryAndCount, "");
  emulator::Emulator machine(launch.image);
  machine.set_input(emulator::text_input(launch.input));
  std::map<std::uint32_t, std::uint64_t> per_pc;
  std::string output;
  while (!machine.halted()) {
    std::uint32_t pc = machine.pc();
    emulator::StepResult step = machine.step();
    if (step.event == emulator::Event::kTrap) fail("the firmware trapped at pc {:#010x}", pc);
    if (step.event == emulator::Event::kConsoleByte) output.push_back(static_cast<char>(step.console_byte));
    ++per_pc[pc];
  }
  const std::size_t record = output.rfind(story::kStoryCountSeparator);
  if (record == std::string::npos) fail("the firmware printed no story token count");
  const double tokens = std::stod(output.substr(record + 1));

  std::map<std::string, std::uint64_t> per_function;
  for (const auto& [pc, count] : per_pc) per_function[function_at(functions, pc)] += count;
  std::vector<std::pair<std::string, std::uint64_t>> sorted(per_function.begin(), per_function.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  const std::uint64_t total = machine.instructions_retired();
  fmt::print("{} story tokens, {} instructions in all\n", tokens, total);
  fmt::print("{:<24} {:>14} {:>16} {:>7}\n", "function", "instructions", "per story token", "share");
  for (const auto& [name, count] : sorted)
    fmt::print("{:<24} {:>14} {:>16.0f} {:>6.1f}%\n", name, count, count / tokens, 100.0 * count / total);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Instructions per story token of the story firmware, function by function");
  int steps = 64;
  bool vector = false;
  app.add_option("--steps", steps, "Forward passes (default 64)")->check(CLI::Range(1, 512));
  app.add_flag("--vector", vector, "Profile the vector unit's build (rvformer-vector) instead of the plain one");
  CLI11_PARSE(app, argc, argv);
  try {
    return profile(steps, vector);
  } catch (const rvformer::Error& error) {
    fmt::print(stderr, "story_profile: {}\n", error.what());
    return 1;
  }
}
