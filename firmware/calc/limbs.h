/* firmware/calc/limbs.h — the inner loops of multi-limb arithmetic, on numbers stored as arrays of
 * base-10^9 limbs, least significant first.
 *
 * Every loop that walks the limbs of a number lives behind this header (limbs.c), so that a build
 * for a machine with a big-integer unit can replace exactly these functions with its instructions.
 * Lengths are limb counts; n may be 0. Unless a function says so, the output may be the same array
 * as an input but must not overlap it otherwise. Every limb is below LIMB_BASE, and every single-limb
 * operand (m, d) is too.
 */
#ifndef CALC_LIMBS_H
#define CALC_LIMBS_H

#include <stdint.h>

typedef uint32_t limb_t;

#define LIMB_BASE 1000000000u /* 10^9: nine decimal digits per limb */
#define LIMB_DIGITS 9

/* r = a + b; returns the carry out (0 or 1). */
limb_t limbs_add(limb_t* r, const limb_t* a, const limb_t* b, int n);
/* r = a + carry (carry 0 or 1); returns the carry out. */
limb_t limbs_add_1(limb_t* r, const limb_t* a, int n, limb_t carry);
/* r = a - b; returns the borrow out (0 or 1). */
limb_t limbs_sub(limb_t* r, const limb_t* a, const limb_t* b, int n);
/* r = a - borrow (borrow 0 or 1); returns the borrow out. */
limb_t limbs_sub_1(limb_t* r, const limb_t* a, int n, limb_t borrow);
/* r = a * m; returns the limb carried out. */
limb_t limbs_mul_1(limb_t* r, const limb_t* a, int n, limb_t m);
/* The row multiply-accumulate r[i] += a[i] * m + carry; returns the limb carried out. */
limb_t limbs_addmul_1(limb_t* r, const limb_t* a, int n, limb_t m);
/* r -= a * m; returns the limb borrowed out of r[n - 1]. */
limb_t limbs_submul_1(limb_t* r, const limb_t* a, int n, limb_t m);
/* r = a, copying upwards: r may overlap a if it starts at or below it. */
void limbs_copy(limb_t* r, const limb_t* a, int n);
/* r = 0. */
void limbs_zero(limb_t* r, int n);
/* Compares a and b (n limbs each): -1, 0 or 1. */
int limbs_cmp(const limb_t* a, const limb_t* b, int n);

/* A single-limb divisor with its reciprocal, so that dividing by it takes two multiplications and
 * no division instruction (which the machine runs as a long, multi-pass division). */
typedef struct {
    limb_t d;        /* the divisor, 1 <= d < LIMB_BASE */
    uint32_t shift;  /* d << shift has its top bit set */
    uint32_t normal; /* d << shift */
    uint32_t inverse; /* floor((2^64 - 1) / normal) - 2^32 */
} limb_divisor;

/* (u1 * 2^32 + u0) / d for d with its top bit set, u1 < d, and v = floor((2^64 - 1) / d) - 2^32
 * (Möller and Granlund). */
static inline uint32_t divide_normalized(uint32_t u1, uint32_t u0, uint32_t d, uint32_t v, uint32_t* remainder) {
    uint64_t p = (uint64_t)v * u1;
    uint32_t q0 = (uint32_t)p + u0;
    uint32_t q1 = (uint32_t)(p >> 32) + u1 + 1 + (q0 < u0);
    uint32_t r = u0 - q1 * d;
    if (r > q0) {
        q1 -= 1;
        r += d;
    }
    if (r >= d) {
        q1 += 1;
        r -= d;
    }
    *remainder = r;
    return q1;
}

