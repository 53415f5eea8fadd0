/* firmware/micropython/mphalport.c — console output through the console register and console input
 * through the input register (runtime/console.c: stdout and stdin of picolibc's stdio). */
#include <stdio.h>

#include "py/mpconfig.h"
#include "py/misc.h"
#include "py/mphal.h"
#include "lib/mp-readline/readline.h"

int mp_hal_stdin_rx_chr(void) { return getchar(); }

void mp_hal_stdout_tx_strn(const char* text, size_t length) {
    for (size_t i = 0; i < length; ++i) putchar((unsigned char)text[i]);
}

void mp_hal_stdout_tx_str(const char* text) {
    for (; *text; ++text) putchar((unsigned char)*text);
}

/* The console passes bytes through unchanged: a newline stays one byte. */
void mp_hal_stdout_tx_strn_cooked(const char* text, size_t length) { mp_hal_stdout_tx_strn(text, length); }

/* One line without its newline. CHAR_CTRL_D at the end of input, so that input() raises EOFError
 * when nothing was read. */
int rvformer_readline(vstr_t* line, const char* prompt) {
    mp_hal_stdout_tx_str(prompt);
    for (;;) {
        int c = mp_hal_stdin_rx_chr();
        if (c == EOF) return CHAR_CTRL_D;
        if (c == '\n') return 0;
        vstr_add_byte(line, (byte)c);
    }
}
