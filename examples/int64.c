// int64.c — 64-bit integer arithmetic on a 32-bit machine: multiplication, division, remainders,
// shifts, comparisons, overflow wrap-around, gcd, square roots and modular exponentiation.
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

static uint64_t gcd(uint64_t a, uint64_t b) {
    while (b) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

static uint64_t isqrt(uint64_t n) {
    uint64_t root = 0;
    for (uint64_t bit = 1ULL << 62; bit; bit >>= 2) {
        if (n >= root + bit) {
            n -= root + bit;
            root = (root >> 1) + bit;
        } else {
            root >>= 1;
        }
    }
    return root;
}

// (base ^ exponent) mod modulus with a modulus below 2^32, so products fit in 64 bits.
static uint64_t power_mod(uint64_t base, uint64_t exponent, uint64_t modulus) {
    uint64_t result = 1;
    base %= modulus;
    for (; exponent; exponent >>= 1) {
        if (exponent & 1) result = result * base % modulus;
        base = base * base % modulus;
    }
    return result;
}

int main(void) {
    int64_t a = 123456789012345LL, b = -987654321LL;
    printf("a*b = %lld\n", a * b);
    printf("a/b = %lld, a%%b = %lld\n", a / b, a % b);
    printf("-a/7 = %lld, -a%%7 = %lld\n", -a / 7, -a % 7);
    uint64_t u = 0xFEDCBA9876543210ULL;
    printf("u>>4 = %016" PRIx64 ", u<<12 = %016" PRIx64 ", (int64)u>>8 = %" PRId64 "\n", u >> 4, u << 12, (int64_t)u >> 8);
    printf("u/1000003 = %" PRIu64 ", u%%1000003 = %" PRIu64 "\n", u / 1000003, u % 1000003);
    printf("INT64_MAX+1 wraps to %" PRId64 "\n", (int64_t)((uint64_t)INT64_MAX + 1));
    printf("u > a: %d, (int64)u < a: %d\n", u > (uint64_t)a, (int64_t)u < a);
    printf("gcd(2^40*3^5, 2^35*3^9*7) = %" PRIu64 "\n", gcd((1ULL << 40) * 243, (1ULL << 35) * 19683 * 7));
    printf("isqrt(10^18) = %" PRIu64 ", isqrt(2^64-1) = %" PRIu64 "\n", isqrt(1000000000000000000ULL), isqrt(UINT64_MAX));
    printf("3^1000000 mod 1000000007 = %" PRIu64 "\n", power_mod(3, 1000000, 1000000007));
    uint64_t factorial = 1;
    for (int i = 1; i <= 20; ++i) factorial *= (uint64_t)i;
    printf("20! = %" PRIu64 "\n", factorial);
    int64_t collatz = 837799, steps = 0, peak = collatz;
    while (collatz != 1) {
        collatz = collatz % 2 ? 3 * collatz + 1 : collatz / 2;
        if (collatz > peak) peak = collatz;
        ++steps;
    }
    printf("collatz(837799): %lld steps, peak %lld\n", (long long)steps, (long long)peak);
    return 0;
}
