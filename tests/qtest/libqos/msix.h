/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libqos MSI-X: enable/disable and function mask through the capability,
 * vector programming, masking and pending bits through the table and PBA.
 */
#ifndef LIBQOS_MSIX_H
#define LIBQOS_MSIX_H

#include "libqos/pci.h"

/* Finds the capability and the table/PBA locations; sets MSI-X enable. */
void qpci_msix_enable(QPCIDevice *dev);
void qpci_msix_disable(QPCIDevice *dev);
bool qpci_msix_enabled(QPCIDevice *dev);
void qpci_msix_set_function_mask(QPCIDevice *dev, bool masked);
uint16_t qpci_msix_table_size(QPCIDevice *dev);

/* Guest addresses of an entry field and of the PBA (after enable). */
uint64_t qpci_msix_entry_addr(QPCIDevice *dev, uint16_t vector);
uint64_t qpci_msix_pba_addr(QPCIDevice *dev);

void qpci_msix_set_vector(QPCIDevice *dev, uint16_t vector, uint64_t addr,
                          uint32_t data);
void qpci_msix_mask_vector(QPCIDevice *dev, uint16_t vector, bool masked);
bool qpci_msix_masked(QPCIDevice *dev, uint16_t vector);
bool qpci_msix_pending(QPCIDevice *dev, uint16_t vector);

#endif
