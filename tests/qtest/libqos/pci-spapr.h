/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libqos PCI bus of the pseries machine: config space through RTAS
 * ibm,read/write-pci-config, and BAR access through the PHB windows.
 *
 * BAR registers hold PCI addresses; the PHB shows PCI 2..4 GiB at
 * QPCI_SPAPR_MMIO32_BASE, the 64-bit window identity-mapped and I/O at
 * QPCI_SPAPR_IO_BASE.  The guest is big-endian while PCI registers are
 * little-endian, so the generic qpci_io_* helpers do not apply here; use
 * the qpci_spapr_io_* ones, which translate and swap.
 */
#ifndef LIBQOS_PCI_SPAPR_H
#define LIBQOS_PCI_SPAPR_H

#include "libqos/pci.h"

#define QPCI_SPAPR_IO_BASE 0x20000000000ULL
#define QPCI_SPAPR_MMIO32_BASE 0x20080000000ULL
#define QPCI_SPAPR_MMIO32_PCI 0x80000000ULL
#define QPCI_SPAPR_MMIO32_SIZE 0x80000000ULL
#define QPCI_SPAPR_MMIO64_BASE 0x21000000000ULL
#define QPCI_SPAPR_MMIO64_SIZE 0x1000000000ULL
#define QPCI_SPAPR_MSI_BASE 0x40000000000ULL

QPCIBus *qpci_new_spapr(QTestState *qts);
void qpci_free_spapr(QPCIBus *bus);

/* The CPU address of offset off in bar (asserts it is in a window). */
uint64_t qpci_spapr_cpu_addr(QPCIBar bar, uint64_t off);
uint32_t qpci_spapr_io_readl(QPCIDevice *dev, QPCIBar bar, uint64_t off);
uint64_t qpci_spapr_io_readq(QPCIDevice *dev, QPCIBar bar, uint64_t off);
void qpci_spapr_io_writel(QPCIDevice *dev, QPCIBar bar, uint64_t off,
                          uint32_t v);

#endif
