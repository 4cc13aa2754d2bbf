/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * -numa: guest NUMA nodes (node,nodeid=,cpus=,memdev=) and the distances
 * between them (dist,src=,dst=,val=).  Gathered at start-up, checked once
 * the memory back-ends exist, then read by the machine (each node's RAM
 * back-end, in node order) and by the ACPI builder (SRAT, SLIT).
 */
#ifndef SYSTEM_NUMA_H
#define SYSTEM_NUMA_H

#include <stdbool.h>
#include <stdint.h>
#include "qemu/typedefs.h"
#include "system/hostmem.h"

#define MAX_NODES 64
#define NUMA_DISTANCE_MIN 10
#define NUMA_DISTANCE_DEFAULT 20

typedef struct NumaNode {
    bool present;
    HostMemoryBackend *memdev;
    uint64_t size;
    uint8_t distance[MAX_NODES];    /* 0: not given */
} NumaNode;

typedef struct NumaState {
    unsigned num_nodes;             /* 0: no -numa */
    bool have_distance;
    NumaNode nodes[MAX_NODES];
    /* Node of each vCPU index (max_cpus entries); -1 unassigned. */
    int *cpu_node;
    unsigned nr_cpus;
} NumaState;

/* One -numa argument, kept until numa_complete(). */
bool numa_parse_option(const char *arg, Error **errp);
/*
 * Checks and resolves what -numa asked for against the machine:
 * memdevs exist, node ids are dense, every CPU index is valid, the
 * distances are complete (symmetric ones filled in) with 10 on the
 * diagonal.  Sets ms->ram_size to the nodes' total when -m was not
 * given (and checks it otherwise).  False with errp set.
 */
bool numa_complete(MachineState *ms, unsigned max_cpus, Error **errp);
/* NULL without -numa. */
const NumaState *numa_state(void);
/* The distance SLIT shows between two nodes. */
uint8_t numa_distance(const NumaState *ns, unsigned a, unsigned b);

#endif
