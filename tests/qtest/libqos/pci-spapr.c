/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libqos pseries PCI bus: RTAS config access, translated BAR windows. */
#include "qemu/osdep.h"
#include "libqos/pci-spapr.h"
#include "libqos/rtas.h"

static uint32_t spapr_config_read(QPCIBus *bus, int devfn, uint16_t offset,
                                  int len)
{
    uint32_t val;

    /* A missing function reads as all ones, as through any host bridge. */
    if (qrtas_ibm_read_pci_config(bus->qts, QRTAS_PHB_BUID,
                                  qrtas_config_addr(devfn, offset), len,
                                  &val) != QRTAS_SUCCESS) {
        return len == 4 ? UINT32_MAX : (1u << (len * 8)) - 1;
    }
    return val;
}

static void spapr_config_write(QPCIBus *bus, int devfn, uint16_t offset,
                               uint32_t val, int len)
{
    qrtas_ibm_write_pci_config(bus->qts, QRTAS_PHB_BUID,
                               qrtas_config_addr(devfn, offset), len, val);
}

QPCIBus *qpci_new_spapr(QTestState *qts)
{
    QPCIBus *bus = g_new0(QPCIBus, 1);

    bus->qts = qts;
    bus->config_read = spapr_config_read;
    bus->config_write = spapr_config_write;
    return bus;
}

void qpci_free_spapr(QPCIBus *bus)
{
    g_free(bus);
}

uint64_t qpci_spapr_cpu_addr(QPCIBar bar, uint64_t off)
{
    uint64_t pci = bar.addr + off;

    g_assert_cmphex(bar.addr, !=, QPCI_BAR_NONE);
    if (bar.is_io) {
        g_assert_cmphex(pci, <, 0x10000);
        return QPCI_SPAPR_IO_BASE + pci;
    }
    if (pci >= QPCI_SPAPR_MMIO32_PCI &&
        pci - QPCI_SPAPR_MMIO32_PCI < QPCI_SPAPR_MMIO32_SIZE) {
        return QPCI_SPAPR_MMIO32_BASE + (pci - QPCI_SPAPR_MMIO32_PCI);
    }
    g_assert_true(pci >= QPCI_SPAPR_MMIO64_BASE &&
                  pci - QPCI_SPAPR_MMIO64_BASE < QPCI_SPAPR_MMIO64_SIZE);
    return pci;
}

uint32_t qpci_spapr_io_readl(QPCIDevice *dev, QPCIBar bar, uint64_t off)
{
    return GUINT32_SWAP_LE_BE(qtest_readl(dev->bus->qts,
                                          qpci_spapr_cpu_addr(bar, off)));
}

uint64_t qpci_spapr_io_readq(QPCIDevice *dev, QPCIBar bar, uint64_t off)
{
    return GUINT64_SWAP_LE_BE(qtest_readq(dev->bus->qts,
                                          qpci_spapr_cpu_addr(bar, off)));
}

void qpci_spapr_io_writel(QPCIDevice *dev, QPCIBar bar, uint64_t off,
                          uint32_t v)
{
    qtest_writel(dev->bus->qts, qpci_spapr_cpu_addr(bar, off),
                 GUINT32_SWAP_LE_BE(v));
}
