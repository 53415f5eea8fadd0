// cpu/machine_builder.h — the parts of build_machine(), in pipeline order. Private to cpu/.
//
// Each part reads the signals of earlier parts from the builder and adds its own. The pipeline of
// one pass: token inputs → mode and PC latch → PC and fetch → instruction decode → early results and
// the delay line → register file (pending write, operand reads) → execute → data memory → next token.
#pragma once

#include <array>
#include <vector>

#include "circuit/arith.h"
#include "circuit/gates.h"
#include "cpu/machine.h"
#include "cpu/rv32_ops.h"

namespace rvformer::cpu {

using circuit::add_narrow_sum;
using circuit::Bits;
using circuit::F;
using circuit::Form;
using circuit::Forms;
using circuit::forms_of;
using circuit::narrow_sum;
using circuit::SignalId;

// A row select addressing `rows` by binary address bits, active when `match` and `conditions` hold.
circuit::RowSelect binary_select(const Bits& address, std::vector<circuit::Literal> match = {},
                                 std::vector<circuit::LinearForm> conditions = {});
// Literals requiring bits [low, low + width) of `bits` to spell `value`.
std::vector<circuit::Literal> match_bits(const Bits& bits, int low, int width, std::uint32_t value);
Bits slice(const Bits& bits, int low, int count);

// Input signals set by the token embedding.
struct TokenInputs {
  SignalId is_val, is_hi, is_jump, is_out, is_exit, is_fault, is_start;
  Bits val, hi, jump;  // 16-bit payloads of VAL, HI and JUMP tokens (zero for other tokens)
};

// Output signals the LM head reads: one-hot chunks of the next token's payload, per family.
struct TokenOutputs {
  struct Payload16 {
    std::vector<SignalId> high6, mid5, low5;
  } val, hi, jump;
  struct Payload8 {
    std::vector<SignalId> high3, low5;
  } out, exit;
  std::vector<SignalId> fault;  // one per cause
};

// What the next token should be, each a 0/1 signal (exactly one is 1) with its payload as forms.
struct NextToken {
  SignalId emit_val, emit_hi, emit_jump, emit_out, emit_exit, emit_fault;
  std::vector<Form> val, hi, jump;  // 16 bits each
  std::vector<Form> byte;           // 8 bits, for OUT and EXIT
  std::vector<Form> cause;          // one-hot over fault causes
};

class MachineBuilder {
 public:
  explicit MachineBuilder(Machine& machine) : m_(machine), c_(machine.circuit) {}
  void build();

 private:
  // tokens.cpp
  void add_token_inputs();
  void add_token_outputs();
  void add_token_families();
  // fetch.cpp
  void add_mode_and_pc_latch();
  void add_program_counter();
  void add_code_rom();
  // loader.cpp
  void add_loader();
  // decode.cpp
  void add_decoder();
  // registers.cpp
  void add_early_results();
  void add_register_file();
  // execute.cpp
  void add_execute();
  // memory.cpp
  void add_data_memory();
  // next_token.cpp
  void add_faults();
  void add_next_token();
  void add_output_code();

  circuit::Gates gates(const std::string& unit) { return circuit::Gates(c_, unit); }

  Machine& m_;
  circuit::Circuit& c_;

  TokenInputs in_;
  TokenOutputs out_;
  NextToken next_;

  // Mode, PC and control.
  SignalId running_ = 0;       // after START
  Bits base_;                  // code word of the last JUMP
  SignalId step_count_ = 0;    // 2^-n after n steps since that JUMP
  std::vector<SignalId> n_;    // one-hot n
  Bits pc_;                    // code word index of this step (17 bits: bit 16 = past the ROM)
  Bits next_pc_;               // pc + 1 (17 bits)
  SignalId zero_ = 0;          // an input no token sets: constant 0 where a bit vector needs it
  SignalId active_ = 0;        // running and not a resync pass: the instruction at pc is decoded
  SignalId executing_ = 0;     // active and not reporting a fault: the instruction takes effect
  SignalId resync_ = 0;        // this pass only re-anchors the PC with JUMP(pc)
  std::array<SignalId, 4> report_position_{};  // FAULT was 1, 2, 3, 4 tokens ago... (0: this token)
  SignalId in_report_ = 0;

  // Loading.
  SignalId loading_data_ = 0;  // a VAL token while not running
  SignalId commit_code_ = 0, commit_rodata_ = 0;
  std::vector<Bits> staged_;  // 16 halfwords gathered for the row
  std::vector<SignalId> legal_flags_;  // per staged instruction: its low bits are 0b11

  // Fetch and decode.
  Bits insn_;                  // instruction bits 2..31 at their positions; 0 and 1 unused
  SignalId legal_ = 0;         // the word's low bits are 0b11
  std::array<SignalId, kOpCount> op_{};  // one-hot instruction (all zero: illegal or not executing)
  SignalId rd_nonzero_ = 0;              // the rd field is not x0
  Bits imm_i_, imm_s_, imm_b_, imm_u_, imm_j_;  // immediates by format (zero for other formats)
  std::vector<SignalId> shamt_imm_;      // one-hot shift amount of slli/srli/srai

  // Early results and the register file.
  Bits early_value_;           // lui/auipc/jal/jalr result, known before the register file
  SignalId early_write_ = 0, late_write_ = 0;  // this instruction writes rd (≠ x0), early or late
  Bits rs1_value_, rs2_value_;

  // Execute and memory.
  std::vector<Form> result_;   // 32-bit value written to rd (zero when not a late-result op)
  Bits address_;               // rs1 + immediate (loads, stores, jalr)
  SignalId branch_taken_ = 0;
  std::vector<Form> target_word_;  // 16-bit code word of a taken jump or branch
  Bits target_address_;        // its byte address (32 bits) for fault reports
  SignalId target_misaligned_ = 0, target_outside_ = 0;
  SignalId is_jump_op_ = 0;    // jal, jalr or a taken branch
  std::vector<Form> loaded_;   // value of a load (zero otherwise)
  Bits old_half_;              // the RAM halfword an sb merges into (first sb pass)
  SignalId console_store_ = 0, exit_store_ = 0, ram_byte_store_ = 0;
  SignalId load_misaligned_ = 0, load_outside_ = 0, store_misaligned_ = 0, store_outside_ = 0;

  // Faults.
  std::vector<Form> fault_cause_;  // one-hot, all zero when there is no fault
  SignalId faulting_ = 0;
  std::vector<Form> fault_pc_, fault_address_;  // 32 bits each
};

}  // namespace rvformer::cpu
