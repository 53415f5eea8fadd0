// cli/program_commands.cpp — `rvformer run` and `rvformer cc`.
#include "cli/commands.h"

namespace rvformer::cli {

void add_program_commands(CLI::App&, Action&) {}

}  // namespace rvformer::cli
