// cli/exit_status.h — the exit statuses rvformer gives of its own (README "Exit status"). A program
// that runs to its end gives its own exit status instead, 0-255, which may be any of these: only
// rvformer's own statuses come with a line "rvformer: error: ..." (or, from verify, a difference).
#pragma once

namespace rvformer::cli::exit_status {

inline constexpr int kDifference = 1;        // verify: the weights and the golden machine differ
inline constexpr int kCalcError = 1;         // calc: an expression's answer is an "error: ..." line
inline constexpr int kBadInput = 2;          // usage, a missing, unreadable or malformed file, a damaged checkpoint
inline constexpr int kBuildFailed = 3;       // the program could not be compiled or linked
inline constexpr int kTrapped = 4;           // the program trapped
inline constexpr int kInstructionLimit = 5;  // the program did not finish within --max-instructions

}  // namespace rvformer::cli::exit_status
