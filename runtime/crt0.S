/* runtime/crt0.S — program entry: sets up gp, sp and tp, copies .data/.tdata from their load image in
 * read-only data to RAM, zeroes .tbss/.bss, runs constructors, calls main(0, 0) and passes its
 * return value to exit(). */
    .section .text.init, "ax", @progbits
    .globl _start
_start:
    .option push
    .option norelax
    la   gp, __global_pointer$
    .option pop
    la   sp, __stack_top
    la   tp, __tls_base            /* picolibc keeps errno in thread-local storage */

    la   t0, __data_source
    la   t1, __data_start
    la   t2, __data_end
1:  bgeu t1, t2, 2f
    lw   t3, 0(t0)
    sw   t3, 0(t1)
    addi t0, t0, 4
    addi t1, t1, 4
    j    1b

2:  la   t0, __bss_start
    la   t1, __bss_end
3:  bgeu t0, t1, 4f
    sw   zero, 0(t0)
    addi t0, t0, 4
    j    3b

4:  call __libc_init_array
    li   a0, 0
    li   a1, 0
    call main
    tail exit
