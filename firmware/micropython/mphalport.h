/* firmware/micropython/mphalport.h — the console of the rvformer machine as MicroPython's HAL. */
#include "py/mpprint.h"

/* input() reads one line of console input with this instead of MicroPython's line editor. */
struct _vstr_t;
int rvformer_readline(struct _vstr_t* line, const char* prompt);
#define mp_hal_readline rvformer_readline

/* The machine has no clock and no interrupts. */
static inline void mp_hal_set_interrupt_char(int c) { (void)c; }
static inline mp_uint_t mp_hal_ticks_ms(void) { return 0; }

/* No pins: keeps py/mphal.h from pulling in the virtual-pin layer. */
#define mp_hal_pin_obj_t void*
