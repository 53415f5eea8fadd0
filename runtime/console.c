/* runtime/console.c — stdin, stdout and stderr on the console registers, and _exit through the
 * exit register.
 *
 * `rvformer cc` defines the addresses of the chosen memory map (src/program/memory_map.h):
 * RVFORMER_CONSOLE_ADDRESS (byte stores print one byte), RVFORMER_INPUT_ADDRESS where the map has
 * console input (a word load takes the next byte, or -1 at the end), RVFORMER_EXIT_ADDRESS (a word store ends
 * the program), and RVFORMER_EXIT_SIFIVE_FINISHER when the exit register is QEMU virt's sifive_test
 * finisher, which takes (code << 16) | 0x3333 for a failure code and 0x5555 for success.
 */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#if !defined(RVFORMER_CONSOLE_ADDRESS) || !defined(RVFORMER_EXIT_ADDRESS)
#error "build programs with `rvformer cc`, which defines the memory map's MMIO addresses"
#endif

static int console_put(char c, FILE* stream) {
    (void)stream;
    *(volatile uint8_t*)RVFORMER_CONSOLE_ADDRESS = (uint8_t)c;
    return (unsigned char)c;
}

static int console_get(FILE* stream) {
    (void)stream;
#ifdef RVFORMER_INPUT_ADDRESS
    int32_t c = *(volatile int32_t*)RVFORMER_INPUT_ADDRESS;
    return c < 0 ? _FDEV_EOF : (int)c;
#else
    return _FDEV_EOF;
#endif
}

static FILE console = FDEV_SETUP_STREAM(console_put, console_get, NULL, _FDEV_SETUP_RW);
FILE* const stdin = &console;
FILE* const stdout = &console;
FILE* const stderr = &console;

void _exit(int code) {
#ifdef RVFORMER_EXIT_SIFIVE_FINISHER
    uint32_t value = code == 0 ? 0x5555u : (((uint32_t)code << 16) | 0x3333u);
#else
    uint32_t value = (uint32_t)code;
#endif
    *(volatile uint32_t*)RVFORMER_EXIT_ADDRESS = value;
    for (;;) {
    }
}
