/* firmware/micropython/main.c — the interpreter's entry: runs the one script the image carries.
 *
 * rvformer places the script after the image's read-only data, at __python_script (Makefile):
 *   word  kScriptMagic ("PYSC")
 *   word  length of the script's name      word  length of the script's text
 *   bytes the name, then the text
 * Status: 0 when the script ends, 1 after an uncaught exception (its traceback printed on the
 * console), sys.exit's code, 2 when the image carries no script. */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "py/compile.h"
#include "py/gc.h"
#include "py/lexer.h"
#include "py/mperrno.h"
#include "py/nlr.h"
#include "py/objint.h"
#include "py/runtime.h"
#include "py/stackctrl.h"

enum { kScriptMagic = 0x43535950, kStackMargin = 1024, kStatusNoScript = 2 };

struct Script {
    uint32_t magic;
    uint32_t name_length;
    uint32_t text_length;
    char bytes[];
};

extern const struct Script __python_script;
extern char __heap_start[], __heap_end[];

static char* stack_top;

/* Status of an uncaught SystemExit: its code (None is 0); any other value is printed, status 1. */
static int system_exit_status(mp_obj_t exception) {
    mp_obj_t code = mp_obj_exception_get_value(exception);
    if (code == mp_const_none) return 0;
    if (mp_obj_is_integer(code)) return mp_obj_get_int_truncated(code) & 0xff;
    mp_obj_print(code, PRINT_STR);
    mp_print_str(&mp_plat_print, "\n");
    return 1;
}

static int uncaught(mp_obj_t exception) {
    if (mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(exception)), MP_OBJ_FROM_PTR(&mp_type_SystemExit)))
        return system_exit_status(exception);
    mp_obj_print_exception(&mp_plat_print, exception);
    return 1;
}

static int run(const struct Script* script) {
    nlr_buf_t handler;
    if (nlr_push(&handler) != 0) return uncaught(MP_OBJ_FROM_PTR(handler.ret_val));
    qstr name = qstr_from_strn(script->bytes, script->name_length);
    mp_lexer_t* lexer = mp_lexer_new_from_str_len(name, script->bytes + script->name_length, script->text_length, 0);
    mp_parse_tree_t tree = mp_parse(lexer, MP_PARSE_FILE_INPUT);
    mp_obj_t module = mp_compile(&tree, name, MP_EMIT_OPT_NONE, false);
    mp_call_function_0(module);
    nlr_pop();
    return 0;
}

int main(void) {
    int base;
    stack_top = (char*)&base;
    mp_stack_set_top(stack_top);
    mp_stack_set_limit(RVFORMER_STACK_SIZE - kStackMargin);
    if (__python_script.magic != kScriptMagic) {
        fputs("micropython: this image carries no script (run it with `rvformer run script.py`)\n", stderr);
        return kStatusNoScript;
    }
    gc_init(__heap_start, __heap_end);
    mp_init();
    int status = run(&__python_script);
    mp_deinit();
    return status;
}

/* A conservative collection: the callee-saved registers are spilled into a jmp_buf on the stack, and
 * everything from there to the stack's top is scanned for pointers into the heap. */
void __attribute__((noinline)) gc_collect(void) {
    jmp_buf registers;
    setjmp(registers);
    gc_collect_start();
    void** sp = (void**)&registers;
    gc_collect_root(sp, (size_t)((uintptr_t)stack_top - (uintptr_t)sp) / sizeof(void*));
    gc_collect_end();
}

/* No file system: `import` finds only the built-in modules. */
mp_import_stat_t mp_import_stat(const char* path) {
    (void)path;
    return MP_IMPORT_STAT_NO_EXIST;
}

mp_lexer_t* mp_lexer_new_from_file(const char* filename) {
    (void)filename;
    mp_raise_OSError(MP_ENOENT);
}

void nlr_jump_fail(void* value) {
    (void)value;
    fputs("micropython: fatal: an exception escaped every handler\n", stderr);
    exit(3);
}

void NORETURN __fatal_error(const char* message) {
    fputs(message, stderr);
    exit(3);
}
