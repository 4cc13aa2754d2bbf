/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libqos PCI helpers; see pci.h. */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
#include "libqos/pci.h"

uint8_t qpci_config_readb(QPCIDevice *dev, uint16_t offset)
{
    return dev->bus->config_read(dev->bus, dev->devfn, offset, 1);
}

uint16_t qpci_config_readw(QPCIDevice *dev, uint16_t offset)
{
    return dev->bus->config_read(dev->bus, dev->devfn, offset, 2);
}

uint32_t qpci_config_readl(QPCIDevice *dev, uint16_t offset)
{
    return dev->bus->config_read(dev->bus, dev->devfn, offset, 4);
}

void qpci_config_writeb(QPCIDevice *dev, uint16_t offset, uint8_t val)
{
    dev->bus->config_write(dev->bus, dev->devfn, offset, val, 1);
}

void qpci_config_writew(QPCIDevice *dev, uint16_t offset, uint16_t val)
{
    dev->bus->config_write(dev->bus, dev->devfn, offset, val, 2);
}

void qpci_config_writel(QPCIDevice *dev, uint16_t offset, uint32_t val)
{
    dev->bus->config_write(dev->bus, dev->devfn, offset, val, 4);
}

QPCIDevice *qpci_device_find(QPCIBus *bus, int devfn)
{
    QPCIDevice *dev = g_new0(QPCIDevice, 1);

    dev->bus = bus;
    dev->devfn = devfn;
    dev->msix_table_bar = dev->msix_pba_bar = -1;
    if (qpci_config_readw(dev, PCI_VENDOR_ID) == 0xffff) {
        g_free(dev);
        return NULL;
    }
    return dev;
}

void qpci_device_free(QPCIDevice *dev)
{
    g_free(dev);
}

int qpci_device_foreach(QPCIBus *bus,
                        void (*fn)(QPCIDevice *dev, int devfn, void *data),
                        void *data)
{
    int devfn, n = 0;

    for (devfn = 0; devfn < 256; devfn++) {
        QPCIDevice *dev = qpci_device_find(bus, devfn);

        if (!dev) {
            continue;
        }
        n++;
        if (fn) {
            fn(dev, devfn, data);
        }
        qpci_device_free(dev);
    }
    return n;
}

void qpci_device_enable(QPCIDevice *dev)
{
    uint16_t cmd = qpci_config_readw(dev, PCI_COMMAND);

    cmd |= PCI_COMMAND_IO | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;
    qpci_config_writew(dev, PCI_COMMAND, cmd);
}

uint8_t qpci_find_capability(QPCIDevice *dev, uint8_t id, uint8_t start)
{
    uint8_t pos;
    int ttl = 48;

    if (!(qpci_config_readw(dev, PCI_STATUS) & PCI_STATUS_CAP_LIST)) {
        return 0;
    }
    pos = start ? qpci_config_readb(dev, start + PCI_CAP_LIST_NEXT)
                : qpci_config_readb(dev, PCI_CAPABILITY_LIST);
    while ((pos &= ~3) && ttl--) {
        if (qpci_config_readb(dev, pos + PCI_CAP_LIST_ID) == id) {
            return pos;
        }
        pos = qpci_config_readb(dev, pos + PCI_CAP_LIST_NEXT);
    }
    return 0;
}

static int bar_reg(int barno)
{
    return PCI_BASE_ADDRESS_0 + barno * 4;
}

uint64_t qpci_bar_size(QPCIDevice *dev, int barno)
{
    int reg = bar_reg(barno);
    uint16_t cmd = qpci_config_readw(dev, PCI_COMMAND);
    uint32_t old_lo = qpci_config_readl(dev, reg), old_hi = 0;
    uint64_t mask;
    bool is64;

    qpci_config_writew(dev, PCI_COMMAND,
                       cmd & ~(PCI_COMMAND_IO | PCI_COMMAND_MEMORY));
    qpci_config_writel(dev, reg, 0xffffffff);
    mask = qpci_config_readl(dev, reg);
    is64 = !(old_lo & PCI_BASE_ADDRESS_SPACE_IO) &&
           (old_lo & PCI_BASE_ADDRESS_MEM_TYPE_MASK) ==
           PCI_BASE_ADDRESS_MEM_TYPE_64;
    if (is64) {
        old_hi = qpci_config_readl(dev, reg + 4);
        qpci_config_writel(dev, reg + 4, 0xffffffff);
        mask |= (uint64_t)qpci_config_readl(dev, reg + 4) << 32;
        qpci_config_writel(dev, reg + 4, old_hi);
    } else {
        mask |= 0xffffffff00000000ULL;
    }
    qpci_config_writel(dev, reg, old_lo);
    qpci_config_writew(dev, PCI_COMMAND, cmd);

    mask &= (old_lo & PCI_BASE_ADDRESS_SPACE_IO) ? ~3ULL : ~0xfULL;
    if ((mask & 0xffffffffULL) == 0) {
        return 0;
    }
    return ~mask + 1;
}

