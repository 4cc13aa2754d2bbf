/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MSI capability (PCI 3.0 6.8.1): 32/64-bit address, up to 32 vectors,
 * optional per-vector mask and pending bits.
 */
#ifndef HW_PCI_MSI_H
#define HW_PCI_MSI_H

#include "hw/pci/pci.h"

/*
 * Adds the capability at offset (0: anywhere).  nr_vectors is a power of
 * two from 1 to 32.  Returns the offset, or -errno with errp set.
 */
int msi_init(PCIDevice *dev, uint8_t offset, unsigned int nr_vectors,
             bool msi64bit, bool msi_per_vector_mask, Error **errp);
void msi_uninit(PCIDevice *dev);
void msi_reset(PCIDevice *dev);
bool msi_enabled(const PCIDevice *dev);
/* Vectors the guest enabled (Multiple Message Enable), 0 when disabled. */
unsigned int msi_nr_vectors_allocated(const PCIDevice *dev);
bool msi_is_masked(const PCIDevice *dev, unsigned int vector);
MSIMessage msi_get_message(PCIDevice *dev, unsigned int vector);
/* Sends vector, or sets its pending bit when masked. */
void msi_notify(PCIDevice *dev, unsigned int vector);
/* Tracks unmasks (delivering pending vectors); called by the default
 * config write handler. */
void msi_write_config(PCIDevice *dev, uint32_t addr, uint32_t val, int len);
/* An MSI write of msg.data to msg.address on the bus-master space. */
void msi_send_message(PCIDevice *dev, MSIMessage msg);

#endif
