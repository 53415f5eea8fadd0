/* firmware/calc/calc.c — the calculator: reads expressions from the console, one a line, and prints
 * each one's exact value, or a line starting "error: ", before it reads the next line
 * (docs/calculator.md gives the grammar, the output rule, the limits and the console protocol).
 *
 * The line is evaluated while it is read, by operator precedence with explicit stacks: numbers go
 * straight into the arena limb by limb, so a line's length is limited only by the arena, and
 * parentheses nest without recursion in C.
 */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>

#include "rational.h"

/* ---- console: the machine's registers, one instruction a byte (stdio where a map lacks them) ---- */

static inline int read_byte(void) {
#ifdef RVFORMER_INPUT_ADDRESS
    return (int)*(volatile int32_t*)RVFORMER_INPUT_ADDRESS; /* -1 at the end */
#else
    int c = stdin->get(stdin);
    return c < 0 ? EOF : c;
#endif
}

static inline void write_byte(uint32_t c) {
#ifdef RVFORMER_CONSOLE_ADDRESS
    /* sb stores the low byte: no zero-extension first (which a volatile uint8_t store costs). */
    __asm__ volatile("sb %0, 0(%1)" : : "r"(c), "r"(RVFORMER_CONSOLE_ADDRESS));
#else
    stdout->put((char)c, stdout);
#endif
}

static void write_text(const char* text) {
    while (*text) write_byte(*text++);
}

/* ---- memory: the arena takes the RAM between the static data and the stack ---- */

#define STACK_BYTES 4096 /* kept for the C stack below its top (the deepest call chain uses ~1 KB) */
#define MAX_VALUES 200    /* operands waiting for an operator: the nesting limit */
#define MAX_OPERATORS 400

extern limb_t __heap_start[];
extern char __stack_top[];

/* ---- printing ---- */

/* Writes the last `count` of the nine decimal digits of a limb. The limb becomes the fraction
 * y / 2^32 ~ limb / 10^9 (from above, by less than 3 / 2^32: exact enough for nine digits), and each
 * digit is the integer part of ten times the fraction: one mulhu and one mul a digit. */
#define DIGITS_RECIPROCAL 2305843010u /* ceil(2^61 / 10^9) */
/* Writes the integer part of ten times the fraction; returns the fraction part. */
static inline uint32_t write_digit(uint32_t fraction, uint32_t ten) {
    uint64_t product = (uint64_t)fraction * ten;
    write_byte('0' + (uint32_t)(product >> 32));
    return (uint32_t)product;
}

static void write_limb(limb_t limb, int count) {
    uint32_t ten = 10;
    __asm__("" : "+r"(ten)); /* keeps "times ten" a mul and a mulhu rather than shifts and adds */
    uint32_t fraction = (uint32_t)(((uint64_t)limb * DIGITS_RECIPROCAL) >> 29) + 1;
    for (int i = LIMB_DIGITS - count; i > 0; --i) fraction *= ten;
    if (count == LIMB_DIGITS) {
#pragma GCC unroll 9
        for (int i = 0; i < LIMB_DIGITS; ++i) fraction = write_digit(fraction, ten);
    } else {
        for (int i = count; i > 0; --i) fraction = write_digit(fraction, ten);
    }
}

/* Whole limbs, nine digits each, the cheap way for the trace (values below 2^11 cost one token, wider
 * ones two or three): a limb splits into three groups of three digits by two reciprocal products,
 * high = (limb · ceil(2^50 / 10^6)) >> 50 and middle = (rest · ceil(2^32 / 1000)) >> 32, exact for a
 * limb below 10^9 and a rest below 10^6; a group g < 1000 gives its first digit as (g · 41) >> 12
 * (exact below 1000) and its last two from a table of the pairs "00" to "99".
 * calc_firmware_test checks all three over their whole ranges. */
#define MILLION_RECIPROCAL 1125899907u /* ceil(2^50 / 10^6) */
#define THOUSAND_RECIPROCAL 4294968u   /* ceil(2^32 / 1000) */
static const char kDigitPairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Hides a constant from the optimiser, so that a product by it stays one mul (one cheap value)
 * instead of a chain of shifts and adds. */
