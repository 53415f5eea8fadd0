// cli/commands.h — each group of subcommands lives in its own file and registers itself here.
#pragma once

#include <CLI/CLI.hpp>

namespace rvformer::cli {

// A subcommand's action returns the process exit status.
using Action = std::function<int()>;

// Registers the subcommand groups on `app`; the chosen subcommand stores its action in `action`.
void add_program_commands(CLI::App& app, Action& action);  // run, cc        (program_commands.cpp)
void add_model_commands(CLI::App& app, Action& action);    // model info/... (model_commands.cpp)
void add_machine_commands(CLI::App& app, Action& action);  // compile        (machine_commands.cpp)
void add_verify_command(CLI::App& app, Action& action);    // verify         (verify_commands.cpp)
void add_tokenize_command(CLI::App& app, Action& action);  // tokenize       (tokenizer_commands.cpp)
void add_chat_command(CLI::App& app, Action& action);      // chat           (chat_commands.cpp)
void add_merge_command(CLI::App& app, Action& action);     // merge          (merge_commands.cpp)
void add_calc_command(CLI::App& app, Action& action);      // calc           (calc_commands.cpp)
void add_story_command(CLI::App& app, Action& action);     // story          (story_commands.cpp)

}  // namespace rvformer::cli
