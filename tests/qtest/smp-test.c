/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * -smp on the real binary: libvirt-style lines resolve to the topology
 * QEMU 8.2 would compute (read back from /machine's smp-* properties),
 * and each inconsistent form exits 1 naming the option and the cause.
 */
#include "qemu/osdep.h"
#include "libqtest.h"

typedef struct ExpectedTopo {
    unsigned cpus, max_cpus, sockets, dies, cores, threads;
} ExpectedTopo;

static uint64_t machine_prop(QTestState *qts, const char *prop)
{
    JsonNode *ret = qtest_qmp_assert_success(
        qts, "{'execute': 'qom-get', 'arguments': {'path': '/machine', "
        "'property': '%s'}}", prop);
    uint64_t v = json_node_get_int(ret);

    json_node_unref(ret);
    return v;
}

static void assert_machine_topo(const char *args, const ExpectedTopo *e)
{
    QTestState *qts = qtest_init(args);

    g_assert_cmpuint(machine_prop(qts, "smp-cpus"), ==, e->cpus);
    g_assert_cmpuint(machine_prop(qts, "smp-max-cpus"), ==, e->max_cpus);
    g_assert_cmpuint(machine_prop(qts, "smp-sockets"), ==, e->sockets);
    g_assert_cmpuint(machine_prop(qts, "smp-dies"), ==, e->dies);
    g_assert_cmpuint(machine_prop(qts, "smp-cores"), ==, e->cores);
    g_assert_cmpuint(machine_prop(qts, "smp-threads"), ==, e->threads);
    qtest_quit(qts);
}

static void test_default_is_one_cpu(void)
{
    static const ExpectedTopo one = { 1, 1, 1, 1, 1, 1 };

    assert_machine_topo("", &one);
    assert_machine_topo("-M none", &one);
}

static void test_libvirt_line_accepted(void)
{
    static const ExpectedTopo libvirt = { 4, 8, 2, 1, 2, 2 };
    static const ExpectedTopo plain = { 6, 6, 1, 1, 6, 1 };
    static const ExpectedTopo merged = { 4, 4, 2, 1, 2, 1 };

    assert_machine_topo("-smp 4,maxcpus=8,sockets=2,dies=1,cores=2,threads=2",
                        &libvirt);
    /* Cores are preferred over sockets when only cpus is given. */
    assert_machine_topo("-smp 6", &plain);
    /* Repeated -smp options merge key by key. */
    assert_machine_topo("-smp 4 -smp sockets=2", &merged);
}

static void test_zero_is_deprecated(void)
{
    QTestState *qts = qtest_init("-smp 4,sockets=0");

    g_assert_nonnull(strstr(qtest_get_stderr(qts),
                            "-smp 4,sockets=0: warning: Deprecated CPU "
                            "topology (considered invalid): CPU topology "
                            "parameters must be greater than zero"));
    /* ... and the zero is treated as omitted: cores takes the rest. */
    g_assert_cmpuint(machine_prop(qts, "smp-sockets"), ==, 1);
    g_assert_cmpuint(machine_prop(qts, "smp-cores"), ==, 4);
    qtest_quit(qts);
}

static void assert_start_fails(const char *args, const char *message)
{
    g_autofree char *cmdline = g_strdup_printf("-accel qtest -display none "
                                               "%s", args);

    qtest_assert_start_fails(cmdline, message);
}

static void test_invalid_forms_exit_1(void)
{
    assert_start_fails("-smp 2,maxcpus=1",
                       "-smp 2,maxcpus=1: Invalid CPU topology: maxcpus must "
                       "be equal to or greater than smp: sockets (1) * dies "
                       "(1) * cores (1) * threads (1) == maxcpus (1) < "
                       "smp_cpus (2)\n");
    assert_start_fails("-smp 4,sockets=1,cores=2,threads=1",
                       "-smp 4,sockets=1,cores=2,threads=1: Invalid CPU "
                       "topology: product of the hierarchy must match "
                       "maxcpus: sockets (1) * dies (1) * cores (2) * "
                       "threads (1) != maxcpus (4)\n");
    assert_start_fails("-smp 1,maxcpus=300",
                       "-smp 1,maxcpus=300: Invalid SMP CPUs 300. The max "
                       "CPUs supported by machine 'pc-i440fx-8.2' is 255\n");
    assert_start_fails("-M none -smp 2",
                       "-smp 2: Invalid SMP CPUs 2. The max CPUs supported "
                       "by machine 'none' is 1\n");
    assert_start_fails("-smp 4,clusters=2",
                       "-smp 4,clusters=2: clusters not supported by this "
                       "machine's CPU topology\n");
    assert_start_fails("-smp 2,sockets=2,bogus=1",
                       "-smp 2,sockets=2,bogus=1: Invalid parameter "
                       "'bogus'\n");
    assert_start_fails("-smp 2,cores=two",
                       "-smp 2,cores=two: Parameter 'cores' expects a "
                       "number\n");
    /* The last -smp is the one named, as the merged result is checked. */
    assert_start_fails("-smp 2 -smp maxcpus=1",
                       "-smp maxcpus=1: Invalid CPU topology: maxcpus must "
                       "be equal to or greater than smp");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/smp/default-is-one-cpu", test_default_is_one_cpu);
    g_test_add_func("/smp/libvirt-line-accepted", test_libvirt_line_accepted);
    g_test_add_func("/smp/zero-is-deprecated-warning",
                    test_zero_is_deprecated);
    g_test_add_func("/smp/invalid-forms-exit-1", test_invalid_forms_exit_1);
    return g_test_run();
}
