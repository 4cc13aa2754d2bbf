/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libqos MSI-X helpers; see msix.h. */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
#include "libqos/msix.h"

static uint16_t msix_flags(QPCIDevice *dev)
{
    return qpci_config_readw(dev, dev->msix_cap + PCI_MSIX_FLAGS);
}

static void msix_set_flags(QPCIDevice *dev, uint16_t set, uint16_t clear)
{
    qpci_config_writew(dev, dev->msix_cap + PCI_MSIX_FLAGS,
                       (msix_flags(dev) & ~clear) | set);
}

static void msix_locate(QPCIDevice *dev)
{
    uint32_t table, pba;

    if (dev->msix_cap) {
        return;
    }
    dev->msix_cap = qpci_find_capability(dev, PCI_CAP_ID_MSIX, 0);
    g_assert_cmpint(dev->msix_cap, !=, 0);
    table = qpci_config_readl(dev, dev->msix_cap + PCI_MSIX_TABLE);
    pba = qpci_config_readl(dev, dev->msix_cap + PCI_MSIX_PBA);
    dev->msix_table_bar = table & PCI_MSIX_TABLE_BIR;
    dev->msix_table_off = table & PCI_MSIX_TABLE_OFFSET;
    dev->msix_pba_bar = pba & PCI_MSIX_PBA_BIR;
    dev->msix_pba_off = pba & PCI_MSIX_PBA_OFFSET;
}

void qpci_msix_enable(QPCIDevice *dev)
{
    msix_locate(dev);
    msix_set_flags(dev, PCI_MSIX_FLAGS_ENABLE, 0);
}

void qpci_msix_disable(QPCIDevice *dev)
{
    msix_locate(dev);
    msix_set_flags(dev, 0, PCI_MSIX_FLAGS_ENABLE);
}

bool qpci_msix_enabled(QPCIDevice *dev)
{
    msix_locate(dev);
    return msix_flags(dev) & PCI_MSIX_FLAGS_ENABLE;
}

void qpci_msix_set_function_mask(QPCIDevice *dev, bool masked)
{
    msix_locate(dev);
    if (masked) {
        msix_set_flags(dev, PCI_MSIX_FLAGS_MASKALL, 0);
    } else {
        msix_set_flags(dev, 0, PCI_MSIX_FLAGS_MASKALL);
    }
}

uint16_t qpci_msix_table_size(QPCIDevice *dev)
{
    msix_locate(dev);
    return (msix_flags(dev) & PCI_MSIX_FLAGS_QSIZE) + 1;
}

uint64_t qpci_msix_entry_addr(QPCIDevice *dev, uint16_t vector)
{
    QPCIBar bar;

    msix_locate(dev);
    bar = qpci_bar(dev, dev->msix_table_bar);
    g_assert(bar.addr != QPCI_BAR_NONE && !bar.is_io);
    return bar.addr + dev->msix_table_off + vector * PCI_MSIX_ENTRY_SIZE;
}

uint64_t qpci_msix_pba_addr(QPCIDevice *dev)
{
    QPCIBar bar;

    msix_locate(dev);
    bar = qpci_bar(dev, dev->msix_pba_bar);
    g_assert(bar.addr != QPCI_BAR_NONE && !bar.is_io);
    return bar.addr + dev->msix_pba_off;
}

void qpci_msix_set_vector(QPCIDevice *dev, uint16_t vector, uint64_t addr,
                          uint32_t data)
{
    uint64_t e = qpci_msix_entry_addr(dev, vector);
    QTestState *s = dev->bus->qts;

    qtest_writel(s, e + PCI_MSIX_ENTRY_LOWER_ADDR, (uint32_t)addr);
    qtest_writel(s, e + PCI_MSIX_ENTRY_UPPER_ADDR, addr >> 32);
    qtest_writel(s, e + PCI_MSIX_ENTRY_DATA, data);
}

void qpci_msix_mask_vector(QPCIDevice *dev, uint16_t vector, bool masked)
{
    uint64_t ctrl = qpci_msix_entry_addr(dev, vector) +
                    PCI_MSIX_ENTRY_VECTOR_CTRL;
    QTestState *s = dev->bus->qts;
    uint32_t v = qtest_readl(s, ctrl);

    if (masked) {
        v |= PCI_MSIX_ENTRY_CTRL_MASKBIT;
    } else {
        v &= ~PCI_MSIX_ENTRY_CTRL_MASKBIT;
    }
    qtest_writel(s, ctrl, v);
}

bool qpci_msix_masked(QPCIDevice *dev, uint16_t vector)
{
    uint64_t ctrl = qpci_msix_entry_addr(dev, vector) +
                    PCI_MSIX_ENTRY_VECTOR_CTRL;

    return qtest_readl(dev->bus->qts, ctrl) & PCI_MSIX_ENTRY_CTRL_MASKBIT;
}

bool qpci_msix_pending(QPCIDevice *dev, uint16_t vector)
{
    uint64_t word = qpci_msix_pba_addr(dev) + (vector / 64) * 8;
    uint64_t bits = qtest_readq(dev->bus->qts, word);

    return bits & (1ULL << (vector % 64));
}
