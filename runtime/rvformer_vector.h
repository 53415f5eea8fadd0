/* runtime/rvformer_vector.h — the vector unit's instructions as C functions (docs/vector-unit.md).
 *
 * Machines with the unit (memory map `rvformer-vector`; `rvformer cc` then defines
 * RVFORMER_VECTOR_UNIT) hold, when a program starts, zeros but for WM's image:
 *   WM   the weight memory, VU_WEIGHT_BYTES bytes (little-endian words): int8 matrices with their
 *        requantisation pairs, and int16 tables: the program image's weight memory (placed by the
 *        image loader, as its code and read-only data are), which programs only read;
 *   AM   the activation memory, VU_ACTIVATION_ELEMENTS int16 elements: the vectors the operations
 *        read and write, and vu_put's line buffer of VU_LINE_ELEMENTS elements;
 *   KV   the KV cache, VU_KV_SLOTS slots, each a key vector and a value vector of VU_KV_ELEMENTS
 *        int16 elements: written from AM by vu_kput and vu_vput, read by vu_attend;
 *   five configuration registers VL, COLS, SRC, AUX, HS (32 bits each) that give the operations
 *        the operands two source registers cannot carry.
 *
 * Every instruction is R-type with opcode custom-1 (0x2B). funct3 0: configuration, funct7 k sets
 * register k to rs1 (rd and rs2 are x0). funct3 1: data moves. funct3 2: operations writing AM (rd
 * is x0). funct3 3: operations with a result in rd. Each operation computes exactly the function of
 * firmware/story/story_ops.h named beside it. The elementwise ones (vu_add16, vu_mul16, vu_silu, and
 * vu_rope, vu_row16, vu_rmsnorm and vu_matvec16 for their outputs) take
 * vectors that start at a line's first element (a multiple of VU_LINE_ELEMENTS) and go a line at a
 * time: each output line is written whole, zeros past VL, before the next line is read, through
 * vu_put's line buffer, which holds the last line afterwards; their two operands must be the same
 * vector or lie 32 elements apart modulo 64 (the weights read line l of both in one pass from banks
 * of opposite parity). The others read all of their inputs before writing any output (so an output
 * may overlap an input). An instruction whose operands are out of range (see each one:
 * counts, and every AM element, KV slot or WM byte it touches inside its memory) is an illegal instruction,
 * and so is every instruction on a machine without the unit, or with a field not listed here
 * non-zero.
 *
 * Operands:
 *   matrix m  a WM byte address, a multiple of 64 (a WM line): rows pairs {int32 multiplier, int32
 *             shift} at m, then from the next multiple of 64 bytes the int8 rows, each padded to a
 *             multiple of 64 bytes (the story blob's matrix layout); requantisation as
 *             story_requant13: vu_row16 refuses a multiplier outside [0, 255] or a shift outside
 *             [1, 62], vu_matvec16 reads a pair's low bits (below).
 *   activations are int16 elements holding 13-bit values (−4096..4095): the operations' outputs
 *             are saturated to them (sat13 in story_ops.h) and vu_put takes no other.
 *   int32 vectors in AM are pairs: element i at a + 2i (bits 15..0) and a + 2i + 1 (bits 31..16).
 *
 * Every function is volatile with a "memory" clobber: the unit's state changes under them.
 */
#ifndef RVFORMER_VECTOR_H
#define RVFORMER_VECTOR_H

#include <stdint.h>

#define VU_WEIGHT_BYTES (384u * 1024u)
#define VU_ACTIVATION_ELEMENTS (32u * 1024u)
#define VU_LINE_ELEMENTS 16u /* vu.put's line buffer: AM is written a line at a time */
#define VU_ROW_ELEMENTS 256u /* an AM row: vu.matvec16's and vu.rmsnorm's input lies within one */
#define VU_KV_SLOTS 4096u
#define VU_KV_ELEMENTS 32u

