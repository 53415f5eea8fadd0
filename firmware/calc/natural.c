/* firmware/calc/natural.c — see natural.h. Multiplication is schoolbook (with the big-integer unit:
 * the unit's column sums) below KARATSUBA_THRESHOLD limbs and Karatsuba above; division is Knuth's
 * algorithm D; the greatest common divisor is Euclid's algorithm on those divisions. */
#include "natural.h"


/* Operands shorter than this many limbs multiply by schoolbook rows (docs/calculator.md measures
 * where Karatsuba starts to pay on this machine). With the big-integer unit they multiply with the
 * unit instead, which takes operands of up to LIMBS_UNIT_MAX limbs (longer ones in tiles), and
 * Karatsuba starts just above that: its halves, and its middle product of half the length plus one,
 * then fit the unit for up to twice that length. Measured (instructions of a whole call, n x n
 * digits 500 / 1000 / 2000 / 3000 / 5000): threshold 64: 35,475 / 87,167 / 226,295 / 434,853 /
 * 972,070; 96: 35,475 / 87,167 / 226,295 / 371,143 / 803,441; 122: 35,475 / 79,057 / 201,316 /
 * 371,143 / 803,441; 200: 35,475 / 79,057 / 201,316 / 403,475 / 868,499. */
#ifndef KARATSUBA_THRESHOLD
#ifdef RVFORMER_BIGINT_UNIT
#define KARATSUBA_THRESHOLD (LIMBS_UNIT_MAX + 1)
#else
#define KARATSUBA_THRESHOLD 24
#endif
#endif

static limb_t* arena_begin;
static limb_t* arena_next;
static limb_t* arena_end;

void arena_init(limb_t* begin, limb_t* end) {
    arena_begin = begin;
    arena_next = begin;
    arena_end = end;
}

limb_t* arena_top(void) { return arena_next; }
void arena_release(limb_t* top) { arena_next = top; }
int arena_room(void) { return (int)(arena_end - arena_next); }

limb_t* arena_allocate(int count) {
    if (count > arena_end - arena_next) arena_overflow();
    limb_t* limbs = arena_next;
    arena_next += count;
    return limbs;
}

natural natural_trim(natural x) {
    while (x.count > 0 && x.limbs[x.count - 1] == 0) --x.count;
    return x;
}

/* Trims x, the last allocation, and gives back the limbs it no longer needs. */
static natural finish(natural x) {
    x = natural_trim(x);
    arena_next = x.limbs + x.count;
    return x;
}

natural natural_small(limb_t value) {
    natural x = {arena_allocate(1), 1};
    x.limbs[0] = value;
    return finish(x);
}

natural natural_copy(natural x) {
    natural copy = {arena_allocate(x.count), x.count};
    limbs_copy(copy.limbs, x.limbs, x.count);
    return copy;
}

natural natural_move(natural x, limb_t* destination) {
    if (x.limbs != destination) limbs_copy(destination, x.limbs, x.count); /* a number read is in place */
    x.limbs = destination;
    arena_next = destination + x.count;
    return x;
}

int natural_cmp(natural a, natural b) {
    if (a.count != b.count) return a.count < b.count ? -1 : 1;
    return limbs_cmp(a.limbs, b.limbs, a.count);
}

int natural_is_one(natural x) { return x.count == 1 && x.limbs[0] == 1; }

natural natural_add(natural a, natural b) {
    if (a.count < b.count) {
        natural t = a;
        a = b;
        b = t;
    }
    natural sum = {arena_allocate(a.count + 1), a.count + 1};
    limb_t carry = limbs_add(sum.limbs, a.limbs, b.limbs, b.count);
    sum.limbs[a.count] = limbs_add_1(sum.limbs + b.count, a.limbs + b.count, a.count - b.count, carry);
    return finish(sum);
}

natural natural_sub(natural a, natural b) {
    natural difference = {arena_allocate(a.count), a.count};
    limb_t borrow = limbs_sub(difference.limbs, a.limbs, b.limbs, b.count);
    limbs_sub_1(difference.limbs + b.count, a.limbs + b.count, a.count - b.count, borrow);
    return finish(difference);
}

