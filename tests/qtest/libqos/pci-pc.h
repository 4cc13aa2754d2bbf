/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libqos PCI bus of the pc machine: configuration mechanism #1 and ECAM. */
#ifndef LIBQOS_PCI_PC_H
#define LIBQOS_PCI_PC_H

#include "libqos/pci.h"

#define QPCI_PC_ECAM_BASE 0xe0000000ULL

/* Config access through ports 0xcf8/0xcfc. */
QPCIBus *qpci_new_pc(QTestState *qts);
/* The same bus, with config access through the ECAM window. */
QPCIBus *qpci_new_pc_ecam(QTestState *qts);
void qpci_free_pc(QPCIBus *bus);

#endif