/* Configuration registers (funct7 of funct3 0). */
#define VU_VL 0   /* a count: rows, elements, positions (1..4096; 1..512 where noted) */
#define VU_COLS 1 /* columns of a matrix (1..256) */
#define VU_SRC 2  /* an AM address or a KV slot: a third operand */
#define VU_AUX 3  /* a shift, epsilon term, AM or WM address, or an element of a KV vector: a fourth operand */
#define VU_HS 4   /* the head size (1..512; even for vu.rope) */

#define VU_INSN_SET(k, a) __asm__ volatile(".insn r 0x2B, 0, %1, zero, %0, zero" : : "r"(a), "i"(k) : "memory")

static inline void vu_set_vl(uint32_t value) { VU_INSN_SET(VU_VL, value); }
static inline void vu_set_cols(uint32_t value) { VU_INSN_SET(VU_COLS, value); }
static inline void vu_set_src(uint32_t value) { VU_INSN_SET(VU_SRC, value); }
static inline void vu_set_aux(uint32_t value) { VU_INSN_SET(VU_AUX, value); }
static inline void vu_set_hs(uint32_t value) { VU_INSN_SET(VU_HS, value); }

/* funct3 1, funct7 1 — vu.put rs1, rs2: element rs1 % VU_LINE_ELEMENTS of the line buffer = rs2, a 13-bit
 * value (−4096..4095, else out of range); at a line's last element (rs1 % VU_LINE_ELEMENTS ==
 * VU_LINE_ELEMENTS − 1) the buffer is committed: AM[rs1 − VU_LINE_ELEMENTS + 1 .. rs1] = the buffer.
 * The weights write AM a line at a time, so a program puts whole lines, in any order as long as the
 * last element comes last; vu_get reads AM, never the buffer. */
static inline void vu_put(uint32_t element, int32_t value) {
    __asm__ volatile(".insn r 0x2B, 1, 1, zero, %0, %1" : : "r"(element), "r"(value) : "memory");
}

/* funct3 1, funct7 2 — vu.get rd, rs1: rd = AM[rs1] sign-extended (rs2 is x0). */
static inline int32_t vu_get(uint32_t element) {
    int32_t value;
    __asm__ volatile(".insn r 0x2B, 1, 2, %0, %1, zero" : "=r"(value) : "r"(element) : "memory");
    return value;
}

/* funct3 1, funct7 3 — vu.wget rd, rs1: rd = the WM word at byte address rs1 (a multiple of 4; rs2 is
 * x0): how the program reads what the image loader put in WM. */
static inline uint32_t vu_wget(uint32_t address) {
    uint32_t word;
    __asm__ volatile(".insn r 0x2B, 1, 3, %0, %1, zero" : "=r"(word) : "r"(address) : "memory");
    return word;
}

/* funct3 1, funct7 4 — vu.kput rs1, rs2: KV slot rs2's key vector = the VU_KV_ELEMENTS elements at
 * AM[rs1], rs1 a multiple of VU_KV_ELEMENTS. */
static inline void vu_kput(uint32_t x, uint32_t slot) {
    __asm__ volatile(".insn r 0x2B, 1, 4, zero, %0, %1" : : "r"(x), "r"(slot) : "memory");
}

/* funct3 1, funct7 5 — vu.vput rs1, rs2: KV slot rs2's value vector, likewise. */
static inline void vu_vput(uint32_t x, uint32_t slot) {
    __asm__ volatile(".insn r 0x2B, 1, 5, zero, %0, %1" : : "r"(x), "r"(slot) : "memory");
}

#define VU_INSN_OP(f, a, b) __asm__ volatile(".insn r 0x2B, 2, %2, zero, %0, %1" : : "r"(a), "r"(b), "i"(f) : "memory")

