/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libqos PCI: config space, BAR and capability helpers for qtests.
 *
 * A QPCIBus supplies config space access (e.g. 0xcf8/0xcfc on pc, see
 * pci-pc.h); everything else is generic.  BARs are found where the machine
 * (or the test) programmed them; qpci_bar_set() moves one.
 */
#ifndef LIBQOS_PCI_H
#define LIBQOS_PCI_H

#include <stdbool.h>
#include <stdint.h>
#include "libqtest.h"

#define QPCI_DEVFN(slot, fn) ((((slot) & 0x1f) << 3) | ((fn) & 7))
#define QPCI_BAR_NONE UINT64_MAX

typedef struct QPCIBus QPCIBus;

struct QPCIBus {
    QTestState *qts;
    uint32_t (*config_read)(QPCIBus *bus, int devfn, uint16_t offset,
                            int len);
    void (*config_write)(QPCIBus *bus, int devfn, uint16_t offset,
                         uint32_t val, int len);
};

typedef struct QPCIBar {
    uint64_t addr;              /* QPCI_BAR_NONE when not programmed */
    uint64_t size;
    bool is_io;
} QPCIBar;

typedef struct QPCIDevice {
    QPCIBus *bus;
    int devfn;
    /* MSI-X, filled by qpci_msix_enable() (libqos/msix.h) */
    uint8_t msix_cap;
    int msix_table_bar, msix_pba_bar;
    uint64_t msix_table_off, msix_pba_off;
} QPCIDevice;

uint8_t qpci_config_readb(QPCIDevice *dev, uint16_t offset);
uint16_t qpci_config_readw(QPCIDevice *dev, uint16_t offset);
uint32_t qpci_config_readl(QPCIDevice *dev, uint16_t offset);
void qpci_config_writeb(QPCIDevice *dev, uint16_t offset, uint8_t val);
void qpci_config_writew(QPCIDevice *dev, uint16_t offset, uint16_t val);
void qpci_config_writel(QPCIDevice *dev, uint16_t offset, uint32_t val);

/* NULL when nothing answers at devfn (vendor id reads 0xffff). */
QPCIDevice *qpci_device_find(QPCIBus *bus, int devfn);
void qpci_device_free(QPCIDevice *dev);
/* Calls fn for every present function; returns how many there were. */
int qpci_device_foreach(QPCIBus *bus,
                        void (*fn)(QPCIDevice *dev, int devfn, void *data),
                        void *data);

/* Sets memory, I/O and bus-master enable. */
void qpci_device_enable(QPCIDevice *dev);
/* Offset of capability id after start (0: from the list head), or 0. */
uint8_t qpci_find_capability(QPCIDevice *dev, uint8_t id, uint8_t start);

/*
 * Sizes BAR barno by the all-ones probe (decoding is switched off around
 * it and the old value restored).  0 when the BAR is not implemented.
 */
uint64_t qpci_bar_size(QPCIDevice *dev, int barno);
/* The BAR as programmed now, with its size. */
QPCIBar qpci_bar(QPCIDevice *dev, int barno);
/* Programs a new address (both dwords of a 64-bit BAR). */
void qpci_bar_set(QPCIDevice *dev, int barno, uint64_t addr);

/* Accesses at offset inside a BAR (port I/O or memory as the BAR says). */
uint8_t qpci_io_readb(QPCIDevice *dev, QPCIBar bar, uint64_t off);
uint16_t qpci_io_readw(QPCIDevice *dev, QPCIBar bar, uint64_t off);
uint32_t qpci_io_readl(QPCIDevice *dev, QPCIBar bar, uint64_t off);
void qpci_io_writeb(QPCIDevice *dev, QPCIBar bar, uint64_t off, uint8_t v);
void qpci_io_writew(QPCIDevice *dev, QPCIBar bar, uint64_t off, uint16_t v);
void qpci_io_writel(QPCIDevice *dev, QPCIBar bar, uint64_t off, uint32_t v);

#endif
