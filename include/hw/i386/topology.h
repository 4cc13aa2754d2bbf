/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86 APIC IDs of the -smp topology, as the SDM and AMD's APM define
 * them and QEMU numbers them: the ID is the thread, core, die and
 * package numbers packed in fields of ceil(log2(count)) bits each, so
 * `-smp 6,cores=3,threads=2` gives IDs 0,1,2,3,4,5 for package 0 but
 * `-smp 6,cores=3` gives 0,1,2 in package 0 and 4,5,6 in package 1.
 * The KVM accelerator creates each vCPU with that ID and describes the
 * same fields in CPUID (leaves 1, 4, 0xB, 0x80000008, 0x8000001E);
 * everything that names a CPU to the guest or to management (the MADT,
 * query-cpus-fast) derives the ID from here.  Pure functions.
 */
#ifndef HW_I386_TOPOLOGY_H
#define HW_I386_TOPOLOGY_H

#include <stdint.h>
#include "hw/boards.h"

/* Bits to hold 0..count-1. */
static inline unsigned x86_topo_width(unsigned count)
{
    return count > 1 ? 32 - __builtin_clz(count - 1) : 0;
}

typedef struct X86TopoFields {
    unsigned smt_width;         /* thread bits */
    unsigned core_width;        /* core bits (within a die) */
    unsigned die_width;
    unsigned pkg_shift;         /* smt + core + die widths */
} X86TopoFields;

static inline X86TopoFields x86_topo_fields(const CpuTopology *topo)
{
    X86TopoFields f = {
        .smt_width = x86_topo_width(topo->threads ? topo->threads : 1),
        .core_width = x86_topo_width(topo->cores ? topo->cores : 1),
        .die_width = x86_topo_width(topo->dies ? topo->dies : 1),
    };

    f.pkg_shift = f.smt_width + f.core_width + f.die_width;
    return f;
}

/* The thread / core / die / package numbers of vCPU index. */
typedef struct X86TopoIds {
    unsigned smt, core, die, pkg;
} X86TopoIds;

static inline X86TopoIds x86_topo_ids(const CpuTopology *topo,
                                      unsigned index)
{
    unsigned threads = topo->threads ? topo->threads : 1;
    unsigned cores = topo->cores ? topo->cores : 1;
    unsigned dies = topo->dies ? topo->dies : 1;

    return (X86TopoIds) {
        .smt = index % threads,
        .core = (index / threads) % cores,
        .die = (index / (threads * cores)) % dies,
        .pkg = index / (threads * cores * dies),
    };
}

static inline uint32_t x86_apic_id_from_index(const CpuTopology *topo,
                                              unsigned index)
{
    X86TopoFields f = x86_topo_fields(topo);
    X86TopoIds id = x86_topo_ids(topo, index);

    return ((uint32_t)id.pkg << f.pkg_shift) |
           (id.die << (f.smt_width + f.core_width)) |
           (id.core << f.smt_width) | id.smt;
}

#endif
