/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * -numa node and -numa dist; see include/system/numa.h.
 */
#include "qemu/osdep.h"
#include "system/numa.h"
#include "hw/boards.h"
#include "qemu/option.h"
#include "qemu/error-report.h"
#include "qapi/error.h"

static GPtrArray *numa_opts;    /* QemuOpts *, in order */
static NumaState numa;

bool numa_parse_option(const char *arg, Error **errp)
{
    QemuOpts *opts = qemu_opts_parse(arg, "type", errp);
    const char *type;

    if (!opts) {
        return false;
    }
    type = qemu_opt_get(opts, "type");
    if (!type) {
        /* "-numa nodeid=0,..." means a node, as in QEMU. */
        qemu_opt_set(opts, "type", "node");
        type = "node";
    }
    if (strcmp(type, "node") && strcmp(type, "dist")) {
        error_setg(errp, "Invalid parameter 'type': '%s' is not supported "
                   "(node or dist)", type);
        qemu_opts_free(opts);
        return false;
    }
    if (!numa_opts) {
        numa_opts = g_ptr_array_new_with_free_func(
            (GDestroyNotify)qemu_opts_free);
    }
    g_ptr_array_add(numa_opts, opts);
    return true;
}

static bool numa_get_u64(QemuOpts *opts, const char *key, uint64_t max,
                         uint64_t *out, Error **errp)
{
    const char *v = qemu_opt_get(opts, key);

    if (!v) {
        error_setg(errp, "Parameter '%s' is missing", key);
        return false;
    }
    if (!qemu_strtou64(v, out, NULL) || *out > max) {
        error_setg(errp, "Parameter '%s' expects a number up to %" PRIu64,
                   key, max);
        return false;
    }
    return true;
}

/* "0-3" or "5": a range of vCPU indexes. */
static bool numa_parse_cpus(const char *s, unsigned max_cpus, unsigned node,
                            Error **errp)
{
    g_auto(GStrv) parts = g_strsplit(s, "-", 2);
    uint64_t first, last;

    if (!qemu_strtou64(parts[0], &first, NULL) ||
        (parts[1] && !qemu_strtou64(parts[1], &last, NULL))) {
        error_setg(errp, "Invalid parameter 'cpus': '%s'", s);
        return false;
    }
    if (!parts[1]) {
        last = first;
    }
    if (last < first || last >= max_cpus) {
        error_setg(errp, "CPU index (%" PRIu64 ") should be smaller than "
                   "maxcpus (%u)", last, max_cpus);
        return false;
    }
    for (uint64_t c = first; c <= last; c++) {
        if (numa.cpu_node[c] >= 0 && numa.cpu_node[c] != (int)node) {
            error_setg(errp, "CPU %" PRIu64 " is in node %d and node %u",
                       c, numa.cpu_node[c], node);
            return false;
        }
        numa.cpu_node[c] = node;
    }
    return true;
}

static bool numa_node_opts(QemuOpts *opts, unsigned max_cpus, Error **errp)
{
    uint64_t id = numa.num_nodes;
    const char *memdev = qemu_opt_get(opts, "memdev");
    NumaNode *n;

    for (size_t i = 0; i < qemu_opts_count(opts); i++) {
        const char *k = qemu_opts_key(opts, i);

        if (strcmp(k, "type") && strcmp(k, "nodeid") && strcmp(k, "cpus") &&
            strcmp(k, "memdev") && strcmp(k, "mem") &&
            strcmp(k, "initiator")) {
            error_setg(errp, "Invalid parameter '%s'", k);
            return false;
        }
    }
    if (qemu_opt_has(opts, "nodeid") &&
        !numa_get_u64(opts, "nodeid", MAX_NODES - 1, &id, errp)) {
        return false;
    }
    if (id >= MAX_NODES) {
        error_setg(errp, "Max number of NUMA nodes reached: %d", MAX_NODES);
        return false;
    }
    n = &numa.nodes[id];
    if (n->present) {
        error_setg(errp, "Duplicate NUMA nodeid: %" PRIu64, id);
        return false;
    }
    if (qemu_opt_has(opts, "mem")) {
        error_setg(errp, "Parameter -numa node,mem is not supported by this "
                   "machine type");
        error_append_hint(errp, "Use -numa node,memdev instead\n");
        return false;
    }
    if (qemu_opt_has(opts, "initiator")) {
        error_setg(errp, "-numa node,initiator= (HMAT) is not supported");
        return false;
    }
    for (size_t i = 0; i < qemu_opts_count(opts); i++) {
        if (!strcmp(qemu_opts_key(opts, i), "cpus") &&
            !numa_parse_cpus(qemu_opts_value(opts, i), max_cpus, id, errp)) {
            return false;
        }
    }
    if (memdev) {
        g_autofree char *user = g_strdup_printf("NUMA node %" PRIu64, id);

        n->memdev = host_memory_backend_find(memdev, errp);
        if (!n->memdev ||
            !host_memory_backend_claim(n->memdev, user, errp)) {
            return false;
        }
        n->size = host_memory_backend_size(n->memdev);
    }
    n->present = true;
    numa.num_nodes = MAX(numa.num_nodes, id + 1);
    return true;
}

