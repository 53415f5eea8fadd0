/* firmware/calc/rational.c — see rational.h. */
#include "rational.h"

#include <stdint.h>

static const limb_t kOne = 1;

int rational_is_integer(rational x) { return x.denominator.count == 0; }

/* The denominator as a number, 1 included. */
static natural denominator(rational x) {
    return rational_is_integer(x) ? (natural){(limb_t*)&kOne, 1} : x.denominator;
}

/* Copies the parts of x, wherever they are, to `destination`, numerator then denominator (no limbs
 * for a denominator of 1), and releases the arena above them. */
static rational place(natural numerator, natural den, int negative, limb_t* destination) {
    if (natural_is_one(den)) den.count = 0;
    if (numerator.count == 0) negative = 0;
    if ((uintptr_t)numerator.limbs >= (uintptr_t)destination &&
        (den.count == 0 || den.limbs >= numerator.limbs + numerator.count)) {
        /* In order above the destination: moving each down overwrites nothing still to be moved. */
        numerator = natural_move(numerator, destination);
        if (den.count) den = natural_move(den, destination + numerator.count);
        return (rational){numerator, den.count ? den : (natural){0, 0}, negative};
    }
    int total = numerator.count + den.count;
    limb_t* staging = arena_allocate(total);
    limbs_copy(staging, numerator.limbs, numerator.count);
    limbs_copy(staging + numerator.count, den.limbs, den.count);
    limbs_copy(destination, staging, total);
    arena_release(destination + total);
    return (rational){{destination, numerator.count}, {destination + numerator.count, den.count}, negative};
}

/* numerator / den in lowest terms, placed at `destination`. */
static rational reduce(natural numerator, natural den, int negative, limb_t* destination) {
    if (numerator.count == 0) return place(numerator, (natural){0, 0}, 0, destination);
    natural divisor = natural_gcd(numerator, den);
    if (!natural_is_one(divisor)) {
        natural_divmod(numerator, divisor, &numerator, 0);
        natural_divmod(den, divisor, &den, 0);
    }
    return place(numerator, den, negative, destination);
}

/* a_sign·a + b_sign·b (signs 1 for negative), its sign in *negative. */
static natural signed_sum(natural a, int a_negative, natural b, int b_negative, int* negative) {
    if (a_negative == b_negative) {
        *negative = a_negative;
        return natural_add(a, b);
    }
    if (natural_cmp(a, b) >= 0) {
        *negative = a_negative;
        return natural_sub(a, b);
    }
    *negative = b_negative;
    return natural_sub(b, a);
}

static rational add(rational x, rational y, limb_t* destination) {
    int negative;
    if (rational_is_integer(x) && rational_is_integer(y))
        return place(signed_sum(x.numerator, x.negative, y.numerator, y.negative, &negative), (natural){0, 0},
                     negative, destination);
    natural x_den = denominator(x), y_den = denominator(y);
    natural left = natural_mul(x.numerator, y_den);
    natural right = natural_mul(y.numerator, x_den);
    natural sum = signed_sum(left, x.negative, right, y.negative, &negative);
    /* An integer plus p/q is (n q + p)/q, already in lowest terms. */
    if (rational_is_integer(x) || rational_is_integer(y))
        return place(sum, rational_is_integer(x) ? y_den : x_den, negative, destination);
    return reduce(sum, natural_mul(x_den, y_den), negative, destination);
}

static rational multiply(rational x, rational y, limb_t* destination) {
    int negative = x.negative != y.negative;
#ifdef RVFORMER_BIGINT_UNIT
    /* With the unit, a product of two integers can go straight to the destination, over them. */
    natural product;
    if (rational_is_integer(x) && rational_is_integer(y) &&
        natural_mul_over(x.numerator, y.numerator, destination, &product))
        return (rational){product, {0, 0}, negative};
#endif
    natural numerator = natural_mul(x.numerator, y.numerator);
    if (rational_is_integer(x) && rational_is_integer(y))
        return place(numerator, (natural){0, 0}, negative, destination);
    return reduce(numerator, natural_mul(denominator(x), denominator(y)), negative, destination);
}

/* x = (n / d) with n = |x.num|·y.den and d = x.den·|y.num|: the integer parts // and % need. */
static void cross(rational x, rational y, natural* n, natural* d) {
    *n = natural_mul(x.numerator, denominator(y));
    *d = natural_mul(denominator(x), y.numerator);
}

