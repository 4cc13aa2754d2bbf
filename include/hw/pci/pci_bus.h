/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The PCI bus object: devices by devfn, the spaces BARs map into. */
#ifndef HW_PCI_PCI_BUS_H
#define HW_PCI_PCI_BUS_H

#include "hw/pci/pci.h"

struct PCIBus {
    BusState qbus;
    PCIDevice *devices[PCI_DEVFN_MAX];
    MemoryRegion *bar_space_mem;
    MemoryRegion *bar_space_io;
    MemoryRegion *dma_root;     /* what bus-master accesses reach */

    pci_set_irq_fn set_irq;
    pci_map_irq_fn map_irq;
    void *irq_opaque;
    int nirq;
    int *irq_count;             /* asserted INTx inputs per irq number */

    void (*hotplug_hook)(PCIBus *bus, PCIDevice *dev, void *opaque);
    void *hotplug_opaque;
};

#endif
