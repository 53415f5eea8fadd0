// emulator/differential.cpp — see differential.h.
#include "emulator/differential.h"

#include <fmt/format.h>

#include <sstream>

#include "emulator/emulator.h"
#include "program/elf_loader.h"
#include "support/file.h"
#include "toolchain/qemu.h"

namespace rvformer::emulator {

using namespace isa;  // the instruction set and traps of the machine
namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream stream(line);
  for (std::string word; stream >> word;) words.push_back(word);
  return words;
}

std::string describe_stream_difference(const RandomProgram& program, std::size_t stream,
                                       const std::string& emulator_line,
                                       const std::string& qemu_line) {
  std::vector<std::string> ours = split_words(emulator_line), theirs = split_words(qemu_line);
  std::string report = fmt::format("stream {} differs:\n", stream);
  for (std::size_t i = 0; i < std::max(ours.size(), theirs.size()); ++i) {
    std::string a = i < ours.size() ? ours[i] : "(missing)";
    std::string b = i < theirs.size() ? theirs[i] : "(missing)";
    if (a != b) {
      report += fmt::format("  {}: emulator {} qemu {}\n",
                            dump_word_name(static_cast<int>(i)), a, b);
    }
  }
  if (stream < program.stream_code.size()) {
    auto [first, last] = program.stream_code[stream];
    report += "  its random instructions:\n";
    const program::MemoryMap& map = program::kQemuVirtMap;
    for (std::uint32_t address = first; address < last; address += 4) {
      report += fmt::format("    {:08x}: {}\n", address,
                            disassemble(program.code[(address - map.code.base) / 4]));
    }
  }
  return report;
}

}  // namespace

MachineRun run_on_emulator(const program::ProgramImage& image, std::uint64_t max_instructions) {
  Emulator machine(image);
  MachineRun run;
  RunResult result =
      machine.run(max_instructions, [&](std::uint8_t byte) { run.console += static_cast<char>(byte); });
  run.instructions = machine.instructions_retired();
  run.exit_status = static_cast<int>(result.exit_code & 0xFF);
  if (result.reason == StopReason::kTrapped) run.failure = describe_trap(result.trap, image.map);
  if (result.reason == StopReason::kInstructionLimit) {
    run.failure = fmt::format("still running after {} instructions", max_instructions);
  }
  return run;
}

MachineRun run_on_qemu(const std::filesystem::path& elf, std::chrono::milliseconds timeout) {
  toolchain::QemuResult result = toolchain::run_on_qemu(elf, timeout);
  MachineRun run;
  run.console = std::move(result.console);
  run.exit_status = result.exit_status;
  if (result.timed_out) {
    run.failure = fmt::format("QEMU still running after {} ms (a trap spins forever there)",
                              timeout.count());
  }
  return run;
}

RandomProgramComparison compare_with_qemu(const RandomProgram& program,
                                          const std::filesystem::path& elf_path) {
  write_file_atomic(elf_path, program.elf);
  program::ProgramImage image =
      program::load_elf(program.elf, program::kQemuVirtMap, elf_path.string());
  MachineRun ours = run_on_emulator(image, 1'000'000'000);
  MachineRun theirs = run_on_qemu(elf_path, std::chrono::seconds(60));

  RandomProgramComparison comparison;
  comparison.streams = static_cast<int>(program.stream_code.size());
  comparison.instructions = ours.instructions;
  std::vector<std::string> our_lines = split_lines(ours.console);
  std::vector<std::string> their_lines = split_lines(theirs.console);
  for (int stream = 0; stream < comparison.streams; ++stream) {
    auto line = static_cast<std::size_t>(stream);
    std::string a = line < our_lines.size() ? our_lines[line] : "";
    std::string b = line < their_lines.size() ? their_lines[line] : "";
    if (a == b && split_words(a).size() == static_cast<std::size_t>(kDumpWords)) continue;
    if (comparison.mismatched_streams++ == 0) {
      comparison.first_mismatch = describe_stream_difference(program, line, a, b);
    }
  }
  for (const MachineRun* run : {&ours, &theirs}) {
    if (!run->failure.empty() || run->exit_status != 0) {
      comparison.first_mismatch += fmt::format("{}: exit status {}, {}\n",
                                               run == &ours ? "emulator" : "qemu",
                                               run->exit_status, run->failure);
      comparison.mismatched_streams = std::max(comparison.mismatched_streams, 1);
    }
  }
  return comparison;
}

}  // namespace rvformer::emulator
