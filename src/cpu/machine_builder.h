// cpu/machine_builder.h — the units of build_machine() and the signals they pass. Private to cpu/.
//
// One pass, in the order the units run (docs/machine-layout.md gives the layers):
//   tokens     the token's inputs (family flags, payloads) and the LM head's output code;
//   control    the PC latch, the counters, the token history (delays) and the PC;
//   loader     staging image rows from STAGE tokens and turning them into stored lane values;
//   fetch      the code ROM and the selected instruction's stored bits;
//   decode     the one-hot instruction and the immediates;
//   registers  the register file: last pass's write, then the two operand reads;
//   execute    the ALU units, each writing its result into the output payload;
//   memory     loads, stores and the memory-mapped registers;
//   divide     division and remainder, and where a long division stands;
//   bigint     the big-integer unit's operand memories (machines with the unit);
//   vector     the vector unit (machines with the unit): its weight memory and vu.wget, its
//              activation memory with vu.put and vu.get, its KV cache with vu.kput and vu.vput,
//              the configuration registers, and the operations that go a line at a time;
//   multiplier the multiply-accumulate that products, shifted sums, divisions and the big-integer
//              unit's dot products share;
//   next token the family gates the LM head weighs, and the trap report.
// Each unit is a function of the signals earlier units produced, and adds its own.
#pragma once

#include <array>
#include <vector>

#include "circuit/arith.h"
#include "circuit/gates.h"
#include "cpu/machine.h"
#include "cpu/rv32_ops.h"