/* r = a * b by rows, r has n_a + n_b limbs. */
static void schoolbook(limb_t* r, const limb_t* a, int n_a, const limb_t* b, int n_b) {
    limbs_zero(r, n_a + n_b);
    for (int j = 0; j < n_b; ++j) r[j + n_a] = limbs_addmul_1(r + j, a, n_a, b[j]);
}

/* r[offset ..] += piece[0 .. n), the carry run up to r[n_r - 1]: a partial product added in. */
static void add_at(limb_t* r, int n_r, int offset, const limb_t* piece, int n) {
    limb_t carry = limbs_add(r + offset, r + offset, piece, n);
    limbs_add_1(r + offset + n, r + offset + n, n_r - offset - n, carry);
}

#ifdef RVFORMER_BIGINT_UNIT
/* The unit costs about 40 instructions a column (loading, splitting the column sum) and 10 a window
 * of eight limb products, rows about 20 a limb product: rows stay cheaper for small products (up to
 * 4 x 4 limbs, and n x 2 for any n). */
static int unit_pays(int n_a, int n_b) { return 5 * n_a * n_b > 12 * (n_a + n_b); }

/* r = a * b with the unit, r has n_a + n_b limbs: tiles of up to LIMBS_UNIT_MAX limbs of each, each
 * product made apart and added in (schoolbook rows when the arena has no room for one). */
static void unit_multiply(limb_t* r, const limb_t* a, int n_a, const limb_t* b, int n_b) {
    if (n_a <= LIMBS_UNIT_MAX && n_b <= LIMBS_UNIT_MAX) {
        limbs_mul_unit(r, a, n_a, b, n_b); /* one tile */
        return;
    }
    if (arena_room() < 2 * LIMBS_UNIT_MAX) {
        schoolbook(r, a, n_a, b, n_b);
        return;
    }
    limb_t* mark = arena_next;
    limb_t* tile_product = arena_allocate(2 * LIMBS_UNIT_MAX);
    limbs_zero(r, n_a + n_b);
    for (int j = 0; j < n_b; j += LIMBS_UNIT_MAX) {
        int length_b = n_b - j < LIMBS_UNIT_MAX ? n_b - j : LIMBS_UNIT_MAX;
        for (int i = 0; i < n_a; i += LIMBS_UNIT_MAX) {
            int length_a = n_a - i < LIMBS_UNIT_MAX ? n_a - i : LIMBS_UNIT_MAX;
            limbs_mul_unit(tile_product, a + i, length_a, b + j, length_b);
            add_at(r, n_a + n_b, i + j, tile_product, length_a + length_b);
        }
    }
    arena_next = mark;
}
#endif

/* r = a * b without Karatsuba, r has n_a + n_b limbs: the unit's columns, or schoolbook rows. */
static void base_multiply(limb_t* r, const limb_t* a, int n_a, const limb_t* b, int n_b) {
#ifdef RVFORMER_BIGINT_UNIT
    if (unit_pays(n_a, n_b)) {
        unit_multiply(r, a, n_a, b, n_b);
        return;
    }
#endif
    schoolbook(r, a, n_a, b, n_b);
}

static void multiply(limb_t* r, const limb_t* a, int n_a, const limb_t* b, int n_b);

/* r = a * b, both n limbs, r 2n limbs: three half-size products, a0 b0, a1 b1 and (a0 + a1)(b0 + b1). */
static void karatsuba(limb_t* r, const limb_t* a, const limb_t* b, int n) {
    /* Below the threshold, or without room for this level's sums and middle product (then the
     * numbers are huge, and slow schoolbook rows still fit where Karatsuba cannot). */
    if (n < KARATSUBA_THRESHOLD || arena_room() < 4 * ((n + 1) / 2 + 1)) {
        base_multiply(r, a, n, b, n);
        return;
    }
    int low = (n + 1) / 2;
    int high = n - low;
    karatsuba(r, a, b, low);
    karatsuba(r + 2 * low, a + low, b + low, high);

    limb_t* mark = arena_next;
    limb_t* sum_a = arena_allocate(2 * (low + 1));
    limb_t* sum_b = sum_a + low + 1;
    limb_t carry = limbs_add(sum_a, a, a + low, high);
    sum_a[low] = limbs_add_1(sum_a + high, a + high, low - high, carry);
    carry = limbs_add(sum_b, b, b + low, high);
    sum_b[low] = limbs_add_1(sum_b + high, b + high, low - high, carry);

    int middle_count = 2 * (low + 1);
    limb_t* middle = arena_allocate(middle_count);
    karatsuba(middle, sum_a, sum_b, low + 1);
    limb_t borrow = limbs_sub(middle, middle, r, 2 * low);
    limbs_sub_1(middle + 2 * low, middle + 2 * low, middle_count - 2 * low, borrow);
    borrow = limbs_sub(middle, middle, r + 2 * low, 2 * high);
    limbs_sub_1(middle + 2 * high, middle + 2 * high, middle_count - 2 * high, borrow);

    /* a0 b1 + a1 b0 < 2 B^(low + high): its limbs above r's end are zero. */
    int room = 2 * n - low;
    int count = middle_count < room ? middle_count : room;
    carry = limbs_add(r + low, r + low, middle, count);
    limbs_add_1(r + low + count, r + low + count, room - count, carry);
    arena_next = mark;
}

