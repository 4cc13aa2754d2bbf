/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86 APIC IDs of the -smp topology.  The KVM accelerator creates vCPU i
 * with APIC ID i and describes the levels in CPUID leaf 0xB with
 * power-of-2 field widths, so for power-of-2 thread and core counts the
 * index already has the SMT/core/package fields in place.  Everything
 * that names a CPU to the guest or to management (the MADT,
 * query-cpus-fast) derives the ID from here.
 */
#ifndef HW_I386_TOPOLOGY_H
#define HW_I386_TOPOLOGY_H

#include <stdint.h>
#include "hw/boards.h"

static inline uint32_t x86_apic_id_from_index(const CpuTopology *topo,
                                              unsigned index)
{
    (void)topo;
    return index;
}

#endif