namespace rvformer::cpu {

using circuit::Bits;
using circuit::Enable;
using circuit::F;
using circuit::Form;
using circuit::Forms;
using circuit::forms_of;
using circuit::Gates;
using circuit::indexed;
using circuit::join;
using circuit::Literal;
using circuit::lit;
using circuit::match_bits;
using circuit::nlit;
using circuit::SignalId;

// Instruction classes as the loader stores them (bits 0..3 of a stored instruction). The codes are
// chosen so that tests the decoder needs are ANDs of class bits: bit 3 means the instruction reads
// rs2 (BRANCH, STORE, OP), and bits 3..1 = 011 are JAL and JALR.
enum InstructionClass : int {
  kClassIllegal = 0, kClassLui = 1, kClassAuipc = 2, kClassLoad = 3, kClassOpImm = 4, kClassMiscMem = 5,
  kClassJal = 6, kClassJalr = 7, kClassBranch = 8, kClassStore = 9, kClassOp = 10, kClassCustom = 11,
  kClassVector = 12,
};
// The class of a RISC-V major opcode (bits 6..0), or kClassIllegal.
int instruction_class(std::uint32_t opcode);

// Little-endian bits [low, low + count) of `bits`.
Bits slice(const Bits& bits, int low, int count);
// A row select by binary address, active when `match` and `conditions` hold.
circuit::RowSelect binary_select(const Bits& address, std::vector<Literal> match = {},
                                 std::vector<circuit::LinearForm> conditions = {}, int ago = 0);
// A bank of one row, written and read every pass (a register of lanes).
circuit::Bank single_row_bank(const std::string& name);
// A register of up to 126 lanes written from the token alone, so that it lives in layer 0: half of a
// single-row bank. MachineBuilder packs them two to a bank, since layer 0's key heads are few.
struct TokenRegister {
  std::string name;
  circuit::LinearForm beta;  // its write strength
  std::vector<circuit::LinearForm> lanes;
  std::vector<SignalId> read;  // a signal per lane
};
// A form's terms, looking `ago` passes back.
circuit::LinearForm looking_back(const Form& form, int ago);

struct TokenInputs {
  std::array<SignalId, kTokenKindCount> flags{};  // the token's family (none for WANT and PAD)
  Bits val, hi, jump, top, far, jlo, in;         // payload bits, zero for other families
  Bits vec, line, wline;                          // VEC's, LINE's and WLINE's (machines with the vector unit)
  // DIV(p, m, s): one-hot p, the digit's bits, the sign, and −q·8^p (q = ±m, the signed digit)
  // as 32 bits: the multiplier operand that takes the digit off the partial remainder.
  std::vector<SignalId> div_position;
  Bits div_digit;
  SignalId div_sign = 0;
  Bits div_addend;
  std::vector<SignalId> stage_slot;               // STAGE: one-hot slot k
  Bits stage_bits;                                // STAGE: its 8 payload bits
  SignalId is(TokenKind kind) const { return flags[static_cast<int>(kind)]; }
  // VAL, JUMP, JLO, OUT, IN, EOF: the tokens that complete a step.
  Form completes() const;
};

// What the LM head reads: a value payload and a jump target, each with its complement (dual
// rail: the token spelling a payload scores per matching bit, cpu/tokens.cpp), the trap cause, and one gate
// per way of choosing the next token, exactly one of which is 1 in every pass.
struct TokenOutputs {
  Bits r, not_r;  // 32 bits: a value, a byte, a report or remainder word, a quotient digit
  Bits j, not_j;  // the code word index of a jump target
  std::vector<SignalId> cause;
  SignalId first = 0;  // a value's first pass: VAL, HI or TOP by how many bits it needs
  SignalId mid = 0;    // after TOP: HI
  SignalId last = 0;   // after HI: VAL
  SignalId plain = 0;  // VAL(0): a step without a value, or anything while loading
  SignalId hi = 0;     // HI with the word in r[23:12]: a trap report, a kept byte, a remainder
  SignalId jump = 0, far = 0, jlo = 0, out = 0, exit = 0, want = 0, fault = 0, div = 0;
  SignalId vec = 0, line = 0, wline = 0;  // machines with the vector unit: a result element, a line's start, a WM line
};

// Earlier tokens, from delays of the token inputs.
struct History {
  SignalId previous_hi = 0, previous_top = 0, two_back_top = 0;
  Bits previous_hi_payload, two_back_top_payload;
  std::array<Bits, 3> val_back;  // VAL payloads 1, 2 and 3 tokens back
};

struct Control {
  SignalId running = 0;
  Bits base;                      // code word of the last jump (or, while loading, the image row)
  SignalId step_count = 0;        // 2^-n after n completed steps since the jump
  std::vector<SignalId> n;        // one-hot n
  std::vector<SignalId> hi_position;  // HI/TOP tokens since the step began (one-hot 0..3)
  std::vector<SignalId> div_hops;     // DIV tokens since the step began (one-hot)
  SignalId in_report = 0;             // a FAULT was emitted: the passes report it
  std::vector<SignalId> report_position;  // report words emitted so far (one-hot)
  Bits pc, next_pc;                   // code word indices, one bit wider than the ROM's
  std::vector<SignalId> slot;         // one-hot base[3:0] + n over the 16 instructions of a row
  SignalId resync = 0;                // the step left the row: this pass re-anchors the PC
  SignalId fetch_outside = 0;         // the PC ran off the end of the code ROM
  SignalId active = 0;                // running and not a resync: the instruction at pc is decoded
  SignalId executing = 0;             // active and not reporting a trap: its effects happen
};

// Stored-level lanes back as bits, when `select` holds (literals): lane m of `lanes` holds bits
// [lane_bits·m, lane_bits·(m + 1)) of `bits` (the last lane may hold fewer) as the level 0 or
// 2^(n − 1) for the value n, read by one ramp per level but the highest. The last bit also goes
// into each of `sign_copies` (a two's complement value sign-extended), by the same ramps.
void add_levels_as_bits(Gates& g, const std::vector<SignalId>& lanes, const std::vector<Literal>& select,
                        const std::vector<SignalId>& bits, int lane_bits = 2, const std::vector<SignalId>& sign_copies = {});
// The converse: adds to each stored-levels signal in `lanes` the level of its bits of `bits`, laid
// out as above, when `when` holds: one AND for each non-zero value.
void add_bits_as_levels(Gates& g, const std::vector<SignalId>& lanes, const std::vector<SignalId>& bits,
                        const std::vector<Literal>& when, int lane_bits);

// A loaded image row, as the lane values it is written with.
struct StagedRow {
  std::vector<std::vector<SignalId>> code_lanes;           // per instruction of a half-row, 15 stored levels
  std::vector<std::vector<SignalId>> rodata_lanes;         // per word of a half-row, 16 stored levels
  std::vector<std::vector<SignalId>> vector_weight_lanes;  // per word of a half-row, 8 stored levels
  Form commit_code, commit_rodata;                         // the STAGE slot that completes a half-row
  // The base bits that name each memory's half-rows while loading (docs/trace-protocol.md).
  std::vector<Literal> code_region, rodata_region, vector_weight_region;
};

// The selected instruction: its 30 stored bits, the complements of its class bits, and a second
// copy of the word's bit 31.
struct Instruction {
  static constexpr int kClassBits = 4;
  Bits stored;
  // 1 − stored[b] for the class bits: a lane that ANDs class literals names each by the signal
  // that is 0 when the literal holds, so a true lane adds no terms but its bit.
  Bits class_complement;
  // Sign extension takes bit 31 and its copy by turns, 8 bits each, so that sums of up to 16
  // immediate bits never weigh one signal with more than 8 consecutive powers of two (bf16).
  SignalId sign_copy = 0;
  std::vector<Literal> is_class(int cls) const {
    return match_bits(stored, 0, kClassBits, static_cast<std::uint32_t>(cls));
  }
  SignalId writes_rd() const { return stored[4]; }
  // Bits of the original word (7..31).
  SignalId word(int bit) const { return stored[bit - 2]; }
  Bits word_bits(int low, int count) const;
  Bits rd() const { return word_bits(7, 5); }
  Bits rs1() const { return word_bits(15, 5); }
  Bits rs2() const { return word_bits(20, 5); }
};

struct Decoded {
  std::array<SignalId, kOpCount> op{};  // one-hot while executing (all zero: illegal or not executing)
  SignalId illegal = 0;
  Forms imm_i, imm_s, imm_b, imm_u, imm_j;  // linear views of the word, sign-extended
  // The enable of an instruction's first stage: its class and funct bits, as literals.
  Enable first_stage(int op, SignalId state) const;
  const Instruction* insn = nullptr;
};

struct Operands {
  Bits rs1, rs2;
};

// An AM line: 11 bits, bank line[3:1], row line[10:4], half line[0] (vector_unit.cpp).
struct VectorLineAccess {
  // 1 when the access happens, at most 0 otherwise (accesses of one bank exclude each other or
  // share its row).
  Form when;
  Bits line;
};

// Where an operation that writes lines stands (vector_unit.cpp): the first pass emits LINE(0) (for
// vu.rmsnorm the pass after its scale's VEC does); after LINE(l) the pass computes element 0 of line
// l, after its k-th VEC element k, and after the sixteenth VEC it commits the line and emits
// LINE(l + 1), or VAL(0) after the last line.
struct VectorLines {
  std::vector<SignalId> element;  // one-hot k, the VEC tokens since the last LINE (0..16; none: not started)
  Forms k;                        // k's 4 bits for k < 16, as forms of the one-hot
  SignalId running = 0;           // a LINE has started the operation
  Bits line;                      // l, the last LINE's payload
  SignalId by_lines = 0;          // vu.add16, vu.mul16, vu.silu or vu.argmax: vector x read a line at a time
  Bits vec_before;                // the VEC payload one pass back (zero after any other token)
  SignalId binary = 0;            // vu.add16 or vu.mul16 executes
  SignalId computes = 0;          // writes lines and k < 16: the pass computes element k of line l
  SignalId commits = 0;           // writes lines and k = 16: the pass commits line l
  SignalId live = 0;              // computes, and the element 16·l + k is below VL
  Bits next_line;                 // l + 1, 9 bits
  SignalId more = 0;              // commits, and 16·(l + 1) is below VL: a line follows
  Bits line_a, line_b;            // the AM lines rs1/16 + l and rs2/16 + l
  // The same as forms of the decoder's one-hot signals, 1 when they hold and at most 0 otherwise,
  // for AM's row selects, which an AND of them would put an MLP stage later: whether the pass reads
  // the first operand's line, the second's when it is another than the first's (the binary
  // operations) or the only one read (vu.rmsnorm); whether it commits; whether its VEC is an output
  // element (vu.add16, vu.mul16, vu.silu, vu.rmsnorm, vu.rope).
  Form reads_a_on, reads_b_on, norm_reads_on, commits_on, writes_lines_on;
  // vu.argmax reads line i = 16·g + k of its vector in the pass after LINE(g) and k VEC tokens (g
  // the low 4 bits of LINE's payload; its bit 7 is the second half): line rs1/16 + i.
  Bits argmax_line;
  Form argmax_reads_on;
  Bits vec_two_before;             // the VEC payload two passes back
  // vu.rmsnorm's passes before its first LINE, one-hot (none past them), from the VEC tokens since
  // the step began: three read the first half of its vector x = rs2 (a row of x's bank), one the
  // second (a row of the next bank), as forms for AM's row selects.
  std::vector<SignalId> norm_pass;
  Form norm_first_on, norm_second_on;
  Bits norm_first_line, norm_second_line;
  // A VEC token kept for an operation's later passes (the argmax's maximum, the norm's scale): the
  // operation adds its value into `latch_value` in the passes where it adds 1 into `latches`.
  Bits latched, latch_value;
  SignalId latches = 0;
  // vu.matvec16's input, read whole in each pass that computes an output: the row of SRC's bank
  // and of the next bank (add_vector_matvec).
  Form matvec_reads_on;
  Bits matvec_first_line, matvec_second_line;
};

// WM's read-out: the 16 words of the line read (half a[5], word a[4:2]), 8 nibble lanes each.
using WeightRows = std::vector<std::vector<SignalId>>;

// The two halves of the vector unit's AM read-out: banks of even numbers read into even, odd ones
// into odd, 32 elements of 7 lanes each, so that one pass reads a line from a bank of each parity.
struct ActivationRows {
  std::vector<std::vector<SignalId>> even, odd;
  const std::vector<std::vector<SignalId>>& of_parity(int parity) const { return parity ? odd : even; }
};

// The configuration registers an operation reads (vector_unit.cpp).
struct VectorRegisters {
  Bits vl, aux, cols, src;
};

// The operands of the elementwise unit's product, sat13(round_shift(a·b, s)) in 13 bits: vu.mul16's
// elements and AUX's shift, or vu.row16's weight, multiplier and shift, whichever computes adds its
// own into these signals. The shift s (1..30) in 5 bits.
struct ProductOperands {
  Bits a, b, shift;
};

// What a division tells the multiplier and the next-token logic (divide.cpp).
struct Division {
  std::vector<circuit::ExtraRow> rows;  // its terms of the multiplier's sum
  SignalId rows_on = 0;                 // 1 when some of them may be non-zero
  SignalId holds = 0;                   // the sum is a partial remainder, not the step's value
  SignalId emits_digit = 0;             // the pass emits DIV
  std::array<SignalId, 3> emits_piece{};  // the pass emits HI with 12-bit piece j of the sum
};

class MachineBuilder {
 public:
  explicit MachineBuilder(Machine& machine) : m_(machine), c_(machine.circuit), spec_(machine.spec) {}
  void build();

