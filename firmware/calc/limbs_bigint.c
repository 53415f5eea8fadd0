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
 * A window's sum is below 8 · 10^18 < 2^63 and a column's (at most 16 windows, plus r[k] and the
 * carries in) below 1.29 · 10^20 < 2^67: the column is a low word, a high word and a small overflow
 * word, split with reciprocals (split_column, limbs.h; never the division instruction) as c2 · 10^18 +
 * c1 · 10^9 + its limb. c1 goes into the next column and c2 into the one after, both one word: what
 * a column starts with, r[k] + c1 + c2 < 2.14 · 10^9 < 2^31, needs no carry out of its low word.
 */
#include "limbs.h"

#ifdef RVFORMER_BIGINT_UNIT

#include <rvformer_bigint.h>

/* *sum += value, and *carries += 1 if that wrapped: three instructions, written out so that the
 * compiler neither keeps the old sum alive for the comparison nor moves it between registers. */
static inline void add_counting(uint32_t* sum, uint32_t* carries, uint32_t value) {
    __asm__("add %0, %0, %2\n\tsltu %2, %0, %2\n\tadd %1, %1, %2" : "+r"(*sum), "+r"(*carries), "+r"(value));
}

/* The unit's memory A or B [0 .. n) = x through `put` (bz_puta or bz_putb, inlined as a constant),
 * four limbs an iteration (fewer loop steps in the trace). */
static inline __attribute__((always_inline)) void put_limbs(void (*put)(uint32_t, uint32_t), const limb_t* x, int n) {
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        limb_t x0 = x[i], x1 = x[i + 1], x2 = x[i + 2], x3 = x[i + 3];
        put((uint32_t)i, x0);
        put((uint32_t)i + 1, x1);
        put((uint32_t)i + 2, x2);
        put((uint32_t)i + 3, x3);
    }
    for (; i < n; ++i) put((uint32_t)i, x[i]);
}

/* A[a_dirty ..] are zero. */
static int a_dirty;

void limbs_mul_unit(limb_t* r, const limb_t* a, int n_a, const limb_t* b, int n_b) {
    put_limbs(bz_puta, a, n_a);
    for (int i = n_a; i < a_dirty && i < n_a + 7; ++i) bz_puta((uint32_t)i, 0);
    if (n_a > a_dirty) a_dirty = n_a;
    put_limbs(bz_putb, b, n_b);

    /* carry_in goes into column k (c1 of column k - 1 and c2 of column k - 2), carry_next into
     * column k + 1 (c2 of column k - 1). */
    uint32_t carry_in = 0, carry_next = 0;
    int last = n_a + n_b - 1;
    /* The column's terms run over i = start .. end: start = max(0, k - n_b + 1), end = min(k, n_a - 1). */
    int start = 0, end = 0;
    for (int k = 0; k < last; ++k) {
        /* The column as low + (high + low_carries) · 2^32 + over · 2^64: the carries out of the low
         * words are counted apart (small values, one token each) and join the high word in the split. */
        uint32_t low = carry_in;
        uint32_t low_carries = 0, high = 0, over = 0;
        int i = start;
        /* (end - i) / 8 + 1 windows: an odd count starts with one on its own, then two at a time. */
        if (!((end - i) & 8)) {
            uint32_t j = (uint32_t)(k - i);
            add_counting(&low, &low_carries, bz_dotlo((uint32_t)i, j));
            high = bz_dothi((uint32_t)i, j);
            i += 8;
        }
        for (; i <= end; i += 16) {
            uint32_t j = (uint32_t)(k - i);
            uint32_t low_1 = bz_dotlo((uint32_t)i, j), high_1 = bz_dothi((uint32_t)i, j);
            uint32_t low_2 = bz_dotlo((uint32_t)i + 8, j - 8), high_2 = bz_dothi((uint32_t)i + 8, j - 8);
            add_counting(&low, &low_carries, low_1);
            add_counting(&low, &low_carries, low_2);
            /* Each high word is below 8 · 10^18 / 2^32 < 2^31: the two add up without a carry. */
            add_counting(&high, &over, high_1 + high_2);
        }
        uint32_t c1, c2;
        r[k] = split_column(over, high, low_carries, low, &c1, &c2);
        carry_in = c1 + carry_next;
        carry_next = c2;
        start += k >= n_b - 1;
        end += end < n_a - 1;
    }
    /* The top column has no products, and the product fits n_a + n_b limbs: its limb is what
     * carries into it, and nothing carries out (carry_next is 0). */
    r[last] = carry_in;
}

#endif
