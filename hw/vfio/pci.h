/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-pci-base: a PCI function passed through a VFIODevice.  Private to
 * hw/vfio and the drivers that subclass it.
 *
 * One device model, two drivers differing only in how the VFIODevice is
 * opened, each a subclass with its own instance struct: vfio-pci
 * (kernel VFIO, hw/vfio/pci-kernel.c, properties host and sysfsdev) and
 * vfio-user-pci (hw/vfio-user/pci.c, socket and x-msg-timeout).  Files,
 * one concern each:
 *   hw/vfio/bar.c     BAR mechanism (hw/vfio/bar.h): executes
 *                     vfio_bar_plan() with MemoryRegions and keeps the
 *                     trap telemetry; tells the device through hooks
 *   hw/vfio/dma.c     DMA listener (hw/vfio/dma.h): guest RAM -> backend
 *   hw/vfio/pci.c     config space, MSI-X/MSI/INTx, reset
 *   hw/vfio/query.c   QMP x-query-vfio
 */
#ifndef HW_VFIO_PCI_H
#define HW_VFIO_PCI_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"
#include "qemu/event_notifier.h"
#include "system/memory.h"
#include "hw/pci/pci.h"
#include "hw/qdev-properties.h"
#include "hw/vfio/vfio-device.h"
#include "bar.h"
#include "dma.h"
#include "hw/vfio/irq-bypass.h"

#define TYPE_VFIO_PCI_BASE "vfio-pci-base"

#define VFIO_PCI(obj) OBJECT_CHECK(VFIOPCIDevice, (obj), TYPE_VFIO_PCI_BASE)

typedef struct VFIOPCIDevice VFIOPCIDevice;

/* The MSI-X capability as the device has it, and where Conduit put it. */
typedef struct VFIOMsixInfo {
    uint8_t cap;                /* config offset, 0: none */
    uint16_t entries;
    uint32_t table_bar, table_offset;   /* physical */
    uint32_t pba_bar, pba_offset;
    bool relocated;
    char *decision;             /* why relocated or not, for x-query-vfio */
    bool relocation_impossible; /* the default wanted to, and could not */
    uint32_t emu_table_bar, emu_table_offset;   /* as the guest sees it */
    uint32_t emu_pba_bar, emu_pba_offset;
} VFIOMsixInfo;

typedef struct VFIOPCIVector {
    VFIOPCIDevice *vdev;
    unsigned int nr;
    EventNotifier notifier;
    bool bypassed;              /* handed to the fast path */
} VFIOPCIVector;

struct VFIOPCIDevice {
    PCIDevice parent_obj;

    VFIODevice vbasedev;
    VFIOBar bars[PCI_ROM_SLOT];
    MemoryRegion rom;           /* expansion ROM BAR, rom_size 0: none */
    uint8_t *rom_data;
    uint64_t rom_size;
    VFIOMsixInfo msix;
    uint8_t msi_cap;
    uint32_t config_region_size;
    uint64_t host_page_size;
    bool no_msix_emulation;

    /* Interrupts as programmed into the backend. */
    VFIOPCIVector *msix_vectors;
    uint32_t nr_msix_vectors;   /* armed in the backend, 0: none */
    uint64_t msix_slow_path_irqs;   /* events Conduit's handler took */
    VFIOPCIVector *msi_vectors;
    uint32_t nr_msi_vectors;
    EventNotifier intx_notifier;
    bool intx_enabled;
    bool intx_pending;

    VFIODma dma;

    bool broken_reported;
    struct QEMUBH *mmap_bh;     /* re-evaluates hidden mappings */
    Error *migration_blocker;   /* the device's state cannot move */
    struct VFIOMigration *migration;    /* or it moves (migration.c) */
    OnOffAuto enable_migration;
    bool realized;

    /* Properties of every driver */
    bool no_mmap;
    int msix_mappable;          /* VFIOMsixMappableMode */
    OnOffAuto msix_mappable_prop;
    bool lazy_pba;
    uint64_t page_size_override;
    int msix_relocation;        /* VFIOMsixRelocation (msix-reloc.h) */
    OnOffAuto coalesce_prop;    /* x-coalesce-trapped-writes */
    int32_t bootindex;
};

/* ---- hw/vfio/pci.c ---- */

/*
 * The realize every driver shares, once it attached vdev->vbasedev to
 * its backend: config space, BARs, interrupts, DMA.  Undoes all of it
 * (and closes the backend) on failure.
 */
bool vfio_pci_realize_device(VFIOPCIDevice *vdev, Error **errp);

/* Marks the device broken after its backend failed; reports once. */
void vfio_pci_check_broken(VFIOPCIDevice *vdev);
/* Realized vfio devices, for x-query-vfio. */
GList *vfio_pci_devices(void);

#endif