 private:
  Gates gates(const std::string& unit) { return Gates(c_, unit); }
  // Whether this machine decodes `op` (decodes_op); the others' one-hot signal is the constant 0.
  bool decodes(int op) const { return decodes_op(spec_, op); }
  const TokenFamily& family(TokenKind kind) const { return m_.vocabulary.family(kind); }

  // tokens.cpp
  void add_token_inputs();
  void add_token_outputs();
  void add_token_families();
  // Adds a result bit into the value payload: r_i += bit and not_r_i −= bit.
  void add_result_bit(Gates& g, int i, const std::vector<Literal>& literals, const Form& condition = Form());
  // control.cpp
  void add_history();
  void add_latch_and_counters();
  void add_program_counter();
  // loader.cpp
  void add_loader();
  // `slots` read signals of `lanes` stored levels (up to max_level) each, named prefix<slot>[<lane>].
  std::vector<std::vector<SignalId>> add_read_slots(const std::string& prefix, int slots, int lanes,
                                                    double max_level = 4);
  // A memory the loader fills one half-row per commit: bank k takes the half-rows whose base bits
  // [8, 8 + bank_bits) spell k and whose region bits are `region`, writing `staged[slot][lane]`, and
  // is read at `read_rows[k]` into `read[half · slots + slot][lane]`. Returns the banks' ids.
  struct LoadedMemory {
    std::string name;
    const std::vector<std::vector<SignalId>>& staged;
    const std::vector<std::vector<SignalId>>& read;
    std::vector<circuit::RowSelect> read_rows;   // one per bank
    std::vector<circuit::RowSelect> write_rows;  // one per bank, from the loader's half-row
  };
  std::vector<int> add_loaded_memory(LoadedMemory memory);
  // The loader's writes into `banks` banks where its half-row h is bank h[..:8], row h[7:1], when
  // `region` and `commit` hold.
  std::vector<circuit::RowSelect> loaded_rows(int banks, int bank_bits, const std::vector<Literal>& region,
                                              const Form& commit) const;
  // Registers written from the token alone (machine.cpp): queued, then packed two to a bank.
  void add_token_register(TokenRegister token_register) { token_registers_.push_back(std::move(token_register)); }
  void add_token_registers();
  // fetch.cpp
  void add_code_rom();
  // decode.cpp
  void add_decoder();
  // registers.cpp
  void add_late_value();
  void add_register_file();
  // execute.cpp
  void add_execute();
  // Adds a unit's result bits (0/1 forms) into the value payload when the step emits a value.
  void write_result(const Forms& bits, const std::string& unit, const std::vector<Literal>& gate = {});
  // memory.cpp
  void add_memory();
  // divide.cpp
  void add_divide();
  // bigint.cpp
  void add_bigint_unit();
  // vector_unit.cpp
  void add_vector_unit();
  WeightRows add_vector_weight_memory(const VectorLines& lines);  // WM and vu.wget
  int weight_banks() const;  // WM's
  Form weight_address_outside(Gates& g, const Bits& address, int low_zero_bits);
  VectorRegisters add_vector_registers();      // the configuration written by vu.set*
  VectorLines add_vector_lines(const VectorRegisters& registers);  // where an operation by lines stands
  // AM, vu.put's line buffer (which an elementwise operation stages its lines in) and vu.get;
  // returns the read-out, which vu.kput, vu.vput and the operations read too.
  ActivationRows add_vector_activation_memory(const VectorLines& lines);
  void add_vector_kv_cache(const ActivationRows& am);  // KV, vu.kput, vu.vput
  // vu.add16, vu.mul16, vu.silu and vu.rmsnorm's elements (and vu.row16's): their operands' checks,
  // elements, and the tokens they emit. Returns the product's operands, which vu.row16 adds into.
  ProductOperands add_vector_elementwise(const VectorLines& lines, const ActivationRows& am, const VectorRegisters& registers);
  // vu.argmax: the running maximum a line a pass, then the first index of it, then the value.
  void add_vector_argmax(const VectorLines& lines, const ActivationRows& am, const VectorRegisters& registers);
  // vu.rmsnorm's first two passes: the scale from the whole vector, then LINE(0) with the scale latched.
  void add_vector_norm_scale(const VectorLines& lines, const ActivationRows& am, const VectorRegisters& registers);
  void add_vector_rope(const VectorLines& lines, const ActivationRows& am, const WeightRows& wm,
                       const VectorRegisters& registers);
  // vu.row16's passes, its pair's checks, and its elements' operands for the elementwise unit's product.
  void add_vector_row16(const VectorLines& lines, const WeightRows& wm, const VectorRegisters& registers,
                        const ProductOperands& product);
  void add_vector_matvec(const VectorLines& lines, const ActivationRows& am, const WeightRows& wm,
                         const VectorRegisters& registers);
  // Adds element k of AM line `line`, out of the read-out, to `bits` (13) when `select` holds.
  void add_line_element(Gates& g, const ActivationRows& am, const Bits& line, int k, const std::vector<Literal>& select,
                        const Bits& bits);
  // The 16 elements of AM line `line` out of the read-out, 13 bits each, when `when` holds.
  std::vector<Bits> activation_line(Gates& g, const ActivationRows& am, const Bits& line, SignalId when);
  // Bank b's row selects for `accesses` of AM lines, one per bank.
  Bits add_weight_line_latch();
  std::vector<circuit::RowSelect> weight_line_rows(const Bits& line, const std::vector<Literal>& match,
                                                   const std::vector<circuit::LinearForm>& conditions) const;
  std::vector<circuit::RowSelect> activation_rows(Gates& g, const std::string& name,
                                                  const std::vector<VectorLineAccess>& accesses);
  // execute.cpp, after the units that add rows to it
  void add_multiplier();
  // next_token.cpp
  void add_next_token();

