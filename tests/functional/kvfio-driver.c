/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Drives Conduit's vfio-pci over the kernel VFIO backend, inside the Linux
 * guest that test_kernel_vfio.py boots: a real kernel, a real IOMMU
 * (QEMU's intel-iommu) and QEMU's emulated NVMe bound to vfio-pci.
 *
 * Conduit runs under -accel qtest (QTEST_BINARY); the NVMe function's
 * address comes in KVFIO_HOST.  The guest view is the pc machine's, so the
 * same libqos NVMe helpers as the vfio-user qtests apply.  Results are TAP
 * on stdout, which the outer test reads from the serial console.
 */
#include "qemu/osdep.h"
#include <grp.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <linux/pci_regs.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/msix.h"
#include "libqos/nvme.h"
#include "libqos/vfio-query.h"

#define NVME_DEVFN QPCI_DEVFN(4, 0)
#define RAM_START 0x200000ULL
#define RAM_END 0x3000000ULL
#define MSI_TARGET 0x3800000ULL
#define MSI_DATA_BASE 0x4200
#define IO_VECTOR 1
#define NR_IOS 4
#define WAIT_US (30 * G_USEC_PER_SEC)

/* QEMU's emulated NVMe: BAR0 16 KiB, MSI-X table +0x2000, PBA +0x3000. */
#define NVME_BAR0_SIZE 0x4000
#define NVME_TABLE_OFFSET 0x2000
#define NVME_PBA_OFFSET 0x3000

typedef struct Ctx {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QNvme nvme;
} Ctx;

static const char *host(void)
{
    const char *h = getenv("KVFIO_HOST");

    g_assert_nonnull(h);
    return h;
}

static void ctx_attach(Ctx *c)
{
    c->bus = qpci_new_pc(c->qts);
    c->dev = qpci_device_find(c->bus, NVME_DEVFN);
    g_assert_nonnull(c->dev);
    qnvme_init(&c->nvme, c->dev, RAM_START, RAM_END);
}

/* libvirt's key=value form: id, bus=pci.0, addr, rombar, bootindex. */
static void ctx_start(Ctx *c)
{
    memset(c, 0, sizeof(*c));
    c->qts = qtest_initf("-M pc -m 64M -device vfio-pci,host=%s,id=hostdev0,"
                         "bus=pci.0,addr=0x4,rombar=1,bootindex=1", host());
    ctx_attach(c);
}

static void ctx_stop(Ctx *c)
{
    qpci_device_free(c->dev);
    qpci_free_pc(c->bus);
    qtest_quit(c->qts);
}

static bool wait_ram(Ctx *c, uint64_t addr, uint32_t val)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;

    while (qtest_readl(c->qts, addr) != val) {
        if (g_get_monotonic_time() > deadline) {
            return false;
        }
        g_usleep(1000);
    }
    return true;
}

static void bring_up(Ctx *c)
{
    uint64_t id = qnvme_alloc(&c->nvme, 4096);
    char serial[21] = { 0 };

    qpci_msix_enable(c->dev);
    for (int v = 0; v <= IO_VECTOR; v++) {
        qpci_msix_set_vector(c->dev, v, MSI_TARGET + 4 * v,
                             MSI_DATA_BASE + v);
        qpci_msix_mask_vector(c->dev, v, false);
    }
    g_assert_true(qnvme_enable(&c->nvme));
    /* Identify is DMA into guest RAM through the host's IOMMU. */
    g_assert_true(qnvme_identify_ctrl(&c->nvme, id));
    g_assert_cmphex(qtest_readw(c->qts, id), ==,
                    qpci_config_readw(c->dev, PCI_VENDOR_ID));
    qtest_memread(c->qts, id + 4, serial, 20);
    g_assert_nonnull(strstr(serial, "kvfio0"));
    g_assert_true(qnvme_create_io_queues(&c->nvme, 16, IO_VECTOR));
}

