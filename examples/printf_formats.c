// printf_formats.c — picolibc's printf: integers of every width and base, padding, precision,
// characters, strings and fixed-point numbers.
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

int main(void) {
    printf("[%d] [%i] [%u] [%d]\n", 42, -42, 3000000000u, INT_MIN);
    printf("[%x] [%X] [%#x] [%o] [%#o]\n", 0xdeadbeefu, 0xcafe, 255, 8, 8);
    printf("[%5d] [%-5d] [%05d] [%+d] [% d]\n", 42, 42, 42, 42, 42);
    printf("[%.3d] [%8.3d] [%-8.3d|]\n", 7, 7, 7);
    printf("[%lld] [%lld] [%llu]\n", LLONG_MAX, LLONG_MIN, ULLONG_MAX);
    printf("[%llx] [%016llx] [%lli]\n", 0x123456789abcdefULL, 0xfeULL, -1234567890123LL);
    printf("[%ld] [%lu] [%hd] [%hhu]\n", -123456789L, 4000000000UL, (short)-1234, (unsigned char)300);
    printf("[%c%c%c] [%s] [%10s] [%-10s] [%.3s]\n", 'r', 'v', '!', "text", "right", "left", "truncated");
    printf("[%%] [%5c] [%-3c|]\n", 'x', 'y');
    printf("[%zu] [%td] [%jd]\n", sizeof(int64_t), (ptrdiff_t)-5, (intmax_t)INT64_MIN);
    printf("[%.2f] [%8.3f] [%-8.1f|] [%e]\n", 3.14159, -2.5, 1.25, 12345.678);
    char buffer[32];
    int length = snprintf(buffer, sizeof buffer, "%s-%04d", "id", 7);
    printf("snprintf gave \"%s\" (%d characters)\n", buffer, length);
    return 0;
}
