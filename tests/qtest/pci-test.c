/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pc machine's PCI host bridge and PCI core, seen from a guest:
 * enumeration through 0xcf8/0xcfc and ECAM, BARs assigned at reset, BAR
 * sizing and remapping, INTx, hotplug of pci-testdev, bad config accesses.
 */
#include "qemu/osdep.h"
#include <sys/wait.h>
#include <linux/pci_regs.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"

#define TESTDEV_VENDOR 0x1d0c
#define TESTDEV_DEVICE 0x0001
#define TESTDEV_MAGIC 0x54444e43
#define TESTDEV_DEVFN QPCI_DEVFN(4, 0)
#define MMIO32_BASE 0xe1000000ULL
#define MMIO32_END 0xfec00000ULL

static QTestState *start(void)
{
    return qtest_init("-M pc -m 64M -device pci-testdev,addr=04.0");
}

typedef struct Found {
    int devfns[256];
    int n;
} Found;

static void record(QPCIDevice *dev, int devfn, void *data)
{
    Found *f = data;

    f->devfns[f->n++] = devfn;
}

static void test_enumerate(void)
{
    QTestState *qts = start();
    QPCIBus *bus = qpci_new_pc(qts);
    Found found = { .n = 0 };
    QPCIDevice *host, *dev;

    /* Host bridge, the PIIX3 function of slot 1 (as QEMU's pc), ours. */
    g_assert_cmpint(qpci_device_foreach(bus, record, &found), ==, 3);
    g_assert_cmpint(found.devfns[0], ==, QPCI_DEVFN(0, 0));
    g_assert_cmpint(found.devfns[1], ==, QPCI_DEVFN(1, 0));
    g_assert_cmpint(found.devfns[2], ==, TESTDEV_DEVFN);

    host = qpci_device_find(bus, 0);
    g_assert_cmphex(qpci_config_readw(host, PCI_CLASS_DEVICE), ==, 0x0600);
    dev = qpci_device_find(bus, TESTDEV_DEVFN);
    g_assert_cmphex(qpci_config_readw(dev, PCI_VENDOR_ID), ==, TESTDEV_VENDOR);
    g_assert_cmphex(qpci_config_readw(dev, PCI_DEVICE_ID), ==, TESTDEV_DEVICE);
    g_assert_cmphex(qpci_config_readb(dev, PCI_HEADER_TYPE), ==, 0);
    g_assert_cmphex(qpci_config_readb(dev, PCI_INTERRUPT_PIN), ==, 1);
    g_assert_cmpint(qpci_find_capability(dev, PCI_CAP_ID_MSIX, 0), !=, 0);
    /* Byte and word reads agree with dword reads. */
    g_assert_cmphex(qpci_config_readl(dev, PCI_VENDOR_ID), ==,
                    TESTDEV_DEVICE << 16 | TESTDEV_VENDOR);
    g_assert_cmphex(qpci_config_readb(dev, PCI_DEVICE_ID + 1), ==,
                    TESTDEV_DEVICE >> 8);

    qpci_device_free(host);
    qpci_device_free(dev);
    qpci_free_pc(bus);
    qtest_quit(qts);
}

static void test_ecam_matches_conf1(void)
{
    QTestState *qts = start();
    QPCIBus *conf1 = qpci_new_pc(qts);
    QPCIBus *ecam = qpci_new_pc_ecam(qts);
    QPCIDevice *a = qpci_device_find(conf1, TESTDEV_DEVFN);
    QPCIDevice *b = qpci_device_find(ecam, TESTDEV_DEVFN);

    g_assert_nonnull(a);
    g_assert_nonnull(b);
    for (uint16_t off = 0; off < 0x100; off += 4) {
        g_assert_cmphex(qpci_config_readl(a, off), ==,
                        qpci_config_readl(b, off));
    }
    /* A write through ECAM is seen through 0xcf8/0xcfc. */
    qpci_config_writeb(b, PCI_INTERRUPT_LINE, 0x0b);
    g_assert_cmphex(qpci_config_readb(a, PCI_INTERRUPT_LINE), ==, 0x0b);
    /* Beyond 256 bytes a conventional function reads all ones. */
    g_assert_cmphex(qpci_config_readl(b, 0x100), ==, 0xffffffff);
    /* Nothing at other slots or buses. */
    g_assert_null(qpci_device_find(ecam, QPCI_DEVFN(9, 0)));
    g_assert_cmphex(qtest_readl(qts, QPCI_PC_ECAM_BASE + (1 << 20)), ==,
                    0xffffffff);

    qpci_device_free(a);
    qpci_device_free(b);
    qpci_free_pc(conf1);
    qpci_free_pc(ecam);
    qtest_quit(qts);
}

