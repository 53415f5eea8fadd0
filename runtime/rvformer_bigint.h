/* runtime/rvformer_bigint.h — the big-integer unit's instructions as C functions.
 *
 * Machines with the unit (machine spec and memory map `rvformer-bigint`; `rvformer cc` then defines
 * RVFORMER_BIGINT_UNIT) hold two memories A and B of 128 entries of 30 bits each, zero at start, and
 * four R-type instructions of opcode custom-0 (0x0B), funct7 0:
 *
 *   funct3 0  bz.puta rs1, rs2     A[rs1 mod 128] = rs2 mod 2^30   (rd is x0)
 *   funct3 1  bz.putb rs1, rs2     B[rs1 mod 128] = rs2 mod 2^30   (rd is x0)
 *   funct3 2  bz.dotlo rd, rs1, rs2   rd = S mod 2^32
 *   funct3 3  bz.dothi rd, rs1, rs2   rd = floor(S / 2^32)
 *
 * where S = sum over t = 0..7 of A[(rs1 + t) mod 128] · B[(rs2 - t) mod 128], a 64-bit value: eight
 * terms of one column of a product when A and B hold the two factors' digits. On a machine without
 * the unit these instructions are illegal.
 *
 * Every function is volatile with a "memory" clobber: the puts change the unit's state and the dots
 * read it, so none may be dropped, merged or moved across another (or across the stores that made
 * the values put).
 */
#ifndef RVFORMER_BIGINT_H
#define RVFORMER_BIGINT_H

#include <stdint.h>

static inline void bz_puta(uint32_t index, uint32_t value) {
    __asm__ volatile(".insn r 0x0B, 0, 0, zero, %0, %1" : : "r"(index), "r"(value) : "memory");
}

static inline void bz_putb(uint32_t index, uint32_t value) {
    __asm__ volatile(".insn r 0x0B, 1, 0, zero, %0, %1" : : "r"(index), "r"(value) : "memory");
}

/* The low word of sum_{t<8} A[i + t] · B[j - t] (indices mod 128). */
static inline uint32_t bz_dotlo(uint32_t i, uint32_t j) {
    uint32_t result;
    __asm__ volatile(".insn r 0x0B, 2, 0, %0, %1, %2" : "=r"(result) : "r"(i), "r"(j) : "memory");
    return result;
}

/* The high word of sum_{t<8} A[i + t] · B[j - t] (indices mod 128). */
static inline uint32_t bz_dothi(uint32_t i, uint32_t j) {
    uint32_t result;
    __asm__ volatile(".insn r 0x0B, 3, 0, %0, %1, %2" : "=r"(result) : "r"(i), "r"(j) : "memory");
    return result;
}

#endif
