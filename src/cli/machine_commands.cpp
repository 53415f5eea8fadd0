// cli/machine_commands.cpp — `rvformer compile`: the computer compiled into a Qwen3.5 checkpoint.
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cpu/machine.h"
#include "driver/compiled_machine.h"
#include "support/file.h"

namespace rvformer::cli {

void add_machine_commands(CLI::App& app, Action& action) {
  auto output = std::make_shared<std::string>();
  CLI::App* compile = app.add_subcommand("compile", "Compile the RV32IM+Zba computer into a Qwen3.5 checkpoint");
  compile->add_option("-o,--output", *output, "Directory for config.json, model.safetensors, rvformer-machine.json")
      ->required();
  compile->callback([output, &action] {
    action = [output] {
      check_output_directory(*output);
      auto machine = cpu::build_machine();
      auto info = driver::compile_machine(*machine, *output,
                                          [](const std::string& m) { fmt::print(stderr, "rvformer: {}\n", m); });
      fmt::print("{}: {} layers, hidden size {}, MLP width {}, {} parameters ({:.2f}% exactly zero)\n", *output,
                 info.layers, info.hidden_size, info.intermediate_size, info.parameters,
                 100.0 * static_cast<double>(info.zero_parameters) / static_cast<double>(info.parameters));
      return 0;
    };
  });
}

}  // namespace rvformer::cli
