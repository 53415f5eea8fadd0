// toolcall/console_program.cpp — see console_program.h.
#include "toolcall/console_program.h"

#include <fmt/format.h>

#include "driver/run_checkpoint.h"
#include "isa/trap.h"
#include "support/error.h"

namespace rvformer::toolcall {

ConsoleProgram::ConsoleProgram(MergedComputer& computer, program::ProgramImage image,
                               std::uint64_t max_instructions_per_request)
    : computer_(computer),
      image_(std::move(image)),
      program_digest_(driver::program_digest(image_, computer.protocol())),
      max_instructions_(max_instructions_per_request) {}

ConsoleAnswer ConsoleProgram::start() {
  computer_.reset();
  return run(std::nullopt, {});
}

ConsoleAnswer ConsoleProgram::request(std::string_view input) {
  if (waiting()) return run(position_, input);
  ConsoleAnswer started = start();
  if (started.failure) return started;
  ConsoleAnswer answer = run(position_, input);
  answer.output = started.output + answer.output;
  answer.instructions += started.instructions;
  answer.trace_tokens += started.trace_tokens;
  return answer;
}

ConsoleAnswer ConsoleProgram::run(const std::optional<driver::RunPosition>& from, std::string_view input) {
  ConsoleAnswer answer;
  std::size_t next = 0;
  driver::RunOptions options;
  options.console = [&](std::uint8_t byte) { answer.output.push_back(static_cast<char>(byte)); };
  options.input = [&] { return next < input.size() ? static_cast<unsigned char>(input[next++]) : driver::kNoInputYet; };
  options.resume_from = from;
  const std::uint64_t instructions_before = from ? from->instructions : 0;
  const std::uint64_t tokens_before = from ? from->load_tokens + from->trace_tokens : 0;
  options.max_instructions = instructions_before + max_instructions_;
  position_.reset();
  const driver::RunResult result = driver::run_program(computer_, image_, computer_.protocol(), options);
  answer.instructions = result.instructions - instructions_before;
  answer.trace_tokens = result.load_tokens + result.trace_tokens - tokens_before;
  const program::MemoryMap map = computer_.protocol().spec.memory_map();
  switch (result.end) {
    case driver::RunEnd::kAwaitingInput: position_ = result.position; break;
    case driver::RunEnd::kExited: answer.failure = fmt::format("the program exited with status {}", result.exit_code); break;
    case driver::RunEnd::kTrapped: answer.failure = isa::trapped_message(result.trap, map); break;
    case driver::RunEnd::kInstructionLimit:
      answer.failure = fmt::format("the program did not finish within {} instructions", max_instructions_);
      break;
    case driver::RunEnd::kStopped: answer.failure = "the run stopped"; break;
  }
  return answer;
}

void ConsoleProgram::save(const std::filesystem::path& path) const {
  if (!waiting()) {
    std::filesystem::remove(path);
    return;
  }
  driver::save_run_checkpoint(path, {*position_, computer_.machine_fingerprint(), program_digest_}, computer_.state());
}

void ConsoleProgram::load(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) {
    position_.reset();
    return;
  }
  auto [checkpoint, state] = driver::read_run_checkpoint(path, computer_.config());
  if (checkpoint.machine_fingerprint != computer_.machine_fingerprint()) {
    fail("{}: saved by the computer of another merged checkpoint", path.string());
  }
  if (checkpoint.program_digest != program_digest_) fail("{}: saved with another program", path.string());
  if (computer_.protocol().vocabulary.decode(checkpoint.position.next_token).kind != cpu::TokenKind::kWant) {
    fail("{}: the saved program is not waiting for input", path.string());
  }
  computer_.adopt(std::move(state));
  position_ = checkpoint.position;
}

}  // namespace rvformer::toolcall