static inline uint32_t opaque(uint32_t x) {
    __asm__("" : "+r"(x));
    return x;
}

static inline void write_group(uint32_t group, uint32_t c41, uint32_t c100) {
    uint32_t first = (group * c41) >> 12;
    const char* pair = kDigitPairs + 2 * (group - first * c100);
    write_byte('0' + first);
    write_byte((uint8_t)pair[0]);
    write_byte((uint8_t)pair[1]);
}

/* Writes limbs[n - 1] down to limbs[0], nine digits each. */
static void write_whole_limbs(const limb_t* limbs, int n) {
    uint32_t c41 = opaque(41), c100 = opaque(100), million = opaque(1000000), thousand = opaque(1000);
    for (const limb_t* p = limbs + n; p != limbs;) {
        limb_t limb = *--p;
        uint32_t high = (uint32_t)(((uint64_t)limb * MILLION_RECIPROCAL) >> 50);
        uint32_t rest = limb - high * million;
        uint32_t middle = (uint32_t)(((uint64_t)rest * THOUSAND_RECIPROCAL) >> 32);
        write_group(high, c41, c100);
        write_group(middle, c41, c100);
        write_group(rest - middle * thousand, c41, c100);
    }
}

/* x in decimal with a point before its last `fraction_digits` digits (none if 0). */
static void write_natural(natural x, int fraction_digits) {
    int total = natural_digits(x);
    int before_point = total - fraction_digits; /* digits before the point, if it falls among them */
    if (fraction_digits == 0 || before_point <= 0) {
        if (fraction_digits) write_text("0.");
        for (int i = total; i < fraction_digits; ++i) write_byte('0');
        if (total == 0) write_byte('0');
        before_point = -1;
    }
    for (int i = x.count - 1; i >= 0; --i) {
        int count = i == x.count - 1 ? total - LIMB_DIGITS * (x.count - 1) : LIMB_DIGITS;
        if (before_point == 0) write_byte('.');
        if (count == LIMB_DIGITS && !(before_point > 0 && before_point < LIMB_DIGITS)) {
            /* A run of whole limbs: up to the point's limb, or to the end. */
            int run = before_point > 0 ? before_point / LIMB_DIGITS : i + 1;
            if (run > i + 1) run = i + 1;
            write_whole_limbs(x.limbs + i + 1 - run, run);
            i -= run - 1;
            before_point -= LIMB_DIGITS * run;
            continue;
        }
        if (before_point > 0 && before_point < count) {
            /* The point falls inside this limb: write the limb's two parts around it. */
            limb_t power = 1;
            for (int k = before_point; k < count; ++k) power *= 10;
            limb_divisor divisor;
            limb_divisor_init(&divisor, power);
            limb_t low, high = limb_divide(&divisor, 0, x.limbs[i], &low);
            write_limb(high, before_point);
            write_byte('.');
            write_limb(low, count - before_point);
        } else {
            write_limb(x.limbs[i], count);
        }
        before_point -= count;
    }
}

/* How many times (up to nine) `prime`, 2 or 5, divides a limb, without the division instruction:
 * trailing zero bits for 2; for 5, a multiple of 5 times 5's inverse modulo 2^32 is its exact
 * quotient, at most (2^32 - 1) / 5, and any other number gives more. */
static int factor_count(limb_t low, limb_t prime) {
    if (prime == 2) return low == 0 || __builtin_ctz(low) > LIMB_DIGITS ? LIMB_DIGITS : __builtin_ctz(low);
    int k = 0;
    for (; k < LIMB_DIGITS && low * 0xCCCCCCCDu <= 0x33333333u; ++k) low *= 0xCCCCCCCDu;
    return k;
}

/* Divides x by the largest power of `prime` (2 or 5) that divides it; returns that power's exponent.
 * 10^9 is a multiple of 2^9 and 5^9, so x's lowest limb tells divisibility by up to the ninth power. */
static int remove_factor(natural* x, limb_t prime) {
    int removed = 0;
    for (int k; (k = factor_count(x->limbs[0], prime)) > 0; removed += k) {
        limb_t divisor = 1;
        for (int i = 0; i < k; ++i) divisor *= prime;
        limb_divisor d;
        limb_divisor_init(&d, divisor);
        limbs_div_1(x->limbs, x->limbs, x->count, &d);
        *x = natural_trim(*x);
    }
    return removed;
}