/* r = a * b, n_a >= n_b >= 1, r n_a + n_b limbs; a long a is cut into pieces of b's length. */
static void multiply(limb_t* r, const limb_t* a, int n_a, const limb_t* b, int n_b) {
    if (n_b < KARATSUBA_THRESHOLD || arena_room() < 2 * n_b) {
        base_multiply(r, a, n_a, b, n_b);
        return;
    }
    if (n_a == n_b) {
        karatsuba(r, a, b, n_a);
        return;
    }
    limb_t* mark = arena_next;
    limb_t* piece = arena_allocate(2 * n_b);
    limbs_zero(r, n_a + n_b);
    for (int offset = 0; offset < n_a; offset += n_b) {
        int length = n_a - offset < n_b ? n_a - offset : n_b;
        if (length == n_b)
            karatsuba(piece, a + offset, b, n_b);
        else
            multiply(piece, b, n_b, a + offset, length);
        add_at(r, n_a + n_b, offset, piece, length + n_b);
    }
    arena_next = mark;
}

natural natural_mul(natural a, natural b) {
    if (a.count == 0 || b.count == 0) return (natural){arena_next, 0};
    if (a.count < b.count) {
        natural t = a;
        a = b;
        b = t;
    }
    natural product = {arena_allocate(a.count + b.count), a.count + b.count};
    multiply(product.limbs, a.limbs, a.count, b.limbs, b.count);
    return finish(product);
}

int natural_mul_over(natural a, natural b, limb_t* destination, natural* product) {
#ifdef RVFORMER_BIGINT_UNIT
    int count = a.count + b.count;
    if (a.count == 0 || b.count == 0 || a.count > LIMBS_UNIT_MAX || b.count > LIMBS_UNIT_MAX ||
        !unit_pays(a.count, b.count))
        return 0;
    if (a.limbs < destination || a.limbs + a.count > arena_next || b.limbs < destination ||
        b.limbs + b.count > arena_next || count > arena_end - destination)
        return 0;
    limbs_mul_unit(destination, a.limbs, a.count, b.limbs, b.count);
    *product = finish((natural){destination, count});
    return 1;
#else
    (void)a, (void)b, (void)destination, (void)product;
    return 0;
#endif
}

natural natural_mul_limb(natural a, limb_t m) {
    natural product = {arena_allocate(a.count + 1), a.count + 1};
    product.limbs[a.count] = limbs_mul_1(product.limbs, a.limbs, a.count, m);
    return finish(product);
}

