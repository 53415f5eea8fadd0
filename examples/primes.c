// primes.c — a bit-packed sieve of Eratosthenes up to 20,000, prime counting, twin primes,
// Goldbach partitions and trial-division factorisation.
#include <stdint.h>
#include <stdio.h>

#define LIMIT 20000

static uint32_t composite[LIMIT / 32 + 1];

static int is_composite(unsigned n) { return composite[n / 32] >> (n % 32) & 1; }
static int is_prime(unsigned n) { return n >= 2 && !is_composite(n); }

static void sieve(void) {
    composite[0] |= 3;  // 0 and 1
    for (unsigned p = 2; p * p <= LIMIT; ++p) {
        if (is_composite(p)) continue;
        for (unsigned m = p * p; m <= LIMIT; m += p) composite[m / 32] |= 1u << (m % 32);
    }
}

static void factorise(unsigned n) {
    printf("%u =", n);
    const char* separator = " ";
    for (unsigned p = 2; p * p <= n; ++p) {
        for (; n % p == 0; n /= p) {
            printf("%s%u", separator, p);
            separator = " * ";
        }
    }
    if (n > 1) printf("%s%u", separator, n);
    printf("\n");
}

int main(void) {
    sieve();
    unsigned count = 0, twins = 0, largest = 0;
    printf("first primes:");
    for (unsigned n = 2; n <= LIMIT; ++n) {
        if (!is_prime(n)) continue;
        if (++count <= 15) printf(" %u", n);
        if (is_prime(n + 2) && n + 2 <= LIMIT) ++twins;
        largest = n;
    }
    printf("\nprimes up to %d: %u (largest %u), twin prime pairs: %u\n", LIMIT, count, largest, twins);
    for (unsigned even = 100; even <= 1000; even += 300) {
        unsigned partitions = 0;
        for (unsigned p = 2; p <= even / 2; ++p) partitions += is_prime(p) && is_prime(even - p);
        printf("%u is the sum of two primes in %u ways\n", even, partitions);
    }
    factorise(2147483646u);
    factorise(600851475u);
    factorise(65537u);
    return 0;
}