/* Multiplies x (the arena's last number) by prime^count. */
static natural multiply_power(natural x, limb_t prime, int count) {
    limb_t* start = x.limbs;
    int chunk = prime == 2 ? 29 : 12; /* 2^29 and 5^12 are below 10^9 */
    while (count > 0) {
        int k = count < chunk ? count : chunk;
        limb_t factor = 1;
        for (int i = 0; i < k; ++i) factor *= prime;
        x = natural_move(natural_mul_limb(x, factor), start);
        count -= k;
    }
    return x;
}

/* The output rule: an integer; else a terminating decimal when the denominator is 2^a 5^b; else p/q.
 * Whatever needs memory (the decimal's digits) is computed before the first byte is written, so
 * that running out of it (arena_overflow) leaves the line unwritten. */
static void write_rational(rational x) {
    int places = -1; /* digits after the point of the decimal, if it is one */
    natural digits = x.numerator;
    if (!rational_is_integer(x)) {
        natural rest = natural_copy(x.denominator);
        int twos = remove_factor(&rest, 2);
        int fives = remove_factor(&rest, 5);
        if (natural_is_one(rest)) {
            places = twos > fives ? twos : fives;
            digits = multiply_power(natural_copy(x.numerator), 2, places - twos);
            digits = multiply_power(digits, 5, places - fives);
        }
    }
    if (x.negative) write_byte('-');
    if (rational_is_integer(x) || places >= 0) {
        write_natural(digits, places < 0 ? 0 : places);
    } else {
        write_natural(x.numerator, 0);
        write_byte('/');
        write_natural(x.denominator, 0);
    }
}

/* ---- evaluation ---- */

enum { OPEN = 16, NEGATE, PLUS }; /* stack entries besides calc_operator's binary operators */

typedef struct {
    limb_t* start;
    uint16_t numerator_count, denominator_count;
    uint8_t negative;
} value;

/* Both stacks (and the jump buffer below) sit in the RAM after .bss, not in .bss, which start-up
 * would spend passes zeroing. */
static value* values;
static int value_count;
static uint8_t* operators;
static int operator_count;

static const char* failure;  /* the first evaluation error of the line, or 0 */
static jmp_buf* overflow_jump; /* where arena_overflow() returns to while an operator runs (after the stacks) */
static limb_t* arena_start;

_Noreturn void arena_overflow(void) { longjmp(*overflow_jump, 1); }

static rational as_rational(value v) {
    return (rational){{v.start, v.numerator_count},
                      {v.start + v.numerator_count, v.denominator_count},
                      v.negative};
}

static void push_value(rational x) {
    values[value_count++] = (value){x.numerator.limbs, (uint16_t)x.numerator.count,
                                    (uint16_t)x.denominator.count, (uint8_t)x.negative};
}

/* A value that stands in for one that could not be computed, so that parsing goes on. */
static rational placeholder(limb_t* at) {
    arena_release(at);
    return (rational){{at, 0}, {at, 0}, 0};
}

static const char* status_text(calc_status status) {
    switch (status) {
        case CALC_DIVISION_BY_ZERO: return "division by zero";
        case CALC_NON_INTEGER_EXPONENT: return "non-integer exponent";
        case CALC_TOO_LARGE: return "result too large";
        default: return 0;
    }
}

static void apply(int op) {
    if (op == NEGATE || op == PLUS) {
        value* v = &values[value_count - 1];
        if (op == NEGATE && v->numerator_count) v->negative = !v->negative;
        return;
    }
    value_count -= 2;
    rational x = as_rational(values[value_count]), y = as_rational(values[value_count + 1]);
    limb_t* destination = x.numerator.limbs;
    rational result;
    if (failure) {
        result = placeholder(destination);
    } else if (setjmp(*overflow_jump)) {
        failure = status_text(CALC_TOO_LARGE);
        result = placeholder(destination);
    } else {
        calc_status status = rational_apply((calc_operator)op, x, y, destination, &result);
        if (status != CALC_OK) {
            failure = status_text(status);
            result = placeholder(destination);
        }
    }
    push_value(result);
}

