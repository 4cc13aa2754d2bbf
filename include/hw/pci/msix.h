/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MSI-X (PCI 3.0 6.8.2).  The table and the PBA are I/O MemoryRegions
 * overlaid (priority 1) on BAR containers the device registered, so they
 * can share a BAR, and a page, with other registers or with an mmap.
 *
 * A vector is deliverable when MSI-X is enabled, the function is not
 * masked and the vector's mask bit is clear.  msix_notify() on a
 * deliverable vector sends its message on the bus-master address space;
 * otherwise it sets the pending bit, and the vector is sent (and the bit
 * cleared) when it becomes deliverable.
 *
 * Vector notifiers (vfio-pci uses them to move a vector between the
 * kernel irqfd path and the emulated one): use(vector, msg) when a vector
 * becomes deliverable, and again when its message changes while it is
 * deliverable; release(vector) when it stops being deliverable.
 * Installing notifiers calls use for every deliverable vector;
 * uninstalling calls release for every vector use was called for.
 *
 * Lazy PBA: the PBA region is enabled only while a bit is pending, so
 * whatever lies below it (a passthrough mmap) shows through otherwise.
 * The owner of what lies below registers a PBA notifier and is told of
 * every change: msix.c announces, nobody polls.
 */
#ifndef HW_PCI_MSIX_H
#define HW_PCI_MSIX_H

#include "hw/pci/pci.h"

/* Bytes of the MSI-X table of @nentries vectors: 16 per entry. */
static inline uint32_t msix_table_size(uint32_t nentries)
{
    return nentries * PCI_MSIX_ENTRY_SIZE;
}

/* Bytes of the PBA: qwords, one bit per vector. */
static inline uint32_t msix_pba_size(uint32_t nentries)
{
    return QEMU_ALIGN_UP(nentries, 64) / 8;
}

/*
 * Adds the capability at cap_pos (0: anywhere) with nentries vectors
 * (1..2048).  Table and PBA must lie inside their BARs and not overlap
 * each other.  Returns 0, or -errno with errp set.
 */
int msix_init(PCIDevice *dev, unsigned short nentries,
              MemoryRegion *table_bar, uint8_t table_bar_nr,
              uint32_t table_offset, MemoryRegion *pba_bar,
              uint8_t pba_bar_nr, uint32_t pba_offset, uint8_t cap_pos,
              Error **errp);
void msix_uninit(PCIDevice *dev, MemoryRegion *table_bar,
                 MemoryRegion *pba_bar);

bool msix_present(const PCIDevice *dev);
bool msix_enabled(const PCIDevice *dev);
bool msix_function_masked(const PCIDevice *dev);
unsigned int msix_nr_vectors(const PCIDevice *dev);
/* Masked by its vector control bit or by the function (or disabled). */
bool msix_is_masked(PCIDevice *dev, unsigned int vector);
bool msix_vector_masked(PCIDevice *dev, unsigned int vector);
MSIMessage msix_get_message(PCIDevice *dev, unsigned int vector);
/* Programs a vector (for machines that do it themselves) and unmasks it. */
void msix_set_message(PCIDevice *dev, unsigned int vector, MSIMessage msg);
/* Undoes it: masks the vector (release notifier), then zeroes its message. */
void msix_clear_message(PCIDevice *dev, unsigned int vector);
void msix_notify(PCIDevice *dev, unsigned int vector);

bool msix_is_pending(PCIDevice *dev, unsigned int vector);
void msix_set_pending(PCIDevice *dev, unsigned int vector);
void msix_clr_pending(PCIDevice *dev, unsigned int vector);

int msix_set_vector_notifiers(PCIDevice *dev,
                              MSIVectorUseNotifier use_notifier,
                              MSIVectorReleaseNotifier release_notifier,
                              MSIVectorPollNotifier poll_notifier);
void msix_unset_vector_notifiers(PCIDevice *dev);

/* Enable / function-mask transitions; called by the default handler. */
void msix_write_config(PCIDevice *dev, uint32_t addr, uint32_t val, int len);
void msix_reset(PCIDevice *dev);

void msix_set_lazy_pba(PCIDevice *dev, bool lazy);
bool msix_pba_enabled(PCIDevice *dev);
/*
 * Calls @notifier (NULL: none) with the PBA region's state now and on
 * every change from then on, until msix_uninit().
 */
void msix_set_pba_notifier(PCIDevice *dev, MSIXPbaNotifier notifier);
void msix_set_table_emulated(PCIDevice *dev, bool emulated);
MemoryRegion *msix_table_region(PCIDevice *dev);
MemoryRegion *msix_pba_region(PCIDevice *dev);

#endif
