// cpu/bigint.cpp — the big-integer unit (docs/bigint-unit.md): two memories A and B of 128 values
// of 30 bits, written by bz.puta and bz.putb, and the eight partial products of a dot product
// Σ_{t<8} A[i + t]·B[j − t] (indices mod 128), which the multiplier sums as extra rows.
//
// Each memory is kept in eight copies, one bank per term t, rotated so that a dot product reads
// every term at the same row: copy t of A holds A[(r + t) mod 128] in row r, copy t of B holds
// B[(r − t) mod 128]. A dot product then reads row i of every A copy and row j of every B copy,
// straight from the register bits, and pairs copy t with copy t; a put writes its value into all
// eight copies of its memory, at rows x − t (A) or x + t (B), sums the MLP computes from rs1.
#include "cpu/machine_builder.h"

namespace rvformer::cpu {
namespace {

constexpr int kIndexBits = 7;  // 128 entries a memory

// The index bits of rs1 plus the constant `offset`, mod 128, computed when `condition` holds.
Bits offset_index(Gates& g, const std::string& name, const Bits& rs1, int offset, const Form& condition) {
  Forms index = forms_of(slice(rs1, 0, kIndexBits));
  if (offset == 0) {
    Bits copy;
    for (int i = 0; i < kIndexBits; ++i) copy.push_back(g.all(name + "[" + std::to_string(i) + "]", {lit(rs1[i])}, condition));
    return copy;
  }
  Forms constant(kIndexBits);
  for (int i = 0; i < kIndexBits; ++i)
    if ((offset >> i) & 1) constant[i] = Form(1.0);
  return circuit::narrow_sum(g, name, kIndexBits, index, constant, condition);
}

}  // namespace

void MachineBuilder::add_bigint_unit() {
  if (!spec_.bigint_unit) return;
  Gates g = gates("bigint");
  bigint_dot_ = g.signal("dot");
  g.add_relu(bigint_dot_, F(decoded_.op[kBzDotlo]));
  g.add_relu(bigint_dot_, F(decoded_.op[kBzDothi]));
  for (int memory = 0; memory < 2; ++memory) {
    const std::string name = memory == 0 ? "a" : "b";
    int put_op = memory == 0 ? kBzPuta : kBzPutb;
    SignalId put = decoded_.op[put_op];
    // The rows are summed in the MLP that decodes the instruction, so they are switched on by its
    // stored bits rather than the one-hot op.
    Form putting = decoded_.first_stage(put_op, control_.executing).on();
    for (int t = 0; t < kBigintTerms; ++t) {
      const std::string copy = name + std::to_string(t);
      // A[x] lands in row x − t of copy t, B[x] in row x + t.
      int offset = memory == 0 ? (128 - t) % 128 : t;
      Bits row = offset_index(g, copy + ".row", operands_.rs1, offset, putting);
      circuit::Bank bank{"bigint." + copy, kRowsPerBank};
      bank.has_write = bank.has_read = true;
      bank.write.row = binary_select(row, {}, {F(put)});
      bank.write.beta[0] = F(put);
      bank.read.row = binary_select(slice(memory == 0 ? operands_.rs1 : operands_.rs2, 0, kIndexBits), {},
                                    {F(decoded_.op[kBzDotlo]) + F(decoded_.op[kBzDothi])});
      Bits value;
      for (int i = 0; i < kBigintLimbBits; ++i) {
        value.push_back(c_.add_read_signal("bigint." + copy + "[" + std::to_string(i) + "]"));
        bank.write.lanes[0].push_back(F(operands_.rs2[i]));
        bank.read.lanes[0].push_back({{value.back(), 1}});
      }
      int index = c_.add_bank(std::move(bank));
      (memory == 0 ? m_.layout.bigint_a_banks : m_.layout.bigint_b_banks).push_back(index);
      // A copy reads zeros unless a dot product executes, so the partial products need no enable.
      if (memory == 1) {
        const Bits& a = a_copies_[t];
        for (int p = 0; p < kBigintLimbBits; ++p)
          for (int q = 0; q < kBigintLimbBits; ++q) bigint_rows_.push_back({p + q, {lit(a[p]), lit(value[q])}, true});
      } else {
        a_copies_.push_back(value);
      }
    }
  }
}

}  // namespace rvformer::cpu
