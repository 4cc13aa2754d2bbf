/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * topology: the -smp topology as the BSP's CPUID shows it.  The command
 * line gives what to expect: threads=T (per core) and pkg=P (logical CPUs
 * per package); both are powers of two, the case Conduit describes.
 */
#include "libguest.h"

int main(void)
{
    uint64_t threads = cmdline_u64("threads", 1);
    uint64_t pkg = cmdline_u64("pkg", 1);
    uint32_t r[4], smt_shift = 0, pkg_shift = 0;

    while ((1u << smt_shift) < threads) {
        smt_shift++;
    }
    while ((1u << pkg_shift) < pkg) {
        pkg_shift++;
    }
    cpuid(1, 0, r);
    report(((r[1] >> 16) & 0xff) == pkg,
           "CPUID.1 EBX logical CPUs per package %u", (r[1] >> 16) & 0xff);
    cpuid(0, 0, r);
    if (r[0] < 0xb) {
        printf("no CPUID leaf 0xB (max leaf 0x%x)\n", r[0]);
        return report_summary();
    }
    cpuid(0xb, 0, r);
    report(r[0] == smt_shift && r[1] == threads && ((r[2] >> 8) & 0xff) == 1,
           "CPUID.B.0 SMT level: shift %u, %u threads, type %u", r[0],
           r[1], (r[2] >> 8) & 0xff);
    report(r[3] == 0, "CPUID.B.0 x2APIC ID %u of the BSP", r[3]);
    cpuid(0xb, 1, r);
    report(r[0] == pkg_shift && r[1] == pkg && ((r[2] >> 8) & 0xff) == 2,
           "CPUID.B.1 core level: shift %u, %u CPUs, type %u", r[0], r[1],
           (r[2] >> 8) & 0xff);
    cpuid(0xb, 2, r);
    report(((r[2] >> 8) & 0xff) == 0 && r[1] == 0,
           "CPUID.B.2 ends the levels (type %u)", (r[2] >> 8) & 0xff);
    return report_summary();
}