static void test_bars_assigned_at_reset(void)
{
    QTestState *qts = start();
    QPCIBus *bus = qpci_new_pc(qts);
    QPCIDevice *dev = qpci_device_find(bus, TESTDEV_DEVFN);
    QPCIBar bar0, bar1;
    uint16_t cmd = qpci_config_readw(dev, PCI_COMMAND);

    g_assert_true(cmd & PCI_COMMAND_MEMORY);
    g_assert_true(cmd & PCI_COMMAND_IO);
    g_assert_true(cmd & PCI_COMMAND_MASTER);

    bar0 = qpci_bar(dev, 0);
    g_assert_false(bar0.is_io);
    g_assert_cmphex(bar0.size, ==, 0x1000);
    g_assert_cmphex(bar0.addr, >=, MMIO32_BASE);
    g_assert_cmphex(bar0.addr + bar0.size, <=, MMIO32_END);
    g_assert_cmphex(bar0.addr % bar0.size, ==, 0);
    g_assert_cmphex(qpci_io_readl(dev, bar0, 0), ==, TESTDEV_MAGIC);

    bar1 = qpci_bar(dev, 1);
    g_assert_true(bar1.is_io);
    g_assert_cmphex(bar1.size, ==, 0x20);
    g_assert_cmphex(bar1.addr, >=, 0xc000);
    g_assert_cmphex(qpci_io_readl(dev, bar1, 0), ==, TESTDEV_MAGIC);
    /* Both BARs reach the same registers. */
    qpci_io_writel(dev, bar1, 4, 0x600df00d);
    g_assert_cmphex(qpci_io_readl(dev, bar0, 4), ==, 0x600df00d);

    /* Unimplemented BARs stay zero. */
    for (int i = 2; i < 6; i++) {
        g_assert_cmphex(qpci_bar_size(dev, i), ==, 0);
    }

    /* A system reset reassigns the same way. */
    qtest_qmp_assert_success(qts, "{'execute': 'system_reset'}");
    g_assert_cmphex(qpci_bar(dev, 0).addr, ==, bar0.addr);
    g_assert_cmphex(qpci_io_readl(dev, bar0, 4), ==, 0);

    qpci_device_free(dev);
    qpci_free_pc(bus);
    qtest_quit(qts);
}

static void test_bar_remap(void)
{
    QTestState *qts = start();
    QPCIBus *bus = qpci_new_pc(qts);
    QPCIDevice *dev = qpci_device_find(bus, TESTDEV_DEVFN);
    QPCIBar old = qpci_bar(dev, 0), moved;
    uint64_t new_addr = MMIO32_BASE + 0x100000;
    uint16_t cmd;

    g_assert_cmphex(old.addr, !=, new_addr);
    qpci_io_writel(dev, old, 4, 0x12345678);

    qpci_bar_set(dev, 0, new_addr);
    moved = qpci_bar(dev, 0);
    g_assert_cmphex(moved.addr, ==, new_addr);
    g_assert_cmphex(qpci_io_readl(dev, moved, 0), ==, TESTDEV_MAGIC);
    g_assert_cmphex(qpci_io_readl(dev, moved, 4), ==, 0x12345678);
    /* Nothing is left at the old address. */
    g_assert_cmphex(qtest_readl(qts, old.addr), ==, 0xffffffff);

    /* Memory decode off: the BAR disappears; on again: it comes back. */
    cmd = qpci_config_readw(dev, PCI_COMMAND);
    qpci_config_writew(dev, PCI_COMMAND, cmd & ~PCI_COMMAND_MEMORY);
    g_assert_cmphex(qtest_readl(qts, new_addr), ==, 0xffffffff);
    qpci_config_writew(dev, PCI_COMMAND, cmd);
    g_assert_cmphex(qtest_readl(qts, new_addr), ==, TESTDEV_MAGIC);

    /* The sizing probe leaves the mapping as it was. */
    g_assert_cmphex(qpci_bar_size(dev, 0), ==, 0x1000);
    g_assert_cmphex(qtest_readl(qts, new_addr), ==, TESTDEV_MAGIC);

    /* While the BAR holds the all-ones probe value nothing is decoded. */
    qpci_config_writel(dev, PCI_BASE_ADDRESS_0, 0xffffffff);
    g_assert_cmphex(qtest_readl(qts, new_addr), ==, 0xffffffff);
    g_assert_cmphex(qtest_readl(qts, 0xfffff000), ==, 0xffffffff);

    qpci_device_free(dev);
    qpci_free_pc(bus);
    qtest_quit(qts);
}