static int precedence(int op) {
    switch (op) {
        case OP_ADD: case OP_SUB: return 1;
        case OP_MUL: case OP_DIV: case OP_FLOOR_DIV: case OP_MOD: return 2;
        case NEGATE: case PLUS: return 3;
        case OP_POW: return 4;
        default: return 0;
    }
}

/* ---- parsing ---- */

typedef struct {
    int c;            /* the current byte (EOF at the end of input) */
    int column;       /* its column, from 1 */
    int error_column; /* the first syntax error's column, or 0 */
    int too_deep;
    int seen_eof;
} reader;

static void advance(reader* in) {
    in->c = read_byte();
    ++in->column;
    if (in->c == EOF) in->seen_eof = 1;
}

static int at_line_end(const reader* in) { return in->c == '\n' || in->c == EOF; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }

/* The limbs of the number being read, most significant first, nine digits each. */
typedef struct {
    limb_t* start;
    int limbs;
    limb_t pending;     /* the digits after the last full limb */
    int pending_digits;
    int stored;         /* 0 once the number no longer fits (or the line already failed) */
    int room;           /* how many limbs fit, keeping one for store_number's top limb */
} digit_reader;

/* Appends a complete limb (nine digits) to the number, above the arena's top: read_number allocates
 * them when the number ends (nothing else allocates while it is read). */
static inline void push_limb(digit_reader* r, limb_t limb) {
    if (r->limbs < r->room) {
        r->start[r->limbs] = limb;
    } else if (r->stored) {
        r->stored = 0;
        failure = status_text(CALC_TOO_LARGE);
    }
    ++r->limbs;
}

/* Up to three digits from *byte on, made digit by digit (values below 1000, cheap in the trace):
 * returns how many, their value in *value, and leaves the byte after them in *byte. */
static inline int read_group(int* byte, unsigned* value) {
    unsigned first = (unsigned)(*byte - '0');
    if (first > 9) return 0;
    *byte = read_byte();
    unsigned second = (unsigned)(*byte - '0');
    if (second > 9) {
        *value = first;
        return 1;
    }
    *byte = read_byte();
    unsigned third = (unsigned)(*byte - '0');
    if (third > 9) {
        *value = first * 10 + second;
        return 2;
    }
    *value = (first * 10 + second) * 10 + third;
    *byte = read_byte();
    return 3;
}

/* Reads a run of digits from c on; returns how many, leaving the byte after them in *c. A limb
 * begun before (after a decimal point) is finished digit by digit; then whole limbs are read as
 * three groups of three digits, joined in two products, g1 · 10^6 + g2 · 1000 + g3, and a short
 * run at the end stays pending. */
static int read_digits(digit_reader* r, int* c) {
    int before = LIMB_DIGITS * r->limbs + r->pending_digits;
    limb_t pending = r->pending;
    int pending_digits = r->pending_digits, byte = *c;
    unsigned digit;
    while (pending_digits != 0 && (digit = (unsigned)(byte - '0')) <= 9) {
        pending = pending * 10 + digit;
        if (++pending_digits == LIMB_DIGITS) {
            push_limb(r, pending);
            pending = 0;
            pending_digits = 0;
        }
        byte = read_byte();
    }
    if (pending_digits == 0) {
        uint32_t thousand = opaque(1000), million = opaque(1000000);
        for (;;) {
            unsigned g1, g2, g3, scale;
            int n = read_group(&byte, &g1);
            if (n < 3) {
                pending = n ? g1 : 0;
                pending_digits = n;
                break;
            }
            n = read_group(&byte, &g2);
            if (n < 3) {
                scale = n == 0 ? 1 : n == 1 ? 10 : 100;
                pending = g1 * scale + (n ? g2 : 0);
                pending_digits = 3 + n;
                break;
            }
            n = read_group(&byte, &g3);
            if (n < 3) {
                scale = n == 0 ? 1 : n == 1 ? 10 : 100;
                pending = (g1 * thousand + g2) * scale + (n ? g3 : 0);
                pending_digits = 6 + n;
                break;
            }
            push_limb(r, g1 * million + opaque(g2 * thousand) + g3);
        }
    }
    *c = byte;
    r->pending = pending;
    r->pending_digits = pending_digits;
    return LIMB_DIGITS * r->limbs + pending_digits - before;
}

