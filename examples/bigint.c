// bigint.c — arbitrary-precision decimal arithmetic in base 10^9 limbs: 100!, 2^1000 and the
// 1000th Fibonacci number, each hundreds of digits long.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define LIMB_BASE 1000000000u
#define MAX_LIMBS 40

typedef struct {
    uint32_t limbs[MAX_LIMBS];  // least significant first
    int count;
} BigNumber;

static void set_small(BigNumber* number, uint32_t value) {
    memset(number, 0, sizeof *number);
    number->limbs[0] = value;
    number->count = 1;
}

static void multiply_small(BigNumber* number, uint32_t factor) {
    uint64_t carry = 0;
    for (int i = 0; i < number->count; ++i) {
        uint64_t product = (uint64_t)number->limbs[i] * factor + carry;
        number->limbs[i] = (uint32_t)(product % LIMB_BASE);
        carry = product / LIMB_BASE;
    }
    while (carry) {
        number->limbs[number->count++] = (uint32_t)(carry % LIMB_BASE);
        carry /= LIMB_BASE;
    }
}

static void add(BigNumber* sum, const BigNumber* a, const BigNumber* b) {
    int count = a->count > b->count ? a->count : b->count;
    uint32_t carry = 0;
    for (int i = 0; i < count; ++i) {
        uint32_t limb = (i < a->count ? a->limbs[i] : 0) + (i < b->count ? b->limbs[i] : 0) + carry;
        carry = limb >= LIMB_BASE;
        sum->limbs[i] = carry ? limb - LIMB_BASE : limb;
    }
    sum->count = count;
    if (carry) sum->limbs[sum->count++] = carry;
}

static int digit_count(const BigNumber* number) {
    int digits = 9 * (number->count - 1);
    for (uint32_t top = number->limbs[number->count - 1]; top; top /= 10) ++digits;
    return digits;
}

static void print(const char* name, const BigNumber* number) {
    printf("%s (%d digits) = %u", name, digit_count(number), (unsigned)number->limbs[number->count - 1]);
    for (int i = number->count - 2; i >= 0; --i) printf("%09u", (unsigned)number->limbs[i]);
    printf("\n");
}

int main(void) {
    BigNumber number;
    set_small(&number, 1);
    for (uint32_t i = 2; i <= 100; ++i) multiply_small(&number, i);
    print("100!", &number);

    set_small(&number, 1);
    for (int i = 0; i < 1000; i += 10) multiply_small(&number, 1024);
    print("2^1000", &number);

    static BigNumber fibonacci[3];
    set_small(&fibonacci[0], 0);
    set_small(&fibonacci[1], 1);
    for (int i = 2; i <= 1000; ++i) add(&fibonacci[i % 3], &fibonacci[(i - 1) % 3], &fibonacci[(i - 2) % 3]);
    print("fibonacci(1000)", &fibonacci[1000 % 3]);
    return 0;
}
