/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libqos pci-testdev: a pc machine with Conduit's pci-testdev (1d0c:0001)
 * at 00:04.0, found on the bus, its BAR0 mapped.
 */
#ifndef LIBQOS_PCI_TESTDEV_H
#define LIBQOS_PCI_TESTDEV_H

#include "libqtest.h"
#include "libqos/pci.h"

#define TESTDEV_DEVFN QPCI_DEVFN(4, 0)

typedef struct QPCITestdev {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar0;
} QPCITestdev;

/* Starts the machine; @extra is appended to its command line (or NULL). */
void qpci_testdev_start(QPCITestdev *t, const char *extra);
void qpci_testdev_stop(QPCITestdev *t);

#endif
