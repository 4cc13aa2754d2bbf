/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What libvirt 9.0 sends when it reconnects to a running domain after a
 * libvirtd restart (qemuProcessReconnect), against a machine with a disk
 * and a PCI device with an id: every command must succeed with QEMU's
 * shape, since any error makes libvirt kill the guest (reason=daemon).
 * The real thing, libvirtd restarted under a running Linux guest with a
 * disk, NICs and a <hostdev>, runs in test_libvirt.py (nested).
 */
#include "qemu/osdep.h"
#include "libqtest.h"

static char *disk_path;

static JsonNode *ok(QTestState *qts, const char *cmd)
{
    return qtest_qmp_assert_success(qts, "%s", cmd);
}

static void test_reconnect_sequence(void)
{
    QTestState *qts = qtest_initf(
        "-machine pc -m 128 -name guest=rc,debug-threads=on "
        "-uuid 6a1d1b3e-1111-4222-8333-944455556666 "
        "-blockdev '{\"driver\":\"file\",\"filename\":\"%s\","
        "\"node-name\":\"libvirt-1-storage\"}' "
        "-blockdev '{\"node-name\":\"libvirt-1-format\",\"driver\":\"raw\","
        "\"file\":\"libvirt-1-storage\"}' "
        "-device virtio-blk-pci,bus=pci.0,addr=0x4,"
        "drive=libvirt-1-format,id=virtio-disk0",
        disk_path);
    JsonNode *r;
    JsonArray *a;
    bool found;

    /* qemuConnectMonitor: negotiated by libqtest; then the migration
     * capabilities it compares with the status XML. */
    json_node_unref(ok(qts, "{'execute': 'query-migrate-capabilities'}"));
    /* qemuProcessUpdateState */
    r = ok(qts, "{'execute': 'query-status'}");
    g_assert_cmpstr(json_object_get_string_member(json_node_get_object(r),
                                                  "status"), ==, "running");
    json_node_unref(r);
    /* qemuDomainRefreshVcpuInfo */
    /* (under qtest there are no vCPU threads to list) */
    r = ok(qts, "{'execute': 'query-cpus-fast'}");
    g_assert_cmpint(JSON_NODE_TYPE(r), ==, JSON_NODE_ARRAY);
    json_node_unref(r);
    /* qemuProcessRefreshDisks */
    r = ok(qts, "{'execute': 'query-block'}");
    a = json_node_get_array(r);
    found = false;
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonObject *b = json_array_get_object_element(a, i);

        found |= json_object_has_member(b, "qdev") &&
                 strstr(json_object_get_string_member(b, "qdev"),
                        "virtio-disk0") != NULL;
    }
    g_assert_true(found);
    json_node_unref(r);
    /* qemuRefreshVirtioChannelState */
    json_node_unref(ok(qts, "{'execute': 'query-chardev'}"));
    /* qemuBlockJobRefreshJobs: the command whose absence killed guests */
    r = ok(qts, "{'execute': 'query-jobs'}");
    g_assert_cmpint(JSON_NODE_TYPE(r), ==, JSON_NODE_ARRAY);
    g_assert_cmpuint(json_array_get_length(json_node_get_array(r)), ==, 0);
    json_node_unref(r);
    /* qemuProcessUpdateDevices: the aliases still there */
    r = ok(qts, "{'execute': 'qom-list', "
                "'arguments': {'path': '/machine/peripheral'}}");
    a = json_node_get_array(r);
    found = false;
    for (guint i = 0; i < json_array_get_length(a); i++) {
        found |= !strcmp(json_object_get_string_member(
                             json_array_get_object_element(a, i), "name"),
                         "virtio-disk0");
    }
    g_assert_true(found);
    json_node_unref(r);
    /* qemuProcessRefreshFdsetIndex */
    json_node_unref(ok(qts, "{'execute': 'query-fdsets'}"));

    /* Afterwards virsh works on the domain as before. */
    json_node_unref(ok(qts, "{'execute': 'stop'}"));
    json_node_unref(ok(qts, "{'execute': 'cont'}"));
    qtest_quit(qts);
}

static void test_job_commands(void)
{
    QTestState *qts = qtest_init("-machine pc");
    JsonObject *reply;

    reply = qtest_qmp(qts, "{'execute': 'job-dismiss', "
                           "'arguments': {'id': 'nosuch'}}");
    g_assert_cmpstr(qtest_qmp_error_class(reply), ==, "GenericError");
    g_assert_cmpstr(qtest_qmp_error_desc(reply), ==, "Job not found");
    json_object_unref(reply);
    reply = qtest_qmp(qts, "{'execute': 'job-cancel', "
                           "'arguments': {'id': 'nosuch'}}");
    g_assert_cmpstr(qtest_qmp_error_desc(reply), ==, "Job not found");
    json_object_unref(reply);
    reply = qtest_qmp(qts, "{'execute': 'job-dismiss'}");
    g_assert_cmpstr(qtest_qmp_error_class(reply), ==, "GenericError");
    json_object_unref(reply);
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    int fd, ret;

    g_test_init(&argc, &argv, NULL);
    fd = g_file_open_tmp("reconnect-disk-XXXXXX", &disk_path, NULL);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(ftruncate(fd, 1 << 20), ==, 0);
    close(fd);
    g_test_add_func("/reconnect/libvirt-9.0-sequence",
                    test_reconnect_sequence);
    g_test_add_func("/reconnect/job-commands", test_job_commands);
    ret = g_test_run();
    unlink(disk_path);
    g_free(disk_path);
    return ret;
}
