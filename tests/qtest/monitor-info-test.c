/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * query-pci, HMP "info pci" and "info qtree" (through
 * human-monitor-command, as virsh qemu-monitor-command --hmp sends them),
 * and inject-nmi's answer where no vCPU runs.
 */
#include "qemu/osdep.h"
#include "libqtest.h"

static char *hmp(QTestState *qts, const char *line)
{
    JsonNode *r = qtest_qmp_assert_success(
        qts, "{'execute': 'human-monitor-command', "
             "'arguments': {'command-line': '%s'}}", line);
    char *text = g_strdup(json_node_get_string(r));

    json_node_unref(r);
    return text;
}

static void test_query_pci(void)
{
    QTestState *qts = qtest_init("-machine pc -device pci-testdev,id=t0,"
                                 "addr=0x5");
    JsonNode *r = qtest_qmp_assert_success(qts, "{'execute': 'query-pci'}");
    JsonArray *buses = json_node_get_array(r);
    JsonArray *devs;
    JsonObject *t0 = NULL;

    g_assert_cmpuint(json_array_get_length(buses), ==, 1);
    devs = json_object_get_array_member(
        json_array_get_object_element(buses, 0), "devices");
    for (guint i = 0; i < json_array_get_length(devs); i++) {
        JsonObject *d = json_array_get_object_element(devs, i);

        if (!strcmp(json_object_get_string_member(d, "qdev_id"), "t0")) {
            t0 = d;
        }
    }
    g_assert_nonnull(t0);
    g_assert_cmpint(json_object_get_int_member(t0, "slot"), ==, 5);
    g_assert_cmpint(json_object_get_int_member(t0, "function"), ==, 0);
    g_assert_cmphex(json_object_get_int_member(
                        json_object_get_object_member(t0, "id"), "vendor"),
                    ==, 0x1d0c);
    g_assert_cmpint(json_object_get_int_member(t0, "irq_pin"), ==, 1);
    g_assert_cmpuint(json_array_get_length(
                         json_object_get_array_member(t0, "regions")), ==, 2);
    json_node_unref(r);
    qtest_quit(qts);
}

static void test_hmp_info(void)
{
    QTestState *qts = qtest_init("-machine pc -device pci-testdev,id=t0,"
                                 "addr=0x5");
    g_autofree char *pci = hmp(qts, "info pci");
    g_autofree char *qtree = hmp(qts, "info qtree");
    JsonObject *reply;

    g_assert_nonnull(strstr(pci, "Bus  0, device   5, function 0:"));
    g_assert_nonnull(strstr(pci, "PCI device 1d0c:0001"));
    g_assert_nonnull(strstr(pci, "id \"t0\""));
    g_assert_nonnull(strstr(qtree, "bus: pci.0"));
    g_assert_nonnull(strstr(qtree, "dev: pci-testdev, id \"t0\""));
    g_assert_nonnull(strstr(qtree, "addr = \"05.0\""));
    /* Each property once, though the class chain repeats the list. */
    g_assert_null(strstr(strstr(qtree, "disable_s3 = 1") + 1,
                         "disable_s3 = 1"));
    /*
     * No vCPU runs under qtest; a build without KVM (the x86 binary of a
     * ppc64le host) has no inject-nmi at all.
     */
    reply = qtest_qmp(qts, "{'execute': 'inject-nmi'}");
    g_assert_nonnull(qtest_qmp_error_desc(reply));
    g_assert_true(strstr(qtest_qmp_error_desc(reply), "no vCPU") ||
                  strstr(qtest_qmp_error_desc(reply),
                         "inject-nmi has not been found"));
    json_object_unref(reply);
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/monitor-info/query-pci", test_query_pci);
    g_test_add_func("/monitor-info/hmp-info-pci-qtree", test_hmp_info);
    return g_test_run();
}