/* Writes then reads back 4 KiB blocks; each completion raises MSI-X. */
static void do_ios(Ctx *c, int n)
{
    uint64_t wbuf = qnvme_alloc(&c->nvme, 4096);
    uint64_t rbuf = qnvme_alloc(&c->nvme, 4096);
    uint8_t pattern[4096], back[4096];
    QNvmeCqe cqe;

    for (int i = 0; i < n; i++) {
        bool write = !(i & 1);

        if (write) {
            for (size_t k = 0; k < sizeof(pattern); k++) {
                pattern[k] = (uint8_t)(k * 5 + i * 11 + 3);
            }
            qtest_memwrite(c->qts, wbuf, pattern, sizeof(pattern));
        } else {
            qtest_memset(c->qts, rbuf, 0, sizeof(back));
        }
        qtest_writel(c->qts, MSI_TARGET + 4 * IO_VECTOR, 0);
        g_assert_true(qnvme_rw(&c->nvme, write, 8 * (i / 2), 8,
                               write ? wbuf : rbuf, &cqe));
        g_assert_cmphex(cqe.status, ==, 0);
        if (!write) {
            qtest_memread(c->qts, rbuf, back, sizeof(back));
            g_assert_cmpmem(back, sizeof(back), pattern, sizeof(pattern));
        }
        /* The completion's MSI-X message, delivered by Conduit. */
        g_assert_true(wait_ram(c, MSI_TARGET + 4 * IO_VECTOR,
                               MSI_DATA_BASE + IO_VECTOR));
    }
}

static void test_identify_io_msix(void)
{
    Ctx c;

    ctx_start(&c);
    g_assert_cmphex(qpci_config_readw(c.dev, PCI_VENDOR_ID), ==, 0x1b36);
    g_assert_cmphex(qpci_config_readl(c.dev, PCI_CLASS_REVISION) >> 8, ==,
                    0x010802);
    g_assert_cmphex(qpci_bar_size(c.dev, 0), ==, NVME_BAR0_SIZE);
    bring_up(&c);
    g_assert_cmpint(c.dev->msix_table_bar, ==, 0);
    g_assert_cmphex(c.dev->msix_table_off, ==, NVME_TABLE_OFFSET);
    do_ios(&c, 2 * NR_IOS);
    ctx_stop(&c);
}

/*
 * The kernel's MSIX_MAPPABLE lets Conduit map all of BAR0, table too; the
 * emulated table overlay keeps only its own page trapping.
 */
static void test_msix_mappable_whole_bar(void)
{
    JsonObject *dev, *bar, *msix, *r;
    JsonArray *mapped;
    Ctx c;

    ctx_start(&c);
    bring_up(&c);
    dev = qvfio_query_device(c.qts);
    g_assert_cmpstr(json_object_get_string_member(dev, "id"), ==,
                    "hostdev0");
    bar = qvfio_query_bar(dev, 0);
    g_assert_nonnull(bar);
    g_assert_cmpint(json_object_get_int_member(bar, "size"), ==,
                    NVME_BAR0_SIZE);
    mapped = json_object_get_array_member(bar, "mapped");
    g_assert_cmpint(json_array_get_length(mapped), ==, 1);
    r = json_array_get_object_element(mapped, 0);
    g_assert_cmpint(json_object_get_int_member(r, "offset"), ==, 0);
    g_assert_cmpint(json_object_get_int_member(r, "size"), ==,
                    NVME_BAR0_SIZE);
    /* Only the table's page exits; the doorbells at 0x1000 do not. */
    {
        JsonArray *trapped = json_object_get_array_member(bar, "trapped");
        bool table_trapped = false;

        for (guint i = 0; i < json_array_get_length(trapped); i++) {
            JsonObject *t = json_array_get_object_element(trapped, i);
            uint64_t off = json_object_get_int_member(t, "offset");
            uint64_t size = json_object_get_int_member(t, "size");

            g_assert_false(0x1000 >= off && 0x1000 - off < size);
            table_trapped |= NVME_TABLE_OFFSET >= off &&
                             NVME_TABLE_OFFSET - off < size;
        }
        g_assert_true(table_trapped);
    }
    msix = json_object_get_object_member(dev, "msix");
    g_assert_cmpint(json_object_get_int_member(msix, "bar"), ==, 0);
    g_assert_cmpint(json_object_get_int_member(msix, "table-offset"), ==,
                    NVME_TABLE_OFFSET);
    g_assert_cmpint(json_object_get_int_member(msix, "pba-offset"), ==,
                    NVME_PBA_OFFSET);
    g_assert_false(json_object_get_boolean_member(msix, "relocated"));
    json_object_unref(dev);
    ctx_stop(&c);
}

