// elf_loader_fuzz — feeds arbitrary bytes to the ELF loader for both memory maps: it must either
// produce a program image that fits the map or throw rvformer::Error, never crash or hang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "program/elf_loader.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  for (const rvformer::program::MemoryMap& map : rvformer::program::kMemoryMaps) {
    try {
      rvformer::program::ProgramImage image =
          rvformer::program::load_elf(std::span(data, size), map, "fuzz.elf");
      bool fits = image.code.size() <= map.code.size && image.rodata.size() <= map.rodata.size &&
                  image.ram.size() <= map.ram.size && image.code.size() % 4 == 0 &&
                  map.code.contains(image.entry, 4) && image.entry % 4 == 0;
      if (!fits) std::abort();
    } catch (const rvformer::Error&) {
    }
  }
  return 0;
}
