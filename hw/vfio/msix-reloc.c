/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x-msix-relocation: where the emulated MSI-X table and PBA go.
 *
 * A pure decision, like vfio_bar_plan().  The emulated table needs no
 * device memory, so it can live in a BAR slot the device leaves free (a
 * new 32-bit memory BAR, one slot), or in the upper half of a doubled
 * memory BAR.  Either way the physical table's page is then covered by
 * the mapping with no overlay on it.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/vfio/pci.h"

/* A doubled 32-bit BAR must stay below 2 GiB. */
#define VFIO_RELOC_MAX_BAR32 (1ULL << 30)
#define VFIO_RELOC_MIN_BAR 0x1000
/* The capability's table offset is 32 bits: the upper half must start below. */
#define VFIO_RELOC_MAX_OFFSET (1ULL << 31)

static bool slot_free(const VFIOMsixRelocSlot *s)
{
    return !s->size && !s->upper_half;
}

static bool reloc_double(const VFIOMsixRelocSlot slots[PCI_ROM_SLOT],
                         uint32_t bar, uint64_t need, uint64_t table_size,
                         VFIOMsixRelocResult *res, Error **errp)
{
    const VFIOMsixRelocSlot *s = &slots[bar];

    if (s->upper_half) {
        error_setg(errp, "BAR%u is the upper half of 64-bit BAR%u", bar,
                   bar - 1);
        return false;
    }
    if (s->io) {
        error_setg(errp, "BAR%u is an I/O BAR; the MSI-X table must be in "
                   "memory space", bar);
        return false;
    }
    if (!s->mem64 && s->size > VFIO_RELOC_MAX_BAR32) {
        error_setg(errp, "BAR%u is a 32-bit BAR of 0x%" PRIx64 " bytes; "
                   "doubling it would exceed 2 GiB", bar, s->size);
        return false;
    }
    if (s->size > VFIO_RELOC_MAX_OFFSET) {
        error_setg(errp, "BAR%u of 0x%" PRIx64 " bytes is too large: the "
                   "MSI-X capability cannot point 4 GiB or more into a BAR",
                   bar, s->size);
        return false;
    }
    if (need > s->size) {
        error_setg(errp, "BAR%u (0x%" PRIx64 " bytes) is too small to hold"
                   " the table and PBA (0x%" PRIx64 " bytes) in its upper "
                   "half", bar, s->size, need);
        return false;
    }
    *res = (VFIOMsixRelocResult) {
        .bar = bar,
        .new_bar = false,
        .bar_size = s->size * 2,
        .table_offset = s->size,
        .pba_offset = s->size + table_size,
    };
    return true;
}

static void reloc_new(uint32_t bar, uint64_t need, uint64_t table_size,
                      VFIOMsixRelocResult *res)
{
    *res = (VFIOMsixRelocResult) {
        .bar = bar,
        .new_bar = true,
        .bar_size = MAX(VFIO_RELOC_MIN_BAR, pow2ceil(need)),
        .table_offset = 0,
        .pba_offset = table_size,
    };
}

bool vfio_msix_relocation_plan(const VFIOMsixRelocSlot slots[PCI_ROM_SLOT],
                               VFIOMsixRelocation mode, uint32_t table_bar,
                               uint16_t entries, VFIOMsixRelocResult *res,
                               Error **errp)
{
    uint64_t table_size = entries * 16ULL;
    uint64_t need = table_size + DIV_ROUND_UP(entries, 64) * 8ULL;
    uint32_t bar;

    if (!entries || entries > 2048 || table_bar >= PCI_ROM_SLOT) {
        error_setg(errp, "no MSI-X table to relocate");
        return false;
    }
    if (mode == VFIO_MSIX_RELOCATION_AUTO) {
        for (bar = 0; bar < PCI_ROM_SLOT; bar++) {
            if (slot_free(&slots[bar])) {
                reloc_new(bar, need, table_size, res);
                return true;
            }
        }
        if (!reloc_double(slots, table_bar, need, table_size, res, errp)) {
            error_prepend(errp, "no free BAR slot and ");
            return false;
        }
        return true;
    }
    if (mode < VFIO_MSIX_RELOCATION_BAR0 ||
        mode > VFIO_MSIX_RELOCATION_BAR0 + PCI_ROM_SLOT - 1) {
        error_setg(errp, "invalid mode %d", mode);
        return false;
    }
    bar = mode - VFIO_MSIX_RELOCATION_BAR0;
    if (slot_free(&slots[bar])) {
        reloc_new(bar, need, table_size, res);
        return true;
    }
    return reloc_double(slots, bar, need, table_size, res, errp);
}