/* Knuth's algorithm D (TAOCP vol. 2, 4.3.1): b has at least two limbs and a at least as many. */
static void long_division(natural a, natural b, natural* q_out, natural* r_out) {
    int n = b.count;
    int m = a.count - n;
    natural q = {arena_allocate(m + 1), m + 1};
    natural r = {arena_allocate(n), n};
    limb_t* mark = arena_next;
    limb_t* u = arena_allocate(a.count + 1);
    limb_t* v = arena_allocate(n);
    /* Scale both so that v's top limb is at least LIMB_BASE / 2: each quotient digit's estimate
     * from the top limbs is then at most two too large. */
    limb_t factor = LIMB_BASE / (b.limbs[n - 1] + 1);
    u[a.count] = limbs_mul_1(u, a.limbs, a.count, factor);
    limbs_mul_1(v, b.limbs, n, factor);
    limb_t top = v[n - 1];
    limb_t second = v[n - 2];
    limb_divisor divisor;
    limb_divisor_init(&divisor, top);
    for (int j = m; j >= 0; --j) {
        limb_t u2 = u[j + n], u1 = u[j + n - 1], u0 = u[j + n - 2];
        limb_t estimate;
        uint64_t remainder;
        if (u2 >= top) {
            estimate = LIMB_BASE - 1;
            remainder = (uint64_t)u1 + top;
        } else {
            limb_t rest;
            estimate = limb_divide(&divisor, u2, u1, &rest);
            remainder = rest;
        }
        while (remainder < LIMB_BASE && (uint64_t)estimate * second > remainder * LIMB_BASE + u0) {
            --estimate;
            remainder += top;
        }
        limb_t borrow = limbs_submul_1(u + j, v, n, estimate);
        if (u[j + n] < borrow) {
            --estimate;
            limb_t carry = limbs_add(u + j, u + j, v, n);
            u[j + n] = u[j + n] + carry - borrow;
        } else {
            u[j + n] -= borrow;
        }
        q.limbs[j] = estimate;
    }
    limb_divisor scale;
    limb_divisor_init(&scale, factor);
    limbs_div_1(r.limbs, u, n, &scale);
    arena_next = mark;
    if (q_out) *q_out = natural_trim(q);
    if (r_out) *r_out = natural_trim(r);
}

void natural_divmod(natural a, natural b, natural* q_out, natural* r_out) {
    natural q, r;
    if (natural_cmp(a, b) < 0) {
        q = (natural){arena_next, 0};
        r = natural_copy(a);
    } else if (b.count == 1) {
        limb_divisor divisor;
        limb_divisor_init(&divisor, b.limbs[0]);
        q = (natural){arena_allocate(a.count), a.count};
        limb_t rest = limbs_div_1(q.limbs, a.limbs, a.count, &divisor);
        q = natural_trim(q);
        r = (natural){arena_allocate(1), 1};
        r.limbs[0] = rest;
        r = finish(r);
    } else {
        long_division(a, b, &q, &r);
    }
    if (q_out) *q_out = q;
    if (r_out) *r_out = r;
}

