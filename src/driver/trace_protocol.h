// driver/trace_protocol.h — turning a program into tokens, and a token stream back into what the
// program did. The driver never touches the model's state: it feeds the image as tokens, then feeds
// every token the model emits back to it (answering WANT with console input), and reads console
// bytes, the exit status and trap reports off the stream (docs/trace-protocol.md).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cpu/trace_tokens.h"
#include "isa/trap.h"
#include "program/machine_spec.h"
#include "program/program_image.h"

namespace rvformer::driver {

// What the driver needs to know of a machine: its memories and its vocabulary.
struct Protocol {
  explicit Protocol(const program::MachineSpec& machine_spec) : spec(machine_spec), vocabulary(machine_spec) {}
  program::MachineSpec spec;
  cpu::TraceVocabulary vocabulary;
};

// Tokens that load `image` (code and read-only data half-rows that are not all zero) and start it:
// FAR, JLO and groups of VAL VAL VAL STAGE per half-row, then FAR, JLO (the entry) and START. Throws
// rvformer::Error for images the in-weights machine cannot load (initialised RAM, another memory map).
std::vector<std::uint32_t> program_load_tokens(const program::ProgramImage& image, const Protocol& protocol);

// Anything that runs one forward pass: feed a token, get the next one.
class TokenMachine {
 public:
  virtual ~TokenMachine() = default;
  virtual std::uint32_t feed(std::uint32_t token) = 0;
};

// kAwaitingInput: the program asked for console input that RunOptions::input does not have yet
// (kNoInputYet); the run goes on from its position once there is some.
enum class RunEnd : std::uint8_t { kExited, kTrapped, kInstructionLimit, kStopped, kAwaitingInput };

// RunOptions::input's answers besides a byte.
inline constexpr int kEndOfInput = -1;
inline constexpr int kNoInputYet = -2;

// The driver's mirror of the machine's PC: the code word of the last jump and the steps completed
// since. It tells a resync (a JUMP that retires nothing) from a jump, and where a stopped run
// would go on.
struct StepMirror {
  std::uint32_t base = 0;
  std::uint32_t steps = 0;
  std::uint32_t far_high = 0;  // a FAR token's payload, until its JLO
  // The token was fed: a jump moves the base, a completed step advances the count.
  void advance(const cpu::TraceToken& fed);
  // The pass reads the counter after its own token's write: the step has left the base's row.
  bool resync_due() const { return (base & 15) + steps == 16; }
  std::uint32_t pc_word() const { return base + steps; }
};

// Where a run stands between two passes: with the model's state at that moment, enough to go on
// later (RunOptions::resume_from).
struct RunPosition {
  // Emitted by the last pass, not yet fed back (WANT when the run awaits input: the driver answers
  // it with IN or EOF, never feeds it).
  std::uint32_t next_token = 0;
  StepMirror mirror;
  std::uint64_t instructions = 0;
  std::uint64_t trace_tokens = 0;
  std::uint64_t load_tokens = 0;
};

// The byte address of the instruction a run stopped at `position` executes next.
std::uint32_t next_instruction_address(const RunPosition& position, const Protocol& protocol);

struct RunResult {
  RunEnd end = RunEnd::kInstructionLimit;
  std::uint32_t exit_code = 0;   // isa::exit_status of the code the program stored (EXIT carries 8 bits)
  isa::Trap trap;                // kTrapped: the trap as the golden machine reports it
  std::uint64_t instructions = 0;  // retired
  std::uint64_t trace_tokens = 0;  // passes after loading, the one that started the program included
  std::uint64_t load_tokens = 0;
  RunPosition position;            // kInstructionLimit, kStopped and kAwaitingInput: where to go on from
};

struct RunOptions {
  std::uint64_t max_instructions = ~std::uint64_t{0};
  std::function<void(std::uint8_t)> console;    // each console byte
  // The next byte of console input, kEndOfInput, or kNoInputYet to stop the run until there is some
  // (none: kEndOfInput).
  std::function<int()> input;
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
RunResult run_program(TokenMachine& machine, const program::ProgramImage& image, const Protocol& protocol,
                      const RunOptions& options);

// What a run in the weights that ended with `trap` says (isa::trapped_message), but for a vector
// unit instruction the machine's circuit does not have yet (cpu::decodes_op), which it names as
// such: the golden emulator runs it.
std::string trapped_message(const isa::Trap& trap, const program::MemoryMap& map, const Protocol& protocol);

}  // namespace rvformer::driver
