// cpu/loader.cpp — loading the program image through tokens (the driver never writes state).
//
// While not running, FAR h then JLO l name the image half-row to fill (the PC latch holds it: with
// the vector unit, bit word_bits − 1 says its weight memory and the bits below it the half-row;
// otherwise bit word_bits − 3 says read-only data, the bits below it the half-row) and groups of
// four tokens carry its bits: VAL, VAL, VAL, STAGE(k, b). The STAGE pass writes staging slot k with
// the three VAL payloads (through the conv's earlier taps) and b: 44 bits. The pass of the
// half-row's last slot (6 for code and weights, 3 for read-only data) reads the earlier slots back,
// takes the last one from the token history, and turns the bits into stored lane values: an
// instruction's class and whether it writes rd (decoded here, once), then its bits 7..31, two bits
// per lane; a data word two bits a lane, a weight word four (docs/machine-layout.md).
#include "cpu/machine_builder.h"

namespace rvformer::cpu {
namespace {

struct ClassOpcode {
  int cls;
  std::uint32_t opcode;
};
constexpr ClassOpcode kClassOpcodes[] = {
    {kClassLui, 0x37},  {kClassAuipc, 0x17}, {kClassLoad, 0x03},  {kClassOpImm, 0x13},  {kClassMiscMem, 0x0F},
    {kClassJal, 0x6F},  {kClassJalr, 0x67},  {kClassBranch, 0x63}, {kClassStore, 0x23}, {kClassOp, 0x33},
    {kClassCustom, 0x0B}, {kClassVector, 0x2B},
};

bool class_writes_rd(int cls) {
  return cls == kClassLui || cls == kClassAuipc || cls == kClassLoad || cls == kClassOpImm || cls == kClassJal ||
         cls == kClassJalr || cls == kClassOp || cls == kClassCustom || cls == kClassVector;
}

// Stored level of two bits (low, high): 0, 1, 2 or 4 for 00, 10, 01, 11.
double level(int low, int high) { return stored_level(low + 2 * high); }

}  // namespace

int instruction_class(std::uint32_t opcode) {
  for (const ClassOpcode& c : kClassOpcodes)
    if (c.opcode == opcode) return c.cls;
  return kClassIllegal;
}


void MachineBuilder::add_loader() {
  // Staging: slots 0..4, one value half each (the last slot of a half-row is never stored).
  std::vector<Bits> slots;
  for (int head = 0; 2 * head < kCodeSlots - 1; ++head) {
    circuit::Bank staging{"load.staging" + std::to_string(head), 1};
    staging.has_write = staging.has_read = true;
    staging.write.row = {.one_hot = {circuit::kOne}, .binary = {}, .match = {}, .conditions = {F(in_.is(TokenKind::kStage))}};
    staging.read.row.one_hot = {circuit::kOne};
    for (int h = 0; h < 2 && 2 * head + h < kCodeSlots - 1; ++h) {
      int slot = 2 * head + h;
      staging.write.beta[h] = F(in_.stage_slot[slot]);
      Bits read;
      for (int i = 0; i < kSlotBits; ++i) {
        int token = i / kValueBits;  // 0..2: VAL 3, 2, 1 tokens back; 3: the STAGE bits
        circuit::LinearForm lane = token < 3 ? circuit::LinearForm{{in_.val[i % kValueBits], 1, static_cast<std::uint8_t>(3 - token)}}
                                             : circuit::LinearForm{{in_.stage_bits[i - 3 * kValueBits], 1}};
        staging.write.lanes[h].push_back(lane);
        read.push_back(c_.add_read_signal("load.staged" + std::to_string(slot) + "[" + std::to_string(i) + "]"));
        staging.read.lanes[h].push_back({{read.back(), 1}});
      }
      slots.push_back(read);
    }
    c_.add_bank(std::move(staging));
  }
  // The bits of a half-row whose last slot is `last`: stored slots, then this pass's.
  auto half_row_bits = [&](int last) {
    Bits bits;
    for (int slot = 0; slot < last; ++slot) bits.insert(bits.end(), slots[slot].begin(), slots[slot].end());
    for (int token = 0; token < 3; ++token) {
      const Bits& val = history_.val_back[2 - token];
      bits.insert(bits.end(), val.begin(), val.end());
    }
    bits.insert(bits.end(), in_.stage_bits.begin(), in_.stage_bits.end());
    return bits;
  };
  SignalId rodata_bit = control_.base[word_bits_ - 3];
  staged_.code_region = {nlit(rodata_bit)};
  staged_.rodata_region = {lit(rodata_bit)};
  if (spec_.vector_weight_bytes) {
    SignalId weights_bit = control_.base[word_bits_ - 1];
    staged_.code_region.push_back(nlit(weights_bit));
    staged_.rodata_region.push_back(nlit(weights_bit));
    staged_.vector_weight_region = {lit(weights_bit)};
  }
  std::vector<Literal> commit_code = join({lit(in_.stage_slot[kCodeSlots - 1])}, staged_.code_region);
  std::vector<Literal> commit_rodata = join({lit(in_.stage_slot[kRodataSlots - 1])}, staged_.rodata_region);
  staged_.commit_code = F(in_.stage_slot[kCodeSlots - 1]);
  staged_.commit_rodata = F(in_.stage_slot[kRodataSlots - 1]);

  Gates g = gates("load");
  auto stored = [&](const std::string& name) { return c_.add_stored_levels_signal("load." + name); };
  auto add_level = [&](SignalId lane, const std::vector<Literal>& literals, const Form& condition, double value) {
    g.add_all(lane, literals, condition, value);
  };

  Bits code = half_row_bits(kCodeSlots - 1);
  for (int s = 0; s < kInstructionsPerHalf; ++s) {
    const Bits word(code.begin() + 32 * s, code.begin() + 32 * s + 32);
    std::vector<SignalId> lanes;
    for (int m = 0; m < kInstructionLanes; ++m) lanes.push_back(stored("code" + std::to_string(s) + "[" + std::to_string(m) + "]"));
    for (const ClassOpcode& c : kClassOpcodes) {
      if (c.cls == kClassCustom && !spec_.bigint_unit) continue;  // an illegal instruction there
      if (c.cls == kClassVector && !spec_.vector_weight_bytes) continue;
      std::vector<Literal> is_class = join(commit_code, match_bits(word, 0, 7, c.opcode));
      if (c.cls & 3) add_level(lanes[0], is_class, Form(), level(c.cls & 1, (c.cls >> 1) & 1));
      if (c.cls >> 2) add_level(lanes[1], is_class, Form(), level((c.cls >> 2) & 1, (c.cls >> 3) & 1));
      // Lane 2 is (writes rd, bit 7): 2·bit 7 for the rest, corrected for classes that write rd.
      if (class_writes_rd(c.cls)) {
        add_level(lanes[2], join(is_class, {nlit(word[7])}), Form(), level(1, 0));
        add_level(lanes[2], join(is_class, {lit(word[7])}), Form(), level(1, 1) - level(0, 1));
      }
    }
    add_level(lanes[2], join(commit_code, {lit(word[7])}), Form(), level(0, 1));
    add_bits_as_levels(g, std::vector<SignalId>(lanes.begin() + 3, lanes.end()), slice(word, 8, 24), commit_code, 2);
    staged_.code_lanes.push_back(lanes);
  }
  Bits rodata = half_row_bits(kRodataSlots - 1);
  for (int w = 0; w < kRodataWordsPerHalf; ++w) {
    std::vector<SignalId> lanes;
    for (int m = 0; m < kWordLanes; ++m) lanes.push_back(stored("rodata" + std::to_string(w) + "[" + std::to_string(m) + "]"));
    add_bits_as_levels(g, lanes, slice(rodata, 32 * w, 32), commit_rodata, 2);
    staged_.rodata_lanes.push_back(lanes);
  }
  if (!spec_.vector_weight_bytes) return;
  // A weight word's nibble n as the level 2^(n − 1) (0 for 0): one AND a level.
  std::vector<Literal> commit_weights =
      join({lit(in_.stage_slot[kVectorWeightSlots - 1])}, staged_.vector_weight_region);
  Bits weights = half_row_bits(kVectorWeightSlots - 1);
  const double top_level = stored_level((1 << kVectorWeightLaneBits) - 1);
  for (int w = 0; w < kVectorWeightWordsPerHalf; ++w) {
    std::vector<SignalId> lanes;
    for (int m = 0; m < kVectorWeightLanes; ++m)
      lanes.push_back(
          c_.add_stored_levels_signal("load.weights" + std::to_string(w) + "[" + std::to_string(m) + "]", top_level));
    add_bits_as_levels(g, lanes, slice(weights, 32 * w, 32), commit_weights, kVectorWeightLaneBits);
    staged_.vector_weight_lanes.push_back(lanes);
  }
}

std::vector<circuit::RowSelect> MachineBuilder::loaded_rows(int banks, int bank_bits, const std::vector<Literal>& region,
                                                            const Form& commit) const {
  std::vector<circuit::RowSelect> rows;
  for (int k = 0; k < banks; ++k)
    rows.push_back(binary_select(slice(control_.base, 1, 7),
                                 join(match_bits(control_.base, 8, bank_bits, static_cast<std::uint32_t>(k)), region), {commit}));
  return rows;
}

std::vector<std::vector<SignalId>> MachineBuilder::add_read_slots(const std::string& prefix, int slots, int lanes,
                                                                  double max_level) {
  std::vector<std::vector<SignalId>> read(slots);
  for (int s = 0; s < slots; ++s)
    for (int m = 0; m < lanes; ++m)
      read[s].push_back(c_.add_read_signal(prefix + std::to_string(s) + "[" + std::to_string(m) + "]", 0, max_level));
  return read;
}

std::vector<int> MachineBuilder::add_loaded_memory(LoadedMemory memory) {
  std::vector<int> banks;
  const std::size_t slots = memory.staged.size();
  for (std::size_t k = 0; k < memory.read_rows.size(); ++k) {
    circuit::Bank bank{memory.name + std::to_string(k), kRowsPerBank};
    bank.has_read = bank.has_write = true;
    bank.read.row = std::move(memory.read_rows[k]);
    // While loading the base is a half-row h, its half h[0].
    bank.write.row = std::move(memory.write_rows[k]);
    for (int h = 0; h < 2; ++h) {
      bank.write.beta[h] = h ? F(control_.base[0]) : Form(1.0) - F(control_.base[0]);
      for (std::size_t s = 0; s < slots; ++s)
        for (std::size_t m = 0; m < memory.staged[s].size(); ++m) {
          bank.write.lanes[h].push_back(F(memory.staged[s][m]));
          bank.read.lanes[h].push_back({{memory.read[slots * h + s][m], 1}});
        }
    }
    banks.push_back(c_.add_bank(std::move(bank)));
  }
  return banks;
}

}  // namespace rvformer::cpu
