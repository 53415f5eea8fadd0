// checksums.c — CRC-32 (table-driven, IEEE polynomial), Adler-32 and FNV-1a over known strings
// and a generated buffer.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint32_t crc_table[256];

static void build_crc_table(void) {
    for (uint32_t n = 0; n < 256; ++n) {
        uint32_t c = n;
        for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
    }
}

static uint32_t crc32(const uint8_t* data, size_t length) {
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < length; ++i) crc = crc_table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}

static uint32_t adler32(const uint8_t* data, size_t length) {
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < length; ++i) {
        a = (a + data[i]) % 65521;
        b = (b + a) % 65521;
    }
    return b << 16 | a;
}

static uint32_t fnv1a(const uint8_t* data, size_t length) {
    uint32_t hash = 2166136261u;
    for (size_t i = 0; i < length; ++i) hash = (hash ^ data[i]) * 16777619u;
    return hash;
}

static void report(const char* name, const uint8_t* data, size_t length) {
    printf("%-12s crc32=%08x adler32=%08x fnv1a=%08x\n", name, (unsigned)crc32(data, length),
           (unsigned)adler32(data, length), (unsigned)fnv1a(data, length));
}

int main(void) {
    build_crc_table();
    const char* fox = "The quick brown fox jumps over the lazy dog";
    report("empty", (const uint8_t*)"", 0);
    report("123456789", (const uint8_t*)"123456789", 9);
    report("fox", (const uint8_t*)fox, strlen(fox));
    static uint8_t buffer[4096];
    for (size_t i = 0; i < sizeof buffer; ++i) buffer[i] = (uint8_t)(i * 7 + (i >> 5));
    report("4 KB buffer", buffer, sizeof buffer);
    return 0;
}
