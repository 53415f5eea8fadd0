// compiler/toy_machine_testing.h — a small machine built from every circuit part (gates, a memory
// bank, a halving counter, a delay, a token-level output code), for tests that need compiled weights
// quickly: the compiler's own and the merge's.
#pragma once

#include <string>
#include <vector>

#include "circuit/circuit.h"
#include "circuit/gates.h"

namespace rvformer::compiler::toy {

using namespace rvformer::circuit;

// Tokens: WRITE(a, v) stores 4-bit v at address a (8 rows); READ(a); OUT(v, n, p), the machine's own
// output: the value at the last address, how many tokens since the last write (n < 4), and whether
// the previous token was a write.
struct ToyMachine {
  Circuit c;
  SignalId is_write, is_read;
  std::vector<SignalId> addr, value;
  int memory_bank = -1;

  ToyMachine() {
    is_write = c.add_input("is_write");
    is_read = c.add_input("is_read");
    for (int i = 0; i < 3; ++i) addr.push_back(c.add_input("addr" + std::to_string(i)));
    for (int i = 0; i < 4; ++i) value.push_back(c.add_input("value" + std::to_string(i)));
    Gates g(c, "toy");

    std::vector<SignalId> row;
    for (int r = 0; r < 8; ++r) {
      std::vector<Literal> lits;
      for (int i = 0; i < 3; ++i) lits.push_back((r >> i) & 1 ? lit(addr[i]) : nlit(addr[i]));
      row.push_back(g.all("row" + std::to_string(r), lits));
    }
    std::vector<SignalId> read(4);
    for (int i = 0; i < 4; ++i) read[i] = c.add_read_signal("toy.read" + std::to_string(i));
    Bank memory{"memory", 8};
    memory.has_write = memory.has_read = true;
    memory.write.row = {.one_hot = row, .binary = {}, .match = {}, .conditions = {F(is_write)}};
    memory.write.beta[0] = Form(1.0);
    for (int i = 0; i < 4; ++i) memory.write.lanes[0].push_back(F(value[i]));
    memory.read.row.binary = addr;  // the same rows, addressed in binary
    for (int i = 0; i < 4; ++i) memory.read.lanes[0].push_back({{read[i], 1}});
    memory_bank = c.add_bank(std::move(memory));

    SignalId count = c.add_read_signal("toy.count", 0, 1, 1.0 / 256);
    Bank counter{"counter", 1};
    counter.has_write = counter.has_read = true;
    counter.write.row.one_hot = {kOne};
    counter.write.beta[0] = Form(0.5) + 0.5 * F(is_write);
    counter.write.lanes[0] = {F(is_write)};
    counter.read.row.one_hot = {kOne};
    counter.read.lanes[0] = {{{count, 1}}};
    c.add_bank(std::move(counter));

    SignalId previous_write = c.add_delay(is_write, "toy.previous_write");

    std::vector<SignalId> v_out, n_out, p_out;
    for (int v = 0; v < 16; ++v) {
      std::vector<Literal> lits;
      for (int i = 0; i < 4; ++i) lits.push_back((v >> i) & 1 ? lit(read[i]) : nlit(read[i]));
      v_out.push_back(g.all("v_is" + std::to_string(v), lits));
    }
    n_out = g.counter_one_hot("n", count, 4);
    p_out.push_back(g.copy("p_is0", Form(1.0) - F(previous_write)));
    p_out.push_back(g.copy("p_is1", F(previous_write)));
    for (auto* group : {&v_out, &n_out, &p_out})
      for (SignalId s : *group) c.mark_output(s);

    c.add_token_family({"WRITE", 128, [this](std::uint32_t i, const auto& set) {
                          set(is_write, 1);
                          for (int k = 0; k < 3; ++k) set(addr[k], (i >> 4 >> k) & 1);
                          for (int k = 0; k < 4; ++k) set(value[k], (i >> k) & 1);
                        }, nullptr});
    c.add_token_family({"READ", 8, [this](std::uint32_t i, const auto& set) {
                          set(is_read, 1);
                          for (int k = 0; k < 3; ++k) set(addr[k], (i >> k) & 1);
                        }, nullptr});
    c.add_token_family({"OUT", 128, nullptr, [=](std::uint32_t i, const auto& set) {
                          set(v_out[i % 16], 1);
                          set(n_out[(i / 16) % 4], 1);
                          set(p_out[i / 64], 1);
                        }});
  }
  std::uint32_t write(int a, int v) const { return c.token_id("WRITE", a * 16 + v); }
  std::uint32_t read(int a) const { return c.token_id("READ", a); }
  std::uint32_t out(int v, int n, int p) const { return c.token_id("OUT", v + 16 * n + 64 * p); }
};

}  // namespace rvformer::compiler::toy
