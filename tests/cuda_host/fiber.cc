// See fiber.h.
#include "fiber.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)

extern "C" void nc_host_fiber_switch(void **from_sp, void *to_sp);
// Pushes the callee-saved registers and the FP control words, saves the
// stack pointer, loads the other one and pops the same frame from it.
asm(R"(
    .text
    .globl nc_host_fiber_switch
    .hidden nc_host_fiber_switch
    .type nc_host_fiber_switch,@function
nc_host_fiber_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size nc_host_fiber_switch,.-nc_host_fiber_switch
    .section .note.GNU-stack,"",@progbits
    .text
)");

namespace nc_host {

void fiber_init(fiber *f, char *stack, size_t size, void (*entry)())
{
    uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
    // the frame nc_host_fiber_switch pops: control words, six registers,
    // then `ret` into entry with the stack aligned as after a call
    uint64_t *sp = (uint64_t *)(top - 72);
    uint32_t mxcsr;
    uint16_t fpucw;
    asm volatile("stmxcsr %0" : "=m"(mxcsr));
    asm volatile("fnstcw %0" : "=m"(fpucw));
    memset(sp, 0, 72);
    memcpy(sp, &mxcsr, 4);
    memcpy((char *)sp + 4, &fpucw, 2);
    sp[7] = (uint64_t)(uintptr_t)entry;
    f->sp = sp;
}

void fiber_switch(fiber *from, fiber *to) { nc_host_fiber_switch(&from->sp, to->sp); }

} // namespace nc_host

#else
#include <ucontext.h>

#include <new>

namespace nc_host {

// The ucontext lives at the bottom of the fiber's own stack.
void fiber_init(fiber *f, char *stack, size_t size, void (*entry)())
{
    ucontext_t *uc = new (stack) ucontext_t;
    getcontext(uc);
    size_t skip = (sizeof(ucontext_t) + 63) & ~(size_t)63;
    uc->uc_stack.ss_sp = stack + skip;
    uc->uc_stack.ss_size = size - skip;
    uc->uc_link = nullptr;
    makecontext(uc, entry, 0);
    f->sp = uc;
}

void fiber_switch(fiber *from, fiber *to)
{
    static thread_local ucontext_t main_uc;
    if (!from->sp)
        from->sp = &main_uc;
    swapcontext((ucontext_t *)from->sp, (ucontext_t *)to->sp);
}

} // namespace nc_host
#endif