static rational floor_divide(rational x, rational y, limb_t* destination) {
    natural n, d, q, r;
    cross(x, y, &n, &d);
    natural_divmod(n, d, &q, &r);
    int negative = x.negative != y.negative;
    if (negative && r.count) q = natural_add(q, (natural){(limb_t*)&kOne, 1});
    return place(q, (natural){0, 0}, negative, destination);
}

static rational modulo(rational x, rational y, limb_t* destination) {
    natural n, d, r;
    cross(x, y, &n, &d);
    natural_divmod(n, d, 0, &r);
    if (x.negative != y.negative && r.count) r = natural_sub(d, r);
    if (rational_is_integer(x) && rational_is_integer(y)) return place(r, (natural){0, 0}, y.negative, destination);
    return reduce(r, natural_mul(denominator(x), denominator(y)), y.negative, destination);
}

/* Whether x^exponent surely has more than `digits` decimal digits:
 * log10(x) >= 9 (count - 1) + floor(log2(top limb)) · 0.301, counted in thousandths. */
static int power_exceeds(natural x, uint32_t exponent, int digits) {
    int top_bits = 31 - __builtin_clz(x.limbs[x.count - 1]);
    uint64_t thousandths = (uint64_t)(9000 * (x.count - 1) + 301 * top_bits);
    return thousandths * exponent > (uint64_t)digits * 1000;
}

static calc_status power(rational x, rational y, limb_t* destination, rational* result) {
    if (!rational_is_integer(y)) return CALC_NON_INTEGER_EXPONENT;
    natural e = y.numerator;
    int odd = e.count && (e.limbs[0] & 1);
    int negative = x.negative && odd;
    if (x.numerator.count == 0) {
        if (y.negative && e.count) return CALC_DIVISION_BY_ZERO;
        *result = place(natural_small(e.count ? 0 : 1), (natural){0, 0}, 0, destination);
        return CALC_OK;
    }
    if (e.count == 0 || (natural_is_one(x.numerator) && rational_is_integer(x))) {
        *result = place(natural_small(1), (natural){0, 0}, e.count ? negative : 0, destination);
        return CALC_OK;
    }
    if (e.count > 1) return CALC_TOO_LARGE;
    uint32_t exponent = e.limbs[0];
    int room = LIMB_DIGITS * arena_room();
    if (power_exceeds(x.numerator, exponent, room) || power_exceeds(denominator(x), exponent, room))
        return CALC_TOO_LARGE;
    natural numerator = natural_pow(x.numerator, exponent);
    natural den = rational_is_integer(x) ? (natural){0, 0} : natural_pow(x.denominator, exponent);
    if (y.negative)
        *result = place(rational_is_integer(x) ? (natural){(limb_t*)&kOne, 1} : den, numerator, negative, destination);
    else
        *result = place(numerator, den, negative, destination);
    return CALC_OK;
}

rational rational_from_decimal(natural digits, int fraction_digits, limb_t* destination) {
    if (fraction_digits == 0) return place(digits, (natural){0, 0}, 0, destination);
    natural den = {arena_allocate(fraction_digits / LIMB_DIGITS + 1), fraction_digits / LIMB_DIGITS + 1};
    limbs_zero(den.limbs, den.count);
    limb_t top = 1;
    for (int i = 0; i < fraction_digits % LIMB_DIGITS; ++i) top *= 10;
    den.limbs[den.count - 1] = top;
    return reduce(digits, den, 0, destination);
}

calc_status rational_apply(calc_operator op, rational x, rational y, limb_t* destination, rational* result) {
    switch (op) {
        case OP_SUB: y.negative = !y.negative && y.numerator.count; /* fall through */
        case OP_ADD: *result = add(x, y, destination); return CALC_OK;
        case OP_MUL: *result = multiply(x, y, destination); return CALC_OK;
        case OP_POW: return power(x, y, destination, result);
        default: break;
    }
    if (y.numerator.count == 0) return CALC_DIVISION_BY_ZERO;
    switch (op) {
        case OP_DIV: {
            rational inverse = {y.denominator, y.numerator, y.negative};
            if (rational_is_integer(y)) inverse.numerator = (natural){(limb_t*)&kOne, 1};
            /* y's numerator as a denominator: never "1 by having no limbs", so multiply handles it. */
            *result = multiply(x, inverse, destination);
            return CALC_OK;
        }
        case OP_FLOOR_DIV: *result = floor_divide(x, y, destination); return CALC_OK;
        case OP_MOD: *result = modulo(x, y, destination); return CALC_OK;
        default: return CALC_OK;
    }
}
