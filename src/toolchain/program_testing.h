// toolchain/program_testing.h — a C program given as text, compiled for a machine's memory map and
// loaded, for tests that run small programs.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "program/machine_spec.h"
#include "toolchain/program_loader.h"

namespace rvformer::toolchain {

inline program::ProgramImage compile_test_program(const std::string& name, const std::string& source,
                                                  const program::MemoryMap& map = program::kRvformerMap) {
  auto path = std::filesystem::path(::testing::TempDir()) / (name + ".c");
  std::ofstream(path) << source;
  return load_program(path, map);
}

// Divisions (DIV, DIVU, REM, REMU and the C operators) of every pair of the first `edge_values` of
// a list of edge cases (zero, ±1, powers of two, INT_MIN, all ones, ...), then `random_pairs`
// pairs of pseudo-random magnitudes from 1 to 32 bits; prints a hash of every result.
inline std::string division_test_program(int edge_values, int random_pairs) {
  return "#define EDGE " + std::to_string(edge_values) + "\n#define RANDOM " + std::to_string(random_pairs) + R"(
#include <stdio.h>
static unsigned state = 12345;
static unsigned next(void) {
  state = state * 1103515245u + 12345u;
  unsigned x = state ^ (state >> 15);
  return x >> (x & 31);
}
int main(void) {
  static const unsigned edge[] = {0, 1, 0xFFFFFFFFu, 0x80000000u, 7, 0x7FFFFFFFu, 8, 0xFFFFFFF8u, 2, 10, 61035};
  unsigned h = 0;
  for (int i = 0; i < EDGE * EDGE + RANDOM; i++) {
    unsigned a = i < EDGE * EDGE ? edge[i / EDGE] : next(), b = i < EDGE * EDGE ? edge[i % EDGE] : next();
    if (i >= EDGE * EDGE && i % 2) b = (b >> 20) + 1;
    int sa = (int)a, sb = (int)b;
    h = h * 31 + a / (b | (b == 0)) + (b ? a % b : a);
    h = h * 31 + (unsigned)(sb ? (sa == (int)0x80000000 && sb == -1 ? sa : sa / sb) : -1);
    h = h * 31 + (unsigned)(sb ? (sa == (int)0x80000000 && sb == -1 ? 0 : sa % sb) : sa);
    unsigned q, r;
    __asm__ volatile("divu %0, %2, %3\n\tremu %1, %2, %3" : "=&r"(q), "=&r"(r) : "r"(a), "r"(b));
    h = h * 31 + q + 7 * r;
    __asm__ volatile("div %0, %2, %3\n\trem %1, %2, %3" : "=&r"(q), "=&r"(r) : "r"(a), "r"(b));
    h = h * 31 + q + 7 * r;
  }
  printf("%08x\n", h);
  return (int)(h & 0xFF);
}
)";
}

}  // namespace rvformer::toolchain