/* funct3 2, funct7 0 — vu.matvec16 rs1 = out, rs2 = matrix: story_matvec16 with rows VL, cols COLS
 * (1..256), x at AM[SRC], a multiple of 64 with its COLS elements within one AM row of
 * VU_ROW_ELEMENTS; out[i] at AM[rs1 + i], rs1 a multiple of 16, a line of rows at a time (above:
 * an output line over x changes the rows after it). The matrix at WM rs2, a multiple of 64 (above).
 * No pair is out of range: row i's multiplier is the low byte of its word and its shift the low six
 * bits of its own, 0 standing for 64; a shift of 63 or 64 gives 0. For a pair with a multiplier in
 * [0, 255] and a shift in [1, 62], as the quantiser writes them, that is the pair itself. */
static inline void vu_matvec16(uint32_t out, uint32_t matrix) { VU_INSN_OP(0, out, matrix); }

/* funct3 2, funct7 2 — vu.row16 rs1 = out, rs2 = row: an embedding lookup a line at a time (above),
 * out[j] = story_requant13(w[j], the pair at WM AUX) for the VL (1..64) int8 weights w of the WM
 * line at `row` (a multiple of 64: a matrix's row starts at one), AUX a multiple of 8. */
static inline void vu_row16(uint32_t out, uint32_t row) { VU_INSN_OP(2, out, row); }

/* funct3 2, funct7 3 — vu.add16 rs1 = x, rs2 = y: story_add16(x, y, VL) a line at a time (above):
 * x and y multiples of 16, y = x or y ≡ x + 32 (mod 64), x's and y's lines inside AM. */
static inline void vu_add16(uint32_t x, uint32_t y) { VU_INSN_OP(3, x, y); }

/* funct3 2, funct7 4 — vu.mul16 rs1 = a (and out), rs2 = b: story_mul16(a, a, b, AUX, VL), AUX in 1..30,
 * a line at a time, a and b as vu.add16's x and y. */
static inline void vu_mul16(uint32_t a, uint32_t b) { VU_INSN_OP(4, a, b); }

/* funct3 2, funct7 5 — vu.rmsnorm rs1 = out, rs2 = x: story_rmsnorm(out, x, VL, AUX), VL 1..512. */
static inline void vu_rmsnorm(uint32_t out, uint32_t x) { VU_INSN_OP(5, out, x); }

/* funct3 2, funct7 6 — vu.silu rs1 = x: story_silu(x, x, VL) a line at a time, x a multiple of 16
 * (rs2 is x0: written as `zero`, since an
 * "r" operand of 0 may be any register holding 0, and the word is then illegal). */
static inline void vu_silu(uint32_t x) {
    __asm__ volatile(".insn r 0x2B, 2, 6, zero, %0, zero" : : "r"(x) : "memory");
}

/* funct3 2, funct7 7 — vu.rope rs1 = x, rs2 = table: in place over VL elements (even) from x, a
 * multiple of 16, a line of 16 at a time (zeros past VL in the last): pair p of a line (elements 2p
 * and 2p + 1) rotated by the Q14 cosine and sine p of the table at WM byte address rs2, a multiple
 * of 32 (8 int16 cosines, then 8 sines); story_rope with a head of 16 over such a table. */
static inline void vu_rope(uint32_t x, uint32_t table) { VU_INSN_OP(7, x, table); }

/* funct3 2, funct7 8 — vu.attend rs1 = out, rs2 = q: story_attention_head over VL positions (1..512)
 * and HS elements (1..8): position t's key the elements AUX.. of KV slot SRC + t's key vector, its
 * value the same of that slot's value vector (AUX + HS <= VU_KV_ELEMENTS, SRC + VL <= VU_KV_SLOTS). */
static inline void vu_attend(uint32_t out, uint32_t q) { VU_INSN_OP(8, out, q); }

/* funct3 3, funct7 0 — vu.argmax rd, rs1 = x: story_argmax16 over the vector at AM[rs1], VL
 * elements, x a multiple of 16 and its lines inside AM (rs2 is x0). */
static inline int32_t vu_argmax(uint32_t x) {
    int32_t index;
    __asm__ volatile(".insn r 0x2B, 3, 0, %0, %1, zero" : "=r"(index) : "r"(x) : "memory");
    return index;
}

#undef VU_INSN_SET
#undef VU_INSN_OP

#endif