static void store_number(digit_reader r, int fraction_digits);

/* Reads a number: digits with at most one decimal point, into the arena as it comes (leading zeros
 * only counted). The limbs arrive most significant first and the last one short: place_limbs puts
 * them in place at the end. */
static void read_number(reader* in) {
    int c = in->c, digits = 0, fraction_digits = 0, point = 0;
    for (;; c = read_byte()) {
        if (c == '0') {
            ++digits;
            fraction_digits += point;
        } else if (c == '.' && !point) {
            point = 1;
        } else {
            break;
        }
    }
    digit_reader r = {arena_top(), 0, 0, 0, !failure, failure ? 0 : arena_room() - 1};
    for (;;) {
        int run = read_digits(&r, &c);
        digits += run;
        if (point) fraction_digits += run;
        if (c != '.' || point) break;
        point = 1;
        c = read_byte();
    }
    if (r.stored) arena_allocate(r.limbs);
    int start_column = in->column;
    in->c = c;
    in->column += digits + point;
    if (c == EOF) in->seen_eof = 1;
    if (digits == 0) {
        if (!in->error_column) in->error_column = start_column;
        push_value(placeholder(r.start));
        return;
    }
    if (!r.stored) {
        push_value(placeholder(r.start));
        return;
    }
    store_number(r, fraction_digits);
}

/* s[0 .. m) holds whole limbs, most significant first, and pending the d digits read after them;
 * makes s[0 .. m] the number they write, least significant limb first, in one pass from both ends.
 * Output limb j is (s[m - 1 - j] mod 10^(9 - d)) · 10^d + floor(s[m - j] / 10^(9 - d)), with pending
 * for the quotient below the lowest limb and 0 above the top one; each limb read is split once, and
 * the parts that go to the next step's limbs wait in registers. */
static void place_limbs(limb_t* s, int m, int d, limb_t pending) {
    uint32_t inverse = LIMB_SPLIT_INVERSE[d], shift = LIMB_SPLIT_SHIFT[d];
    limb_t divisor = POWERS_OF_TEN[LIMB_DIGITS - d], scale = POWERS_OF_TEN[d];
    limb_t up = pending; /* the quotient of the limb read last from the top end */
    limb_t down = 0;     /* the remainder · 10^d of the limb read last from the bottom end */
    int t = 0, u = m - 1;
    for (; t <= u; ++t, --u) {
        limb_t a = s[t], b = s[u];
        limb_t a_top = (limb_t)(((uint64_t)a * inverse) >> 32) >> shift;
        limb_t b_top = (limb_t)(((uint64_t)b * inverse) >> 32) >> shift;
        limb_t a_low = (a - a_top * divisor) * scale, b_low = (b - b_top * divisor) * scale;
        s[t] = b_low + up;
        s[u + 1] = down + a_top;
        up = b_top;
        down = a_low;
    }
    if (t == u + 1) s[t] = down + up; /* m even: the middle limb */
}

/* Turns the limbs read into the number's value on the value stack. */
static void store_number(digit_reader r, int fraction_digits) {
    if (setjmp(*overflow_jump)) {
        failure = status_text(CALC_TOO_LARGE);
        push_value(placeholder(r.start));
        return;
    }
    arena_allocate(1); /* r.start[r.limbs], the top limb */
    place_limbs(r.start, r.limbs, r.pending_digits, r.pending);
    natural x = natural_trim((natural){r.start, r.limbs + 1});
    push_value(rational_from_decimal(x, fraction_digits, r.start));
}

static int push_operator(reader* in, int op) {
    if (operator_count == MAX_OPERATORS) {
        in->too_deep = 1;
        return 0;
    }
    operators[operator_count++] = (uint8_t)op;
    return 1;
}

/* A binary operator: first applies the waiting ones that bind at least as tightly (** is
 * right-associative, so an earlier ** waits for a later one). */
static int binary(reader* in, int op) {
    while (operator_count && operators[operator_count - 1] != OPEN) {
        int waiting = precedence(operators[operator_count - 1]);
        if (waiting < precedence(op) || (waiting == precedence(op) && op == OP_POW)) break;
        apply(operators[--operator_count]);
    }
    return push_operator(in, op);
}

