// cli/machine_commands.cpp — `rvformer compile`: the computer compiled into a Qwen3.5 checkpoint.
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/weights.h"
#include "cli/whole_number_option.h"
#include "cpu/machine.h"
#include "driver/compiled_machine.h"
#include "support/file.h"

namespace rvformer::cli {

void add_machine_commands(CLI::App& app, Action& action) {
  auto output = std::make_shared<std::string>();
  auto base_hidden = std::make_shared<int>(0);
  auto dtype = std::make_shared<std::string>("bf16");
  auto machine_name = std::make_shared<std::string>(program::kDefaultMachine.name);
  CLI::App* compile = app.add_subcommand("compile", "Compile the RV32IM+Zba computer into a Qwen3.5 checkpoint");
  compile->add_option("-o,--output", *output, "Directory for config.json, model.safetensors, rvformer-machine.json")
      ->required();
  add_whole_number_option(*compile, "--base-hidden", *base_hidden,
                          "compile the machine to sit after a base model's N residual dimensions, for `rvformer merge` "
                          "(default 0: a checkpoint that runs on its own)",
                          0, 1 << 20);
  compile->add_option("--dtype", *dtype,
                      "How the weights are stored: bf16 (default) or f32; every weight is a bf16 number, so both "
                      "compute the same tokens")
      ->check(CLI::IsMember({"bf16", "f32"}));
  add_machine_option(*compile, *machine_name);
  compile->callback([output, base_hidden, dtype, machine_name, &action] {
    action = [output, base_hidden, dtype, machine_name] {
      check_output_directory(*output);
      auto machine = cpu::build_machine(machine_spec(*machine_name));
      auto info = driver::compile_machine(
          *machine, *output, print_progress,
          {.base_hidden = *base_hidden, .dtype = *dtype == "f32" ? engine::DType::F32 : engine::DType::BF16});
      fmt::print("{}: the {} machine, {} layers, hidden size {}{}, MLP width {}, {} parameters ({:.2f}% exactly zero)\n",
                 *output, info.machine, info.layers, info.hidden_size,
                 info.base_hidden ? fmt::format(" (after a base model's {})", info.base_hidden) : "",
                 info.intermediate_size, info.parameters,
                 100.0 * static_cast<double>(info.zero_parameters) / static_cast<double>(info.parameters));
      return 0;
    };
  });
}

}  // namespace rvformer::cli
