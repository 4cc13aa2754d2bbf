/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PVH entry, the 32 -> 64-bit switch, interrupt stubs and the CPL3
 * trampoline.
 *
 * The PVH ABI enters pvh_start in 32-bit protected mode, paging off,
 * flat segments, EBX = physical address of struct hvm_start_info.  We
 * build identity page tables for the low 4 GiB with 2 MiB pages, all
 * user-accessible so CPL3 code can touch RAM and the PCI MMIO window, and
 * go straight to long mode: on some KVM backends 32-bit paging faults, so
 * paging is only ever turned on together with EFER.LME.
 */
#include "segments.h"

#define MSR_EFER        0xc0000080
#define EFER_LME        (1 << 8)
#define CR0_PE          (1 << 0)
#define CR0_PG          (1 << 31)
#define CR4_PAE         (1 << 5)
#define PTE_PRESENT_RW_USER 0x7
#define PDE_2M_RW_USER  0x87            /* P | RW | U/S | PS */

/* The PVH note: XEN_ELFNOTE_PHYS32_ENTRY (18), owner "Xen". */
    .pushsection .note.pvh, "a", @note
    .balign 4
    .long 4                             /* namesz */
    .long 4                             /* descsz */
    .long 18                            /* type */
    .asciz "Xen"
    .balign 4
    .long pvh_start
    .balign 4
    .popsection

    .code32
    .section .text.entry, "ax"
    .globl pvh_start
pvh_start:
    cli
    cld
    mov %ebx, %esi

    /* Loaders zero .bss already; do it again so we never depend on it. */
    mov $__bss_start, %edi
    mov $__bss_end, %ecx
    sub %edi, %ecx
    shr $2, %ecx
    xor %eax, %eax
    rep stosl

    mov %esi, pvh_start_info

    /* PML4[0] -> PDPT; PDPT[0..3] -> four page directories. */
    mov $pdpt, %eax
    or $PTE_PRESENT_RW_USER, %eax
    mov %eax, pml4
    mov $pd_low, %eax
    or $PTE_PRESENT_RW_USER, %eax
    mov $pdpt, %edi
    mov $4, %ecx
1:  mov %eax, (%edi)
    add $4096, %eax
    add $8, %edi
    dec %ecx
    jnz 1b

    /* 2048 x 2 MiB identity mappings cover 0 .. 4 GiB. */
    mov $pd_low, %edi
    mov $PDE_2M_RW_USER, %eax
    mov $2048, %ecx
2:  mov %eax, (%edi)
    add $0x200000, %eax
    add $8, %edi
    dec %ecx
    jnz 2b

    lgdt gdt_desc
    mov $pml4, %eax
    mov %eax, %cr3
    mov %cr4, %eax
    or $CR4_PAE, %eax
    mov %eax, %cr4
    mov $MSR_EFER, %ecx
    rdmsr
    or $EFER_LME, %eax
    wrmsr
    mov %cr0, %eax
    or $(CR0_PG | CR0_PE), %eax
    mov %eax, %cr0
    ljmp $KERNEL_CS, $start64

    .code64
start64:
    mov $KERNEL_DS, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %ss
    xor %eax, %eax
    mov %ax, %fs
    mov %ax, %gs
    lea kernel_stack_top(%rip), %rsp
    xor %ebp, %ebp
    call guest_start
3:  cli
    hlt
    jmp 3b

/*
 * Interrupt and exception stubs: 16 bytes each, so the IDT setup can
 * compute stub addresses.  Vectors without a CPU error code push a zero
 * so every frame has the same layout (struct GuestFrame).
 */
    .text
    .balign 16
    .globl isr_stubs
isr_stubs:
    .set vec, 0
    .rept 256
    .balign 16
    .if (vec == 8) || (vec == 10) || (vec == 11) || (vec == 12) || (vec == 13) || (vec == 14) || (vec == 17) || (vec == 21) || (vec == 29) || (vec == 30)
    .else
    pushq $0
    .endif
    pushq $vec
    jmp isr_common
    .set vec, vec + 1
    .endr

/*
 * Count-only stubs for vectors 32..255: bump irq_counts[vector], EOI,
 * iret.  About ten instructions instead of the full frame and C
 * dispatch, which matters where CPL0 code is emulated (an interrupt per
 * NVMe completion).  Selected per vector by irq_set_count_only().
 */
    .balign 16
    .globl irq_count_stubs
