// toolcall/console_program.h — a program that answers requests over its console, run by the merged
// computer: loaded once, it reads a request from console input, writes its answer to the console
// and reads again. Between requests it waits at that read (driver::RunEnd::kAwaitingInput) with
// its whole state — memory, registers, PC — in the computer's GDN state, which the driver never
// touches: it only hands over the request's bytes when the model asks for input (WANT) and reads
// the answer off the model's OUT tokens.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "driver/trace_protocol.h"
#include "program/program_image.h"
#include "toolcall/merged_computer.h"

namespace rvformer::toolcall {

struct ConsoleAnswer {
  std::string output;  // the console bytes the program wrote while serving the request
  // Set when the program stopped instead of waiting for its next request (it exited, trapped or
  // ran past the instruction limit): why, in one line. The next request starts it again.
  std::optional<std::string> failure;
  std::uint64_t instructions = 0;  // retired while serving the request
  std::uint64_t trace_tokens = 0;  // passes, loading included when the request started the program
};

class ConsoleProgram {
 public:
  ConsoleProgram(MergedComputer& computer, program::ProgramImage image,
                 std::uint64_t max_instructions_per_request = 500'000'000);

  // Loads the program into the computer (from an empty state) and runs it to its first read.
  // Returns the answer of that start (console output before the first read; a failure if it
  // ended instead).
  ConsoleAnswer start();
  bool waiting() const { return position_.has_value(); }
  // Hands `input` to the program and runs it until it has read all of it and asks for more, or
  // stops. Starts it first when it is not waiting.
  ConsoleAnswer request(std::string_view input);

  // The computer's state and where the program waits, as a run checkpoint file (removed when the
  // program is not waiting); load() takes them back, refusing a file of another machine or program.
  void save(const std::filesystem::path& path) const;
  void load(const std::filesystem::path& path);

 private:
  ConsoleAnswer run(const std::optional<driver::RunPosition>& from, std::string_view input);

  MergedComputer& computer_;
  program::ProgramImage image_;
  std::uint64_t program_digest_;
  std::uint64_t max_instructions_;
  std::optional<driver::RunPosition> position_;  // while the program waits for input
};

}  // namespace rvformer::toolcall
