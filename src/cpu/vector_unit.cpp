// cpu/vector_unit.cpp — the vector unit's part of the machine so far (docs/vector-unit.md): its
// weight memory (WM), filled by the loader from the program image's third part, vu.wget, which
// reads a word of it into rd; its activation memory (AM), which vu.put writes a line at a time
// through a line buffer and vu.get reads an element of; its KV cache, which vu.kput and vu.vput
// fill from AM rows; the configuration registers the vu.set* instructions write; and the
// elementwise operations, the argmax, the norm, the rotations and the embedding lookup.
//
// WM is banks of 128 rows × 16 words (8 per half) at four bits a lane, each lane the level 0 or
// 2^(n − 1) of its nibble n: a word takes 8 lanes, a bank 8 KiB, so 384 KiB take 48 banks where two
// bits a lane would take 96. A bank row is a 64-byte line, consecutive lines in consecutive banks
// (weight_memory_place), so that a matrix row of several lines is one row of several banks. Every
// read takes the line that layer 0 keeps from the last WLINE token, which the first pass of vu.wget
// (and of vu.rope, for its table) sends, so that WM's row selects wait for no register; an address
// outside WM or not a multiple of 4 makes vu.wget an illegal instruction, as on the golden emulator.
//
// AM is 8 banks of 128 rows × 32 elements (16 per half) of 13 bits, two bits a lane: element e is
// in bank e[7:5], row e[14:8], half e[4], lanes 7·e[3:0] .. + 6. A write replaces a half-row, so
// vu.put writes its value's lanes into slot e[3:0] of a line buffer (single-row banks, a slot a
// half) and, at slot 15, reads the buffer back and writes it into the line's half-row whole, as the
// golden emulator's vu.put commits its buffer.
//
// The KV cache is 32 banks of 128 rows, slot s in bank s[4:0], row s[11:5], its key vector in half
// 0 and its value vector in half 1: 32 elements of 13 bits packed four bits a lane (104 lanes, each
// the level 0 or 2^(n − 1) of its nibble n, as WM's), so that an attention pass can read a block of
// 32 consecutive slots, a row of every bank. vu.kput and vu.vput read the 32 elements as one row
// of one AM bank.
//
// The operations that go a line at a time (vu.add16, vu.mul16, vu.silu, vu.rope after its WLINE,
// vu.row16 after the passes that read its requantisation pair, vu.argmax, and vu.rmsnorm after the
// passes that take its scale from its vector, a bank's row a pass) take a pass per output element
// or line, each sending a VEC token, with LINE tokens between groups of 16; where the operation stands lives in layer 0, written from those tokens, and the
// instruction is fetched again in every pass, since neither token moves the PC. AM's banks read
// into two sets of signals, the even banks' and the odd ones', so that a pass reads a line from a
// bank of each parity.
#include <array>
#include <bit>

#include "circuit/vector_arith.h"
#include "circuit/vector_elementwise.h"
#include "circuit/vector_reduce.h"
#include "cpu/machine_builder.h"
#include "story_ops.h"
#include "support/error.h"

