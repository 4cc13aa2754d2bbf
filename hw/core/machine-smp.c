/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * -smp: from the option text to a checked CpuTopology.
 *
 * Parsing (text -> SmpConfig) and resolving (SmpConfig -> CpuTopology)
 * are separate so that repeated -smp options merge like QEMU's, and so
 * that the rules can be unit-tested without a machine object.  The rules
 * and the error texts follow QEMU 8.2, which libvirt and scripts rely on.
 */
#include "qemu/osdep.h"
#include "hw/boards.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/option.h"

typedef struct SmpKey {
    const char *name;
    size_t has_offset;
    size_t value_offset;
} SmpKey;

#define SMP_KEY(field) \
    { #field, offsetof(SmpConfig, has_##field), offsetof(SmpConfig, field) }

static const SmpKey smp_keys[] = {
    SMP_KEY(cpus), SMP_KEY(maxcpus), SMP_KEY(sockets), SMP_KEY(dies),
    SMP_KEY(clusters), SMP_KEY(books), SMP_KEY(drawers), SMP_KEY(cores),
    SMP_KEY(threads),
};

bool machine_smp_config_parse(SmpConfig *config, const char *arg,
                              Error **errp)
{
    g_autoptr(QemuOpts) opts = qemu_opts_parse(arg, "cpus", errp);
    SmpConfig merged = *config;

    if (!opts) {
        return false;
    }
    if (qemu_opts_id(opts)) {
        error_setg(errp, "Invalid parameter 'id'");
        return false;
    }
    /* In order, so that a key given twice keeps its last value. */
    for (size_t i = 0; i < qemu_opts_count(opts); i++) {
        const char *key = qemu_opts_key(opts, i);
        const SmpKey *k = NULL;
        uint64_t value;

        for (size_t j = 0; j < ARRAY_SIZE(smp_keys); j++) {
            if (!strcmp(key, smp_keys[j].name)) {
                k = &smp_keys[j];
                break;
            }
        }
        if (!k) {
            error_setg(errp, "Invalid parameter '%s'", key);
            return false;
        }
        if (!qemu_strtou64(qemu_opts_value(opts, i), &value, NULL)) {
            error_setg(errp, "Parameter '%s' expects a number", key);
            return false;
        }
        *(bool *)((char *)&merged + k->has_offset) = true;
        *(uint64_t *)((char *)&merged + k->value_offset) = value;
    }
    *config = merged;
    return true;
}

/*
 * Saturates and flags the overflow, so that an absurd hierarchy can never
 * wrap around to a match.
 */
static uint64_t smp_mul(uint64_t a, uint64_t b, bool *overflow)
{
    uint64_t r;

    if (__builtin_mul_overflow(a, b, &r)) {
        *overflow = true;
        return UINT64_MAX;
    }
    return r;
}

static uint64_t smp_product(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
                            bool *overflow)
{
    return smp_mul(smp_mul(a, b, overflow), smp_mul(c, d, overflow),
                   overflow);
}

/* The omitted level: what is left of maxcpus by the other three. */
static uint64_t smp_rest(uint64_t maxcpus, uint64_t a, uint64_t b,
                         uint64_t c)
{
    bool overflow = false;
    uint64_t others = smp_product(a, b, c, 1, &overflow);

    return overflow ? 0 : maxcpus / others;
}

static char *smp_machine_name(const MachineClass *mc)
{
    const char *type;

    if (mc->name) {
        return g_strdup(mc->name);
    }
    type = object_class_get_name(OBJECT_CLASS(mc));
    if (g_str_has_suffix(type, TYPE_MACHINE_SUFFIX)) {
        return g_strndup(type, strlen(type) - strlen(TYPE_MACHINE_SUFFIX));
    }
    return g_strdup(type);
}

/* "sockets (2) * dies (1) * cores (4) * threads (2)"; dies only on x86. */
static char *smp_hierarchy_string(const MachineClass *mc, uint64_t sockets,
                                  uint64_t dies, uint64_t cores,
                                  uint64_t threads)
{
    GString *s = g_string_new(NULL);

    g_string_append_printf(s, "sockets (%" PRIu64 ")", sockets);
    if (mc->smp_dies_supported) {
        g_string_append_printf(s, " * dies (%" PRIu64 ")", dies);
    }
    g_string_append_printf(s, " * cores (%" PRIu64 ") * threads (%" PRIu64
                           ")", cores, threads);
    return g_string_free(s, FALSE);
}

static bool smp_any_zero(const SmpConfig *c)
{
    for (size_t i = 0; i < ARRAY_SIZE(smp_keys); i++) {
        bool has = *(const bool *)((const char *)c + smp_keys[i].has_offset);
        uint64_t v = *(const uint64_t *)((const char *)c +
                                         smp_keys[i].value_offset);
        if (has && !v) {
            return true;
        }
    }
    return false;
}

bool machine_parse_smp(const MachineClass *mc, const SmpConfig *config,
                       CpuTopology *topo, Error **errp)
{
    /* 0 stands for "omitted" from here on, as QEMU 8.2 treats it. */
    uint64_t cpus = config->has_cpus ? config->cpus : 0;
    uint64_t maxcpus = config->has_maxcpus ? config->maxcpus : 0;
    uint64_t sockets = config->has_sockets ? config->sockets : 0;
    uint64_t dies = config->has_dies ? config->dies : 0;
    uint64_t cores = config->has_cores ? config->cores : 0;
    uint64_t threads = config->has_threads ? config->threads : 0;
    uint64_t limit = mc->max_cpus ? mc->max_cpus : UINT_MAX;
    uint64_t product;
    bool overflow = false;
    const struct {
        const char *name;
        uint64_t value;
    } unsupported[] = {
        { "dies", mc->smp_dies_supported ? 0 : dies },
        { "clusters", config->has_clusters ? config->clusters : 0 },
        { "books", config->has_books ? config->books : 0 },
        { "drawers", config->has_drawers ? config->drawers : 0 },
    };

    if (smp_any_zero(config)) {
        warn_report("Deprecated CPU topology (considered invalid): "
                    "CPU topology parameters must be greater than zero");
    }
    for (size_t i = 0; i < ARRAY_SIZE(unsupported); i++) {
        if (unsupported[i].value > 1) {
            error_setg(errp, "%s not supported by this machine's CPU "
                       "topology", unsupported[i].name);
            return false;
        }
    }
    dies = dies ? dies : 1;

    if (!cpus && !maxcpus) {
        sockets = sockets ? sockets : 1;
        cores = cores ? cores : 1;
        threads = threads ? threads : 1;
    } else {
        maxcpus = maxcpus ? maxcpus : cpus;
        /* Current machine types fill in cores before sockets. */
        if (!cores) {
            sockets = sockets ? sockets : 1;
            threads = threads ? threads : 1;
            cores = smp_rest(maxcpus, sockets, dies, threads);
        } else if (!sockets) {
            threads = threads ? threads : 1;
            sockets = smp_rest(maxcpus, dies, cores, threads);
        }
        if (!threads) {
            threads = smp_rest(maxcpus, sockets, dies, cores);
        }
    }

    product = smp_product(sockets, dies, cores, threads, &overflow);
    maxcpus = maxcpus ? maxcpus : product;
    cpus = cpus ? cpus : maxcpus;

    if (product != maxcpus || overflow) {
        g_autofree char *h = smp_hierarchy_string(mc, sockets, dies, cores,
                                                  threads);
        error_setg(errp, "Invalid CPU topology: product of the hierarchy "
                   "must match maxcpus: %s != maxcpus (%" PRIu64 ")",
                   h, maxcpus);
        return false;
    }
    if (maxcpus < cpus) {
        g_autofree char *h = smp_hierarchy_string(mc, sockets, dies, cores,
                                                  threads);
        error_setg(errp, "Invalid CPU topology: maxcpus must be equal to or "
                   "greater than smp: %s == maxcpus (%" PRIu64 ") < "
                   "smp_cpus (%" PRIu64 ")", h, maxcpus, cpus);
        return false;
    }
    if (maxcpus > limit) {
        g_autofree char *name = smp_machine_name(mc);
        error_setg(errp, "Invalid SMP CPUs %" PRIu64 ". The max CPUs "
                   "supported by machine '%s' is %" PRIu64,
                   maxcpus, name, limit);
        return false;
    }

    /* Every value is now at most maxcpus <= limit <= UINT_MAX. */
    *topo = (CpuTopology) {
        .cpus = cpus,
        .max_cpus = maxcpus,
        .sockets = sockets,
        .dies = dies,
        .cores = cores,
        .threads = threads,
    };
    return true;
}
