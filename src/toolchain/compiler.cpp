// toolchain/compiler.cpp — the command lines of the cross compiler and linker.
#include "toolchain/compiler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "support/error.h"
#include "support/file.h"
#include "toolchain/process.h"
#include "toolchain/source_tree.h"

namespace rvformer::toolchain {
namespace {

constexpr const char* kCompiler = "riscv64-unknown-elf-gcc";
constexpr const char* kInstallHint =
    "install it with: sudo apt-get install gcc-riscv64-unknown-elf binutils-riscv64-unknown-elf "
    "picolibc-riscv64-unknown-elf (or run scripts/setup.sh)";

std::string hex(std::uint32_t value) { return fmt::format("0x{:x}", value); }

std::string find_compiler() {
  std::optional<std::filesystem::path> compiler = find_executable(kCompiler);
  if (!compiler) fail_build("the RISC-V cross compiler {} is not installed; {}", kCompiler, kInstallHint);
  return compiler->string();
}

void check_picolibc(const std::string& compiler) {
  ProcessResult result = run_process({compiler, "-print-file-name=picolibc.specs"},
                                     {.capture_output = true, .timeout = std::nullopt});
  std::string specs = result.standard_output.substr(0, result.standard_output.find('\n'));
  if (result.exit_status != 0 || !std::filesystem::path(specs).is_absolute()) {
    fail_build("picolibc for RISC-V is not installed; {}", kInstallHint);
  }
}

void run_step(const std::vector<std::string>& command, bool verbose, const std::string& what) {
  if (verbose) fmt::print(stderr, "{}\n", fmt::join(command, " "));
  ProcessResult result = run_process(command);
  if (result.exit_status != 0) {
    fail_build("{} failed ({} exited with status {})", what, kCompiler, result.exit_status);
  }
}

}  // namespace

std::string checked_cross_compiler() {
  std::string compiler = find_compiler();
  check_picolibc(compiler);
  return compiler;
}

// Preprocessor definitions that tell runtime/console.c (and any source that wants them, such as
// firmware that reads the console without stdio) where the MMIO registers are, and whether the
// machine has the big-integer unit or the vector unit.
std::vector<std::string> mmio_definitions(const program::MemoryMap& map) {
  std::vector<std::string> definitions = {
      "-DRVFORMER_CONSOLE_ADDRESS=" + hex(map.console_address) + "u",
      "-DRVFORMER_EXIT_ADDRESS=" + hex(map.exit_address) + "u",
  };
  if (map.input_address != 0) definitions.push_back("-DRVFORMER_INPUT_ADDRESS=" + hex(map.input_address) + "u");
  if (map.bigint_unit) definitions.push_back("-DRVFORMER_BIGINT_UNIT=1");
  if (map.vector_unit) definitions.push_back("-DRVFORMER_VECTOR_UNIT=1");
  if (map.exit_convention == program::ExitConvention::kSifiveTestFinisher) {
    definitions.push_back("-DRVFORMER_EXIT_SIFIVE_FINISHER");
  }
  return definitions;
}

// Linker symbols that give runtime/link.ld the regions of the map.
std::string region_symbols(const program::MemoryMap& map) {
  std::vector<std::string> symbols;
  for (auto [name, region] : {std::pair{"code", map.code}, std::pair{"rodata", map.rodata},
                              std::pair{"ram", map.ram}}) {
    symbols.push_back(fmt::format("--defsym=__rvformer_{}_base={}", name, hex(region.base)));
    symbols.push_back(fmt::format("--defsym=__rvformer_{}_size={}", name, hex(region.size)));
  }
  return "-Wl," + fmt::format("{}", fmt::join(symbols, ","));
}

bool is_source(const std::filesystem::path& path) {
  const std::filesystem::path extension = path.extension();
  return extension == ".c" || extension == ".s" || extension == ".S";
}

void compile_program(const CompileOptions& options) {
  if (options.sources.empty()) fail("no source files to compile");
  if (options.optimization_level < 0 || options.optimization_level > 3) {
    fail("optimisation level {} is not 0-3", options.optimization_level);
  }
  for (const std::filesystem::path& source : options.sources) {
    check_input_file(source);
    if (!is_source(source)) fail("{}: not a C or assembly source (.c, .s or .S)", source.string());
    // The linker would replace the source (or, failing, delete it): the same file, through a link too.
    std::error_code error;
    if (std::filesystem::equivalent(options.output, source, error))
      fail("the output {} is the source {}; refusing to overwrite it", options.output.string(), source.string());
  }
  check_output_file(options.output);
  std::filesystem::path runtime = runtime_directory();
  if (!std::filesystem::is_regular_file(runtime / "link.ld")) {
    fail_build("the program runtime is missing ({} has no link.ld); set RVFORMER_SOURCE_DIR to the "
         "rvformer source tree", runtime.string());
  }
  std::string compiler = checked_cross_compiler();

  const std::vector<std::string> compile_flags = {
      compiler, "-march=rv32im_zba", "-mabi=ilp32", fmt::format("-O{}", options.optimization_level),
      "-mstrict-align", "-ffunction-sections", "-fdata-sections", "--specs=picolibc.specs",
      "-Wall", "-I", runtime.string(), "-c"};  // -I: runtime/rvformer_bigint.h, rvformer_vector.h
  TemporaryDirectory objects;
  std::vector<std::string> link = {compiler, "-march=rv32im", "-mabi=ilp32",
                                   "--specs=picolibc.specs", "-nostartfiles",
                                   "-T", (runtime / "link.ld").string(), "-Wl,--gc-sections",
                                   region_symbols(options.map)};
  int object_count = 0;
  auto compile = [&](const std::filesystem::path& source, std::vector<std::string> extra) {
    std::string object =
        (objects.path() / fmt::format("{}-{}.o", object_count++, source.stem().string())).string();
    std::vector<std::string> command = compile_flags;
    command.insert(command.end(), extra.begin(), extra.end());
    command.insert(command.end(), {source.string(), "-o", object});
    run_step(command, options.verbose, "compiling " + source.string());
    link.push_back(object);
  };
  compile(runtime / "crt0.S", {});
  compile(runtime / "console.c", mmio_definitions(options.map));
  compile(runtime / "system.c", {});
  for (const std::filesystem::path& source : options.sources) compile(source, mmio_definitions(options.map));

  link.insert(link.end(), {"-o", options.output.string()});
  // Named by its sources: `run` links into a temporary file the user never sees.
  std::vector<std::string> sources;
  for (const std::filesystem::path& source : options.sources) sources.push_back(source.string());
  run_step(link, options.verbose, fmt::format("linking {}", fmt::join(sources, " ")));
}

}  // namespace rvformer::toolchain
