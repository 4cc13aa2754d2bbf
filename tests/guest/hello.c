/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hello: the smallest guest.  Proves the PVH entry, long mode, serial
 * output, the command line, exceptions-free interrupt set-up and a round
 * trip through CPL3.
 */
#include "libguest.h"

static uint64_t user_add(void *arg)
{
    uint64_t *v = arg;
    uint16_t cs;

    __asm__ __volatile__("mov %%cs, %0" : "=r"(cs));
    return (cs & 3) == 3 ? *v + 1 : 0;
}

static uint64_t count_loop(volatile uint64_t *p, uint64_t n)
{
    uint64_t i, sum = 0;

    for (i = 0; i < n; i++) {
        sum += p[i & 7];
    }
    return sum;
}

static uint64_t user_counts(void *arg)
{
    /* A loop long enough to matter if CPL3 were emulated. */
    return count_loop(arg, 1000000);
}

int main(void)
{
    uint64_t v = 41, ring3[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
    uint64_t t0, t1, efer, cr0, cr4;
    uint16_t cs;
    char word[32];

    printf("hello from a PVH guest; command line \"%s\"\n", cmdline());

    __asm__ __volatile__("mov %%cs, %0" : "=r"(cs));
    __asm__ __volatile__("mov %%cr0, %0" : "=r"(cr0));
    __asm__ __volatile__("mov %%cr4, %0" : "=r"(cr4));
    efer = rdmsr(0xc0000080);
    report((cs & 3) == 0 && (efer & (1 << 10)) && (cr0 & (1u << 31)) &&
           (cr4 & (1 << 5)), "long mode active at CPL0 (efer=0x%lx)", efer);
    report(ram_top() > 0x200000, "RAM top 0x%lx from the PVH memory map",
           ram_top());

    report(run_user(user_add, &v) == 42, "run_user returns fn's value from CPL3");
    t0 = rdtsc();
    report(run_user(user_counts, ring3) == 1000000,
           "CPL3 loop of 1M iterations");
    t1 = rdtsc();
    printf("tsc %lu kHz (%s)\n", tsc_khz(), tsc_method());
    printf("loop iteration at CPL3: %lu ps\n", tsc_to_ns(t1 - t0) / 1000);
    t0 = rdtsc();
    count_loop(ring3, 10000);
    t1 = rdtsc();
    /* Informational: shows whether this KVM emulates CPL0 code. */
    printf("loop iteration at CPL0: %lu ps\n", tsc_to_ns(t1 - t0) / 10);
    report(run_user(user_add, &v) == 42, "run_user can be called again");

    if (ram_high_start()) {
        volatile uint64_t *high = (volatile uint64_t *)ram_high_start();
        bool mapped = map_identity(ram_high_start(), 2ULL << 20);

        if (mapped) {
            high[0] = 0x1234567890abcdefULL;
            high[511] = ~high[0];
        }
        report(mapped && high[0] == 0x1234567890abcdefULL &&
               high[511] == ~0x1234567890abcdefULL,
               "RAM above 4 GiB at 0x%lx mapped on demand", ram_high_start());
    }
    if (cmdline_get("expect", word, sizeof(word))) {
        report(!strcmp(word, "hello-world"),
               "command line expect=%s parsed", word);
    }
    if (cmdline_u64("crash", 0)) {
        /* Used by the functional test to check the exception path. */
        *(volatile uint32_t *)(5ULL << 40) = 1;
    }
    return report_summary();
}
