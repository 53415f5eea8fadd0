/* firmware/calc/limbs_bigint.c — products with the big-integer unit (runtime/rvformer_bigint.h), in
 * builds for a machine that has it (RVFORMER_BIGINT_UNIT); empty otherwise.
 *
 * Product scanning: a goes to A[0 .. n_a), b to B[0 .. n_b), and column k of the product, the sum of
 * a[i] · b[k - i] over the valid i, is read eight terms at a time: bz.dotlo/bz.dothi (i, k - i) give
 * sum_{t<8} A[i + t] · B[k - i - t], for i = i0, i0 + 8, ... up to the last valid i. A window that
 * runs past the column's valid terms reads A[n_a .. n_a + 6] (past a's end) or B[-7 .. -1], which
 * wrap to B[121 .. 127]; both ranges are kept zero, so those terms add nothing. Hence the limit of
 * LIMBS_UNIT_MAX = 121 limbs an operand (121 + 7 = 128). B[121 .. 127] are never written (an operand
 * is at most 121 limbs), so they stay zero from the start; entries of A that an earlier, longer
 * operand left are zeroed as far as a window can reach.
 *
 * A window's sum is below 8 · 10^18 < 2^63 and a column's (at most 16 windows, plus the carry and
 * r[k]) below 2^68: the column is a 96-bit value, a low word and a 64-bit high part, split into its
 * limb and the carry into the next column by two divisions by 10^9 with the reciprocal
 * (divide_normalized, limbs.h), never the division instruction.
 */
#include "limbs.h"

#ifdef RVFORMER_BIGINT_UNIT

#include <rvformer_bigint.h>

/* 10^9 · 4, the normalized divisor, and its reciprocal floor((2^64 - 1) / (4 · 10^9)) - 2^32. */
#define BASE_NORMAL 4000000000u
#define BASE_INVERSE 316718722u

/* (high · 2^32 + low) / 10^9 for high < 10^9; the remainder goes to *remainder. */
static inline uint32_t divide_base(uint32_t high, uint32_t low, uint32_t* remainder) {
    uint32_t r;
    uint32_t q = divide_normalized(high << 2 | low >> 30, low << 2, BASE_NORMAL, BASE_INVERSE, &r);
    *remainder = r >> 2;
    return q;
}

/* A[a_dirty ..] are zero. */
static int a_dirty;

limb_t limbs_addmul_unit(limb_t* r, const limb_t* a, int n_a, const limb_t* b, int n_b) {
    for (int i = 0; i < n_a; ++i) bz_puta((uint32_t)i, a[i]);
    for (int i = n_a; i < a_dirty && i < n_a + 7; ++i) bz_puta((uint32_t)i, 0);
    if (n_a > a_dirty) a_dirty = n_a;
    for (int j = 0; j < n_b; ++j) bz_putb((uint32_t)j, b[j]);

    /* The column sum, low + high · 2^32, starts as the carry from the column below. */
    uint32_t carry_low = 0, carry_high = 0;
    int last = n_a + n_b - 1;
    for (int k = 0; k < last; ++k) {
        /* The column as low + high · 2^32 + over · 2^64; the carries out of the low words are
         * counted apart (small values, one token each) and join the high word after the windows. */
        uint32_t low = carry_low + r[k];
        uint32_t low_carries = low < r[k];
        uint32_t high = carry_high, over = 0;
        int i = k - n_b + 1 > 0 ? k - n_b + 1 : 0;
        int end = k < n_a - 1 ? k : n_a - 1;
        for (; i <= end; i += 8) {
            uint32_t dot_low = bz_dotlo((uint32_t)i, (uint32_t)(k - i));
            uint32_t dot_high = bz_dothi((uint32_t)i, (uint32_t)(k - i));
            low += dot_low;
            low_carries += low < dot_low;
            high += dot_high;
            over += high < dot_high;
        }
        high += low_carries;
        over += high < low_carries;
        uint32_t rest;
        if (over == 0 && high < LIMB_BASE) {
            carry_high = 0;
            rest = high;
        } else {
            carry_high = divide_base(over, high, &rest);
        }
        carry_low = divide_base(rest, low, &r[k]);
    }
    /* The top column has no products; the carry into it is below 2 · 10^9 (the sum fits n_a + n_b
     * limbs and one carry), and so the carry out is 0 or 1. */
    uint32_t top = carry_low + r[last];
    limb_t carry = top >= LIMB_BASE;
    r[last] = carry ? top - LIMB_BASE : top;
    return carry;
}

#endif