/* Finds @name in an x-query-io-counters reply. */
static JsonObject *find_io_counter(JsonArray *list, const char *name)
{
    for (guint i = 0; i < json_array_get_length(list); i++) {
        JsonObject *o = json_array_get_object_element(list, i);

        if (!strcmp(json_object_get_string_member(o, "name"), name)) {
            return o;
        }
    }
    return NULL;
}

/* Each access the guest makes to a BAR register is counted, over QMP. */
static void test_io_counters(void)
{
    QTestState *qts = start();
    QPCIBus *bus = qpci_new_pc(qts);
    QPCIDevice *dev = qpci_device_find(bus, TESTDEV_DEVFN);
    QPCIBar bar = qpci_bar(dev, 0);
    g_autoptr(JsonNode) reply = NULL;
    JsonObject *regs;
    int i;

    for (i = 0; i < 3; i++) {
        g_assert_cmphex(qpci_io_readl(dev, bar, 0), ==, TESTDEV_MAGIC);
    }
    qpci_io_writel(dev, bar, 4, 1);
    qpci_io_writel(dev, bar, 4, 2);

    reply = qtest_qmp_assert_success(qts,
                                     "{'execute': 'x-query-io-counters'}");
    regs = find_io_counter(json_node_get_array(reply), "pci-testdev-regs");
    g_assert_nonnull(regs);
    g_assert_cmpstr(json_object_get_string_member(regs, "address-space"),
                    ==, "memory");
    g_assert_cmphex(json_object_get_int_member(regs, "address"), ==,
                    bar.addr);
    g_assert_cmpint(json_object_get_int_member(regs, "reads"), ==, 3);
    g_assert_cmpint(json_object_get_int_member(regs, "writes"), ==, 2);
    g_assert_true(g_str_has_prefix(
        json_object_get_string_member(regs, "owner"), "/machine/"));
    /* Untouched: the MSI-X table shares the page but was not accessed. */
    g_assert_cmpint(json_object_get_int_member(
        find_io_counter(json_node_get_array(reply), "msix-table"),
        "reads"), ==, 0);

    qpci_device_free(dev);
    qpci_free_pc(bus);
    qtest_quit(qts);
}

static void test_intx(void)
{
    QTestState *qts = start();
    QPCIBus *bus = qpci_new_pc(qts);
    QPCIDevice *dev = qpci_device_find(bus, TESTDEV_DEVFN);
    QPCIBar bar0 = qpci_bar(dev, 0);
    uint16_t cmd;

    /* Slot 4, pin A: swizzled onto host INTx line 0. */
    qtest_irq_intercept_out(qts, "/machine/pci-host");
    g_assert_false(qtest_get_irq(qts, 0));
    qpci_io_writel(dev, bar0, 0x0c, 1);
    g_assert_true(qtest_get_irq(qts, 0));
    g_assert_true(qpci_config_readw(dev, PCI_STATUS) & PCI_STATUS_INTERRUPT);

    cmd = qpci_config_readw(dev, PCI_COMMAND);
    qpci_config_writew(dev, PCI_COMMAND, cmd | PCI_COMMAND_INTX_DISABLE);
    g_assert_false(qtest_get_irq(qts, 0));
    qpci_config_writew(dev, PCI_COMMAND, cmd);
    g_assert_true(qtest_get_irq(qts, 0));

    qpci_io_writel(dev, bar0, 0x0c, 0);
    g_assert_false(qtest_get_irq(qts, 0));

    qpci_device_free(dev);
    qpci_free_pc(bus);
    qtest_quit(qts);
}

static void test_bad_config_accesses(void)
{
    QTestState *qts = start();

    /* Without the enable bit the data port reads all ones. */
    qtest_outl(qts, 0xcf8, TESTDEV_DEVFN << 8);
    g_assert_cmphex(qtest_inl(qts, 0xcfc), ==, 0xffffffff);
    /* Another bus, an empty slot. */
    qtest_outl(qts, 0xcf8, 0x80000000 | (1 << 16) | (TESTDEV_DEVFN << 8));
    g_assert_cmphex(qtest_inl(qts, 0xcfc), ==, 0xffffffff);
    qtest_outl(qts, 0xcf8, 0x80000000 | (QPCI_DEVFN(20, 3) << 8));
    g_assert_cmphex(qtest_inw(qts, 0xcfe), ==, 0xffff);
    qtest_outl(qts, 0xcf8, 0x80000000 | (QPCI_DEVFN(20, 3) << 8));
    qtest_outl(qts, 0xcfc, 0x12345678);
    /* The latch reads back; byte accesses to it do not change it. */
    qtest_outl(qts, 0xcf8, 0x80000000 | (TESTDEV_DEVFN << 8) | 0x3c);
    qtest_outb(qts, 0xcf8, 0);
    g_assert_cmphex(qtest_inl(qts, 0xcf8), ==,
                    0x80000000 | (TESTDEV_DEVFN << 8) | 0x3c);
    /* Read-only registers ignore writes. */
    qtest_outl(qts, 0xcf8, 0x80000000 | (TESTDEV_DEVFN << 8));
    qtest_outl(qts, 0xcfc, 0);
    g_assert_cmphex(qtest_inl(qts, 0xcfc), ==,
                    TESTDEV_DEVICE << 16 | TESTDEV_VENDOR);
    /* Still alive. */
    qtest_qmp_assert_success(qts, "{'execute': 'query-status'}");
    qtest_quit(qts);
}