/* What a step leaves the parser expecting next. */
enum { SYNTAX_ERROR, EXPECT_OPERAND, EXPECT_OPERATOR };

static int operand_step(reader* in) {
    if (is_digit(in->c) || in->c == '.') {
        if (value_count == MAX_VALUES) {
            in->too_deep = 1;
            return SYNTAX_ERROR;
        }
        read_number(in);
        return in->error_column ? SYNTAX_ERROR : EXPECT_OPERATOR;
    }
    int op = in->c == '(' ? OPEN : in->c == '-' ? NEGATE : in->c == '+' ? PLUS : -1;
    if (op < 0) return SYNTAX_ERROR;
    advance(in);
    return push_operator(in, op) ? EXPECT_OPERAND : SYNTAX_ERROR;
}

static int operator_step(reader* in) {
    int op;
    switch (in->c) {
        case '+': op = OP_ADD; advance(in); break;
        case '-': op = OP_SUB; advance(in); break;
        case '%': op = OP_MOD; advance(in); break;
        case '*':
        case '/': {
            int first = in->c;
            advance(in);
            int twice = in->c == first;
            if (twice) advance(in);
            op = first == '*' ? (twice ? OP_POW : OP_MUL) : (twice ? OP_FLOOR_DIV : OP_DIV);
            break;
        }
        case ')':
            while (operator_count && operators[operator_count - 1] != OPEN) apply(operators[--operator_count]);
            if (!operator_count) return SYNTAX_ERROR;
            --operator_count;
            advance(in);
            return EXPECT_OPERATOR;
        default: return SYNTAX_ERROR;
    }
    return binary(in, op) ? EXPECT_OPERAND : SYNTAX_ERROR;
}

/* Parses and evaluates the line whose first byte is in->c, up to its '\n' (or the end of input);
 * returns the error message, or 0 with the value on the value stack. */
static const char* evaluate_line(reader* in) {
    arena_release(arena_start);
    value_count = 0;
    operator_count = 0;
    failure = 0;
    in->column = 1;
    in->error_column = 0;
    in->too_deep = 0;
    int expecting = EXPECT_OPERAND, empty = 1;
    while (!at_line_end(in)) {
        if (in->c == ' ' || in->c == '\t' || in->c == '\r') {
            advance(in);
            continue;
        }
        empty = 0;
        int column = in->column;
        expecting = expecting == EXPECT_OPERAND ? operand_step(in) : operator_step(in);
        if (expecting == SYNTAX_ERROR) {
            if (!in->error_column && !in->too_deep) in->error_column = column;
            break;
        }
    }
    while (!at_line_end(in)) advance(in); /* the rest of a line with a syntax error */
    if (empty) return "empty expression";
    if (in->too_deep) return "expression nested too deeply";
    if (!in->error_column && expecting == EXPECT_OPERAND) in->error_column = in->column;
    while (!in->error_column && operator_count) {
        int op = operators[--operator_count];
        if (op == OPEN)
            in->error_column = in->column;
        else
            apply(op);
    }
    if (in->error_column) return "syntax error at column "; /* the column follows */
    return failure;
}

int main(void) {
    values = (value*)__heap_start;
    operators = (uint8_t*)(values + MAX_VALUES);
    overflow_jump = (jmp_buf*)(operators + MAX_OPERATORS);
    arena_start = (limb_t*)(overflow_jump + 1);
    arena_init(arena_start, (limb_t*)((uintptr_t)__stack_top - STACK_BYTES));
    reader in = {0};
    for (;;) {
        advance(&in);
        if (in.c == EOF) return 0;
        const char* volatile error = evaluate_line(&in); /* volatile: set again after a longjmp */
        if (!error && setjmp(*overflow_jump)) error = status_text(CALC_TOO_LARGE);
        if (error) {
            write_text("error: ");
            write_text(error);
            limb_t column = (limb_t)in.error_column;
            if (column) write_natural((natural){&column, 1}, 0);
        } else {
            write_rational(as_rational(values[0]));
        }
        write_byte('\n');
        if (in.seen_eof) return 0;
    }
}