/* libvirt's JSON -device form. */
static void test_json_device(void)
{
    Ctx c;

    memset(&c, 0, sizeof(c));
    c.qts = qtest_initf("-M pc -m 64M -device '{\"driver\": \"vfio-pci\","
                        " \"host\": \"%s\", \"id\": \"hostdev0\","
                        " \"bus\": \"pci.0\", \"addr\": \"0x4\","
                        " \"rombar\": 1, \"bootindex\": 1}'", host());
    ctx_attach(&c);
    g_assert_cmphex(qpci_config_readw(c.dev, PCI_VENDOR_ID), ==, 0x1b36);
    ctx_stop(&c);
}

/*
 * device_add of a device that is not bound to vfio-pci fails cleanly and
 * leaves nothing behind; the real one then plugs, unplugs and plugs again
 * (the group and container are released and reopened).
 */
static void test_hotplug_and_errors(void)
{
    g_autofree char *props = NULL;
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    JsonObject *reply;

    qts = qtest_init("-M pc -m 64M");
    bus = qpci_new_pc(qts);
    reply = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': {"
                      "'driver': 'vfio-pci', 'id': 'bad0', "
                      "'host': '0000:00:00.0', 'addr': '0x4'}}");
    g_assert_nonnull(qtest_qmp_error_desc(reply));
    g_assert_nonnull(strstr(qtest_qmp_error_desc(reply), "vfio 0000:00:00.0"));
    json_object_unref(reply);
    g_assert_null(qpci_device_find(bus, NVME_DEVFN));
    g_assert_cmpint(qvfio_query_count(qts), ==, 0);

    for (int round = 0; round < 2; round++) {
        /* host= first, then the same device by its sysfs path. */
        props = round ?
            g_strdup_printf("{'sysfsdev': '/sys/bus/pci/devices/%s', "
                            "'bus': 'pci.0', 'addr': '0x4'}", host()) :
            g_strdup_printf("{'host': '%s', 'bus': 'pci.0', "
                            "'addr': '0x4'}", host());
        qtest_qmp_device_add(qts, "vfio-pci", round ? "hot1" : "hot0", "%s",
                             props);
        g_free(g_steal_pointer(&props));
        dev = qpci_device_find(bus, NVME_DEVFN);
        g_assert_nonnull(dev);
        g_assert_cmphex(qpci_config_readw(dev, PCI_VENDOR_ID), ==, 0x1b36);
        g_assert_cmpint(qvfio_query_count(qts), ==, 1);
        qpci_device_free(dev);
        qtest_qmp_device_del(qts, round ? "hot1" : "hot0");
        g_assert_null(qpci_device_find(bus, NVME_DEVFN));
        g_assert_cmpint(qvfio_query_count(qts), ==, 0);
    }
    qpci_free_pc(bus);
    qtest_quit(qts);
}

static void test_cmdline_errors(void)
{
    g_autofree char *args = NULL;
    g_autofree char *err = NULL;
    int status;

    status = qtest_run_expect_fail("-M pc -accel qtest -display none -device "
                                   "vfio-pci,host=0000:00:1f.7", NULL, &err);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    g_assert_nonnull(strstr(err, "vfio 0000:00:1f.7: no such host device"));
    g_free(g_steal_pointer(&err));

    /* The same device twice: the second is refused. */
    args = g_strdup_printf("-M pc -accel qtest -display none "
                           "-device vfio-pci,host=%s,addr=0x4 "
                           "-device vfio-pci,host=%s,addr=0x5",
                           host(), host());
    status = qtest_run_expect_fail(args, NULL, &err);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    g_assert_nonnull(strstr(err, "already in use by another vfio-pci"));
}