static limb_t gcd_limb(limb_t a, limb_t b) {
    while (b) {
        limb_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* r[0..n) -= borrow, a whole limb; the result is known not to go below zero. */
static void subtract_limb(limb_t* r, int n, limb_t borrow) {
    if (borrow == 0 || n == 0) return;
    if (r[0] >= borrow) {
        r[0] -= borrow;
        return;
    }
    r[0] += LIMB_BASE - borrow;
    limbs_sub_1(r + 1, r + 1, n - 1, 1);
}

/* a·p - b·q for a, b < LIMB_BASE, known to be >= 0. */
static natural combine(natural p, limb_t a, natural q, limb_t b) {
    int count = p.count + 1 > q.count ? p.count + 1 : q.count;
    natural r = {arena_allocate(count), count};
    limbs_zero(r.limbs, count);
    r.limbs[p.count] = limbs_mul_1(r.limbs, p.limbs, p.count, a);
    subtract_limb(r.limbs + q.count, count - q.count, limbs_submul_1(r.limbs, q.limbs, q.count, b));
    return finish(r);
}

/* The limbs n - 1 and n - 2 of x as one number (limbs beyond x's length are zero). */
static uint64_t leading(natural x, int n) {
    limb_t high = n - 1 < x.count ? x.limbs[n - 1] : 0;
    limb_t low = n - 2 < x.count ? x.limbs[n - 2] : 0;
    return (uint64_t)high * LIMB_BASE + low;
}

/* n / d for d > 0, by subtraction when the quotient is small (it mostly is in Euclid's algorithm),
 * else by a 64-bit division. */
static uint64_t quotient(uint64_t n, uint64_t d) {
    for (uint64_t q = 0; q < 4; ++q) {
        if (n < d) return q;
        n -= d;
    }
    return 4 + n / d;
}

/* Lehmer's step (Knuth, TAOCP vol. 2, 4.5.2, algorithm L): runs Euclid's algorithm on the leading
 * 18 digits of x and y for as long as the quotients are surely those of x and y themselves, so that
 * one pass over the limbs does all those steps: (x, y) <- (A x + B y, C x + D y). The cofactors'
 * signs alternate with the number of steps: after an even number A, D >= 0 >= B, C, after an odd
 * one the other way round; `cofactors` gets their magnitudes |A|, |B|, |C|, |D|, all below
 * LIMB_BASE. Returns the number of steps (0: not even one was sure). */
static int lehmer_cofactors(natural x, natural y, limb_t cofactors[4]) {
    uint64_t xh = leading(x, x.count), yh = leading(y, x.count);
    uint64_t a = 1, b = 0, c = 0, d = 1;
    int steps = 0;
    for (;; ++steps) {
        /* Knuth's test: (x^ + A) / (y^ + C) and (x^ + B) / (y^ + D) give the same quotient. */
        int even = steps % 2 == 0;
        if (even ? yh <= c || xh < b : yh <= d || xh < a) break;
        uint64_t q = even ? quotient(xh + a, yh - c) : quotient(xh - a, yh + c);
        if (q >= LIMB_BASE || q != (even ? quotient(xh - b, yh + d) : quotient(xh + b, yh - d))) break;
        uint64_t next_c = a + q * c, next_d = b + q * d;
        if (next_c >= LIMB_BASE || next_d >= LIMB_BASE) break;
        a = c;
        b = d;
        c = next_c;
        d = next_d;
        uint64_t next_y = xh - q * yh;
        xh = yh;
        yh = next_y;
    }
    cofactors[0] = (limb_t)a;
    cofactors[1] = (limb_t)b;
    cofactors[2] = (limb_t)c;
    cofactors[3] = (limb_t)d;
    return steps;
}

natural natural_gcd(natural a, natural b) {
    limb_t* mark = arena_next;
    if (natural_cmp(a, b) < 0) {
        natural t = a;
        a = b;
        b = t;
    }
    natural x = natural_copy(a);
    natural y = natural_copy(b);
    while (y.count > 1 && x.count > 2) {
        limb_t f[4]; /* |A|, |B|, |C|, |D| */
        int steps = x.count - y.count < 2 && x.count > 2 ? lehmer_cofactors(x, y, f) : 0;
        natural next_x, next_y;
        if (steps == 0) {
            natural_divmod(x, y, 0, &next_y); /* one step of Euclid's algorithm */
            next_x = y;
        } else if (steps % 2 == 0) {
            next_x = combine(x, f[0], y, f[1]); /* |A| x - |B| y */
            next_y = combine(y, f[3], x, f[2]); /* |D| y - |C| x */
        } else {
            next_x = combine(y, f[1], x, f[0]); /* |B| y - |A| x */
            next_y = combine(x, f[2], y, f[3]); /* |C| x - |D| y */
        }
        x = natural_move(next_x, x.limbs);
        y = natural_move(next_y, x.limbs + x.count);
    }
    if (x.count <= 2 && y.count > 0) {
        /* Both below 10^18: the rest of Euclid's algorithm in 64-bit words. */
        uint64_t u = leading(x, 2), v = leading(y, 2);
        while (v) {
            uint64_t rest = u - quotient(u, v) * v;
            u = v;
            v = rest;
        }
        x.limbs[0] = (limb_t)(u % LIMB_BASE);
        x.limbs[1] = (limb_t)(u / LIMB_BASE);
        x = natural_trim((natural){x.limbs, 2});
    } else if (y.count == 1) {
        limb_divisor divisor;
        limb_divisor_init(&divisor, y.limbs[0]);
        limb_t rest = limbs_div_1(x.limbs, x.limbs, x.count, &divisor);
        x.limbs[0] = gcd_limb(y.limbs[0], rest);
        x.count = 1;
    }
    return natural_move(x, mark);
}

natural natural_pow(natural a, uint32_t exponent) {
    limb_t* mark = arena_next;
    natural power = natural_small(1);
    for (int bit = 31; bit >= 0; --bit) {
        if (!natural_is_one(power)) power = natural_move(natural_mul(power, power), mark);
        if ((exponent >> bit) & 1) power = natural_move(natural_mul(power, a), mark);
    }
    return power;
}

int natural_digits(natural x) {
    if (x.count == 0) return 0;
    int digits = LIMB_DIGITS * (x.count - 1) + 1;
    limb_t top = x.limbs[x.count - 1];
    for (limb_t power = 10; power <= top; power *= 10) ++digits;
    return digits;
}