static bool numa_dist_opts(QemuOpts *opts, Error **errp)
{
    uint64_t src, dst, val;

    for (size_t i = 0; i < qemu_opts_count(opts); i++) {
        const char *k = qemu_opts_key(opts, i);

        if (strcmp(k, "type") && strcmp(k, "src") && strcmp(k, "dst") &&
            strcmp(k, "val")) {
            error_setg(errp, "Invalid parameter '%s'", k);
            return false;
        }
    }
    if (!numa_get_u64(opts, "src", UINT16_MAX, &src, errp) ||
        !numa_get_u64(opts, "dst", UINT16_MAX, &dst, errp) ||
        !numa_get_u64(opts, "val", UINT8_MAX, &val, errp)) {
        return false;
    }
    if (src >= MAX_NODES || dst >= MAX_NODES) {
        error_setg(errp, "Parameter '%s' expects an integer between 0 and %d",
                   src >= MAX_NODES ? "src" : "dst", MAX_NODES - 1);
        return false;
    }
    if (!numa.nodes[src].present || !numa.nodes[dst].present) {
        error_setg(errp, "Source/Destination NUMA node is missing. Please "
                   "use '-numa node' option to declare it first.");
        return false;
    }
    if (val < NUMA_DISTANCE_MIN) {
        error_setg(errp, "NUMA distance (%" PRIu64 ") is invalid, it "
                   "shouldn't be less than %d.", val, NUMA_DISTANCE_MIN);
        return false;
    }
    if (src == dst && val != NUMA_DISTANCE_MIN) {
        error_setg(errp, "Local distance of node %" PRIu64 " should be %d.",
                   src, NUMA_DISTANCE_MIN);
        return false;
    }
    numa.nodes[src].distance[dst] = val;
    numa.have_distance = true;
    return true;
}

/* Missing reverse distances mirror the given ones; all must be known. */
static bool numa_complete_distances(Error **errp)
{
    for (unsigned a = 0; a < numa.num_nodes; a++) {
        for (unsigned b = 0; b < numa.num_nodes; b++) {
            uint8_t *ab = &numa.nodes[a].distance[b];
            uint8_t ba = numa.nodes[b].distance[a];

            if (a == b) {
                *ab = NUMA_DISTANCE_MIN;
            } else if (!*ab && ba) {
                *ab = ba;
            } else if (!*ab) {
                error_setg(errp, "The distance between node %u and %u is "
                           "missing, at least one distance value between "
                           "each nodes should be provided.", a, b);
                return false;
            }
        }
    }
    return true;
}

bool numa_complete(MachineState *ms, unsigned max_cpus, Error **errp)
{
    uint64_t total = 0;
    bool any_memdev = false;

    if (!numa_opts || !numa_opts->len) {
        return true;
    }
    numa.nr_cpus = max_cpus;
    numa.cpu_node = g_new(int, max_cpus);
    for (unsigned i = 0; i < max_cpus; i++) {
        numa.cpu_node[i] = -1;
    }
    /* Nodes first: a dist may name a node declared after it. */
    for (guint pass = 0; pass < 2; pass++) {
        for (guint i = 0; i < numa_opts->len; i++) {
            QemuOpts *opts = g_ptr_array_index(numa_opts, i);
            bool is_node = !strcmp(qemu_opt_get(opts, "type"), "node");
            g_autofree char *text = qemu_opts_to_string(opts);

            if (is_node != (pass == 0)) {
                continue;
            }
            if (!(is_node ? numa_node_opts(opts, max_cpus, errp)
                          : numa_dist_opts(opts, errp))) {
                error_prepend(errp, "-numa %s: ", text);
                return false;
            }
        }
    }
    for (unsigned i = 0; i < numa.num_nodes; i++) {
        if (!numa.nodes[i].present) {
            error_setg(errp, "-numa: node %u is missing (node ids must be "
                       "0 to %u without gaps)", i, numa.num_nodes - 1);
            return false;
        }
        any_memdev |= numa.nodes[i].memdev != NULL;
        total += numa.nodes[i].size;
    }
    if (!any_memdev) {
        error_setg(errp, "-numa: no node has memory (memdev=)");
        error_append_hint(errp, "Give each node a memory back-end: -object "
                          "memory-backend-ram,id=m0,size=... -numa "
                          "node,memdev=m0\n");
        return false;
    }
    if (ms->ram_size_set && total != ms->ram_size) {
        error_setg(errp, "total memory for NUMA nodes (0x%" PRIx64 ") should "
                   "equal RAM size (0x%" PRIx64 ")", total, ms->ram_size);
        return false;
    }
    ms->ram_size = total;
    for (unsigned c = 0; c < max_cpus; c++) {
        if (numa.cpu_node[c] < 0) {
            /* As QEMU does for CPUs no node names: the first node. */
            numa.cpu_node[c] = 0;
        }
    }
    if (numa.have_distance && !numa_complete_distances(errp)) {
        return false;
    }
    return true;
}

const NumaState *numa_state(void)
{
    return numa.num_nodes ? &numa : NULL;
}

uint8_t numa_distance(const NumaState *ns, unsigned a, unsigned b)
{
    if (ns->have_distance) {
        return ns->nodes[a].distance[b];
    }
    return a == b ? NUMA_DISTANCE_MIN : NUMA_DISTANCE_DEFAULT;
}
