/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one thing accel/ needs from vfio-pci: a way to take MSI-X vectors
 * onto the fast path.  Everything else of the device model is private to
 * hw/vfio (hw/vfio/pci.h).
 */
#ifndef HW_VFIO_IRQ_BYPASS_H
#define HW_VFIO_IRQ_BYPASS_H

#include <stdbool.h>
#include "qemu/typedefs.h"
#include "hw/pci/pci.h"

/*
 * The fast path for MSI-X vectors (KVM irqfd).  While a vector is
 * deliverable Conduit offers its eventfd to attach(); if that returns
 * true the event no longer reaches Conduit until detach().  With no ops
 * registered (qtest, or before the KVM work lands) every vector takes
 * Conduit's eventfd handler, which calls msix_notify().
 */
typedef struct VFIOPCIIrqBypassOps {
    bool (*attach)(PCIDevice *dev, unsigned int vector, int fd,
                   MSIMessage msg);
    void (*detach)(PCIDevice *dev, unsigned int vector, int fd);
} VFIOPCIIrqBypassOps;

void vfio_pci_set_irq_bypass_ops(const VFIOPCIIrqBypassOps *ops);

#endif
