// Fibers for the CPU harness: a block's threads each get a stack and are
// switched by hand (x86-64: the callee-saved registers, MXCSR and the x87
// control word; elsewhere ucontext). A switch costs a few nanoseconds here,
// against a system call per switch for glibc's swapcontext, and the harness
// switches at every barrier and warp collective of every thread.
#ifndef NC_TESTS_CUDA_HOST_FIBER_H
#define NC_TESTS_CUDA_HOST_FIBER_H

#include <stddef.h>

namespace nc_host {

struct fiber {
    void *sp; // saved stack pointer (x86-64) or ucontext
};

// Prepares f to run entry() on the stack [stack, stack + size) at its first
// switch; entry must never return (it switches away for good).
void fiber_init(fiber *f, char *stack, size_t size, void (*entry)());
// Saves the running context into *from and resumes to.
void fiber_switch(fiber *from, fiber *to);

} // namespace nc_host

#endif
