/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * -smp parsing and topology resolution (hw/core/machine-smp.c): computed
 * values, QEMU 8.2's error texts, merging of repeated -smp, and absurd
 * values that must fail cleanly.
 */
#include "qemu/osdep.h"
#include "hw/boards.h"
#include "qapi/error.h"

/* Like pc: 255 vCPUs, dies allowed. */
static const MachineClass pc_like = {
    .name = "pc", .max_cpus = 255, .smp_dies_supported = true,
};
/* Like pseries: no dies level. */
static const MachineClass nodies_like = {
    .name = "pseries", .max_cpus = 1024,
};

/* Parses each argument in turn (as repeated -smp) and resolves. */
static bool smp_resolve(const MachineClass *mc, const char *const *args,
                        CpuTopology *topo, char **errmsg)
{
    SmpConfig config = { 0 };
    Error *err = NULL;

    for (; *args; args++) {
        if (!machine_smp_config_parse(&config, *args, &err)) {
            break;
        }
    }
    if (!err) {
        machine_parse_smp(mc, &config, topo, &err);
    }
    if (err) {
        *errmsg = g_strdup(error_get_pretty(err));
        error_free(err);
        return false;
    }
    *errmsg = NULL;
    return true;
}

static void assert_topo(const MachineClass *mc, const char *arg,
                        unsigned cpus, unsigned max_cpus, unsigned sockets,
                        unsigned dies, unsigned cores, unsigned threads)
{
    const char *args[] = { arg, NULL };
    CpuTopology t = { 0 };
    g_autofree char *msg = NULL;

    if (!smp_resolve(mc, args, &t, &msg)) {
        g_error("-smp %s: unexpected error: %s", arg, msg);
    }
    g_assert_cmpuint(t.cpus, ==, cpus);
    g_assert_cmpuint(t.max_cpus, ==, max_cpus);
    g_assert_cmpuint(t.sockets, ==, sockets);
    g_assert_cmpuint(t.dies, ==, dies);
    g_assert_cmpuint(t.cores, ==, cores);
    g_assert_cmpuint(t.threads, ==, threads);
}

static void assert_smp_error(const MachineClass *mc, const char *arg,
                             const char *expected)
{
    const char *args[] = { arg, NULL };
    CpuTopology t = { .cpus = 77 };
    g_autofree char *msg = NULL;

    g_assert_false(smp_resolve(mc, args, &t, &msg));
    g_assert_cmpstr(msg, ==, expected);
    /* A failed resolve leaves the previous topology alone. */
    g_assert_cmpuint(t.cpus, ==, 77);
}

static void test_cpus_only_fills_cores(void)
{
    assert_topo(&pc_like, "1", 1, 1, 1, 1, 1, 1);
    assert_topo(&pc_like, "2", 2, 2, 1, 1, 2, 1);
    assert_topo(&pc_like, "cpus=6", 6, 6, 1, 1, 6, 1);
    assert_topo(&pc_like, "maxcpus=6", 6, 6, 1, 1, 6, 1);
    assert_topo(&pc_like, "2,maxcpus=8", 2, 8, 1, 1, 8, 1);
}

static void test_libvirt_lines(void)
{
    assert_topo(&pc_like, "4,sockets=2,dies=1,cores=2,threads=1",
                4, 4, 2, 1, 2, 1);
    assert_topo(&pc_like, "2,maxcpus=8,sockets=2,dies=1,cores=2,threads=2",
                2, 8, 2, 1, 2, 2);
    assert_topo(&pc_like, "16,sockets=2,dies=2,cores=2,threads=2",
                16, 16, 2, 2, 2, 2);
}

