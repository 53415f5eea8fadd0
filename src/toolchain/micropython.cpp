// toolchain/micropython.cpp — see micropython.h.
#include "toolchain/micropython.h"

#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "program/elf_loader.h"
#include "support/cache.h"
#include "support/error.h"
#include "support/file.h"
#include "toolchain/compiler.h"
#include "toolchain/process.h"
#include "toolchain/source_tree.h"

namespace rvformer::toolchain {
namespace fs = std::filesystem;
namespace {

// The script record's header: magic "PYSC", the name's length, the text's length (little-endian words).
constexpr std::uint32_t kScriptMagic = 0x43535950;
constexpr std::size_t kScriptHeaderBytes = 12;

fs::path port_directory() { return source_tree() / "firmware" / "micropython"; }

void check_micropython_source(const fs::path& source) {
  if (fs::is_regular_file(source / "source" / "py" / "runtime.c")) return;
  fail_build("MicroPython's source is not in {}; fetch it with firmware/micropython/fetch-source.sh {} "
             "(scripts/setup.sh does), or set RVFORMER_MICROPYTHON_SOURCE to a copy",
             source.string(), source.string());
}

// "riscv64-unknown-elf-" with its directory, from the compiler's path.
std::string cross_prefix(const std::string& compiler) { return compiler.substr(0, compiler.size() - 3); }

std::vector<std::string> make_command(const program::MemoryMap& map, const fs::path& build) {
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  // make runs in the port's directory: every path it gets is absolute.
  return {"make", "-s", "-C", port_directory().string(), fmt::format("-j{}", jobs),
          "MPY_SRC=" + fs::absolute(micropython_source()).string(), "BUILD=" + fs::absolute(build).string(),
          "RUNTIME=" + fs::absolute(runtime_directory()).string(), "CROSS=" + cross_prefix(checked_cross_compiler()),
          fmt::format("MMIO_DEFS={}", fmt::join(mmio_definitions(map), " ")),
          "REGION_LDFLAGS=" + region_symbols(map)};
}

void append_word(std::vector<std::uint8_t>& bytes, std::uint32_t word) {
  for (int shift = 0; shift < 32; shift += 8) bytes.push_back(static_cast<std::uint8_t>(word >> shift));
}

std::vector<std::uint8_t> script_record(const PythonScript& script) {
  std::vector<std::uint8_t> record;
  append_word(record, kScriptMagic);
  append_word(record, static_cast<std::uint32_t>(script.name.size()));
  append_word(record, static_cast<std::uint32_t>(script.text.size()));
  record.insert(record.end(), script.name.begin(), script.name.end());
  record.insert(record.end(), script.text.begin(), script.text.end());
  return record;
}

}  // namespace

bool is_python_script(const fs::path& path) { return path.extension() == ".py"; }

PythonScript read_python_script(const fs::path& path) {
  check_input_file(path);
  return {.name = path.filename().string(), .text = read_file_text(path)};
}

fs::path micropython_source() {
  if (const char* overridden = std::getenv("RVFORMER_MICROPYTHON_SOURCE"); overridden && *overridden) {
    return overridden;
  }
  return source_tree() / "build" / "micropython-src";
}

fs::path build_micropython(const program::MemoryMap& map) {
  check_micropython_source(micropython_source());
  if (!find_executable("make")) fail_build("make is not installed; install it with: sudo apt-get install make");
  // One build per machine and per pair of source trees: make's dependency files name the sources by
  // their absolute paths, so another checkout (or a moved one) must not reuse them.
  const std::string sources = fs::absolute(port_directory()).string() + "\n" + fs::absolute(micropython_source()).string();
  fs::path build = cache_root() / fmt::format("micropython-{}-{:016x}", map.name, std::hash<std::string>{}(sources));
  check_output_directory(build);
  fs::create_directories(build);
  CacheLock lock(build.string() + ".lock");
  fs::path elf = build / "micropython.elf";
  if (!fs::exists(elf)) {
    fmt::print(stderr, "rvformer: building the MicroPython interpreter for {} into {} (once)\n", map.name,
               build.string());
  }
  ProcessResult result = run_process(make_command(map, build), {.capture_output = true, .timeout = std::nullopt});
  if (result.exit_status != 0) {
    fmt::print(stderr, "{}{}", result.standard_output, result.standard_error);
    fail_build("building the MicroPython interpreter failed (make exited with status {})", result.exit_status);
  }
  return elf;
}

std::uint32_t script_address(const fs::path& interpreter) {
  fs::path file = interpreter.parent_path() / "script-address";
  std::string text = read_file_text(file);
  char* end = nullptr;
  unsigned long address = std::strtoul(text.c_str(), &end, 16);
  if (end == text.c_str()) fail("{}: not a hexadecimal address", file.string());
  return static_cast<std::uint32_t>(address);
}

void place_script(program::ProgramImage& image, std::uint32_t address, const PythonScript& script) {
  const program::Region& rodata = image.map.rodata;
  if (!rodata.contains(address) || address - rodata.base < image.rodata.size() || address % 4 != 0) {
    fail("the interpreter image's script address 0x{:08x} is not free read-only data", address);
  }
  std::size_t offset = address - rodata.base;
  std::size_t before_text = offset + kScriptHeaderBytes + script.name.size();
  std::size_t room = before_text <= rodata.size ? rodata.size - before_text : 0;
  if (script.text.size() > room) {
    fail("{}: {} bytes, larger than the {} bytes of read-only data the interpreter leaves for a script",
         script.name, script.text.size(), room);
  }
  std::vector<std::uint8_t> record = script_record(script);
  image.rodata.resize(offset, 0);
  image.rodata.insert(image.rodata.end(), record.begin(), record.end());
}

program::ProgramImage load_python_program(const PythonScript& script, const program::MemoryMap& map) {
  fs::path interpreter = build_micropython(map);
  program::ProgramImage image = program::load_elf_file(interpreter, map);
  place_script(image, script_address(interpreter), script);
  return image;
}

}  // namespace rvformer::toolchain
