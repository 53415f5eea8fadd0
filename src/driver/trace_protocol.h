// driver/trace_protocol.h — turning a program into tokens, and a token stream back into what the
// program did. The driver never touches the model's state: it feeds the image as tokens, then feeds
// every token the model emits back to it, and reads console bytes, the exit status and trap
// reports off the stream (docs/trace-protocol.md).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cpu/trace_tokens.h"
#include "isa/trap.h"
#include "program/program_image.h"

namespace rvformer::driver {

// Tokens that load `image` (code and read-only data rows that are not all zero) and start it:
// JUMP(row) + halfwords per row, then START and JUMP(entry). Throws rvformer::Error for images the
// in-weights machine cannot load (initialised RAM, a memory map other than rvformer's).
std::vector<std::uint32_t> program_load_tokens(const program::ProgramImage& image);

// Anything that runs one forward pass: feed a token, get the next one.
class TokenMachine {
 public:
  virtual ~TokenMachine() = default;
  virtual std::uint32_t feed(std::uint32_t token) = 0;
};

enum class RunEnd : std::uint8_t { kExited, kTrapped, kInstructionLimit, kStopped };

// Where a run stands between two passes: with the model's state at that moment, enough to go on
// later (RunOptions::resume_from).
struct RunPosition {
  std::uint32_t next_token = 0;  // emitted by the last pass, not yet fed back
  int steps_since_jump = 0;      // the driver's mirror of the machine's step counter
  std::uint64_t instructions = 0;
  std::uint64_t trace_tokens = 0;
  std::uint64_t load_tokens = 0;
  std::uint32_t pc = 0;  // of the next instruction, as the token stream says (RunResult::pc)
};

struct RunResult {
  RunEnd end = RunEnd::kInstructionLimit;
  std::uint32_t exit_code = 0;   // isa::exit_status of the code the program stored (EXIT carries 8 bits)
  isa::Trap trap;                // kTrapped: the trap as the golden machine reports it
  std::uint64_t instructions = 0;  // retired
  std::uint64_t trace_tokens = 0;  // passes after loading, the token that started the program included
  std::uint64_t load_tokens = 0;
  std::uint32_t pending_token = 0;  // kInstructionLimit: the last token emitted, not fed back
  int steps_since_jump = 0;
  // kInstructionLimit: the next instruction's pc. The driver follows it from the tokens: JUMP sets
  // it, VAL and OUT move it on, HI repeats the instruction.
  std::uint32_t pc = 0;
  RunPosition position() const {
    return {pending_token, steps_since_jump, instructions, trace_tokens, load_tokens, pc};
  }
};

struct RunOptions {
  std::uint64_t max_instructions = ~std::uint64_t{0};
  std::function<void(std::uint8_t)> console;   // each console byte
  std::function<void(std::uint32_t)> on_token;  // every token fed (loading included), in order
  // Observers (verification, progress); either may return false to stop the run (RunEnd::kStopped).
  // after_pass: after each pass of the run proper; the state then holds the registers and PC of
  // every instruction retired so far (a register is written in the pass after its instruction).
  // on_retired: after each retired instruction, with the count so far; a store's memory write is
  // already in the state.
  std::function<bool()> after_pass;
  std::function<bool(std::uint64_t)> on_retired;
  // Long runs: after every `checkpoint_every`-th retired instruction, `checkpoint` gets the position
  // to resume from; the model's state at that moment belongs with it.
  std::uint64_t checkpoint_every = 0;
  std::function<void(const RunPosition&)> checkpoint;
  // Goes on from a checkpoint instead of loading the image; the model must already hold the state
  // saved with that position.
  std::optional<RunPosition> resume_from;
};

// Loads (or resumes) and runs `image` on `machine`. Throws rvformer::Error if the stream breaks the protocol.
RunResult run_program(TokenMachine& machine, const program::ProgramImage& image, const RunOptions& options);

}  // namespace rvformer::driver
