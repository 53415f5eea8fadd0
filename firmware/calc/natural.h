/* firmware/calc/natural.h — natural numbers of any length in the arena: the calculator's memory for
 * numbers, used as a stack (what is allocated last is released first).
 *
 * A number is a view of base-10^9 limbs, least significant first, without leading zero limbs (zero
 * has no limbs). Functions that return a number allocate it at the top of the arena; when the arena
 * is full they call arena_overflow(), which does not return.
 */
#ifndef CALC_NATURAL_H
#define CALC_NATURAL_H

#include "limbs.h"

typedef struct {
    limb_t* limbs;
    int count;
} natural;

void arena_init(limb_t* begin, limb_t* end);
limb_t* arena_top(void);
void arena_release(limb_t* top);  /* frees everything allocated at or above `top` */
int arena_room(void);             /* limbs still free */
limb_t* arena_allocate(int count);
_Noreturn void arena_overflow(void);  /* defined by the program: "result too large" */

natural natural_trim(natural x);  /* drops leading zero limbs */
natural natural_small(limb_t value);
natural natural_copy(natural x);
int natural_cmp(natural a, natural b);
int natural_is_one(natural x);
natural natural_add(natural a, natural b);
natural natural_sub(natural a, natural b);  /* a >= b */
natural natural_mul(natural a, natural b);
/* a * b written at `destination`, over a and b, when both lie in the arena at or above it and the
 * unit takes them in one tile (it reads both before it writes a limb): returns 1 with the product in
 * *product and everything above it released, or 0 (nothing done) otherwise or without the unit. */
int natural_mul_over(natural a, natural b, limb_t* destination, natural* product);
natural natural_mul_limb(natural a, limb_t m);
/* a = q * b + r, 0 <= r < b, b > 0: q then r, allocated in that order (either pointer may be 0 when
 * that result is not wanted; it is still allocated). */
void natural_divmod(natural a, natural b, natural* q, natural* r);
natural natural_gcd(natural a, natural b);
natural natural_pow(natural a, uint32_t exponent);
/* Moves x down to `destination` (at or below x.limbs) and releases everything above it. */
natural natural_move(natural x, limb_t* destination);

/* Decimal digits of x (0 for zero). */
int natural_digits(natural x);

#endif
