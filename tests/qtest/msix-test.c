/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MSI-X through the whole pc machine with pci-testdev: vectors fired into
 * RAM and into the APIC MSI window, masking and the PBA, function mask,
 * disable, lazy PBA, and bad table/PBA accesses.
 */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/msix.h"
#include "libqos/pci-testdev.h"

#define REG_FIRE 0x08
#define REG_NVEC 0x10
#define RAM_TARGET 0x100000ULL
#define APIC_MSI_BASE 0xfee00000ULL

static void fire(QPCITestdev *c, uint32_t vector)
{
    qpci_io_writel(c->dev, c->bar0, REG_FIRE, vector);
}

static uint32_t ram(QPCITestdev *c, unsigned int slot)
{
    return qtest_readl(c->qts, RAM_TARGET + slot * 4);
}

static void test_layout(void)
{
    QPCITestdev c;

    qpci_testdev_start(&c, NULL);
    g_assert_cmpint(qpci_msix_table_size(c.dev), ==, 8);
    g_assert_cmphex(qpci_io_readl(c.dev, c.bar0, REG_NVEC), ==, 8);
    /* Table and PBA share BAR0's page with the registers. */
    g_assert_cmpint(c.dev->msix_table_bar, ==, 0);
    g_assert_cmpint(c.dev->msix_pba_bar, ==, 0);
    g_assert_cmphex(qpci_msix_entry_addr(c.dev, 0), ==, c.bar0.addr + 0x800);
    g_assert_cmphex(qpci_msix_pba_addr(c.dev), ==, c.bar0.addr + 0xc00);
    g_assert_false(qpci_msix_enabled(c.dev));
    for (int v = 0; v < 8; v++) {
        g_assert_true(qpci_msix_masked(c.dev, v));
    }
    qpci_testdev_stop(&c);
}

static void test_fire_into_ram(void)
{
    QPCITestdev c;

    qpci_testdev_start(&c, NULL);
    qtest_writel(c.qts, RAM_TARGET + 8, 0);
    qpci_msix_enable(c.dev);
    qpci_msix_set_vector(c.dev, 2, RAM_TARGET + 8, 0x1234);
    qpci_msix_mask_vector(c.dev, 2, false);
    fire(&c, 2);
    g_assert_cmphex(ram(&c, 2), ==, 0x1234);
    g_assert_false(qpci_msix_pending(c.dev, 2));

    /* The table reads back what was programmed. */
    g_assert_cmphex(qtest_readl(c.qts, qpci_msix_entry_addr(c.dev, 2) +
                                PCI_MSIX_ENTRY_DATA), ==, 0x1234);
    g_assert_cmphex(qtest_readq(c.qts, qpci_msix_entry_addr(c.dev, 2)), ==,
                    RAM_TARGET + 8);
    qpci_testdev_stop(&c);
}

static void test_mask_pba_unmask(void)
{
    QPCITestdev c;

    qpci_testdev_start(&c, NULL);
    qpci_msix_enable(c.dev);
    qpci_msix_set_vector(c.dev, 5, RAM_TARGET + 20, 0xbeef);
    /* Vectors start masked: firing only sets the pending bit. */
    fire(&c, 5);
    g_assert_cmphex(ram(&c, 5), ==, 0);
    g_assert_true(qpci_msix_pending(c.dev, 5));
    g_assert_cmphex(qtest_readl(c.qts, qpci_msix_pba_addr(c.dev)), ==,
                    1u << 5);

    /* Unmask: delivered, bit cleared. */
    qpci_msix_mask_vector(c.dev, 5, false);
    g_assert_cmphex(ram(&c, 5), ==, 0xbeef);
    g_assert_false(qpci_msix_pending(c.dev, 5));

    /* Mask again: the next one pends again. */
    qtest_writel(c.qts, RAM_TARGET + 20, 0);
    qpci_msix_mask_vector(c.dev, 5, true);
    fire(&c, 5);
    g_assert_cmphex(ram(&c, 5), ==, 0);
    g_assert_true(qpci_msix_pending(c.dev, 5));
    qpci_testdev_stop(&c);
}

