/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x-msix-relocation: whether, and where, the emulated MSI-X table and PBA
 * move away from the device's own.  Private to hw/vfio.
 *
 * One pure decision, like vfio_bar_plan(): pci.c fills a
 * VFIOMsixRelocInput from the device (its BAR slots, where the device
 * has the table and PBA, the mode, the page size and the BAR plans'
 * inputs) and applies the VFIOMsixRelocDecision; nothing else decides.
 *
 * Whether (the modes):
 *  - off: never;
 *  - auto, barN: always, or fail realize with the reason when impossible;
 *  - where-helpful (the default): only when moving untraps device
 *    registers the guest could otherwise not reach without an exit: the
 *    BAR plan of the table's BAR (then the PBA's) is made with the
 *    structures in place and moved away, and some page that traps only
 *    because of them must hold register bytes before the first structure
 *    on it (bytes after the last one cannot be told from padding, so a
 *    table on a page of its own gains nothing).  Never on a machine that
 *    does not emulate the table (vfio-no-msix-emulation, pseries).  When
 *    it would help but is impossible, the table stays and the reason is
 *    kept for the hot-page hint (vfio_bar_plan_explain()).
 *
 * Where (the placement): the emulated table needs no device memory, so it
 * can live in a BAR slot the device leaves free (a new 32-bit memory BAR,
 * one slot; auto and where-helpful take the first), or in the upper half
 * of a doubled memory BAR (barN names it; auto and where-helpful double
 * the table's BAR when no slot is free).  Whatever holds the emulated
 * structures is at least one host page and starts on one (a new BAR of a
 * page or more, at least 4 KiB; the upper half of a doubled BAR begins at
 * the larger of the old size and a page), or on a 64 KiB page host the
 * table would share a page with device registers again.  The PBA follows
 * the table.  Refused: the upper half of a 64-bit BAR, an I/O BAR, a
 * 32-bit BAR that would pass 2 GiB, an upper half the capability's
 * 32-bit offset field cannot point to, a BAR too small to hold both in
 * its upper half, and a page size that is not a power of two of at least
 * 4 KiB.
 */
#ifndef HW_VFIO_MSIX_RELOC_H
#define HW_VFIO_MSIX_RELOC_H

#include <stdbool.h>
#include <stdint.h>
#include "qemu/typedefs.h"
#include "hw/pci/pci.h"
#include "bar-plan.h"

/* x-msix-relocation */
typedef enum VFIOMsixRelocation {
    VFIO_MSIX_RELOCATION_OFF,
    VFIO_MSIX_RELOCATION_AUTO,
    VFIO_MSIX_RELOCATION_BAR0,      /* ... BAR5 = BAR0 + 5 */
    /* The default: as auto, but only where it untraps a mappable page. */
    VFIO_MSIX_RELOCATION_WHERE_HELPFUL = VFIO_MSIX_RELOCATION_BAR0 + 6,
} VFIOMsixRelocation;

/* The property's names, indexed by VFIOMsixRelocation; NULL-terminated. */
extern const char *const vfio_msix_relocation_names[];

/* One BAR slot of the device. */
typedef struct VFIOMsixRelocSlot {
    uint64_t size;              /* region size, 0: slot free */
    bool io;
    bool mem64;
    bool upper_half;            /* upper dword of a 64-bit BAR */
} VFIOMsixRelocSlot;

typedef struct VFIOMsixRelocInput {
    VFIOMsixRelocation mode;
    VFIOMsixRelocSlot slots[PCI_ROM_SLOT];
    uint16_t entries;           /* vectors: 1..2048 */
    uint32_t table_bar;         /* where the device has the table... */
    uint64_t table_offset;
    uint32_t pba_bar;           /* ...and the PBA */
    uint64_t pba_offset;
    /* The host page size, or x-host-page-size: what placement rounds to. */
    uint64_t page_size;
    /*
     * What vfio_bar_plan() gets for each BAR, its MSI-X parts aside
     * (where-helpful adds them, the PBA's shown unless lazy_pba).  Only
     * where-helpful reads these, and no_msix_emulation of the table's.
     */
    VFIOBarPlanInput bar_plans[PCI_ROM_SLOT];
} VFIOMsixRelocInput;

typedef struct VFIOMsixRelocDecision {
    bool relocated;
    /* When relocated: where the emulated table and PBA go. */
    uint32_t bar;
    bool new_bar;               /* a new 32-bit memory BAR */
    uint64_t bar_size;          /* that BAR's size as the guest sees it */
    uint64_t table_offset;
    uint64_t pba_offset;
    /*
     * where-helpful: the register bytes moving untraps, from which page
     * of which BAR on (gain_bytes 0: nothing to gain).
     */
    uint64_t gain_bytes;
    uint32_t gain_bar;
    uint64_t gain_page;
    /* where-helpful wanted to and could not: the page keeps trapping. */
    bool impossible;
    /* Worth a line in the log: the default moved, or could not. */
    bool notable;
    /* Why, in a sentence (x-query-vfio's relocation-decision); g_free. */
    char *explanation;
} VFIOMsixRelocDecision;

/*
 * Decides.  Fails (with the reason, for "x-msix-relocation: ...") only
 * when auto or barN cannot be honoured; every other outcome, including
 * where-helpful finding relocation impossible, is a decision with its
 * explanation.
 */
bool vfio_msix_relocation_decide(const VFIOMsixRelocInput *in,
                                 VFIOMsixRelocDecision *out, Error **errp);
void vfio_msix_relocation_decision_clear(VFIOMsixRelocDecision *out);

#endif
