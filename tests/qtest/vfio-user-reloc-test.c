/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The default x-msix-relocation (where-helpful) when relocating would
 * help but cannot be done: every BAR slot is taken and the table's BAR
 * is too large to double (the MSI-X capability cannot point 4 GiB or
 * more into a BAR).  Conduit keeps the table in place, says why once at
 * start-up and in x-query-vfio, and its hot-page warning repeats why
 * instead of suggesting an option.
 *
 * The device is a small libvfu server in a thread: BAR0 a 4 GiB 64-bit
 * BAR (a sparse memfd, MSIX_MAPPABLE) with registers at 0 and the MSI-X
 * table at 0x800 of the same page; BAR2..BAR5 small register BARs.
 */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
#include <sys/mman.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "qapi/error.h"
#include "libqos/vfu-thread.h"

#define DEVFN QPCI_DEVFN(4, 0)
#define BAR0_SIZE (4ULL << 30)
/* 64-bit BAR0 placed by the test above RAM and the 32-bit hole. */
#define BAR0_GPA (16ULL << 30)
#define TABLE_OFFSET 0x800
#define PBA_OFFSET 0xc00
#define REG 0x100                   /* a register on the table's page */

typedef struct Server {
    QVfuThread vt;
    int memfd;
} Server;

static int small_bar_access(VfuCtx *ctx, void *opaque, uint32_t index,
                            uint64_t offset, void *buf, uint32_t count,
                            bool is_write)
{
    if (!is_write) {
        memset(buf, 0, count);
    }
    return 0;
}

static void server_start(Server *s)
{
    const VfuPciIds ids = {
        .vendor_id = 0x1234, .device_id = 0x11e7, .class_code = 0xff0000,
    };
    VfuRegionInfo bar0 = {
        .size = BAR0_SIZE,
        .flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE,
        .msix_mappable = true,
        .bar_flags = PCI_BASE_ADDRESS_MEM_TYPE_64,
    };
    VfuRegionInfo small = {
        .size = 0x1000,
        .flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE,
        .fd = -1,
        .access = small_bar_access,
    };

    memset(s, 0, sizeof(*s));
    s->memfd = memfd_create("reloc-bar0", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    g_assert_cmpint(s->memfd, >=, 0);
    g_assert_cmpint(ftruncate(s->memfd, BAR0_SIZE), ==, 0);
    /* Conduit maps only a BAR whose size the server cannot change. */
    g_assert_cmpint(fcntl(s->memfd, F_ADD_SEALS,
                          F_SEAL_SHRINK | F_SEAL_GROW), ==, 0);
    bar0.fd = s->memfd;
    qvfu_thread_init(&s->vt, "reloc", &ids, s);
    g_assert_true(vfu_setup_region(s->vt.ctx, VFIO_PCI_BAR0_REGION_INDEX,
                                   &bar0, &error_abort));
    for (uint32_t i = VFIO_PCI_BAR2_REGION_INDEX;
         i <= VFIO_PCI_BAR5_REGION_INDEX; i++) {
        g_assert_true(vfu_setup_region(s->vt.ctx, i, &small, &error_abort));
    }
    g_assert_cmpuint(vfu_pci_add_msix_cap(s->vt.ctx, 16, 0, TABLE_OFFSET, 0,
                                          PBA_OFFSET, &error_abort), !=, 0);
    qvfu_thread_start(&s->vt);
}

static void server_stop(Server *s)
{
    qvfu_thread_stop(&s->vt);
    close(s->memfd);
}

static JsonObject *query_msix(QTestState *qts)
{
    JsonNode *ret = qtest_qmp_assert_success(qts, "{'execute': "
                                             "'x-query-vfio'}");
    JsonObject *dev = json_array_get_object_element(
        json_node_get_array(ret), 0);
    JsonObject *msix = json_object_ref(json_object_get_object_member(dev,
                                                                    "msix"));

    json_node_unref(ret);
    return msix;
}

static void test_impossible_says_why(void)
{
    const char *why = "cannot be relocated";
    Server srv;
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    JsonObject *msix;
    const char *err, *decision;

    server_start(&srv);
    qts = qtest_initf("-M pc -m 64M -device vfio-user-pci,addr=04.0,"
                      "socket=%s", srv.vt.sock);
    msix = query_msix(qts);
    g_assert_false(json_object_get_boolean_member(msix, "relocated"));
    g_assert_cmpint(json_object_get_int_member(msix, "bar"), ==, 0);
    decision = json_object_get_string_member(msix, "relocation-decision");
    g_assert_nonnull(strstr(decision, why));
    g_assert_nonnull(strstr(decision, "no free BAR slot"));
    g_assert_nonnull(strstr(decision, "4 GiB"));
    json_object_unref(msix);
    /* Said once at start-up. */
    err = qtest_get_stderr(qts);
    g_assert_nonnull(strstr(err, why));
    g_assert_null(strstr(strstr(err, why) + 1, why));

    /* A hot register on the table's page: the warning repeats why. */
    bus = qpci_new_pc(qts);
    dev = qpci_device_find(bus, DEVFN);
    g_assert_nonnull(dev);
    qpci_config_writel(dev, PCI_BASE_ADDRESS_0,
                       (uint32_t)BAR0_GPA | PCI_BASE_ADDRESS_MEM_TYPE_64);
    qpci_config_writel(dev, PCI_BASE_ADDRESS_1, BAR0_GPA >> 32);
    qpci_device_enable(dev);
    for (int i = 0; i < 1100; i++) {
        qtest_writel(qts, BAR0_GPA + REG, i);
    }
    g_assert_cmphex(qtest_readl(qts, BAR0_GPA + REG), ==, 1099);
    err = qtest_get_stderr(qts);
    g_assert_nonnull(strstr(err, "traps on every access"));
    g_assert_nonnull(strstr(strstr(err, "traps on every access"), why));
    g_assert_null(strstr(err, "x-msix-relocation=auto moves"));

    qpci_device_free(dev);
    qpci_free_pc(bus);
    qtest_quit(qts);
    server_stop(&srv);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vfio-user-pci/msix-relocation/default-impossible-"
                    "says-why", test_impossible_says_why);
    return g_test_run();
}