irq_count_stubs:
    .set vec, 32
    .rept 224
    .balign 16
    push %rax
    mov $vec, %eax
    jmp irq_count_common
    .set vec, vec + 1
    .endr

irq_count_common:
    push %rcx
    push %rdx
    lock incq irq_counts(, %rax, 8)
    cmpb $0, apic_x2apic_mode(%rip)
    je 1f
    mov $0x80b, %ecx                    /* x2APIC EOI MSR */
    xor %eax, %eax
    xor %edx, %edx
    wrmsr
    jmp 2f
1:  mov apic_xapic_eoi(%rip), %rcx
    movl $0, (%rcx)
2:  pop %rdx
    pop %rcx
    pop %rax
    iretq

isr_common:
    push %rax
    push %rcx
    push %rdx
    push %rsi
    push %rdi
    push %r8
    push %r9
    push %r10
    push %r11
    push %rbx
    push %rbp
    push %r12
    push %r13
    push %r14
    push %r15
    cld
    mov %rsp, %rdi
    call isr_dispatch
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %rbp
    pop %rbx
    pop %r11
    pop %r10
    pop %r9
    pop %r8
    pop %rdi
    pop %rsi
    pop %rdx
    pop %rcx
    pop %rax
    add $16, %rsp
    iretq

/*
 * uint64_t run_user(uint64_t (*fn)(void *), void *arg)
 *
 * Saves the callee-saved state, irets to CPL3 on the user stack with
 * IF=1 and IOPL=3 (so user code may use port I/O such as the serial
 * port), calls fn(arg) there, and comes back by executing ud2 at
 * user_exit_point: the #UD handler recognises that address and jumps to
 * user_return_entry, which restores the saved kernel stack and returns
 * fn's value.  A fault rather than "int $n" or "syscall" because on some
 * KVM backends (ours) "int $n" at CPL3 raises #UD and "syscall" does not
 * change privilege; exception delivery is what works everywhere.
 */
    .globl run_user
run_user:
    push %rbx
    push %rbp
    push %r12
    push %r13
    push %r14
    push %r15
    pushfq
    mov %rsp, user_saved_rsp(%rip)
    pushq $USER_DS
    lea user_stack_top(%rip), %rax
    push %rax
    pushq $0x3202                       /* IF | IOPL=3 | reserved bit 1 */
    pushq $USER_CS
    lea user_trampoline(%rip), %rax
    push %rax
    iretq

user_trampoline:
    mov %rdi, %rax
    mov %rsi, %rdi
    call *%rax
    mov %rax, %rdi
    .globl user_exit_point
user_exit_point:
    ud2
    ud2

    .globl user_return_entry
user_return_entry:                      /* rdi = fn's return value */
    mov $KERNEL_DS, %ax
    mov %ax, %ss
    mov %ax, %ds
    mov %ax, %es
    mov user_saved_rsp(%rip), %rsp
    movq $0, user_saved_rsp(%rip)
    mov %rdi, %rax
    popfq
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %rbp
    pop %rbx
    ret

    .data
    .balign 16
    .globl gdt
gdt:
    .quad 0
    .quad 0x00af9a000000ffff            /* KERNEL_CS: 64-bit code, DPL0 */
    .quad 0x00cf92000000ffff            /* KERNEL_DS */
    .quad 0x00cff2000000ffff            /* USER_DS: DPL3 */
    .quad 0x00affa000000ffff            /* USER_CS: 64-bit code, DPL3 */
    .quad 0, 0                          /* TSS, filled in by C */
gdt_end:
gdt_desc:
    .word gdt_end - gdt - 1
    .quad gdt

    .globl pvh_start_info
pvh_start_info:
    .long 0
    .globl user_saved_rsp
user_saved_rsp:
    .quad 0

    .bss
    .balign 4096
    .globl pml4, pdpt
pml4:
    .skip 4096
pdpt:
    .skip 4096
pd_low:
    .skip 4 * 4096
    .balign 16
    .skip 65536
kernel_stack_top:
    .globl trap_stack_top
    .skip 16384
trap_stack_top:
    .skip 65536
user_stack_top:
