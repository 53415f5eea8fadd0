/* firmware/calc/limbs.c — see limbs.h.
 *
 * A product of two limbs plus carries is below LIMB_BASE^2 < 2^60. Splitting such a 64-bit value
 * into its base-10^9 digits is a division by 10^9, done by multiplying with a reciprocal and at most
 * two corrections; dividing by a single-limb divisor uses its reciprocal the same way (Möller and
 * Granlund, "Improved division by invariant integers", 2011). Neither ever runs the machine's
 * division instruction, which takes a multi-pass long division in the weights.
 */
#include "limbs.h"

/* floor(2^61 / 10^9): t / 10^9 = (t / 2^29) · (2^29 / 10^9). */
#define SPLIT_RECIPROCAL 2305843009u

/* Splits t < 2^60 (every product of two limbs plus two limbs is) into t / LIMB_BASE (returned) and
 * t % LIMB_BASE. The estimate floor((t >> 29) · SPLIT_RECIPROCAL / 2^32) is at most 2 below the
 * quotient and never above it, so the remainder it leaves is below 3 · 10^9 < 2^32. */
static inline uint32_t split(uint64_t t, limb_t* low) {
    uint32_t q = (uint32_t)(((uint64_t)(uint32_t)(t >> 29) * SPLIT_RECIPROCAL) >> 32);
    uint32_t r = (uint32_t)t - q * LIMB_BASE;
    if (r >= LIMB_BASE) {
        r -= LIMB_BASE;
        ++q;
        if (r >= LIMB_BASE) {
            r -= LIMB_BASE;
            ++q;
        }
    }
    *low = r;
    return q;
}

limb_t limbs_add(limb_t* r, const limb_t* a, const limb_t* b, int n) {
    limb_t carry = 0;
    for (int i = 0; i < n; ++i) {
        limb_t s = a[i] + b[i] + carry;
        carry = s >= LIMB_BASE;
        r[i] = carry ? s - LIMB_BASE : s;
    }
    return carry;
}

limb_t limbs_add_1(limb_t* r, const limb_t* a, int n, limb_t carry) {
    int i = 0;
    for (; i < n && carry; ++i) {
        limb_t s = a[i] + 1;
        carry = s == LIMB_BASE;
        r[i] = carry ? 0 : s;
    }
    if (r != a)
        for (; i < n; ++i) r[i] = a[i];
    return carry;
}

limb_t limbs_sub(limb_t* r, const limb_t* a, const limb_t* b, int n) {
    limb_t borrow = 0;
    for (int i = 0; i < n; ++i) {
        limb_t subtrahend = b[i] + borrow;
        borrow = a[i] < subtrahend;
        r[i] = borrow ? a[i] + LIMB_BASE - subtrahend : a[i] - subtrahend;
    }
    return borrow;
}

limb_t limbs_sub_1(limb_t* r, const limb_t* a, int n, limb_t borrow) {
    int i = 0;
    for (; i < n && borrow; ++i) {
        borrow = a[i] == 0;
        r[i] = borrow ? LIMB_BASE - 1 : a[i] - 1;
    }
    if (r != a)
        for (; i < n; ++i) r[i] = a[i];
    return borrow;
}

limb_t limbs_mul_1(limb_t* r, const limb_t* a, int n, limb_t m) {
    limb_t carry = 0;
    for (int i = 0; i < n; ++i) carry = split((uint64_t)a[i] * m + carry, &r[i]);
    return carry;
}

limb_t limbs_addmul_1(limb_t* r, const limb_t* a, int n, limb_t m) {
    limb_t carry = 0;
    /* r[i] + carry < 2 · 10^9 fits a word: one 64-bit addition fewer. */
    for (int i = 0; i < n; ++i) carry = split((uint64_t)a[i] * m + (uint32_t)(r[i] + carry), &r[i]);
    return carry;
}

limb_t limbs_submul_1(limb_t* r, const limb_t* a, int n, limb_t m) {
    limb_t borrow = 0;
    for (int i = 0; i < n; ++i) {
        limb_t low;
        borrow = split((uint64_t)a[i] * m + borrow, &low);
        if (r[i] < low) {
            r[i] += LIMB_BASE - low;
            borrow += 1;
        } else {
            r[i] -= low;
        }
    }
    return borrow;
}

void limbs_copy(limb_t* r, const limb_t* a, int n) {
    for (int i = 0; i < n; ++i) r[i] = a[i];
}

/* A loop, not a call of memset (which costs more than it clears for a few limbs). */
__attribute__((optimize("no-tree-loop-distribute-patterns"))) void limbs_zero(limb_t* r, int n) {
    for (int i = 0; i < n; ++i) r[i] = 0;
}

int limbs_cmp(const limb_t* a, const limb_t* b, int n) {
    for (int i = n - 1; i >= 0; --i)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

void limb_divisor_init(limb_divisor* divisor, limb_t d) {
    uint32_t shift = (uint32_t)__builtin_clz(d);
    divisor->d = d;
    divisor->shift = shift;
    divisor->normal = d << shift;
    /* The one 64-bit division of a whole division: it makes every digit of the quotient cheap. */
    divisor->inverse = (uint32_t)(UINT64_MAX / divisor->normal - ((uint64_t)1 << 32));
}

limb_t limb_divide(const limb_divisor* divisor, limb_t high, limb_t low, limb_t* remainder) {
    uint64_t u = ((uint64_t)high * LIMB_BASE + low) << divisor->shift;
    uint32_t r;
    uint32_t q = divide_normalized((uint32_t)(u >> 32), (uint32_t)u, divisor->normal, divisor->inverse, &r);
    *remainder = r >> divisor->shift;
    return q;
}

limb_t limbs_div_1(limb_t* q, const limb_t* a, int n, const limb_divisor* divisor) {
    limb_t remainder = 0;
    for (int i = n - 1; i >= 0; --i) q[i] = limb_divide(divisor, remainder, a[i], &remainder);
    return remainder;
}
