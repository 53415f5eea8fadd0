// cli/model_commands.cpp — `rvformer model info|generate`: inspect and run any Qwen3.5 checkpoint.
#include "cli/commands.h"

namespace rvformer::cli {

void add_model_commands(CLI::App&, Action&) {}

}  // namespace rvformer::cli