static void test_function_mask(void)
{
    QPCITestdev c;

    qpci_testdev_start(&c, NULL);
    qpci_msix_enable(c.dev);
    qpci_msix_set_vector(c.dev, 0, RAM_TARGET, 0xa0);
    qpci_msix_set_vector(c.dev, 7, RAM_TARGET + 28, 0xa7);
    qpci_msix_mask_vector(c.dev, 0, false);
    qpci_msix_mask_vector(c.dev, 7, false);
    qpci_msix_set_function_mask(c.dev, true);

    fire(&c, 0);
    fire(&c, 7);
    g_assert_cmphex(ram(&c, 0), ==, 0);
    g_assert_cmphex(ram(&c, 7), ==, 0);
    g_assert_true(qpci_msix_pending(c.dev, 0));
    g_assert_true(qpci_msix_pending(c.dev, 7));
    /* The vectors' own mask bits are untouched by the function mask. */
    g_assert_false(qpci_msix_masked(c.dev, 0));

    qpci_msix_set_function_mask(c.dev, false);
    g_assert_cmphex(ram(&c, 0), ==, 0xa0);
    g_assert_cmphex(ram(&c, 7), ==, 0xa7);
    g_assert_false(qpci_msix_pending(c.dev, 0));
    g_assert_false(qpci_msix_pending(c.dev, 7));
    qpci_testdev_stop(&c);
}

static void test_disable(void)
{
    QPCITestdev c;

    qpci_testdev_start(&c, NULL);
    qpci_msix_enable(c.dev);
    qpci_msix_set_vector(c.dev, 1, RAM_TARGET + 4, 0x11);
    qpci_msix_mask_vector(c.dev, 1, false);
    qpci_msix_disable(c.dev);
    g_assert_false(qpci_msix_enabled(c.dev));
    /* With MSI-X off, pci-testdev falls back to INTx; no MSI, no PBA bit. */
    fire(&c, 1);
    g_assert_cmphex(ram(&c, 1), ==, 0);
    g_assert_false(qpci_msix_pending(c.dev, 1));

    /* Enabling again does not invent an interrupt. */
    qpci_msix_enable(c.dev);
    g_assert_cmphex(ram(&c, 1), ==, 0);
    fire(&c, 1);
    g_assert_cmphex(ram(&c, 1), ==, 0x11);
    qpci_testdev_stop(&c);
}

static void test_bus_master_off(void)
{
    QPCITestdev c;
    uint16_t cmd;

    qpci_testdev_start(&c, NULL);
    qpci_msix_enable(c.dev);
    qpci_msix_set_vector(c.dev, 3, RAM_TARGET + 12, 0x33);
    qpci_msix_mask_vector(c.dev, 3, false);
    cmd = qpci_config_readw(c.dev, PCI_COMMAND);
    qpci_config_writew(c.dev, PCI_COMMAND, cmd & ~PCI_COMMAND_MASTER);
    fire(&c, 3);
    g_assert_cmphex(ram(&c, 3), ==, 0);
    qpci_config_writew(c.dev, PCI_COMMAND, cmd);
    fire(&c, 3);
    g_assert_cmphex(ram(&c, 3), ==, 0x33);
    qpci_testdev_stop(&c);
}

static void test_apic_window(void)
{
    QPCITestdev c;

    qpci_testdev_start(&c, NULL);
    qtest_irq_intercept_in(c.qts, "/machine/msi");
    qpci_msix_enable(c.dev);
    qpci_msix_set_vector(c.dev, 6, APIC_MSI_BASE, 0x31);
    qpci_msix_set_vector(c.dev, 4, APIC_MSI_BASE | (1 << 12), 0x4042);
    qpci_msix_mask_vector(c.dev, 6, false);
    qpci_msix_mask_vector(c.dev, 4, false);
    g_assert_false(qtest_get_irq(c.qts, 0x31));
    fire(&c, 6);
    g_assert_true(qtest_get_irq(c.qts, 0x31));
    g_assert_false(qtest_get_irq(c.qts, 0x42));
    /* The vector is the low byte of the data, whatever the APIC id. */
    fire(&c, 4);
    g_assert_true(qtest_get_irq(c.qts, 0x42));
    qpci_testdev_stop(&c);
}

static void test_lazy_pba(void)
{
    QPCITestdev c;
    uint64_t pba;

    qpci_testdev_start(&c, ",x-lazy-pba=on");
    qpci_msix_enable(c.dev);
    pba = qpci_msix_pba_addr(c.dev);
    qpci_msix_set_vector(c.dev, 3, RAM_TARGET + 12, 0x77);
    /* Nothing pending: the registers below the PBA show through. */
    g_assert_cmphex(qtest_readl(c.qts, pba), ==, 0xdead0c00);

    fire(&c, 3);
    g_assert_cmphex(qtest_readl(c.qts, pba), ==, 1u << 3);
    qpci_msix_mask_vector(c.dev, 3, false);
    g_assert_cmphex(ram(&c, 3), ==, 0x77);
    g_assert_cmphex(qtest_readl(c.qts, pba), ==, 0xdead0c00);
    qpci_testdev_stop(&c);
}

