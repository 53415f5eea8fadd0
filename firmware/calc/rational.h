/* firmware/calc/rational.h — exact rational numbers: a sign, a numerator and a denominator, always
 * reduced (the denominator is positive and shares no factor with the numerator; zero is 0/1).
 *
 * The operations follow Python's fractions.Fraction: / is exact, // and % floor, ** takes an integer
 * exponent. Each takes its operands from the arena and leaves its result at `destination` (at or
 * below both operands), numerator then denominator, releasing everything above them.
 */
#ifndef CALC_RATIONAL_H
#define CALC_RATIONAL_H

#include "natural.h"

typedef struct {
    natural numerator;
    natural denominator; /* no limbs: the denominator is 1 */
    int negative;
} rational;

typedef enum {
    CALC_OK = 0,
    CALC_DIVISION_BY_ZERO,
    CALC_NON_INTEGER_EXPONENT,
    CALC_TOO_LARGE,
} calc_status;

typedef enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FLOOR_DIV, OP_MOD, OP_POW } calc_operator;

int rational_is_integer(rational x);
/* A number written with `fraction_digits` of its digits after the decimal point, its digits being
 * `digits`: digits / 10^fraction_digits, reduced, at `destination`. */
rational rational_from_decimal(natural digits, int fraction_digits, limb_t* destination);
calc_status rational_apply(calc_operator op, rational x, rational y, limb_t* destination, rational* result);

#endif
