/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvm-unit-tests style reporting: one PASS/FAIL/SKIP line per check and a
 * SUMMARY line the host side parses.
 */
#include "libguest.h"

static unsigned tests, failures, skipped;

static void report_line(const char *tag, const char *fmt, va_list ap)
{
    char buf[200];

    vsnprintf(buf, sizeof(buf), fmt, ap);
    printf("%s: %s\n", tag, buf);
}

void report(bool pass, const char *fmt, ...)
{
    va_list ap;

    tests++;
    if (!pass) {
        failures++;
    }
    va_start(ap, fmt);
    report_line(pass ? "PASS" : "FAIL", fmt, ap);
    va_end(ap);
}

void report_skip(const char *fmt, ...)
{
    va_list ap;

    tests++;
    skipped++;
    va_start(ap, fmt);
    report_line("SKIP", fmt, ap);
    va_end(ap);
}

int report_summary(void)
{
    if (skipped) {
        printf("SUMMARY: %u tests, %u unexpected failures, %u skipped\n",
               tests, failures, skipped);
    } else {
        printf("SUMMARY: %u tests, %u unexpected failures\n", tests, failures);
    }
    return failures ? EXIT_FAIL : EXIT_PASS;
}

void exit(int code)
{
    outl(DEBUG_EXIT_PORT, code);
    /* No debug-exit device: stop here (hlt is privileged at CPL3). */
    for (;;) {
        uint16_t cs;

        __asm__ __volatile__("mov %%cs, %0" : "=r"(cs));
        if (cs & 3) {
            cpu_relax();
        } else {
            __asm__ __volatile__("cli; hlt");
        }
    }
}

void panic(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    report_line("FATAL", fmt, ap);
    va_end(ap);
    exit(EXIT_FATAL);
}