static void test_missing_values_computed(void)
{
    /* Topology alone gives cpus = maxcpus = the product. */
    assert_topo(&pc_like, "sockets=2,cores=3,threads=2", 12, 12, 2, 1, 3, 2);
    /* cores given: sockets is what is left. */
    assert_topo(&pc_like, "8,cores=2", 8, 8, 4, 1, 2, 1);
    assert_topo(&pc_like, "8,cores=2,threads=2", 8, 8, 2, 1, 2, 2);
    /* sockets given: cores is what is left, threads default to 1. */
    assert_topo(&pc_like, "8,sockets=2", 8, 8, 2, 1, 4, 1);
    /* sockets and cores given: threads is what is left. */
    assert_topo(&pc_like, "8,sockets=2,cores=2", 8, 8, 2, 1, 2, 2);
    /* The computation divides maxcpus, not cpus. */
    assert_topo(&pc_like, "2,maxcpus=4,sockets=2", 2, 4, 2, 1, 2, 1);
}

static void test_zero_means_omitted(void)
{
    /* Deprecated in 8.2 (a warning), treated as not given. */
    assert_topo(&pc_like, "0", 1, 1, 1, 1, 1, 1);
    assert_topo(&pc_like, "4,cores=0", 4, 4, 1, 1, 4, 1);
    assert_topo(&pc_like, "4,maxcpus=0,sockets=0,threads=0", 4, 4, 1, 1, 4,
                1);
}

static void test_product_mismatch(void)
{
    assert_smp_error(&pc_like, "4,sockets=1,cores=2,threads=1",
                     "Invalid CPU topology: product of the hierarchy must "
                     "match maxcpus: sockets (1) * dies (1) * cores (2) * "
                     "threads (1) != maxcpus (4)");
    /* 3 cpus cannot be split over 2 sockets: cores rounds down to 1. */
    assert_smp_error(&pc_like, "3,sockets=2",
                     "Invalid CPU topology: product of the hierarchy must "
                     "match maxcpus: sockets (2) * dies (1) * cores (1) * "
                     "threads (1) != maxcpus (3)");
    /* More sockets than cpus: cores is 0. */
    assert_smp_error(&pc_like, "2,sockets=4",
                     "Invalid CPU topology: product of the hierarchy must "
                     "match maxcpus: sockets (4) * dies (1) * cores (0) * "
                     "threads (1) != maxcpus (2)");
    /* No dies level on this machine: it is not printed either. */
    assert_smp_error(&nodies_like, "4,sockets=3",
                     "Invalid CPU topology: product of the hierarchy must "
                     "match maxcpus: sockets (3) * cores (1) * "
                     "threads (1) != maxcpus (4)");
}

static void test_maxcpus_below_cpus(void)
{
    assert_smp_error(&pc_like, "2,maxcpus=1",
                     "Invalid CPU topology: maxcpus must be equal to or "
                     "greater than smp: sockets (1) * dies (1) * cores (1) "
                     "* threads (1) == maxcpus (1) < smp_cpus (2)");
    assert_smp_error(&pc_like, "8,maxcpus=4,sockets=2,cores=2,threads=1",
                     "Invalid CPU topology: maxcpus must be equal to or "
                     "greater than smp: sockets (2) * dies (1) * cores (2) "
                     "* threads (1) == maxcpus (4) < smp_cpus (8)");
}

static void test_machine_limit(void)
{
    assert_smp_error(&pc_like, "1,maxcpus=300",
                     "Invalid SMP CPUs 300. The max CPUs supported by "
                     "machine 'pc' is 255");
    assert_smp_error(&pc_like, "256",
                     "Invalid SMP CPUs 256. The max CPUs supported by "
                     "machine 'pc' is 255");
    assert_topo(&pc_like, "255", 255, 255, 1, 1, 255, 1);
    assert_topo(&pc_like, "1,maxcpus=255,sockets=5,cores=51", 1, 255, 5, 1,
                51, 1);
}

static void test_unsupported_levels(void)
{
    assert_smp_error(&nodies_like, "2,dies=2",
                     "dies not supported by this machine's CPU topology");
    assert_smp_error(&pc_like, "4,clusters=2",
                     "clusters not supported by this machine's CPU topology");
    assert_smp_error(&pc_like, "4,books=2",
                     "books not supported by this machine's CPU topology");
    assert_smp_error(&pc_like, "4,drawers=2",
                     "drawers not supported by this machine's CPU topology");
    /* The value 1 means "not used" and is accepted. */
    assert_topo(&nodies_like, "4,dies=1,clusters=1,books=1,drawers=1",
                4, 4, 1, 1, 4, 1);
}

