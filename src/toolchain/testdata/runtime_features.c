// runtime_features.c — exercises what crt0 and the linker script set up: initialised and zeroed
// data, thread-local storage (errno), constructors, atexit handlers, the stack, the heap limit
// and the exit code passed to exit().
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int initialised = 1234;
static char initialised_text[] = "data copied from read-only data";
static int zeroed[1000];
static __thread int thread_local_value = 77;
static __thread int thread_local_zero;
static int constructor_ran;

__attribute__((constructor)) static void before_main(void) { constructor_ran = 1; }

static void at_exit(void) { printf("atexit handler ran\n"); }

static void finish(int code) { exit(code); }

int main(void) {
    printf("initialised: %d \"%s\"\n", initialised, initialised_text);
    int nonzero = 0;
    for (int i = 0; i < 1000; ++i) nonzero += zeroed[i] != 0;
    printf("zeroed: %d non-zero of 1000\n", nonzero);
    printf("thread-local: %d %d\n", thread_local_value, thread_local_zero);
    errno = 0;
    strtoul("999999999999", NULL, 10);
    printf("errno after overflow: %s\n", errno == ERANGE ? "ERANGE" : "wrong");
    printf("constructor ran: %d\n", constructor_ran);
    uintptr_t stack = (uintptr_t)__builtin_frame_address(0);
    printf("stack 16-byte aligned: %d\n", stack % 16 == 0);
    void* small = malloc(16000);
    void* too_big = malloc(32000);
    printf("malloc 16000: %s, malloc 32000: %s\n", small ? "ok" : "NULL", too_big ? "ok" : "NULL");
    atexit(at_exit);
    finish(42);
    return 0;
}