namespace rvformer::cpu {
namespace {

constexpr double kCounterQuantum = 1.0 / (1 << 25);
constexpr int kProductShiftBits = 5;  // the elementwise unit's product takes its shift, 1..30, in binary
constexpr int kNormEntryBits = 8, kNormHalfEBits = 4;  // the norm's scale token: the table entry, e/2
// The norm's passes before its first LINE: three that send the partial sum of squares a VEC each,
// the scale's, and the one that latches the scale.
constexpr int kNormPartialPasses = 3, kNormProloguePasses = kNormPartialPasses + 2;

Bits read_signals(circuit::Circuit& c, const std::string& name, int count) {
  Bits bits;
  for (int i = 0; i < count; ++i) bits.push_back(c.add_read_signal(indexed(name, i)));
  return bits;
}

// The line of an AM row's element e in the next bank's row: bank e[7:5] + 1 modulo 8, the half and
// the row as e's.
Bits next_bank_line(Gates& g, const std::string& name, const Bits& element) {
  const Bits next_bank = circuit::narrow_sum(g, name, 3, forms_of(slice(element, 5, 3)), {Form(1.0)});
  Bits line{element[4]};
  line.insert(line.end(), next_bank.begin(), next_bank.end());
  for (int i = 8; i < kVectorElementAddressBits; ++i) line.push_back(element[i]);
  return line;
}

// [any of `bits`] as a form of one new signal.
Form any_of(Gates& g, const std::string& name, const Bits& bits) { return F(g.any(name, circuit::sum_of(bits))); }

// [value > 64] for a 32-bit register: a bit from 7 on set, or bit 6 and a lower one.
SignalId past_64(Gates& g, const std::string& name, const Bits& value) {
  Gates p = g.sub(name);
  return p.any("any", any_of(p, "past_127", slice(value, 7, 25)) +
                          F(p.all("65_to_127", {lit(value[6]), lit(p.any("low6", circuit::sum_of(slice(value, 0, 6))))})));
}

// The nibble lanes of `count` bytes from byte `first` of WM's read-out line, within one word.
std::vector<SignalId> weight_byte_lanes(const WeightRows& wm, int first, int count = 1) {
  const std::vector<SignalId>& word = wm[first / 4];
  const auto lane = word.begin() + kVectorWeightLanesPerByte * (first % 4);
  return {lane, lane + kVectorWeightLanesPerByte * count};
}

}  // namespace

void MachineBuilder::add_vector_unit() {
  if (!spec_.vector_weight_bytes) return;
  const VectorRegisters registers = add_vector_registers();
  const VectorLines lines = add_vector_lines(registers);
  const WeightRows wm = add_vector_weight_memory(lines);
  const ActivationRows am = add_vector_activation_memory(lines);
  add_vector_kv_cache(am);
  const ProductOperands product = add_vector_elementwise(lines, am, registers);
  add_vector_argmax(lines, am, registers);
  add_vector_norm_scale(lines, am, registers);
  add_vector_rope(lines, am, wm, registers);
  add_vector_row16(lines, wm, registers, product);
  add_vector_matvec(lines, am, wm, registers);
}

int MachineBuilder::weight_banks() const { return static_cast<int>(spec_.vector_weight_bytes / kVectorWeightBankBytes); }

// [address is not a multiple of 2^`low_zero_bits` or lies past WM], as a form of new signals.
Form MachineBuilder::weight_address_outside(Gates& g, const Bits& address, int low_zero_bits) {
  const int banks = weight_banks();
  const int bank_bits = std::bit_width(static_cast<unsigned>(banks - 1));
  constexpr int kLow = 13;  // the bank's bits start here
  Form outside;
  for (int i = 0; i < low_zero_bits; ++i) outside += F(address[i]);
  for (int i = kLow + bank_bits; i < 32; ++i) outside += F(address[i]);
  SignalId past_last = g.signal("past_last_bank");
  g.add_step(past_last, circuit::binary_value(slice(address, kLow, bank_bits)), banks);
  return outside + F(past_last);
}

WeightRows MachineBuilder::add_vector_weight_memory(const VectorLines& v) {
  const int banks = weight_banks();
  const int bank_bits = std::bit_width(static_cast<unsigned>(banks - 1));
  const int half_row_bits = 8 + bank_bits, line_bits = half_row_bits - 1;
  if (spec_.vector_weight_bytes % kVectorWeightBankBytes != 0 || half_row_bits > word_bits_ - 1 ||
      line_bits > kVectorWeightLineBits)
    fail("cpu: the {} machine's weight memory ({} bytes) is not whole banks the loader can address", spec_.name,
         spec_.vector_weight_bytes);
  Gates g = gates("vector");
  SignalId wget = decoded_.op[kVuWget];
  const Bits& address = operands_.rs1;

  // Illegal operands: a low bit set, a bit above the banks set, or a bank number past the last.
  SignalId illegal = g.all("illegal_operand", {lit(wget), lit(g.any("outside", weight_address_outside(g, address, 2)))});
  illegal_operands_.push_back(illegal);

  // The first pass sends WLINE(address[..:6]), the pass fed it reads that line (and the passes fed
  // HI or TOP after it, for a word that needs them).
  const SignalId is_wline = in_.is(TokenKind::kWline);
  const SignalId reads_word =
      g.any("reads_word", F(is_wline) + F(in_.is(TokenKind::kHi)) + F(in_.is(TokenKind::kTop)));
  const std::vector<Literal> first_pass{lit(wget), nlit(reads_word), nlit(illegal), nlit(control_.in_report)};
  const SignalId sends_wline = g.all("sends_wline", first_pass);
  vector_wline_pass_ = g.signal("wline_pass");
  g.add_all(vector_wline_pass_, first_pass);
  Gates out = g.sub("wline");
  for (int i = 0; i < line_bits; ++i) add_result_bit(out, i, {lit(sends_wline), lit(address[6 + i])});
  vector_weight_line_ = slice(add_weight_line_latch(), 0, line_bits);
  // The line read: WLINE's, but for a pass that computes output k of a matrix product's line, which
  // reads its row, WLINE + k (add_vector_matvec).
  Gates rl = g.sub("read_line");
  Forms row_in_line;
  for (int j = 0; j < 4; ++j)
    row_in_line.push_back(F(rl.relu(indexed("k", j), v.k[j] + F(v.line[kVectorMatrixLineBit]) - 1, 1)));
  const Bits read_line = circuit::narrow_sum(rl, "line", line_bits, forms_of(vector_weight_line_), row_in_line);

  const double top_level = stored_level((1 << kVectorWeightLaneBits) - 1);
  std::vector<std::vector<SignalId>> read =
      add_read_slots("vector.weights", 2 * kVectorWeightWordsPerHalf, kVectorWeightLanes, top_level);
  m_.layout.vector_weight_banks = add_loaded_memory(
      {.name = "vector.weights",
       .staged = staged_.vector_weight_lanes,
       .read = read,
       .read_rows = weight_line_rows(read_line, {}, {}),
       .write_rows = weight_line_rows(slice(control_.base, 1, line_bits), staged_.vector_weight_region,
                                      {F(in_.stage_slot[kVectorWeightSlots - 1])})});

  // The addressed word, by address[5:2], into the value payload (not when it traps: the trap report
  // takes the payload).
  Gates w = g.sub("wget");
  const Bits word = w.signals("word", 32);
  for (int slot = 0; slot < 2 * kVectorWeightWordsPerHalf; ++slot)
    add_levels_as_bits(w, read[slot],
                       join(match_bits(address, 2, 4, static_cast<std::uint32_t>(slot)), {lit(wget), lit(reads_word)}),
                       word, kVectorWeightLaneBits);
  write_result(forms_of(word), "vector.wget", {nlit(illegal)});
  return read;
}

// The payload of the last WLINE, the line every WM read takes: a register written from the token
// alone, so that WM can sit in any layer after layer 0.
Bits MachineBuilder::add_weight_line_latch() {
  TokenRegister latch{.name = "vector.weight_line", .beta = F(in_.is(TokenKind::kWline)), .lanes = {}, .read = {}};
  for (int i = 0; i < kVectorWeightLineBits; ++i) latch.lanes.push_back(F(in_.wline[i]));
  latch.read = read_signals(c_, "vector.weight_line", kVectorWeightLineBits);
  const Bits line = latch.read;
  add_token_register(std::move(latch));
  return line;
}

std::vector<circuit::RowSelect> MachineBuilder::weight_line_rows(const Bits& line, const std::vector<Literal>& match,
                                                                 const std::vector<circuit::LinearForm>& conditions) const {
  const int banks = weight_banks();
  std::vector<circuit::RowSelect> rows;
  for (const WeightRegion& region : weight_memory_regions(banks)) {
    const int top = region.bank_bits + std::countr_zero(static_cast<unsigned>(kRowsPerBank));
    const std::vector<Literal> in_region =
        join(match_bits(line, top, static_cast<int>(line.size()) - top, region.first_line >> top), match);
    for (std::uint32_t k = 0; k < 1u << region.bank_bits; ++k)
      rows.push_back(binary_select(slice(line, region.bank_bits, top - region.bank_bits),
                                   join(match_bits(line, 0, region.bank_bits, k), in_region), conditions));
  }
  return rows;
}

std::vector<circuit::RowSelect> MachineBuilder::activation_rows(Gates& g, const std::string& name,
                                                                const std::vector<VectorLineAccess>& accesses) {
  std::vector<circuit::RowSelect> rows;
  for (int b = 0; b < kVectorActivationBanks; ++b) {
    Gates r = g.sub(name + std::to_string(b));
    SignalId selected = r.signal("selected");
    Bits row;
    for (int j = 0; j < 7; ++j) row.push_back(r.signal(indexed("row", j)));
    for (const VectorLineAccess& access : accesses) {
      const std::vector<Literal> here = match_bits(access.line, 1, 3, static_cast<std::uint32_t>(b));
      r.add_all(selected, here, access.when);
      for (int j = 0; j < 7; ++j) r.add_all(row[j], join(here, {lit(access.line[4 + j])}), access.when);
    }
    rows.push_back(binary_select(row, {}, {F(selected)}));
  }
  return rows;
}

ActivationRows MachineBuilder::add_vector_activation_memory(const VectorLines& lines) {
  Gates g = gates("vector.am");
  const SignalId put = decoded_.op[kVuPut], get = decoded_.op[kVuGet];
  const Bits& element = operands_.rs1;
  const Bits& value = operands_.rs2;
  const SignalId is_vec = in_.is(TokenKind::kVec);
  static_assert(kVectorActivationBanks * kRowsPerBank * 2 * kVectorLineElements == 1 << kVectorElementAddressBits);

  // Out of range: an element past AM, or a put value whose bits 31..12 are not all equal.
  Form high_bits;
  for (int i = kVectorElementAddressBits; i < 32; ++i) high_bits += F(element[i]);
  SignalId element_outside = g.any("element_outside", high_bits);
  Form sign_bits;
  for (int i = kVectorElementBits - 1; i < 32; ++i) sign_bits += F(value[i]);
  SignalId value_outside = g.signal("value_outside");
  g.add_step(value_outside, sign_bits, 1);
  g.add_step(value_outside, sign_bits, 33 - kVectorElementBits, -1);
  SignalId illegal_put = g.signal("illegal_put");
  g.add_step(illegal_put, 2 * F(put) + F(element_outside) + F(value_outside), 3);
  SignalId illegal_get = g.all("illegal_get", {lit(get), lit(element_outside)});
  illegal_operands_.push_back(illegal_put);
  illegal_operands_.push_back(illegal_get);

  // What the line buffer's slot k takes, two bits a lane (the level 0, 1, 2 or 4; bit 12 alone in
  // the last lane): a legal put's value at an element ≡ k, or an operation's element k, which the
  // pass after its VEC token reads off the token (when the element counter has moved on to k + 1).
  // The buffer is read every pass.
  std::vector<SignalId> value_levels;
  for (int m = 0; m < kVectorElementLanes; ++m)
    value_levels.push_back(c_.add_stored_levels_signal("vector.am.value_level[" + std::to_string(m) + "]"));
  add_bits_as_levels(g, value_levels, slice(value, 0, kVectorElementBits), {lit(put)}, kVectorElementLaneBits);
  add_bits_as_levels(g, value_levels, in_.vec, {lit(is_vec)}, kVectorElementLaneBits);
  auto puts_slot = [&](int k) {
    return join(match_bits(element, 0, 4, static_cast<std::uint32_t>(k)), {lit(put), nlit(element_outside), nlit(value_outside)});
  };
  std::vector<SignalId> takes_slot;
  for (int k = 0; k < kVectorLineElements; ++k) {
    takes_slot.push_back(g.all("takes_slot" + std::to_string(k), puts_slot(k)));
    g.add_all(takes_slot.back(), {lit(is_vec), lit(lines.element[k + 1])}, lines.writes_lines_on);
  }
  const SignalId put_commit = g.all("put_commit", puts_slot(kVectorLineElements - 1));
  std::vector<std::vector<SignalId>> line = add_read_slots("vector.line", kVectorLineElements, kVectorElementLanes);
  for (int b = 0; 2 * b < kVectorLineElements; ++b) {
    circuit::Bank bank = single_row_bank("vector.line" + std::to_string(b));
    bank.write.row.conditions = {F(put) + F(is_vec)};
    for (int h = 0; h < 2; ++h) {
      bank.write.beta[h] = F(takes_slot[2 * b + h]);
      for (int m = 0; m < kVectorElementLanes; ++m) {
        bank.write.lanes[h].push_back(F(value_levels[m]));
        bank.read.lanes[h].push_back({{line[2 * b + h][m], 1}});
      }
    }
    m_.layout.vector_line_banks.push_back(c_.add_bank(std::move(bank)));
  }

  // The buffer is committed into a line's half-row, lane for lane, by the put at slot 15 (its line)
  // and by an operation's pass after a line's sixteenth VEC (the output line).
  const Bits put_line = slice(element, 4, kVectorElementAddressBits - 4);
  const std::vector<VectorLineAccess> commits{{lines.commits_on, lines.line_a}, {F(put_commit), put_line}};
  std::vector<SignalId> levels;
  for (int k = 0; k < kVectorLineElements; ++k)
    for (int m = 0; m < kVectorElementLanes; ++m) {
      levels.push_back(c_.add_stored_levels_signal("vector.am.level" + std::to_string(k) + "[" + std::to_string(m) + "]"));
      g.add_relu(levels.back(), F(line[k][m]));
    }
  std::array<SignalId, 2> writes_half{g.signal("writes_half0"), g.signal("writes_half1")};
  for (const VectorLineAccess& commit : commits)
    for (int h = 0; h < 2; ++h) g.add_all(writes_half[h], match_bits(commit.line, 0, 1, h), commit.when);
  // vu.get, vu.kput and vu.vput read their element's row; an operation's pass its operands' lines.
  const std::vector<VectorLineAccess> reads{{F(get) + F(decoded_.op[kVuKput]) + F(decoded_.op[kVuVput]), put_line},
                                            {lines.reads_a_on, lines.line_a},
                                            {lines.reads_b_on, lines.line_b},
                                            {lines.norm_reads_on, lines.line_b},
                                            {lines.argmax_reads_on, lines.argmax_line},
                                            {lines.norm_first_on, lines.norm_first_line},
                                            {lines.norm_second_on, lines.norm_second_line},
                                            {lines.matvec_reads_on, lines.matvec_first_line},
                                            {lines.matvec_reads_on, lines.matvec_second_line}};
  std::vector<circuit::RowSelect> write_rows = activation_rows(g, "write_row", commits);
  std::vector<circuit::RowSelect> read_rows = activation_rows(g, "read_row", reads);
  ActivationRows am{add_read_slots("vector.am.even", 2 * kVectorLineElements, kVectorElementLanes),
                    add_read_slots("vector.am.odd", 2 * kVectorLineElements, kVectorElementLanes)};
  for (int b = 0; b < kVectorActivationBanks; ++b) {
    circuit::Bank bank{"vector.am" + std::to_string(b), kRowsPerBank};
    bank.has_read = bank.has_write = true;
    bank.write.row = write_rows[b];
    bank.read.row = read_rows[b];
    const std::vector<std::vector<SignalId>>& read = am.of_parity(b % 2);
    for (int h = 0; h < 2; ++h) {
      bank.write.beta[h] = F(writes_half[h]);
      for (SignalId level : levels) bank.write.lanes[h].push_back(F(level));
      for (int k = 0; k < kVectorLineElements; ++k)
        for (SignalId lane : read[kVectorLineElements * h + k]) bank.read.lanes[h].push_back({{lane, 1}});
    }
    m_.layout.vector_activation_banks.push_back(c_.add_bank(std::move(bank)));
  }

  // vu.get: the element at e[5:0] of the read-out (its bank's parity and its place in the row),
  // sign-extended from bit 12.
  Gates r = g.sub("get");
  const Bits bits = r.signals("bit", kVectorElementBits);
  for (int parity = 0; parity < 2; ++parity)
    for (int slot = 0; slot < 2 * kVectorLineElements; ++slot)
      add_levels_as_bits(r, am.of_parity(parity)[slot],
                         join(match_bits(element, 0, 6, static_cast<std::uint32_t>(slot + 32 * parity)), {lit(get)}),
                         bits, kVectorElementLaneBits);
  Forms word = forms_of(bits);
  word.resize(32, F(bits.back()));
  write_result(word, "vector.get", {nlit(illegal_get)});
  return am;
}

void MachineBuilder::add_vector_kv_cache(const ActivationRows& am) {
  Gates g = gates("vector.kv");
  const SignalId kput = decoded_.op[kVuKput], vput = decoded_.op[kVuVput];
  const Bits& element = operands_.rs1;
  const Bits& slot = operands_.rs2;
  constexpr int kSlotBits = 12, kBankBits = 5;  // 4,096 slots: bank slot[4:0], row slot[11:5]
  static_assert(program::kVectorKvSlots == 1u << kSlotBits && kVectorKvBanks == 1 << kBankBits);

  // Out of range: an element not a multiple of 32 or past AM, a slot past the cache.
  Form outside;
  for (int i = 0; i < 32; ++i)
    if (i < kBankBits || i >= kVectorElementAddressBits) outside += F(element[i]);
  for (int i = kSlotBits; i < 32; ++i) outside += F(slot[i]);
  SignalId kv_outside = g.any("outside", outside);
  SignalId illegal = g.signal("illegal");
  g.add_step(illegal, 2 * (F(kput) + F(vput)) + F(kv_outside), 3);
  illegal_operands_.push_back(illegal);
  const SignalId writes_keys = g.all("writes_keys", {lit(kput), nlit(kv_outside)});
  const SignalId writes_values = g.all("writes_values", {lit(vput), nlit(kv_outside)});

  // The row's 32 elements as bits, element i's bit b at 13i + b, then four bits a lane as stored
  // levels. The first pass writes the slot's half with zeros, since a lane of four bits is only
  // overwritten exactly upwards or with 0 (docs/circuit-encoding.md); it sends HI(0), and the
  // second writes the levels and completes the step.
  const SignalId to_kv = g.relu("to_kv", F(kput) + F(vput), 1);
  const SignalId clear_pass = g.all("clear_pass", {lit(to_kv), lit(control_.hi_position[0])});
  hi_passes_.push_back(clear_pass);
  Gates d = g.sub("bits");
  const Bits bits = d.signals("bit", kVectorKvVectorBits);
  for (int parity = 0; parity < 2; ++parity)
    for (int k = 0; k < static_cast<int>(program::kVectorKvElements); ++k)
      add_levels_as_bits(d, am.of_parity(parity)[k], join(match_bits(element, 5, 1, parity), {lit(to_kv)}),
                         slice(bits, kVectorElementBits * k, kVectorElementBits), kVectorElementLaneBits);
  std::vector<SignalId> lanes;
  for (int m = 0; m < kVectorKvLanes; ++m)
    lanes.push_back(c_.add_stored_levels_signal("vector.kv.level[" + std::to_string(m) + "]",
                                                stored_level((1 << kVectorKvLaneBits) - 1)));
  add_bits_as_levels(g, lanes, bits, {lit(control_.hi_position[1])}, kVectorKvLaneBits);
  for (int b = 0; b < kVectorKvBanks; ++b) {
    circuit::Bank bank{"vector.kv" + std::to_string(b), kRowsPerBank};
    bank.has_write = true;
    bank.write.row = binary_select(slice(slot, kBankBits, kSlotBits - kBankBits),
                                   match_bits(slot, 0, kBankBits, static_cast<std::uint32_t>(b)),
                                   {F(writes_keys) + F(writes_values)});
    bank.write.beta[0] = F(writes_keys);
    bank.write.beta[1] = F(writes_values);
    for (int h = 0; h < 2; ++h)
      for (SignalId lane : lanes) bank.write.lanes[h].push_back(F(lane));
    m_.layout.vector_kv_banks.push_back(c_.add_bank(std::move(bank)));
  }
}

// The operation's progress lives in layer 0, written from the token alone (docs/vector-unit.md):
// a counter lane that LINE resets to 1, VEC halves and a completing token clears; beside it one that
// a completing token sets to 1, VEC halves and LINE clears, which counts the VEC tokens a norm sends
// before its first LINE; and LINE's payload. VEC and LINE do not complete a step, so the PC stays
// on the operation until its final VAL(0).
VectorLines MachineBuilder::add_vector_lines(const VectorRegisters& registers) {
  auto is = [&](TokenKind kind) { return F(in_.is(kind)); };
  VectorLines v;
  SignalId count = c_.add_read_signal("vector.op.count", 0, 1, kCounterQuantum);
  v.line = read_signals(c_, "vector.op.line", kVectorLineIndexBits);
  circuit::Bank bank = single_row_bank("vector.op");
  bank.write.beta[0] = is(TokenKind::kLine) + 0.5 * is(TokenKind::kVec) + in_.completes();
  SignalId prologue = c_.add_read_signal("vector.op.prologue", 0, 1, kCounterQuantum);
  bank.write.lanes[0] = {is(TokenKind::kLine), in_.completes()};
  bank.read.lanes[0] = {{{count, 1}}, {{prologue, 1}}};
  bank.write.beta[1] = is(TokenKind::kLine);
  for (int i = 0; i < kVectorLineIndexBits; ++i) {
    bank.write.lanes[1].push_back(F(in_.line[i]));
    bank.read.lanes[1].push_back({{v.line[i], 1}});
  }
  c_.add_bank(std::move(bank));

  Gates g = gates("vector.op");
  v.element = g.counter_one_hot("element", count, kVectorLineElements + 1);
  v.norm_pass = g.counter_one_hot("norm_pass", prologue, kNormProloguePasses);
  v.k.resize(4);
  for (int k = 0; k < kVectorLineElements; ++k)
    for (int j = 0; j < 4; ++j)
      if ((k >> j) & 1) v.k[j] += F(v.element[k]);
  v.running = g.any("running", circuit::sum_of(v.element));
  const SignalId norm = decoded_.op[kVuRmsnorm];
  const Form binary = F(decoded_.op[kVuAdd16]) + F(decoded_.op[kVuMul16]);
  const Form elementwise = binary + F(decoded_.op[kVuSilu]), rope = F(decoded_.op[kVuRope]), row = F(decoded_.op[kVuRow16]);
  const Form matvec = F(decoded_.op[kVuMatvec16]);
  const std::vector<SignalId> computing(v.element.begin(), v.element.begin() + kVectorLineElements);
  v.writes_lines_on = elementwise + F(norm) + rope + row + matvec;
  v.reads_a_on = elementwise + rope + circuit::sum_of(computing) - 1;
  v.reads_b_on = binary + circuit::sum_of(computing) + F(g.exclusive_or("bit5_differs", operands_.rs1[5], operands_.rs2[5])) - 2;
  v.norm_reads_on = F(norm) + circuit::sum_of(computing) - 1;
  // Fed VEC: vu.matvec16's passes that read its next rows' pairs come after the commit, the count
  // still at 16.
  v.commits_on = v.writes_lines_on + F(v.element[kVectorLineElements]) + F(in_.is(TokenKind::kVec)) - 2;
  v.binary = g.relu("binary", binary, 1);
  v.by_lines = g.relu("by_lines", elementwise + F(decoded_.op[kVuArgmax]), 1);
  for (int i = 0; i < kVectorResultBits; ++i) {
    v.vec_before.push_back(c_.add_delay(in_.vec[i], indexed("vector.op.vec_before", i), 1));
    v.vec_two_before.push_back(c_.add_delay(in_.vec[i], indexed("vector.op.vec_two_before", i), 2));
  }
  vector_result_pass_ = g.signal("result_pass");
  vector_line_pass_ = g.signal("line_pass");
  g.add_all(vector_line_pass_, {lit(v.by_lines), nlit(v.running)});
  v.computes = g.relu("computes", v.writes_lines_on + circuit::sum_of(computing) - 1, 1);
  v.commits = g.relu("commits", v.commits_on, 1);
  v.next_line = circuit::narrow_sum(g, "next_line", kVectorLineNumberBits + 1, forms_of(slice(v.line, 0, kVectorLineNumberBits)),
                                    {Form(1.0)});
  Forms next_first(32);
  for (int j = 0; j <= kVectorLineNumberBits; ++j) next_first[4 + j] = F(v.next_line[j]);
  v.more = circuit::compare32(g.sub("more"), next_first, forms_of(registers.vl), Enable(v.commits)).less_unsigned;
  // Element i = 16·l + k is live below VL; past it the pass sends VEC(0).
  Forms index = v.k;
  index.resize(32);
  for (int j = 0; j < kVectorLineNumberBits; ++j) index[4 + j] = F(v.line[j]);
  v.live = circuit::compare32(g.sub("live"), index, forms_of(registers.vl), Enable(v.computes)).less_unsigned;
  const int line_bits = kVectorElementAddressBits - 4;
  const Forms line_number = forms_of(slice(v.line, 0, kVectorLineNumberBits));
  v.line_a = circuit::narrow_sum(g, "line_a", line_bits, forms_of(slice(operands_.rs1, 4, line_bits)), line_number);
  v.line_b = circuit::narrow_sum(g, "line_b", line_bits, forms_of(slice(operands_.rs2, 4, line_bits)), line_number);
  Forms line_index = v.k;
  for (int j = 0; j < 4; ++j) line_index.push_back(F(v.line[j]));
  v.argmax_line = circuit::narrow_sum(g, "argmax_line", line_bits, forms_of(slice(operands_.rs1, 4, line_bits)), line_index);
  v.argmax_reads_on = F(decoded_.op[kVuArgmax]) + circuit::sum_of(computing) - 1;

  // The norm's partial passes read the row of x's bank x[7:5], its scale's pass the row of the next
  // bank, which the operand checks keep in the same row when it holds elements.
  Form partial_passes;
  for (int p = 0; p < kNormPartialPasses; ++p) partial_passes += F(v.norm_pass[p]);
  v.norm_first_on = F(norm) + partial_passes - 1;
  v.norm_second_on = F(norm) + F(v.norm_pass[kNormPartialPasses]) - 1;
  v.norm_first_line = slice(operands_.rs2, 4, line_bits);
  v.norm_second_line = next_bank_line(g, "norm_next_bank", operands_.rs2);
  // vu.matvec16's input likewise, read whole by every pass that computes an output.
  v.matvec_reads_on = matvec + circuit::sum_of(computing) - 1;
  v.matvec_first_line = slice(registers.src, 4, line_bits);
  v.matvec_second_line = next_bank_line(g, "matvec_next_bank", registers.src);

  v.latched = read_signals(c_, "vector.latched", kVectorResultBits);
  v.latches = g.signal("latches");
  circuit::Bank latch = single_row_bank("vector.latched");
  latch.write.beta[0] = F(v.latches);
  v.latch_value = g.signals("latch_value", kVectorResultBits);
  for (int i = 0; i < kVectorResultBits; ++i) {
    latch.write.lanes[0].push_back(F(v.latch_value[i]));
    latch.read.lanes[0].push_back({{v.latched[i], 1}});
  }
  c_.add_bank(std::move(latch));
  return v;
}

ProductOperands MachineBuilder::add_vector_elementwise(const VectorLines& v, const ActivationRows& am,
                                                      const VectorRegisters& registers) {
  Gates g = gates("vector.elementwise");
  const Bits& x = operands_.rs1;
  const Bits& y = operands_.rs2;
  const SignalId add = decoded_.op[kVuAdd16], mul = decoded_.op[kVuMul16], silu = decoded_.op[kVuSilu],
                 norm = decoded_.op[kVuRmsnorm];

  // Illegal operands, as on the golden machine: VL outside 1..4096; x not a line's first element or
  // its lines past AM (x + VL > 32,768); for the binary ones the same of y, and y neither x nor 32
  // elements off it modulo 64; for vu.mul16 AUX outside 1..30; for vu.rmsnorm, whose output is x
  // here, VL past 64, y not a multiple of 32 or past AM, or y's elements across two AM rows
  // (y[7:5] = 7 with VL > 32).
  Gates c = g.sub("check");
  const Bits& vl = registers.vl;
  Form bad = Form(1.0) - any_of(c, "vl_nonzero", vl) + any_of(c, "vl_high", slice(vl, 13, 19));
  bad += F(c.all("vl_past_4096", {lit(vl[12]), lit(c.any("vl_low", circuit::sum_of(slice(vl, 0, 12))))}));
  auto outside = [&](const std::string& name, const Bits& first) {
    Gates o = c.sub(name);
    const Bits end = circuit::narrow_sum(o, "end", 16, forms_of(slice(first, 0, kVectorElementAddressBits)), forms_of(slice(vl, 0, 13)));
    Form out = any_of(o, "misaligned", slice(first, 0, 4)) + any_of(o, "high", slice(first, kVectorElementAddressBits, 32 - kVectorElementAddressBits));
    return out + F(o.all("past_end", {lit(end[15]), lit(o.any("end_low", circuit::sum_of(slice(end, 0, 15))))}));
  };
  bad += outside("x", x);
  const SignalId bad_lines = c.any("bad", bad);
  Form bad_binary = outside("y", y) + F(c.exclusive_or("bit4_differs", x[4], y[4]));
  Form differs;
  for (int i = 0; i < 32; ++i) differs += F(c.exclusive_or(indexed("differs", i), x[i], y[i]));
  bad_binary += F(c.all("same_parity", {nlit(c.exclusive_or("bit5_differs", x[5], y[5])), lit(c.any("differ", differs))}));
  const Bits shift = slice(registers.aux, 0, 5);
  const Form bad_shift = any_of(c, "aux_high", slice(registers.aux, 5, 27)) + F(c.all("shift_zero", match_bits(shift, 0, 5, 0))) +
                         F(c.all("shift_31", match_bits(shift, 0, 5, 31)));
  const SignalId vl_past_32 = c.at_least("vl_past_32", circuit::binary_value(slice(vl, 0, 7)), 33);
  const SignalId vl_past_64 = past_64(c, "vl_past_64", vl);
  Form bad_norm = F(vl_past_64);
  bad_norm += any_of(c, "y_misaligned", slice(y, 0, 5)) +
              any_of(c, "y_high", slice(y, kVectorElementAddressBits, 32 - kVectorElementAddressBits));
  bad_norm += F(c.all("across_rows", {lit(y[5]), lit(y[6]), lit(y[7]), lit(vl_past_32)}));
  const SignalId row = decoded_.op[kVuRow16];
  const SignalId matvec = decoded_.op[kVuMatvec16];
  const SignalId checks_lines =
      c.any("checks_lines", F(v.by_lines) + F(norm) + F(decoded_.op[kVuRope]) + F(row) + F(matvec));
  const Form illegal = F(c.all("bad_operation", {lit(checks_lines), lit(bad_lines)})) +
                       F(c.all("bad_pair", {lit(v.binary), lit(c.any("bad_binary", bad_binary))})) +
                       F(c.all("bad_shift", {lit(mul), lit(c.any("shift_outside", bad_shift))})) +
                       F(c.all("bad_norm", {lit(norm), lit(c.any("norm_outside", bad_norm))})) +
                       F(c.all("bad_row_length", {lit(row), lit(vl_past_64)}));
  illegal_operands_.push_back(c.any("illegal", illegal));

  // The operands of element k: lane k of line_a's (line_b's) half in the read-out of its bank's
  // parity, but for vu.row16, which adds its own, and vu.matvec16, which reads whole rows.
  auto operand = [&](const std::string& name, const Bits& line) {
    Gates o = g.sub(name);
    const Bits bits = o.signals("bit", kVectorElementBits);
    for (int k = 0; k < kVectorLineElements; ++k)
      add_line_element(o, am, line, k, {lit(v.computes), lit(v.element[k]), nlit(row), nlit(matvec)}, bits);
    return bits;
  };
  const Bits a = operand("a", v.line_a), b = operand("b", v.line_b);
  // The product's operands a stage later (vu.row16 reads its own from WM, a layer after AM): the
  // elements copied, vu.row16's added by add_vector_row16.
  Gates p = g.sub("product");
  const ProductOperands product{p.signals("a", kVectorElementBits), p.signals("b", kVectorElementBits),
                                p.signals("shift", kProductShiftBits)};
  for (int i = 0; i < kVectorElementBits; ++i) {
    p.add_relu(product.a[i], F(a[i]));
    p.add_relu(product.b[i], F(b[i]));
  }
  for (int i = 0; i < kProductShiftBits; ++i) p.add_all(product.shift[i], {lit(mul), lit(shift[i])});
  std::vector<int> silu_table(STORY_SILU, STORY_SILU + STORY_SILU_POINTS);
  const SignalId multiplies = g.relu("multiplies", F(mul) + F(row), 1);
  const std::vector<int> inverse_roots(STORY_RSQRT, STORY_RSQRT + STORY_RSQRT_ENTRIES);
  const std::array<Bits, 4> results{
      circuit::add16_element(g.sub("add16"), a, b, Enable({lit(add), lit(v.computes)})),
      circuit::mul16_element(g.sub("mul16"), product.a, product.b, product.shift, Enable({lit(multiplies), lit(v.computes)})),
      circuit::silu_element(g.sub("silu"), a, silu_table, Enable({lit(silu), lit(v.computes)})),
      circuit::rmsnorm_element(g.sub("rmsnorm"), b, slice(v.latched, 0, kNormEntryBits),
                               slice(v.latched, kNormEntryBits, kNormHalfEBits), inverse_roots,
                               Enable({lit(norm), lit(v.computes)}))};

  Gates out = g.sub("out");
  for (int i = 0; i < kVectorElementBits; ++i)
    add_result_bit(out, i, {lit(v.live)}, F(results[0][i]) + F(results[1][i]) + F(results[2][i]) + F(results[3][i]));

  // After a line's sixteenth VEC: LINE(l + 1) while 16·(l + 1) < VL, else the operation ends
  // (vu.matvec16 reads its next rows' pairs first: add_vector_matvec).
  const std::vector<Literal> next_line_pass{lit(v.commits), lit(v.more), nlit(matvec)};
  for (int i = 0; i < kVectorLineNumberBits; ++i) add_result_bit(out, i, join(next_line_pass, {lit(v.next_line[i])}));
  g.add_relu(vector_result_pass_, F(v.computes));
  g.add_all(vector_line_pass_, next_line_pass);
  return product;
}

void MachineBuilder::add_line_element(Gates& g, const ActivationRows& am, const Bits& line, int k,
                                      const std::vector<Literal>& select, const Bits& bits) {
  for (int place = 0; place < 4; ++place)  // line[0] the half, line[1] the bank's parity
    add_levels_as_bits(g, am.of_parity(place >> 1)[kVectorLineElements * (place & 1) + k],
                       join(match_bits(line, 0, 2, static_cast<std::uint32_t>(place)), select), bits, kVectorElementLaneBits);
}

std::vector<Bits> MachineBuilder::activation_line(Gates& g, const ActivationRows& am, const Bits& line, SignalId when) {
  std::vector<Bits> elements(kVectorLineElements);
  for (int k = 0; k < kVectorLineElements; ++k) {
    elements[k] = g.signals(indexed("element", k), kVectorElementBits);
    add_line_element(g, am, line, k, {lit(when)}, elements[k]);
  }
  return elements;
}

// vu.argmax in two halves of passes over the vector's lines, 16 lines a LINE (docs/vector-unit.md):
// the first sends the running maximum after each line, from −4096; the second, with the maximum
// latched, the token found·2^12 + index of its first occurrence, kept once found; then the index is
// the instruction's value (in the pass fed HI, when it needs HI, from the VEC one pass back).
void MachineBuilder::add_vector_argmax(const VectorLines& v, const ActivationRows& am, const VectorRegisters& registers) {
  Gates g = gates("vector.argmax");
  const SignalId argmax = decoded_.op[kVuArgmax];
  const SignalId second_half = v.line[kVectorLineNumberBits - 1];
  const Bits group = slice(v.line, 0, 4);
  const Bits& vl = registers.vl;
  const SignalId is_vec = in_.is(TokenKind::kVec), is_line = in_.is(TokenKind::kLine);

  // e = 16·i, the elements before line i = 16·g + k (k = 16: the next group's first line).
  Forms before(32), after(32);
  for (int k = 0; k <= kVectorLineElements; ++k)
    for (int j = 0; j < 5; ++j) {
      if ((k >> j) & 1) before[4 + j] += F(v.element[k]);
      if (((k + 1) >> j) & 1) after[4 + j] += F(v.element[k]);
    }
  for (int j = 0; j < 4; ++j) before[8 + j] += F(group[j]), after[8 + j] += F(group[j]);
  const SignalId running = g.all("running", {lit(argmax), lit(v.running)});
  const SignalId more = circuit::compare32(g.sub("more"), before, forms_of(vl), Enable(running)).less_unsigned;
  const SignalId last = g.all("last_line", {lit(running), nlit(circuit::compare32(g.sub("last"), after, forms_of(vl), Enable(running)).less_unsigned)});
  Form reading_on = F(argmax) + F(v.running) - F(v.element[kVectorLineElements]) + F(more) - 2;
  const SignalId reading = g.relu("reading", reading_on, 1);
  const SignalId done = g.all("done", {lit(running), nlit(more)});

  // The line's elements and how many of them count: all 16 but in the last line, VL's low bits.
  circuit::ArgmaxLine line{activation_line(g, am, v.argmax_line, reading), {}};
  const std::vector<SignalId> vl_low = circuit::decode_one_hot(g, "vl_low", slice(vl, 0, 4));
  for (int c = 1; c < kVectorLineElements; ++c) line.count.push_back(g.all(indexed("count", c), {lit(last), lit(vl_low[c])}));
  line.count.push_back(g.signal("count16"));
  g.add_relu(line.count.back(), F(running) - F(last));
  g.add_all(line.count.back(), {lit(last), lit(vl_low[0])});

  // The token before: the VEC fed in, or after LINE(g) the one before it (g ≥ 1) or the start:
  // −4096 for the maximum, 0 for the index.
  const SignalId later_group = g.any("later_group", circuit::sum_of(group));
  Bits previous;
  for (int i = 0; i < kVectorResultBits; ++i) {
    previous.push_back(g.signal(indexed("previous", i)));
    g.add_relu(previous.back(), F(in_.vec[i]));
    g.add_all(previous.back(), {lit(is_line), lit(later_group), lit(v.vec_before[i])});
  }
  g.add_all(previous.back(), {lit(is_line), nlit(later_group), nlit(second_half)});

  // The maximum, latched in the second half's first pass (fed LINE(128)) from the VEC one pass back.
  const Bits& maximum = v.latched;
  const SignalId latches = g.all("latches", {lit(argmax), lit(is_line), lit(second_half), nlit(later_group)});
  g.add_relu(v.latches, F(latches));
  for (int i = 0; i < kVectorResultBits; ++i) g.add_all(v.latch_value[i], {lit(latches), lit(v.vec_before[i])});

  Bits line_number;
  for (int j = 0; j < 4; ++j) line_number.push_back(g.relu(indexed("line_number", j), v.k[j], 1));
  line_number.insert(line_number.end(), group.begin(), group.end());
  const Bits running_maximum = circuit::running_maximum(g.sub("maximum"), line, previous, Enable({lit(reading), nlit(second_half)}));
  const Bits first_index = circuit::first_index_of(g.sub("index"), line, maximum, previous, line_number, Enable({lit(reading), lit(second_half)}));
  Gates out = g.sub("out");
  for (int i = 0; i < kVectorResultBits; ++i)
    add_result_bit(out, i, {}, F(running_maximum[i]) + F(first_index[i]));
  g.add_relu(vector_result_pass_, F(reading));

  // LINE(g + 1) after a group with lines to come, LINE(128) after the first half's last line; after
  // the second half's, the index as the value.
  const SignalId next_group = g.all("next_group", {lit(running), lit(v.element[kVectorLineElements]), lit(more)});
  const SignalId starts_second = g.all("starts_second", {lit(done), nlit(second_half)});
  g.add_relu(vector_line_pass_, F(next_group) + F(starts_second));
  const Bits next = circuit::narrow_sum(g, "next", 4, forms_of(group), {Form(1.0)});
  for (int j = 0; j < 4; ++j) add_result_bit(out, j, {lit(next_group), lit(next[j])});
  add_result_bit(out, kVectorLineNumberBits - 1, {lit(next_group), lit(second_half)});
  add_result_bit(out, kVectorLineNumberBits - 1, {lit(starts_second)});
  const SignalId ends = g.all("ends", {lit(done), lit(second_half)});
  Forms index(32);
  for (int i = 0; i < kValueBits; ++i)
    index[i] = F(g.all(indexed("index", i), {lit(ends), lit(is_vec), lit(in_.vec[i])})) +
               F(g.all(indexed("index_after_hi", i), {lit(ends), lit(in_.is(TokenKind::kHi)), lit(v.vec_before[i])}));
  write_result(index, "vector.argmax.value");
}

// vu.rmsnorm's passes before its first LINE (docs/vector-unit.md): three read the first 32 elements
// of x = rs2 (a row of x's bank) and send their sum of squares, 13 bits a VEC; the fourth reads the
// other 32 (the next bank's row), adds the epsilon term and the three VEC tokens, and sends the
// scale as VEC; the fifth latches the scale and sends LINE(0). Elements past VL read as zeros. The
// element passes then go as the elementwise operations' (add_vector_elementwise). Reading the
// vector in two halves keeps its bits, held from the read to the squares, to 416.
void MachineBuilder::add_vector_norm_scale(const VectorLines& v, const ActivationRows& am,
                                           const VectorRegisters& registers) {
  Gates g = gates("vector.rmsnorm");
  const SignalId norm = decoded_.op[kVuRmsnorm];
  const Bits& x = operands_.rs2;
  constexpr int kHalf = 2 * kVectorLineElements, kLog2Lengths = 7;  // a bank's row; s = 0..6

  // longer[i] = [VL > i], and s one-hot, 2^s the smallest power of two ≥ VL.
  const Form length = circuit::binary_value(slice(registers.vl, 0, kLog2Lengths));
  std::vector<SignalId> longer;
  for (int i = 0; i < 2 * kHalf; ++i) longer.push_back(g.at_least(indexed("longer", i), length, i + 1));
  const SignalId scale_pass = g.relu("scale_pass", v.norm_second_on, 1);
  const SignalId partial_pass = g.relu("partial_pass", v.norm_first_on, 1);
  std::vector<SignalId> log2_length{g.all("log2_length0", {lit(scale_pass), nlit(longer[1])})};
  for (int s = 1; s < kLog2Lengths; ++s) {
    const Form above = s + 1 < kLog2Lengths ? F(longer[1 << s]) : Form();
    log2_length.push_back(g.relu(indexed("log2_length", s), F(scale_pass) + F(longer[1 << (s - 1)]) - above - 1, 1));
  }

  // Element i of the half read is lane slot i of the read-out of parity x[5] in the partial passes,
  // of the other parity in the scale's.
  Gates e = g.sub("x");
  circuit::NormScaleOperands operands{.elements = {}, .log2_length = log2_length, .epsilon = registers.aux, .partial = {}};
  for (int i = 0; i < kHalf; ++i) {
    const Bits bits = e.signals(indexed("element", i), kVectorElementBits);
    for (int parity = 0; parity < 2; ++parity) {
      const SignalId read = e.signal(indexed(indexed("reads", i), parity));
      e.add_all(read, join(match_bits(x, 5, 1, static_cast<std::uint32_t>(parity)), {lit(partial_pass), lit(longer[i])}));
      e.add_all(read, join(match_bits(x, 5, 1, static_cast<std::uint32_t>(1 - parity)), {lit(scale_pass), lit(longer[kHalf + i])}));
      add_levels_as_bits(e, am.of_parity(parity)[i], {lit(read)}, bits, kVectorElementLaneBits);
    }
    operands.elements.push_back(bits);
  }
  // The partial sum, in the scale's pass: the VEC two passes back (its low 13 bits), one back, and fed in.
  const std::array<const Bits*, kNormPartialPasses> pieces{&v.vec_two_before, &v.vec_before, &in_.vec};
  for (const Bits* piece : pieces)
    for (int b = 0; b < kVectorResultBits; ++b)
      operands.partial.push_back(g.all(indexed("partial", static_cast<int>(operands.partial.size())), {lit(scale_pass), lit((*piece)[b])}));
  const Bits sum = circuit::norm_square_sum(g.sub("scale"), operands, Enable(g.any("sums", F(partial_pass) + F(scale_pass))));
  const Bits scale = circuit::norm_scale_of_sum(g.sub("scale"), sum, log2_length, Enable(scale_pass));
  Gates out = g.sub("out");
  for (int i = 0; i < kVectorResultBits; ++i) {
    Form bit = i < kNormEntryBits + kNormHalfEBits ? F(scale[i]) : Form();
    for (int p = 0; p < kNormPartialPasses; ++p)
      if (kVectorResultBits * p + i < static_cast<int>(sum.size()))
        bit += F(out.all(indexed(indexed("piece", p), i), {lit(v.norm_pass[p]), lit(sum[kVectorResultBits * p + i])}));
    add_result_bit(out, i, {}, bit);
  }
  g.add_relu(vector_result_pass_, F(partial_pass) + F(scale_pass));

  const SignalId starts_lines = g.all("starts_lines", {lit(norm), lit(v.norm_pass[kNormPartialPasses + 1])});
  g.add_relu(v.latches, F(starts_lines));
  for (int i = 0; i < kVectorResultBits; ++i) g.add_all(v.latch_value[i], {lit(starts_lines), lit(in_.vec[i])});
  g.add_relu(vector_line_pass_, F(starts_lines));
}

// vu.rope a line at a time (docs/vector-unit.md): its first pass sends WLINE(table >> 6), so that
// every later pass reads the table's line of WM; the pass fed it sends LINE(0); then element k of
// line l is the rotation of the line's pair k/2 by the table's cosine and sine k/2, sent and
// written as the elementwise operations' elements are.
void MachineBuilder::add_vector_rope(const VectorLines& v, const ActivationRows& am, const WeightRows& wm,
                                     const VectorRegisters& registers) {
  Gates g = gates("vector.rope");
  const SignalId rope = decoded_.op[kVuRope];
  const Bits& table = operands_.rs2;
  constexpr int kPairs = kVectorLineElements / 2, kEntryBits = 16, kTableLowBits = 5;  // a table: 32 bytes

  // Illegal operands beyond the lines' (add_vector_elementwise): an odd VL, the table not a multiple
  // of 32 or past WM.
  Gates c = g.sub("check");
  const SignalId bad = c.any("bad", F(registers.vl[0]) + weight_address_outside(c, table, kTableLowBits));
  const SignalId illegal = c.all("illegal", {lit(rope), lit(bad)});
  illegal_operands_.push_back(illegal);

  const SignalId is_wline = in_.is(TokenKind::kWline);
  const std::vector<Literal> first_pass{lit(rope), nlit(v.running), nlit(is_wline), nlit(illegal),
                                        nlit(control_.in_report)};
  const SignalId sends_wline = g.all("sends_wline", first_pass);
  g.add_all(vector_wline_pass_, first_pass);
  Gates out = g.sub("out");
  for (int i = 0; i < kVectorWeightLineBits; ++i) add_result_bit(out, i, {lit(sends_wline), lit(table[6 + i])});
  g.add_all(vector_line_pass_, {lit(rope), nlit(v.running), lit(is_wline)});

  // Pair p = k/2: its elements from line l, its cosine and sine from bytes 2p and 16 + 2p of the
  // table's half of the WM line (table[5]), four nibble lanes each.
  const SignalId computes = g.all("computes", {lit(rope), lit(v.computes)});
  Gates e = g.sub("operands");
  const circuit::RopeOperands pair_operands{.a = e.signals("a", kVectorElementBits),
                                            .b = e.signals("b", kVectorElementBits),
                                            .cos = e.signals("cos", kEntryBits),
                                            .sin = e.signals("sin", kEntryBits)};
  Form even;
  for (int p = 0; p < kPairs; ++p) {
    even += F(v.element[2 * p]);
    const SignalId pair = e.any(indexed("pair", p), F(v.element[2 * p]) + F(v.element[2 * p + 1]));
    add_line_element(e, am, v.line_a, 2 * p, {lit(computes), lit(pair)}, pair_operands.a);
    add_line_element(e, am, v.line_a, 2 * p + 1, {lit(computes), lit(pair)}, pair_operands.b);
    for (int half = 0; half < 2; ++half)
      for (const bool sine : {false, true}) {
        add_levels_as_bits(e, weight_byte_lanes(wm, 32 * half + 16 * sine + 2 * p, 2),
                           {lit(computes), lit(pair), half ? lit(table[5]) : nlit(table[5])},
                           sine ? pair_operands.sin : pair_operands.cos, kVectorWeightLaneBits);
      }
  }
  const auto [first, second] = circuit::rope_pair(g.sub("rotation"), pair_operands, Enable(computes));
  const SignalId even_element = g.any("even", even);
  for (int i = 0; i < kVectorElementBits; ++i) {
    add_result_bit(out, i, {lit(v.live), lit(even_element)}, F(first[i]));
    add_result_bit(out, i, {lit(v.live), nlit(even_element)}, F(second[i]));
  }
}

// vu.row16 a line at a time (docs/vector-unit.md): its first pass sends WLINE(AUX >> 6), so that the
// next reads the requantisation pair at AUX out of that WM line and sends it as one VEC (the
// multiplier, and the shift capped at 16, where every output is 0 already; a shift of 0 for a pair
// the golden machine refuses); the pass fed that VEC traps at a shift of 0, or latches it and sends
// WLINE(row >> 6), and the pass fed that LINE(0). Element k of line l is then the row's byte
// 16·l + k requantised, sat13(round_shift(m·w, s)): vu.mul16's product of two 13-bit values, which
// the elementwise unit computes, sends and writes for both.
void MachineBuilder::add_vector_row16(const VectorLines& v, const WeightRows& wm, const VectorRegisters& registers,
                                      const ProductOperands& product) {
  Gates g = gates("vector.row16");
  const SignalId row16 = decoded_.op[kVuRow16];
  const Bits& row = operands_.rs2;
  const Bits& pair = registers.aux;
  constexpr int kRowLowBits = 6, kPairLowBits = 3, kWeightBits = 8, kMultiplierBits = 8;
  constexpr int kShiftCodeBits = kProductShiftBits;
  constexpr int kWordsPerPair = 2, kPairsPerLine = 2 * kVectorWeightWordsPerHalf / kWordsPerPair;

  // Illegal operands beyond the lines' (add_vector_elementwise): the row not a multiple of 64 or
  // past WM, the pair not a multiple of 8 or past WM.
  Gates c = g.sub("check"), row_check = c.sub("row"), pair_check = c.sub("pair");
  const SignalId bad = c.any("bad", weight_address_outside(row_check, row, kRowLowBits) +
                                        weight_address_outside(pair_check, pair, kPairLowBits));
  const SignalId illegal = c.all("illegal", {lit(row16), lit(bad)});
  // And a pair the golden machine refuses: the pass that reads it sends a shift of 0 (below), and
  // the pass fed that VEC traps.
  const SignalId is_wline = in_.is(TokenKind::kWline), is_vec = in_.is(TokenKind::kVec);
  const std::vector<Literal> fed_pair{lit(row16), lit(is_vec), lit(v.norm_pass[1])};
  std::vector<Literal> refused = fed_pair;
  for (int i = 0; i < kShiftCodeBits; ++i) refused.push_back(nlit(in_.vec[kMultiplierBits + i]));
  illegal_operands_.push_back(c.any("cause", F(illegal) + F(c.all("refused_pair", refused))));

  // The passes before the first LINE, from the token fed and the VEC tokens since the step began
  // (the first's and the third's both send WLINE).
  const std::vector<Literal> first_pass{lit(row16), nlit(v.running), nlit(is_wline), nlit(is_vec), nlit(illegal),
                                        nlit(control_.in_report)};
  const std::vector<Literal> reads_pair_pass{lit(row16), lit(is_wline), lit(v.norm_pass[0])};
  const SignalId sends_pair_line = g.all("sends_pair_line", first_pass);
  const SignalId reads_pair = g.all("reads_pair", reads_pair_pass);
  const SignalId latches = g.all("latches", fed_pair);
  g.add_all(vector_wline_pass_, first_pass);
  g.add_all(vector_wline_pass_, fed_pair);
  g.add_all(vector_result_pass_, reads_pair_pass);
  g.add_all(vector_line_pass_, {lit(row16), lit(is_wline), lit(v.norm_pass[1])});
  Gates out = g.sub("out");
  for (int i = 0; i < kVectorWeightLineBits; ++i) {
    add_result_bit(out, i, {lit(sends_pair_line), lit(pair[kRowLowBits + i])});
    add_result_bit(out, i, {lit(latches), lit(row[kRowLowBits + i])});
  }

  // The pair: the low bytes of its multiplier's and its shift's words as bits, and whether any of
  // their higher nibbles is set, from the pair's place in the line, AUX[5:3].
  Gates p = g.sub("pair");
  const Bits multiplier = p.signals("multiplier", kMultiplierBits), shift = p.signals("shift", kWeightBits);
  const SignalId high_set = p.signal("high_set");
  constexpr double kSelect = 1 << 18;  // above the sum of the pair's twelve high nibble levels (each ≤ 2^14)
  for (int place = 0; place < kPairsPerLine; ++place) {
    const std::vector<Literal> here = join(match_bits(pair, kPairLowBits, 3, static_cast<std::uint32_t>(place)), {lit(reads_pair)});
    Form high;
    for (int w = 0; w < kWordsPerPair; ++w) {
      const std::vector<SignalId>& word = wm[kWordsPerPair * place + w];
      add_levels_as_bits(p, weight_byte_lanes(wm, 4 * (kWordsPerPair * place + w)), here, w ? shift : multiplier,
                         kVectorWeightLaneBits);
      for (auto lane = word.begin() + kVectorWeightLanesPerByte; lane != word.end(); ++lane) high += F(*lane);
    }
    Form selected;
    for (const Literal& l : here) selected += l.negated ? Form(1.0) - F(l.signal) : F(l.signal);
    p.add_step(high_set, high + kSelect * selected, kSelect * static_cast<double>(here.size()) + 1);
  }
  // A shift outside 1..62: bit 6 or 7 set, its low six bits all 0 or all 1.
  Form low_shift;
  for (int i = 0; i < 6; ++i) low_shift += F(shift[i]);
  const SignalId bad_pair = p.any("bad", F(high_set) + F(shift[6]) + F(shift[7]) +
                                             F(p.relu("shift_zero", F(reads_pair) - low_shift, 1)) +
                                             F(p.at_least("shift_63", low_shift, 6)));
  // The token: the multiplier, then min(shift, 16) in 5 bits, or 0 for a pair the golden machine
  // refuses, which makes the instruction illegal in the pass it feeds (above): a trap cause known
  // from the token, so that the trap waits for no WM read.
  const SignalId capped = p.any("capped", F(shift[4]) + F(shift[5]));
  for (int i = 0; i < kMultiplierBits; ++i) add_result_bit(out, i, {}, F(multiplier[i]));
  for (int i = 0; i < 4; ++i) add_result_bit(out, kMultiplierBits + i, {lit(shift[i]), nlit(capped), nlit(bad_pair)});
  add_result_bit(out, kMultiplierBits + 4, {lit(capped), nlit(bad_pair)});
  g.add_relu(v.latches, F(latches));
  for (int i = 0; i < kVectorResultBits; ++i) g.add_all(v.latch_value[i], {lit(latches), lit(in_.vec[i])});

  // Element k of line l is the product's: a the row's byte 16·l + k of its WM line (two nibble
  // lanes, sign-extended), b the latched multiplier, and the latched shift.
  const SignalId computes = g.all("computes", {lit(row16), lit(v.computes)});
  Gates e = g.sub("weight");
  constexpr int kWeightLineBytes = 2 * kVectorWeightWordsPerHalf * 4;
  const Bits weight = slice(product.a, 0, kWeightBits), sign = slice(product.a, kWeightBits, kVectorElementBits - kWeightBits);
  for (int l = 0; l < kWeightLineBytes / kVectorLineElements; ++l)
    for (int k = 0; k < kVectorLineElements; ++k) {
      add_levels_as_bits(e, weight_byte_lanes(wm, kVectorLineElements * l + k),
                         join(match_bits(v.line, 0, 2, static_cast<std::uint32_t>(l)), {lit(computes), lit(v.element[k])}),
                         weight, kVectorWeightLaneBits, sign);
    }
  for (int i = 0; i < kMultiplierBits; ++i) e.add_all(product.b[i], {lit(computes), lit(v.latched[i])});
  for (int i = 0; i < kShiftCodeBits; ++i) e.add_all(product.shift[i], {lit(computes), lit(v.latched[kMultiplierBits + i])});
}

// vu.matvec16 a line of outputs at a time (docs/vector-unit.md). Row k of a line's 16 is a WM line,
// which the pass computing output k reads at WLINE + k, and its pair one of the 16 that the two
// passes before the line latch, 8 from each of the two WM lines that hold them. The first pass sends
// WLINE(rs2 >> 6), the line of the first rows' pairs; the pass fed it latches 8 and sends that line
// + 1; the pass fed that latches the other 8 and sends WLINE(R + 16·g), R = (rs2 >> 6) + ⌈VL/8⌉
// where the rows start; the pass fed that LINE(256 + g), which marks g as a matrix product's line.
// Each output is then its row's product with the input (COLS ≤ 64: the row of SRC's AM bank, an even
// one, and of the next), its elements' lanes as AM's read-out holds them, sent and written as the
// elementwise operations' elements are; the pass after a line's
// sixteenth sends WLINE of the next line's pairs, 2·(g + 1) lines on. Three WLINE tokens in a row
// come from no other instruction, so the delays of WLINE tell the three passes apart.
void MachineBuilder::add_vector_matvec(const VectorLines& v, const ActivationRows& am, const WeightRows& wm,
                                       const VectorRegisters& registers) {
  Gates g = gates("vector.matvec");
  const SignalId matvec = decoded_.op[kVuMatvec16];
  const Bits& matrix = operands_.rs2;
  const Bits &vl = registers.vl, &cols = registers.cols, &src = registers.src;
  constexpr int kMaxColumns = 2 * kVectorLineElements * 2, kWeightBits = 8, kShiftBits = 6, kPairBits = kWeightBits + kShiftBits;
  constexpr int kWordsPerPair = 2;
  constexpr int kPairsPerLine = 2 * kVectorWeightWordsPerHalf / kWordsPerPair;
  const int line_bits = static_cast<int>(vector_weight_line_.size());

  // Where the rows start, and illegal operands beyond the output's lines (add_vector_elementwise):
  // COLS outside 1..64, SRC not a multiple of 64 or past AM, the matrix not at a WM line or its rows
  // past WM's end.
  const Bits vl_plus_7 = circuit::narrow_sum(g, "vl_plus_7", 14, forms_of(slice(vl, 0, 13)), {Form(1.0), Form(1.0), Form(1.0)});
  const Bits rows_line = circuit::narrow_sum(g, "rows_line", line_bits + 1, forms_of(slice(matrix, 6, line_bits)), forms_of(slice(vl_plus_7, 3, 11)));
  Gates c = g.sub("check");
  const SignalId cols_past_64 = past_64(c, "cols_past_64", cols);
  const Bits end = circuit::narrow_sum(c, "end", line_bits + 2, forms_of(rows_line), forms_of(slice(vl, 0, 13)));
  const SignalId rows_past_end =
      c.at_least("rows_past_end", circuit::binary_value(end), weight_banks() * kRowsPerBank + 1);
  Form bad = Form(1.0) - any_of(c, "cols_nonzero", cols) + F(cols_past_64);
  bad += any_of(c, "src_misaligned", slice(src, 0, 6)) +
         any_of(c, "src_high", slice(src, kVectorElementAddressBits, 32 - kVectorElementAddressBits));
  Gates matrix_check = c.sub("matrix");
  bad += weight_address_outside(matrix_check, matrix, 6) + F(rows_past_end);
  const SignalId illegal = c.all("illegal", {lit(matvec), lit(c.any("bad", bad))});
  illegal_operands_.push_back(illegal);

  // The passes, from the token fed and the two before it.
  const SignalId is_wline = in_.is(TokenKind::kWline);
  const SignalId wline_before = c_.add_delay(is_wline, "vector.matvec.wline_before", 1);
  const SignalId wlines_before = g.all("wlines_before", {lit(wline_before), lit(c_.add_delay(is_wline, "vector.matvec.wline_two_before", 2))});
  const std::vector<Literal> first{lit(matvec), nlit(v.running), nlit(is_wline), nlit(illegal), nlit(control_.in_report)};
  const std::vector<Literal> first_pairs{lit(matvec), lit(is_wline), nlit(wline_before)};
  const std::vector<Literal> second_pairs{lit(matvec), lit(is_wline), lit(wline_before), nlit(wlines_before)};
  const std::vector<Literal> starts_line{lit(matvec), lit(is_wline), lit(wlines_before)};
  const std::vector<Literal> next_pairs{lit(matvec), lit(v.commits), lit(v.more)};
  for (const auto& pass : {first, first_pairs, second_pairs, next_pairs}) g.add_all(vector_wline_pass_, pass);
  g.add_all(vector_line_pass_, starts_line);

  // Their tokens: the pairs' lines, the rows' line R + 16·g (g = l + 1 once a line is done), LINE(256 + g).
  Gates out = g.sub("out");
  const Bits second_pairs_line = circuit::narrow_sum(g, "second_pairs_line", line_bits, forms_of(vector_weight_line_), {Form(1.0)});
  Forms lines_on(line_bits), pair_lines_on(line_bits);
  for (int j = 0; j <= kVectorLineNumberBits && j + 4 < line_bits; ++j) lines_on[j + 4] = F(v.next_line[j]);
  for (int j = 0; j <= kVectorLineNumberBits && j + 1 < line_bits; ++j) pair_lines_on[j + 1] = F(v.next_line[j]);
  const Bits next_rows = circuit::narrow_sum(g, "next_rows", line_bits, forms_of(slice(rows_line, 0, line_bits)), lines_on);
  const Bits next_pair_line = circuit::narrow_sum(g, "next_pair_line", line_bits, forms_of(slice(matrix, 6, line_bits)), pair_lines_on);
  for (int i = 0; i < line_bits; ++i) {
    add_result_bit(out, i, join(first, {lit(matrix[6 + i])}));
    add_result_bit(out, i, join(first_pairs, {lit(second_pairs_line[i])}));
    add_result_bit(out, i, join(second_pairs, {nlit(v.running), lit(rows_line[i])}));
    add_result_bit(out, i, join(second_pairs, {lit(v.running), lit(next_rows[i])}));
    add_result_bit(out, i, join(next_pairs, {lit(next_pair_line[i])}));
  }
  for (int i = 0; i < kVectorLineNumberBits; ++i) add_result_bit(out, i, join(starts_line, {lit(v.running), lit(v.next_line[i])}));
  add_result_bit(out, kVectorMatrixLineBit, starts_line);

  // The pairs of the WM line read, latched: for each of its 8, the low byte of the multiplier's word
  // and the low six bits of the shift's (a shift of 0 or 63 makes the output 0).
  Gates p = g.sub("pairs");
  const SignalId reads_pairs = p.all("reads", {lit(matvec), lit(is_wline), nlit(wlines_before)});
  Bits pair_bits;
  for (int place = 0; place < kPairsPerLine; ++place) {
    const Bits multiplier = p.signals(indexed("multiplier", place), kWeightBits), shift = p.signals(indexed("shift", place), kWeightBits);
    for (int w = 0; w < kWordsPerPair; ++w)
      add_levels_as_bits(p, weight_byte_lanes(wm, 4 * (kWordsPerPair * place + w)), {lit(reads_pairs)},
                         w ? shift : multiplier, kVectorWeightLaneBits);
    pair_bits.insert(pair_bits.end(), multiplier.begin(), multiplier.end());
    pair_bits.insert(pair_bits.end(), shift.begin(), shift.begin() + kShiftBits);
  }
  circuit::Bank latch = single_row_bank("vector.matvec.pairs");
  std::array<Bits, 2> latched{read_signals(c_, "vector.matvec.pairs0", kPairsPerLine * kPairBits),
                              read_signals(c_, "vector.matvec.pairs1", kPairsPerLine * kPairBits)};
  for (int h = 0; h < 2; ++h) {
    latch.write.beta[h] = F(p.all(indexed("latches", h), h ? second_pairs : first_pairs));
    for (std::size_t i = 0; i < pair_bits.size(); ++i) {
      latch.write.lanes[h].push_back(F(pair_bits[i]));
      latch.read.lanes[h].push_back({{latched[h][i], 1}});
    }
  }
  c_.add_bank(std::move(latch));

  // Output k of line l: its row's weights (the WM line read, byte j its column j, zero from COLS on),
  // the input (element j in the read-out of the even banks, then of the odd ones) and its latched pair.
  Gates e = g.sub("row");
  const SignalId computes = e.all("computes", {lit(matvec), lit(v.computes)});
  circuit::RowOperands row;
  row.multiplier = e.signals("multiplier", kWeightBits);
  row.shift = e.signals("shift", kShiftBits);
  for (int k = 0; k < kVectorLineElements; ++k) {
    const Bits& pairs = latched[k / kPairsPerLine];
    const int first_bit = kPairBits * (k % kPairsPerLine);
    for (int i = 0; i < kWeightBits; ++i) e.add_all(row.multiplier[i], {lit(computes), lit(v.element[k]), lit(pairs[first_bit + i])});
    for (int i = 0; i < kShiftBits; ++i)
      e.add_all(row.shift[i], {lit(computes), lit(v.element[k]), lit(pairs[first_bit + kWeightBits + i])});
  }
  for (int j = 0; j < kMaxColumns; ++j) {
    row.weights.push_back(e.signals(indexed("w", j), kWeightBits));
    const SignalId column_live = e.at_least(indexed("column_live", j), circuit::binary_value(slice(cols, 0, 7)), j + 1);
    add_levels_as_bits(e, weight_byte_lanes(wm, j), {lit(computes), lit(column_live)}, row.weights.back(),
                       kVectorWeightLaneBits);
    row.activation_lanes.push_back(am.of_parity(j / (2 * kVectorLineElements))[j % (2 * kVectorLineElements)]);
  }
  const Bits product = circuit::requantised_row_product(g.sub("product"), row, Enable({lit(computes)}));
  for (int i = 0; i < kVectorElementBits; ++i) add_result_bit(out, i, {lit(v.live)}, F(product[i]));
}

// The configuration registers, two to a single-row bank (a write replaces its half only): each
// vu.set* writes rs1's bits into its register's half. The operations read VL and AUX.
VectorRegisters MachineBuilder::add_vector_registers() {
  constexpr int kRegisters = kVuSeths - kVuSetvl + 1;
  VectorRegisters read{.vl = read_signals(c_, "vector.vl", 32),
                       .aux = read_signals(c_, "vector.aux", 32),
                       .cols = read_signals(c_, "vector.cols", 32),
                       .src = read_signals(c_, "vector.src", 32)};
  for (int bank_index = 0; 2 * bank_index < kRegisters; ++bank_index) {
    circuit::Bank bank = single_row_bank("vector.registers" + std::to_string(bank_index));
    for (int h = 0; h < 2 && 2 * bank_index + h < kRegisters; ++h) {
      const int op = kVuSetvl + 2 * bank_index + h;
      bank.write.beta[h] = F(decoded_.op[op]);
      for (int i = 0; i < 32; ++i) bank.write.lanes[h].push_back(F(operands_.rs1[i]));
      const Bits* reads = op == kVuSetvl    ? &read.vl
                          : op == kVuSetcols ? &read.cols
                          : op == kVuSetsrc  ? &read.src
                          : op == kVuSetaux  ? &read.aux
                                             : nullptr;
      if (reads)
        for (SignalId bit : *reads) bank.read.lanes[h].push_back({{bit, 1}});
    }
    bank.has_read = !bank.read.lanes[0].empty() || !bank.read.lanes[1].empty();
    m_.layout.vector_register_banks.push_back(c_.add_bank(std::move(bank)));
  }
  return read;
}

}  // namespace rvformer::cpu