  Machine& m_;
  circuit::Circuit& c_;
  const program::MachineSpec& spec_;
  int word_bits_ = 0;  // bits of a code word index
  SignalId zero_ = 0;  // an input no token sets: a constant 0 where a bit vector needs one

  TokenInputs in_;
  TokenOutputs out_;
  History history_;
  Control control_;
  StagedRow staged_;
  Instruction insn_;
  Decoded decoded_;
  Operands operands_;
  std::vector<Form> late_;  // the value a completing token brings (32 bits)

  // What execute, memory and divide tell the next-token logic.
  SignalId value_step_ = 0;    // the instruction writes a late value to rd ≠ x0
  Bits rs1_plus_imm_;          // rs1 + the I immediate, for every instruction
  SignalId jump_taken_ = 0;    // jal, jalr or a taken branch
  Bits target_;                // its code word (one bit wider than the ROM's word index)
  Bits target_address_;        // its byte address (32 bits), for fault reports
  SignalId target_misaligned_ = 0, target_outside_ = 0;
  Bits data_address_;          // rs1 + imm of a load or store (32 bits, for fault reports)
  SignalId console_store_ = 0, exit_store_ = 0, input_load_ = 0;
  SignalId byte_store_first_ = 0, byte_store_second_ = 0;  // sb/sh: the passes that emit the kept bits
  // Passes in which the instruction goes on with HI, r[23:12] holding what it sends (the bits some
  // unit adds, or 0).
  std::vector<SignalId> hi_passes_;
  std::vector<std::pair<FaultCause, SignalId>> faults_;
  std::vector<SignalId> illegal_operands_;  // a decoded instruction whose operands make it illegal
  SignalId vector_result_pass_ = 0;         // a vector operation's pass emits VEC
  SignalId vector_line_pass_ = 0;           // and this one LINE
  SignalId vector_wline_pass_ = 0;          // and this one WLINE
  Bits vector_weight_line_;                 // the last WLINE's payload, the line WM reads
  std::vector<TokenRegister> token_registers_;
  Division division_;
  std::vector<circuit::ExtraRow> bigint_rows_;  // a dot product's partial products
  SignalId bigint_dot_ = 0;                      // 1 while bz.dotlo or bz.dothi executes
  std::vector<Bits> a_copies_;                   // what each copy of A reads
};

}  // namespace rvformer::cpu
