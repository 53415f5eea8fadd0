// verify/lockstep.h — running a program inside the weights and on the golden emulator side by side.
// In lockstep mode, after every retired instruction the PC and all registers are decoded from the
// model's GDN state and compared with the emulator's, and so is the RAM word each store wrote; the
// run stops at the first difference. In free-run mode only the console output, the exit status or
// trap, and the final registers are compared.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "compiler/placement.h"
#include "cpu/machine.h"
#include "driver/model_machine.h"
#include "program/program_image.h"

namespace rvformer::verify {

struct LockstepOptions {
  bool free_run = false;
  std::uint64_t check_every = 1;  // compare registers every N retired instructions (lockstep mode)
  std::uint64_t max_instructions = ~std::uint64_t{0};
  std::function<void(std::uint8_t)> console;
  // The program's console input, the next byte or -1 at its end (none: empty). Both machines read
  // the same bytes: those one has read and the other not yet are kept until it does.
  std::function<int()> input;
  // Called after every token fed (loading included), with the instructions compared so far.
  std::function<void(std::uint64_t instructions)> progress;
  // Long runs (driver::RunOptions): go on from a checkpoint, whose state the model must already
  // hold, and save new ones along the way.
  std::optional<driver::RunPosition> resume_from;
  std::uint64_t checkpoint_every = 0;
  std::function<void(const driver::RunPosition&)> checkpoint;
};

struct LockstepReport {
  std::uint64_t instructions = 0;     // retired on both machines
  std::uint64_t checks = 0;           // register comparisons made
  std::optional<std::string> difference;  // the first one, if any
  std::string ending;                 // "exit 0", "trap: ...", "instruction limit"
};

LockstepReport run_lockstep(const cpu::Machine& machine, const std::vector<compiler::HeadSlot>& bank_heads,
                            driver::StatefulTokenMachine& model, const program::ProgramImage& image,
                            const LockstepOptions& options);

}  // namespace rvformer::verify