/* After a machine reset (VFIO_DEVICE_RESET) the controller works again. */
static void test_reset(void)
{
    Ctx c;

    ctx_start(&c);
    bring_up(&c);
    do_ios(&c, 2);
    json_node_unref(qtest_qmp_assert_success(c.qts,
                                             "{'execute': 'system_reset'}"));
    qpci_device_free(c.dev);
    qpci_free_pc(c.bus);
    ctx_attach(&c);
    g_assert_cmphex(qnvme_reg_read(&c.nvme, QNVME_REG_CC) & 1, ==, 0);
    bring_up(&c);
    do_ios(&c, 2);
    ctx_stop(&c);
}

/*
 * As an unprivileged user (no CAP_IPC_LOCK) under a 1 MiB locked-memory
 * limit, pinning 64 MiB of guest RAM fails with a message naming the
 * limit, and the VMM keeps answering QMP.
 */
static void test_memlock_limit(void)
{
    static const char qmp[] = "{\"execute\": \"qmp_capabilities\"}\n"
                              "{\"execute\": \"quit\"}\n";
    g_autofree char *devopt = g_strdup_printf("vfio-pci,host=%s", host());
    GString *out = g_string_new("");
    int in_pipe[2], out_pipe[2], status;
    char buf[4096];
    ssize_t n;
    pid_t pid;

    g_assert_cmpint(pipe(in_pipe), ==, 0);
    g_assert_cmpint(pipe(out_pipe), ==, 0);
    pid = fork();
    g_assert_cmpint(pid, >=, 0);
    if (pid == 0) {
        struct rlimit rl = { 1 << 20, 1 << 20 };

        dup2(in_pipe[0], 0);
        dup2(out_pipe[1], 1);
        dup2(out_pipe[1], 2);
        if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) ||
            setgid(65534) || setuid(65534)) {
            _exit(99);
        }
        execl(qtest_get_binary(), qtest_get_binary(), "-M", "pc", "-m", "64M",
              "-accel", "qtest", "-display", "none", "-qmp", "stdio",
              "-device", devopt, NULL);
        _exit(98);
    }
    close(in_pipe[0]);
    close(out_pipe[1]);
    g_assert_cmpint(write(in_pipe[1], qmp, strlen(qmp)), ==, strlen(qmp));
    close(in_pipe[1]);
    while ((n = read(out_pipe[0], buf, sizeof(buf))) > 0) {
        g_string_append_len(out, buf, n);
    }
    close(out_pipe[0]);
    g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
    g_test_message("unprivileged run: %s", out->str);
    if (!strstr(out->str, "the locked-memory limit (RLIMIT_MEMLOCK, ulimit"
                " -l) is 1024 KiB") ||
        !strstr(out->str, "cannot pin")) {
        g_error("no memlock error in: %s", out->str);
    }
    /* QMP still answered: the VMM did not die of it. */
    g_assert_nonnull(strstr(out->str, "\"SHUTDOWN\""));
    g_assert_true(WIFEXITED(status));
    g_string_free(out, true);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/kernel-vfio/nvme/identify-io-msix",
                    test_identify_io_msix);
    g_test_add_func("/kernel-vfio/nvme/msix-mappable-whole-bar",
                    test_msix_mappable_whole_bar);
    g_test_add_func("/kernel-vfio/cmdline/json-device", test_json_device);
    g_test_add_func("/kernel-vfio/cmdline/errors", test_cmdline_errors);
    g_test_add_func("/kernel-vfio/hotplug/errors-leave-nothing",
                    test_hotplug_and_errors);
    g_test_add_func("/kernel-vfio/nvme/reset", test_reset);
    g_test_add_func("/kernel-vfio/dma/memlock-limit-named",
                    test_memlock_limit);
    return g_test_run();
}