QPCIBar qpci_bar(QPCIDevice *dev, int barno)
{
    int reg = bar_reg(barno);
    uint32_t lo = qpci_config_readl(dev, reg);
    QPCIBar bar = { .is_io = lo & PCI_BASE_ADDRESS_SPACE_IO };

    bar.size = qpci_bar_size(dev, barno);
    if (bar.is_io) {
        bar.addr = lo & PCI_BASE_ADDRESS_IO_MASK;
    } else {
        bar.addr = lo & PCI_BASE_ADDRESS_MEM_MASK;
        if ((lo & PCI_BASE_ADDRESS_MEM_TYPE_MASK) ==
            PCI_BASE_ADDRESS_MEM_TYPE_64) {
            bar.addr |= (uint64_t)qpci_config_readl(dev, reg + 4) << 32;
        }
    }
    if (!bar.size || !bar.addr) {
        bar.addr = QPCI_BAR_NONE;
    }
    return bar;
}

void qpci_bar_set(QPCIDevice *dev, int barno, uint64_t addr)
{
    int reg = bar_reg(barno);
    uint32_t lo = qpci_config_readl(dev, reg);

    qpci_config_writel(dev, reg, (uint32_t)addr);
    if (!(lo & PCI_BASE_ADDRESS_SPACE_IO) &&
        (lo & PCI_BASE_ADDRESS_MEM_TYPE_MASK) == PCI_BASE_ADDRESS_MEM_TYPE_64) {
        qpci_config_writel(dev, reg + 4, addr >> 32);
    }
}

uint8_t qpci_io_readb(QPCIDevice *dev, QPCIBar bar, uint64_t off)
{
    QTestState *s = dev->bus->qts;

    g_assert(bar.addr != QPCI_BAR_NONE);
    return bar.is_io ? qtest_inb(s, bar.addr + off)
                     : qtest_readb(s, bar.addr + off);
}

uint16_t qpci_io_readw(QPCIDevice *dev, QPCIBar bar, uint64_t off)
{
    QTestState *s = dev->bus->qts;

    g_assert(bar.addr != QPCI_BAR_NONE);
    return bar.is_io ? qtest_inw(s, bar.addr + off)
                     : qtest_readw(s, bar.addr + off);
}

uint32_t qpci_io_readl(QPCIDevice *dev, QPCIBar bar, uint64_t off)
{
    QTestState *s = dev->bus->qts;

    g_assert(bar.addr != QPCI_BAR_NONE);
    return bar.is_io ? qtest_inl(s, bar.addr + off)
                     : qtest_readl(s, bar.addr + off);
}

void qpci_io_writeb(QPCIDevice *dev, QPCIBar bar, uint64_t off, uint8_t v)
{
    QTestState *s = dev->bus->qts;

    g_assert(bar.addr != QPCI_BAR_NONE);
    if (bar.is_io) {
        qtest_outb(s, bar.addr + off, v);
    } else {
        qtest_writeb(s, bar.addr + off, v);
    }
}

void qpci_io_writew(QPCIDevice *dev, QPCIBar bar, uint64_t off, uint16_t v)
{
    QTestState *s = dev->bus->qts;

    g_assert(bar.addr != QPCI_BAR_NONE);
    if (bar.is_io) {
        qtest_outw(s, bar.addr + off, v);
    } else {
        qtest_writew(s, bar.addr + off, v);
    }
}

void qpci_io_writel(QPCIDevice *dev, QPCIBar bar, uint64_t off, uint32_t v)
{
    QTestState *s = dev->bus->qts;

    g_assert(bar.addr != QPCI_BAR_NONE);
    if (bar.is_io) {
        qtest_outl(s, bar.addr + off, v);
    } else {
        qtest_writel(s, bar.addr + off, v);
    }
}
