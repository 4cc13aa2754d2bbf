/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-pci over the kernel backend, on any machine: libvirt's command-line
 * forms are accepted and reach the backend, and every failure (no such
 * device, no IOMMU group, group not bound to vfio-pci, bad address) is a
 * clear error naming the device, at start-up (exit 1) and from
 * device_add (the VM keeps running, nothing half-made stays).  The real
 * kernel path is tests/functional/test_kernel_vfio.py.
 */
#include "qemu/osdep.h"
#include <sys/wait.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/vfio-query.h"

/* A function no machine has: domain 0, bus 0xfe. */
#define ABSENT "0000:fe:1f.7"

static void expect_start_failure(const char *args, const char *needle)
{
    g_autofree char *err = NULL;
    int status;

    status = qtest_run_expect_fail(args, NULL, &err);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    if (!strstr(err, needle)) {
        g_error("'%s' does not mention '%s'", err, needle);
    }
}

/* Every property libvirt's <hostdev> uses parses; the backend answers. */
static void test_libvirt_keyval(void)
{
    expect_start_failure("-M pc -accel qtest -display none -device "
                         "vfio-pci,host=" ABSENT ",id=hostdev0,bus=pci.0,"
                         "addr=0x2,rombar=1,bootindex=1",
                         "vfio " ABSENT ": no such host device");
}

static void test_libvirt_json(void)
{
    expect_start_failure("-M pc -accel qtest -display none -device "
                         "'{\"driver\": \"vfio-pci\", \"host\": \"" ABSENT
                         "\", \"id\": \"hostdev0\", \"bus\": \"pci.0\","
                         " \"addr\": \"0x2\", \"rombar\": 1,"
                         " \"bootindex\": 1}'",
                         "vfio " ABSENT ": no such host device");
}

static void test_sysfsdev_absent(void)
{
    expect_start_failure("-M pc -accel qtest -display none -device "
                         "vfio-pci,sysfsdev=/sys/bus/pci/devices/" ABSENT,
                         "vfio " ABSENT ": no such host device");
}

static void test_bad_host_syntax(void)
{
    expect_start_failure("-M pc -accel qtest -display none -device "
                         "vfio-pci,host=06:12", "doesn't take value '06:12'");
}

/*
 * A real host device that is not bound to vfio-pci: without an IOMMU it
 * has no group, with one its group is not open to us.  Either way the
 * error names the device.
 */
static void test_unbound_host_device(void)
{
    g_autoptr(GDir) dir = g_dir_open("/sys/bus/pci/devices", 0, NULL);
    g_autofree char *args = NULL;
    g_autofree char *err = NULL;
    g_autofree char *prefix = NULL;
    const char *bdf = NULL;
    int status;

    while (dir && (bdf = g_dir_read_name(dir))) {
        g_autofree char *drv = g_strdup_printf("/sys/bus/pci/devices/%s/"
                                               "driver", bdf);
        g_autofree char *target = g_file_read_link(drv, NULL);

        /* Skip devices vfio-pci owns: those could open for real. */
        if (!target || !g_str_has_suffix(target, "/vfio-pci")) {
            break;
        }
    }
    if (!bdf) {
        g_test_skip("no PCI device on this machine");
        return;
    }
    args = g_strdup_printf("-M pc -accel qtest -display none -device "
                           "vfio-pci,host=%s", bdf);
    status = qtest_run_expect_fail(args, NULL, &err);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    prefix = g_strdup_printf("vfio %s: ", bdf);
    g_assert_nonnull(strstr(err, prefix));
    g_assert_true(strstr(err, "no IOMMU group") ||
                  strstr(err, "cannot open group") ||
                  strstr(err, "not viable") ||
                  strstr(err, "cannot get the device"));
}

static void test_device_add_failure_leaves_nothing(void)
{
    QTestState *qts = qtest_init("-M pc -m 64M");
    QPCIBus *bus = qpci_new_pc(qts);
    JsonObject *reply;

    reply = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': {"
                      "'driver': 'vfio-pci', 'id': 'hostdev0', "
                      "'host': '" ABSENT "', 'bus': 'pci.0', "
                      "'addr': '0x2'}}");
    g_assert_nonnull(qtest_qmp_error_desc(reply));
    g_assert_nonnull(strstr(qtest_qmp_error_desc(reply),
                            "vfio " ABSENT ": no such host device"));
    json_object_unref(reply);
    g_assert_null(qpci_device_find(bus, QPCI_DEVFN(2, 0)));
    g_assert_cmpint(qvfio_query_count(qts), ==, 0);
    /* The id is free again: nothing half-made kept it. */
    reply = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': {"
                      "'driver': 'vfio-pci', 'id': 'hostdev0', "
                      "'sysfsdev': '/sys/bus/pci/devices/" ABSENT "'}}");
    g_assert_nonnull(strstr(qtest_qmp_error_desc(reply),
                            "no such host device"));
    json_object_unref(reply);
    qpci_free_pc(bus);
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vfio-kernel/cmdline/libvirt-keyval-reaches-backend",
                    test_libvirt_keyval);
    g_test_add_func("/vfio-kernel/cmdline/libvirt-json-reaches-backend",
                    test_libvirt_json);
    g_test_add_func("/vfio-kernel/cmdline/sysfsdev-absent",
                    test_sysfsdev_absent);
    g_test_add_func("/vfio-kernel/cmdline/bad-host-syntax",
                    test_bad_host_syntax);
    g_test_add_func("/vfio-kernel/cmdline/unbound-host-device",
                    test_unbound_host_device);
    g_test_add_func("/vfio-kernel/hotplug/failure-leaves-nothing",
                    test_device_add_failure_leaves_nothing);
    return g_test_run();
}
