// hello.c — the default program of `rvformer run`: a greeting and a few computed values.
#include <stdio.h>

static unsigned fibonacci(unsigned n) {
    unsigned previous = 0, current = 1;
    for (unsigned i = 0; i < n; ++i) {
        unsigned next = previous + current;
        previous = current;
        current = next;
    }
    return previous;
}

int main(void) {
    printf("Hello from RISC-V! This is rvformer's RV32IM machine.\n");
    int sum_of_squares = 0;
    for (int i = 1; i <= 10; ++i) sum_of_squares += i * i;
    printf("1^2 + 2^2 + ... + 10^2 = %d\n", sum_of_squares);
    printf("fibonacci(30) = %u\n", fibonacci(30));
    printf("6 * 7 = %d\n", 6 * 7);
    return 0;
}
