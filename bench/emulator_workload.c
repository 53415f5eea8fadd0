// emulator_workload.c — a long, mixed program for measuring the golden emulator's speed: integer
// arithmetic with multiplication and division, byte and word memory traffic, branches and calls.
// About 140 million instructions; it prints a checksum so that the work cannot be optimised away.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint32_t crc_table[256];
static uint8_t buffer[8192];
static int32_t numbers[1024];

static uint32_t crc32(const uint8_t* data, size_t length) {
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < length; ++i) crc = crc_table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

static void shell_sort(int32_t* values, int count) {
    for (int gap = count / 2; gap > 0; gap /= 2)
        for (int i = gap; i < count; ++i) {
            int32_t value = values[i];
            int j = i;
            for (; j >= gap && values[j - gap] > value; j -= gap) values[j] = values[j - gap];
            values[j] = value;
        }
}

static uint32_t divide_and_multiply(uint32_t seed) {
    uint32_t acc = seed;
    for (uint32_t i = 1; i < 2000; ++i) acc = acc * 2654435761u + (acc / i) - (acc % (i + 7)) + (uint32_t)((int32_t)acc / -3);
    return acc;
}

int main(void) {
    for (uint32_t n = 0; n < 256; ++n) {
        uint32_t c = n;
        for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
    }
    uint32_t checksum = 0, state = 1;
    for (int round = 0; round < 300; ++round) {
        for (size_t i = 0; i < sizeof buffer; ++i) buffer[i] = (uint8_t)(i * 131 + round);
        checksum ^= crc32(buffer, sizeof buffer);
        for (int i = 0; i < 1024; ++i) {
            state = state * 1103515245u + 12345u;
            numbers[i] = (int32_t)state >> 3;
        }
        shell_sort(numbers, 1024);
        checksum += (uint32_t)numbers[round % 1024];
        checksum ^= divide_and_multiply(checksum);
        memmove(buffer + 1, buffer, sizeof buffer - 1);
        checksum += buffer[round];
    }
    printf("checksum %08x\n", (unsigned)checksum);
    return 0;
}
