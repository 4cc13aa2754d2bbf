/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The freestanding guest runtime: a PVH-booted, long-mode environment
 * for tiny test guests (kvm-unit-tests style).
 *
 * Exit status: exit(code) writes code to the isa-debug-exit port 0xf4;
 * QEMU (and Conduit's debug-exit device) then exits with status
 * (code << 1) | 1.  So a passing guest (code 0) makes the VMM exit 1,
 * report failures (code 1) exit 3, and an unexpected exception or a fatal
 * runtime error (code 2) exit 5.  Without a debug-exit device the guest
 * halts forever.
 */
#ifndef GUEST_LIBGUEST_H
#define GUEST_LIBGUEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXIT_PASS 0
#define EXIT_FAIL 1
#define EXIT_FATAL 2
#define DEBUG_EXIT_PORT 0xf4

#define PAGE_SIZE 4096UL
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ALIGN_UP(x, a) (((x) + (a) - 1) & ~((uint64_t)(a) - 1))
#define barrier() __asm__ __volatile__("" ::: "memory")

/* Register frame pushed by the interrupt stubs in entry.S. */
typedef struct GuestFrame {
    uint64_t r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8;
    uint64_t rdi, rsi, rdx, rcx, rax;
    uint64_t vector, error;
    uint64_t rip, cs, rflags, rsp, ss;
} GuestFrame;

typedef void (*IrqHandler)(unsigned vector, void *opaque);

/* The test's entry point, called at CPL0 once the runtime is set up. */
int main(void);

/* Port I/O */
static inline void outb(uint16_t port, uint8_t v)
{
    __asm__ __volatile__("outb %0, %1" : : "a"(v), "Nd"(port));
}
static inline void outw(uint16_t port, uint16_t v)
{
    __asm__ __volatile__("outw %0, %1" : : "a"(v), "Nd"(port));
}
static inline void outl(uint16_t port, uint32_t v)
{
    __asm__ __volatile__("outl %0, %1" : : "a"(v), "Nd"(port));
}
static inline uint8_t inb(uint16_t port)
{
    uint8_t v;
    __asm__ __volatile__("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline uint16_t inw(uint16_t port)
{
    uint16_t v;
    __asm__ __volatile__("inw %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline uint32_t inl(uint16_t port)
{
    uint32_t v;
    __asm__ __volatile__("inl %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}

/* MMIO: volatile accesses of exactly the given width. */
static inline uint32_t mmio_read32(uint64_t addr)
{
    return *(volatile uint32_t *)addr;
}
static inline void mmio_write32(uint64_t addr, uint32_t v)
{
    *(volatile uint32_t *)addr = v;
}
static inline uint64_t mmio_read64(uint64_t addr)
{
    /* Two dwords, low first: not every device model takes 8-byte MMIO. */
    uint64_t lo = mmio_read32(addr), hi = mmio_read32(addr + 4);
    return lo | (hi << 32);
}
static inline void mmio_write64(uint64_t addr, uint64_t v)
{
    mmio_write32(addr, (uint32_t)v);
    mmio_write32(addr + 4, (uint32_t)(v >> 32));
}

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return lo | ((uint64_t)hi << 32);
}
static inline uint64_t rdmsr(uint32_t msr)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return lo | ((uint64_t)hi << 32);
}
static inline void wrmsr(uint32_t msr, uint64_t v)
{
    __asm__ __volatile__("wrmsr"
                         : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32))
                         : "memory");
}
static inline void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    __asm__ __volatile__("cpuid"
                         : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
                         : "a"(leaf), "c"(sub));
}
static inline void cpu_relax(void)
{
    __asm__ __volatile__("pause" ::: "memory");
}
static inline void irq_enable(void)
{
    __asm__ __volatile__("sti" ::: "memory");
}
static inline void irq_disable(void)
{
    __asm__ __volatile__("cli" ::: "memory");
}

/* string.c */
void *memset(void *s, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);

/* printf.c: output goes to the 8250 UART at 0x3f8. */
void serial_init(void);
void serial_putc(char c);
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void puts(const char *s);

/* report.c */
void report(bool pass, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void report_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the SUMMARY line; returns EXIT_PASS or EXIT_FAIL. */
int report_summary(void);
void __attribute__((noreturn)) exit(int code);
void __attribute__((noreturn, format(printf, 1, 2))) panic(const char *fmt, ...);

/* setup.c */
const char *cmdline(void);
/* Value of key=value on the command line; false if absent. */
bool cmdline_get(const char *key, char *buf, size_t size);
/* Numeric value (decimal or 0x hex); panics on a malformed value. */
uint64_t cmdline_u64(const char *key, uint64_t def);
/* Zeroed, page-aligned, identity-mapped memory; NULL when exhausted. */
void *alloc_pages(size_t npages);
/* The same without zeroing: zeroing at CPL0 is slow where it is emulated. */
void *alloc_pages_uninit(size_t npages);
uint64_t ram_top(void);
/* First RAM above 4 GiB in the PVH memory map (not mapped), or 0. */
uint64_t ram_high_start(void);
/* Identity-map [addr, addr + size) (above 4 GiB); false if out of tables. */
bool map_identity(uint64_t addr, uint64_t size);
void irq_register(unsigned vector, IrqHandler fn, void *opaque);
/*
 * Vector (>= 32) only counts and EOIs, through a short assembly stub with
 * no C handler: cheap where CPL0 code is emulated.
 */
void irq_set_count_only(unsigned vector);
uint64_t irq_count(unsigned vector);
extern volatile uint64_t irq_counts[256];
/*
 * Runs fn(arg) at CPL3 (user-accessible identity mappings, IF=1, IOPL=3)
 * and returns its value.  Hot loops go here: on some KVM backends CPL0 is
 * emulated and CPL3 runs natively.
 */
uint64_t run_user(uint64_t (*fn)(void *), void *arg);

/* apic.c */
void apic_init(void);
uint32_t apic_id(void);
void apic_eoi(void);
bool apic_is_x2apic(void);
/* MSI address/data for a fixed, edge, physical-destination interrupt. */
uint64_t apic_msi_address(uint32_t apic_id);
uint32_t apic_msi_data(uint8_t vector);

/* tsc.c: frequency calibrated against the PIT (see tsc.c for the method). */
uint64_t tsc_khz(void);
const char *tsc_method(void);
uint64_t tsc_to_ns(uint64_t cycles);

#endif