/* A column of a product, C = over · 2^64 + (high + carries) · 2^32 + low < 2^67 (as integers: high +
 * carries may pass 2^32, carries < 2^5), split as C = c2 · 10^18 + c1 · 10^9 + r with r < 10^9 (the
 * return value), c1 < 1.135 · 10^9 and c2 < 148, by multiplications with two reciprocals and one
 * correction (limbs_bigint.c; here so that a host test checks it). The values stay small where they
 * can: they cost the trace tokens by their size.
 *
 * c2: x0 = over << 8 | high >> 24 < 2^11 is floor(C' / 2^56) for C' = C - carries · 2^32 - low, so
 * C / 2^56 - 2^-19 - 1 < x0 <= C / 2^56, and c2 = floor(x0 · K1 / 2^15), K1 = floor(2^71 / 10^18) =
 * 2361 (x0 · K1 < 2^23), is at most C / 10^18; with K1 > 2^71 / 10^18 - 1, x0 · K1 / 2^15 > C / 10^18
 * - (1 + 2^-19) · 2^56 / 10^18 - x0 / 2^15 > C / 10^18 - 0.135: c2
 * is floor(C / 10^18) or one less, and R = C - c2 · 10^18 < 1.135 · 10^18 < 2^60. R is worked out
 * modulo 2^64 from high + carries and low alone, exact since 0 <= R < 2^64.
 * c1: x = floor(R / 2^28) = R_high << 4 | R_low >> 28 < 4.23 · 10^9, and c1 = floor(x · K2 / 2^32),
 * K2 = floor(2^60 / 10^9) = 2^60 / 10^9 - 0.6068..., is at most R / 10^9, and above R / 10^9 -
 * 2^28 / 10^9 - 0.6069 · x / 2^32 > R / 10^9 - 0.27 - 0.6 > R / 10^9 - 1: floor(R / 10^9) or one less. So r = R - c1 · 10^9 < 2 · 10^9 < 2^32 is exact in the
 * low word, and one step brings it below 10^9; then c1 = floor(R / 10^9) < 1.135 · 10^9. */
#define COLUMN_K1 2361u       /* floor(2^71 / 10^18) */
#define COLUMN_K2 1152921504u /* floor(2^60 / 10^9) */
#define TEN18_HIGH 232830643u /* 10^18 = TEN18_HIGH · 2^32 + TEN18_LOW */
#define TEN18_LOW 2808348672u
static inline uint32_t split_column(uint32_t over, uint32_t high, uint32_t carries, uint32_t low, uint32_t* c1_out,
                                    uint32_t* c2_out) {
    uint32_t x0 = over << 8 | high >> 24;
    uint32_t c2 = x0 * COLUMN_K1 >> 15;
    high += carries;
    uint64_t low_part = (uint64_t)c2 * TEN18_LOW;
    uint32_t r_low = low - (uint32_t)low_part;
    uint32_t r_high = high - c2 * TEN18_HIGH - (uint32_t)(low_part >> 32) - (low < (uint32_t)low_part);
    uint32_t x = r_high << 4 | r_low >> 28;
    uint32_t c1 = (uint32_t)(((uint64_t)x * COLUMN_K2) >> 32);
    uint32_t r = r_low - c1 * LIMB_BASE;
    if (r >= LIMB_BASE) {
        r -= LIMB_BASE;
        c1 += 1;
    }
    *c1_out = c1;
    *c2_out = c2;
    return r;
}

/* Limbs read most significant first and then d more digits (0 <= d < 9) are put in place with
 * limbs split at 10^(9 - d): floor(v / 10^(9 - d)) = floor(v · LIMB_SPLIT_INVERSE[d] / 2^(32 +
 * LIMB_SPLIT_SHIFT[d])) for every v < 10^9 (a host test checks each), and 0 for d = 0. */
static const uint32_t LIMB_SPLIT_INVERSE[LIMB_DIGITS] = {0,          2882303762u, 3602879702u,
                                                         2251799814u, 2814749768u, 3518437209u,
                                                         2199023256u, 2748779070u, 3435973837u};
static const uint8_t LIMB_SPLIT_SHIFT[LIMB_DIGITS] = {0, 26, 23, 19, 16, 13, 9, 6, 3};
static const uint32_t POWERS_OF_TEN[LIMB_DIGITS + 1] = {1,      10,      100,      1000,      10000,
                                                        100000, 1000000, 10000000, 100000000, 1000000000};

void limb_divisor_init(limb_divisor* divisor, limb_t d);
/* (high * LIMB_BASE + low) / d, high < d; the remainder goes to *remainder. */
limb_t limb_divide(const limb_divisor* divisor, limb_t high, limb_t low, limb_t* remainder);
/* q = a / d (n limbs, q may be a); returns the remainder. */
limb_t limbs_div_1(limb_t* q, const limb_t* a, int n, const limb_divisor* divisor);

#ifdef RVFORMER_BIGINT_UNIT
/* The longest operand limbs_mul_unit takes: its windows read 7 entries of A beyond the operand,
 * and 7 of B below index 0, which wrap to B[121..127]; both must be zero and apart from the digits. */
#define LIMBS_UNIT_MAX 121
/* r[0 .. n_a + n_b) = a * b with the big-integer unit (limbs_bigint.c), 1 <= n_a, n_b <=
 * LIMBS_UNIT_MAX. r may overlap a and b: the unit reads both in whole before it writes a limb of r. */
void limbs_mul_unit(limb_t* r, const limb_t* a, int n_a, const limb_t* b, int n_b);
#endif

#endif