static void test_bad_accesses(void)
{
    QPCITestdev c;
    uint64_t e1, pba;

    qpci_testdev_start(&c, NULL);
    qpci_msix_enable(c.dev);
    qpci_msix_set_vector(c.dev, 1, RAM_TARGET + 4, 0x5151);
    e1 = qpci_msix_entry_addr(c.dev, 1);
    pba = qpci_msix_pba_addr(c.dev);

    /* 1- and 2-byte table accesses: all ones, writes dropped. */
    g_assert_cmphex(qtest_readb(c.qts, e1 + PCI_MSIX_ENTRY_DATA), ==, 0xff);
    g_assert_cmphex(qtest_readw(c.qts, e1 + PCI_MSIX_ENTRY_DATA), ==, 0xffff);
    qtest_writeb(c.qts, e1 + PCI_MSIX_ENTRY_VECTOR_CTRL, 0);
    qtest_writew(c.qts, e1 + PCI_MSIX_ENTRY_DATA, 0);
    g_assert_true(qpci_msix_masked(c.dev, 1));
    g_assert_cmphex(qtest_readl(c.qts, e1 + PCI_MSIX_ENTRY_DATA), ==, 0x5151);
    /* Misaligned dword. */
    qtest_writel(c.qts, e1 + 2, 0);
    g_assert_cmphex(qtest_readl(c.qts, e1 + PCI_MSIX_ENTRY_DATA), ==, 0x5151);

    /* PBA writes are ignored. */
    fire(&c, 1);
    qtest_writel(c.qts, pba, 0);
    qtest_writeq(c.qts, pba, 0);
    g_assert_true(qpci_msix_pending(c.dev, 1));

    /* Vectors beyond the table: nothing happens. */
    fire(&c, 8);
    fire(&c, 0xffffffff);
    /* Past the table end, in the page's register space. */
    g_assert_cmphex(qtest_readl(c.qts, qpci_msix_entry_addr(c.dev, 8)), ==,
                    0xdead0880);

    qtest_qmp_assert_success(c.qts, "{'execute': 'query-status'}");
    qpci_testdev_stop(&c);
}

static void test_hotplug_msix(void)
{
    QTestState *qts = qtest_init("-M pc -m 64M");
    QPCIBus *bus = qpci_new_pc(qts);
    QPCIDevice *dev;
    QPCIBar bar0;

    qtest_qmp_device_add(qts, "pci-testdev", "t0",
                         "{'addr': '06.0', 'vectors': 16}");
    dev = qpci_device_find(bus, QPCI_DEVFN(6, 0));
    g_assert_nonnull(dev);
    bar0 = qpci_bar(dev, 0);
    g_assert_cmpint(qpci_msix_table_size(dev), ==, 16);
    qpci_msix_enable(dev);
    qpci_msix_set_vector(dev, 15, RAM_TARGET, 0xf15);
    qpci_msix_mask_vector(dev, 15, false);
    qpci_io_writel(dev, bar0, REG_FIRE, 15);
    g_assert_cmphex(qtest_readl(qts, RAM_TARGET), ==, 0xf15);

    qtest_qmp_device_del(qts, "t0");
    g_assert_null(qpci_device_find(bus, QPCI_DEVFN(6, 0)));
    qpci_device_free(dev);
    qpci_free_pc(bus);
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/msix/layout/table-and-pba-share-bar0", test_layout);
    g_test_add_func("/msix/deliver/fire-into-ram", test_fire_into_ram);
    g_test_add_func("/msix/mask/pba-bit-then-unmask-delivers",
                    test_mask_pba_unmask);
    g_test_add_func("/msix/mask/function-mask", test_function_mask);
    g_test_add_func("/msix/enable/disable-stops-delivery", test_disable);
    g_test_add_func("/msix/deliver/needs-bus-master", test_bus_master_off);
    g_test_add_func("/msix/deliver/apic-window-raises-vector",
                    test_apic_window);
    g_test_add_func("/msix/pba/lazy", test_lazy_pba);
    g_test_add_func("/msix/access/bad-sizes-and-pba-writes",
                    test_bad_accesses);
    g_test_add_func("/msix/hotplug/device-add-fire-del", test_hotplug_msix);
    return g_test_run();
}