static void test_hotplug(void)
{
    QTestState *qts = start();
    QPCIBus *bus = qpci_new_pc(qts);
    QPCIDevice *dev;
    QPCIBar bar0, other;
    JsonObject *reply;

    g_assert_null(qpci_device_find(bus, QPCI_DEVFN(5, 0)));
    qtest_qmp_device_add(qts, "pci-testdev", "hp0", "{'addr': '05.0'}");
    dev = qpci_device_find(bus, QPCI_DEVFN(5, 0));
    g_assert_nonnull(dev);
    /* It got BARs of its own, not overlapping the cold-plugged device. */
    bar0 = qpci_bar(dev, 0);
    g_assert_cmphex(bar0.addr, !=, QPCI_BAR_NONE);
    {
        QPCIDevice *cold = qpci_device_find(bus, TESTDEV_DEVFN);
        other = qpci_bar(cold, 0);
        qpci_device_free(cold);
    }
    g_assert_true(bar0.addr + bar0.size <= other.addr ||
                  other.addr + other.size <= bar0.addr);
    g_assert_cmphex(qpci_io_readl(dev, bar0, 0), ==, TESTDEV_MAGIC);

    /* The address is taken now. */
    reply = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': "
                      "{'driver': 'pci-testdev', 'id': 'hp1', "
                      "'addr': '05.0'}}");
    g_assert_nonnull(qtest_qmp_error_desc(reply));
    g_assert_nonnull(strstr(qtest_qmp_error_desc(reply), "not available"));
    json_object_unref(reply);

    qtest_qmp_device_del(qts, "hp0");
    g_assert_null(qpci_device_find(bus, QPCI_DEVFN(5, 0)));
    g_assert_cmphex(qtest_readl(qts, bar0.addr), ==, 0xffffffff);

    /* And again at the same address. */
    qtest_qmp_device_add(qts, "pci-testdev", "hp2", "{'addr': '05.0'}");
    qpci_device_free(dev);
    dev = qpci_device_find(bus, QPCI_DEVFN(5, 0));
    g_assert_nonnull(dev);
    qpci_device_free(dev);
    qpci_free_pc(bus);
    qtest_quit(qts);
}

static void test_bad_device_options(void)
{
    g_autofree char *out = NULL, *err = NULL;
    int status;

    status = qtest_run_expect_fail("-M pc -accel qtest -display none "
                                   "-device pci-testdev,addr=04.0 "
                                   "-device pci-testdev,addr=04.0",
                                   &out, &err);
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    g_assert_nonnull(strstr(err, "not available"));
    g_free(out);
    g_free(err);

    status = qtest_run_expect_fail("-M pc -accel qtest -display none "
                                   "-device pci-testdev,vectors=0",
                                   &out, &err);
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    g_assert_nonnull(strstr(err, "vectors"));
}

static void test_device_help(void)
{
    g_autofree char *out = NULL, *err = NULL;
    int status;

    status = qtest_run_expect_fail("-device pci-testdev,help", &out, &err);
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    g_assert_nonnull(strstr(out, "vectors"));
    g_assert_nonnull(strstr(out, "addr"));
    g_assert_nonnull(strstr(out, "multifunction"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/pci/enumerate/conf1", test_enumerate);
    g_test_add_func("/pci/enumerate/ecam-matches-conf1",
                   test_ecam_matches_conf1);
    g_test_add_func("/pci/bar/assigned-at-reset", test_bars_assigned_at_reset);
    g_test_add_func("/pci/bar/size-and-remap", test_bar_remap);
    g_test_add_func("/pci/telemetry/io-counters-over-qmp", test_io_counters);
    g_test_add_func("/pci/intx/raise-disable-lower", test_intx);
    g_test_add_func("/pci/config/bad-accesses", test_bad_config_accesses);
    g_test_add_func("/pci/hotplug/device-add-del", test_hotplug);
    g_test_add_func("/pci/cmdline/bad-device-options",
                   test_bad_device_options);
    g_test_add_func("/pci/cmdline/device-help", test_device_help);
    return g_test_run();
}
