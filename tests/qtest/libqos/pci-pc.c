/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libqos pc PCI bus: config access via 0xcf8/0xcfc or ECAM. */
#include "qemu/osdep.h"
#include "libqos/pci-pc.h"

#define CONFIG_ADDR 0xcf8
#define CONFIG_DATA 0xcfc

static uint32_t conf1_addr(int devfn, uint16_t offset)
{
    return 0x80000000u | (devfn << 8) | (offset & 0xfc);
}

static uint32_t pc_config_read(QPCIBus *bus, int devfn, uint16_t offset,
                               int len)
{
    uint16_t port = CONFIG_DATA + (offset & 3);

    qtest_outl(bus->qts, CONFIG_ADDR, conf1_addr(devfn, offset));
    switch (len) {
    case 1:
        return qtest_inb(bus->qts, port);
    case 2:
        return qtest_inw(bus->qts, port);
    default:
        return qtest_inl(bus->qts, port);
    }
}

static void pc_config_write(QPCIBus *bus, int devfn, uint16_t offset,
                            uint32_t val, int len)
{
    uint16_t port = CONFIG_DATA + (offset & 3);

    qtest_outl(bus->qts, CONFIG_ADDR, conf1_addr(devfn, offset));
    switch (len) {
    case 1:
        qtest_outb(bus->qts, port, val);
        break;
    case 2:
        qtest_outw(bus->qts, port, val);
        break;
    default:
        qtest_outl(bus->qts, port, val);
        break;
    }
}

static uint64_t ecam_addr(int devfn, uint16_t offset)
{
    return QPCI_PC_ECAM_BASE + ((uint64_t)devfn << 12) + offset;
}

static uint32_t ecam_config_read(QPCIBus *bus, int devfn, uint16_t offset,
                                 int len)
{
    switch (len) {
    case 1:
        return qtest_readb(bus->qts, ecam_addr(devfn, offset));
    case 2:
        return qtest_readw(bus->qts, ecam_addr(devfn, offset));
    default:
        return qtest_readl(bus->qts, ecam_addr(devfn, offset));
    }
}

static void ecam_config_write(QPCIBus *bus, int devfn, uint16_t offset,
                              uint32_t val, int len)
{
    switch (len) {
    case 1:
        qtest_writeb(bus->qts, ecam_addr(devfn, offset), val);
        break;
    case 2:
        qtest_writew(bus->qts, ecam_addr(devfn, offset), val);
        break;
    default:
        qtest_writel(bus->qts, ecam_addr(devfn, offset), val);
        break;
    }
}

QPCIBus *qpci_new_pc(QTestState *qts)
{
    QPCIBus *bus = g_new0(QPCIBus, 1);

    bus->qts = qts;
    bus->config_read = pc_config_read;
    bus->config_write = pc_config_write;
    return bus;
}

QPCIBus *qpci_new_pc_ecam(QTestState *qts)
{
    QPCIBus *bus = g_new0(QPCIBus, 1);

    bus->qts = qts;
    bus->config_read = ecam_config_read;
    bus->config_write = ecam_config_write;
    return bus;
}

void qpci_free_pc(QPCIBus *bus)
{
    g_free(bus);
}