static void test_huge_values_fail_cleanly(void)
{
    CpuTopology t;
    g_autofree char *msg = NULL;
    g_autofree char *msg2 = NULL;
    const char *wraps[] = {
        /* 2^16 each: the product is 2^64, which would wrap to 0. */
        "sockets=65536,dies=65536,cores=65536,threads=65536", NULL
    };
    const char *big[] = { "18446744073709551615", NULL };

    g_assert_false(smp_resolve(&pc_like, wraps, &t, &msg));
    g_assert_true(g_str_has_prefix(msg, "Invalid CPU topology: product of "
                                        "the hierarchy must match maxcpus"));
    g_assert_false(smp_resolve(&pc_like, big, &t, &msg2));
    g_assert_cmpstr(msg2, ==, "Invalid SMP CPUs 18446744073709551615. The "
                    "max CPUs supported by machine 'pc' is 255");
}

static void test_parse_errors(void)
{
    const char *bogus[] = { "2,bogus=1", NULL };
    const char *notnum[] = { "two", NULL };
    const char *negative[] = { "2,cores=-1", NULL };
    CpuTopology t;
    char *msg;

    g_assert_false(smp_resolve(&pc_like, bogus, &t, &msg));
    g_assert_cmpstr(msg, ==, "Invalid parameter 'bogus'");
    g_free(msg);
    g_assert_false(smp_resolve(&pc_like, notnum, &t, &msg));
    g_assert_cmpstr(msg, ==, "Parameter 'cpus' expects a number");
    g_free(msg);
    g_assert_false(smp_resolve(&pc_like, negative, &t, &msg));
    g_assert_cmpstr(msg, ==, "Parameter 'cores' expects a number");
    g_free(msg);
}

static void test_repeated_smp_merges(void)
{
    const char *merge[] = { "4", "sockets=2", NULL };
    const char *override[] = { "4,cores=4", "cores=2", NULL };
    CpuTopology t;
    g_autofree char *msg = NULL;
    SmpConfig config = { 0 };
    Error *err = NULL;

    g_assert_true(smp_resolve(&pc_like, merge, &t, &msg));
    g_assert_cmpuint(t.cpus, ==, 4);
    g_assert_cmpuint(t.sockets, ==, 2);
    g_assert_cmpuint(t.cores, ==, 2);
    g_assert_true(smp_resolve(&pc_like, override, &t, &msg));
    g_assert_cmpuint(t.sockets, ==, 2);
    g_assert_cmpuint(t.cores, ==, 2);

    /* A rejected -smp changes nothing, not even its valid keys. */
    g_assert_true(machine_smp_config_parse(&config, "4", &error_abort));
    g_assert_false(machine_smp_config_parse(&config, "cores=2,bogus=1",
                                            &err));
    error_free(err);
    g_assert_false(config.has_cores);
    g_assert_true(config.has_cpus);
    g_assert_cmpuint(config.cpus, ==, 4);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/machine/smp/cpus-only-fills-cores",
                    test_cpus_only_fills_cores);
    g_test_add_func("/machine/smp/libvirt-lines", test_libvirt_lines);
    g_test_add_func("/machine/smp/missing-values-computed",
                    test_missing_values_computed);
    g_test_add_func("/machine/smp/zero-means-omitted",
                    test_zero_means_omitted);
    g_test_add_func("/machine/smp/product-mismatch", test_product_mismatch);
    g_test_add_func("/machine/smp/maxcpus-below-cpus",
                    test_maxcpus_below_cpus);
    g_test_add_func("/machine/smp/machine-limit", test_machine_limit);
    g_test_add_func("/machine/smp/unsupported-levels",
                    test_unsupported_levels);
    g_test_add_func("/machine/smp/huge-values-fail-cleanly",
                    test_huge_values_fail_cleanly);
    g_test_add_func("/machine/smp/parse-errors", test_parse_errors);
    g_test_add_func("/machine/smp/repeated-smp-merges",
                    test_repeated_smp_merges);
    return g_test_run();
}
