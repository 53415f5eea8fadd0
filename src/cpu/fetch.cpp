// cpu/fetch.cpp — the code ROM and the selected instruction.
//
// A ROM row holds 16 stored instructions (8 per half, 15 lanes of two bits each), so the row is
// read at the base's address before n is known, and the pass selects slot base[3:0] + n: the
// selected lane value x (0, 1, 2 or 4) gives its two bits as x − 2·relu(x − 1) + 1.5·relu(x − 2)
// and relu(x − 1) − relu(x − 2), three neurons per lane of each slot.
#include "cpu/machine_builder.h"

namespace rvformer::cpu {

void MachineBuilder::add_code_rom() {
  const int banks = static_cast<int>(spec_.code_bytes / (kRowsPerBank * 2 * kInstructionsPerHalf * 4));
  const int bank_bits = word_bits_ - 11;
  std::vector<std::vector<SignalId>> fetched = add_read_slots("fetch.slot", 2 * kInstructionsPerHalf, kInstructionLanes);
  std::vector<circuit::RowSelect> read_rows;
  for (int k = 0; k < banks; ++k)
    read_rows.push_back(binary_select(slice(control_.base, 4, 7), match_bits(control_.base, 11, bank_bits, k)));
  m_.layout.code_banks =
      add_loaded_memory({.name = "code",
                         .staged = staged_.code_lanes,
                         .read = fetched,
                         .read_rows = std::move(read_rows),
                         .write_rows = loaded_rows(banks, bank_bits, staged_.code_region, staged_.commit_code)});

  Gates g = gates("fetch");
  insn_.stored.clear();
  for (int b = 0; b < 2 * kInstructionLanes; ++b) insn_.stored.push_back(g.signal("stored[" + std::to_string(b) + "]"));
  insn_.sign_copy = g.signal("sign_copy");
  insn_.class_complement.clear();
  std::vector<circuit::Term> ones;
  for (int b = 0; b < Instruction::kClassBits; ++b) {
    insn_.class_complement.push_back(g.signal("class_complement[" + std::to_string(b) + "]"));
    ones.push_back({insn_.class_complement.back(), 1});
  }
  c_.add_neuron({Form(1.0).terms(), Form(1.0).terms(), ones, 1, "fetch"});
  // A stored bit's neurons also write its complement, with the opposite sign.
  auto with_complements = [&](std::vector<circuit::Term> down) {
    std::size_t n = down.size();
    for (std::size_t i = 0; i < n; ++i)
      for (int b = 0; b < Instruction::kClassBits; ++b)
        if (down[i].signal == insn_.stored[b]) down.push_back({insn_.class_complement[b], -down[i].weight});
    return down;
  };
  constexpr double kOff = 8;  // pushes every ramp of an unselected slot below zero (x ≤ 4)
  for (int s = 0; s < 2 * kInstructionsPerHalf; ++s)
    for (int m = 0; m < kInstructionLanes; ++m) {
      SignalId low = insn_.stored[2 * m], high = insn_.stored[2 * m + 1];
      Form x = F(fetched[s][m]) - kOff * (Form(1.0) - F(control_.slot[s]));
      std::vector<circuit::Term> second{{low, -2}, {high, 1}}, third{{low, 1.5}, {high, -1}};
      if (m == kInstructionLanes - 1) second.push_back({insn_.sign_copy, 1}), third.push_back({insn_.sign_copy, -1});
      c_.add_neuron({x.terms(), Form(1.0).terms(), with_complements({{low, 1}}), 1, "fetch"});
      c_.add_neuron({(x - 1).terms(), Form(1.0).terms(), with_complements(second), 1, "fetch"});
      c_.add_neuron({(x - 2).terms(), Form(1.0).terms(), with_complements(third), 1, "fetch"});
    }
}

}  // namespace rvformer::cpu
