/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x-msix-relocation: where the emulated MSI-X table and PBA go.
 *
 * A pure decision, like vfio_bar_plan().  The emulated table needs no
 * device memory, so it can live in a BAR slot the device leaves free (a
 * new 32-bit memory BAR, one slot), or in the upper half of a doubled
 * memory BAR.  Either way the physical table's page is then covered by
 * the mapping with no overlay on it.
 *
 * Whatever holds the emulated structures is at least one host page and
 * starts on one (a new BAR of a page or more; the upper half of a doubled
 * BAR begins at the larger of the old size and a page), or on a 64 KiB
 * page host the table would share a page with device registers again.
 *
 * The default (where-helpful) relocates only when that untraps something:
 * vfio_msix_relocation_untrapped() compares the BAR plans with the
 * structures in place and moved away.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "pci.h"

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
                         uint64_t page_size, VFIOMsixRelocResult *res,
                         Error **errp)
{
    const VFIOMsixRelocSlot *s = &slots[bar];
    /* The upper half starts on a host page: below a page, grow to one. */
    uint64_t half = MAX(s->size, page_size);

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
    if (!s->mem64 && half > VFIO_RELOC_MAX_BAR32) {
        error_setg(errp, "BAR%u is a 32-bit BAR of 0x%" PRIx64 " bytes; "
                   "doubling it would exceed 2 GiB", bar, s->size);
        return false;
    }
    if (half > VFIO_RELOC_MAX_OFFSET) {
        error_setg(errp, "BAR%u of 0x%" PRIx64 " bytes is too large: the "
                   "MSI-X capability cannot point 4 GiB or more into a BAR",
                   bar, s->size);
        return false;
    }
    if (need > half) {
        error_setg(errp, "BAR%u (0x%" PRIx64 " bytes) is too small to hold"
                   " the table and PBA (0x%" PRIx64 " bytes) in its upper "
                   "half", bar, s->size, need);
        return false;
    }
    *res = (VFIOMsixRelocResult) {
        .bar = bar,
        .new_bar = false,
        .bar_size = half * 2,
        .table_offset = half,
        .pba_offset = half + table_size,
    };
    return true;
}

static void reloc_new(uint32_t bar, uint64_t need, uint64_t table_size,
                      uint64_t page_size, VFIOMsixRelocResult *res)
{
    *res = (VFIOMsixRelocResult) {
        .bar = bar,
        .new_bar = true,
        .bar_size = MAX(MAX(VFIO_RELOC_MIN_BAR, page_size), pow2ceil(need)),
        .table_offset = 0,
        .pba_offset = table_size,
    };
}

bool vfio_msix_relocation_plan(const VFIOMsixRelocSlot slots[PCI_ROM_SLOT],
                               VFIOMsixRelocation mode, uint32_t table_bar,
                               uint16_t entries, uint64_t page_size,
                               VFIOMsixRelocResult *res, Error **errp)
{
    uint64_t table_size = entries * 16ULL;
    uint64_t need = table_size + DIV_ROUND_UP(entries, 64) * 8ULL;
    uint32_t bar;

    if (!entries || entries > 2048 || table_bar >= PCI_ROM_SLOT) {
        error_setg(errp, "no MSI-X table to relocate");
        return false;
    }
    if (page_size < VFIO_RELOC_MIN_BAR || !is_power_of_2(page_size)) {
        error_setg(errp, "host page size 0x%" PRIx64 " is not a power of "
                   "two of at least 4 KiB", page_size);
        return false;
    }
    if (mode == VFIO_MSIX_RELOCATION_AUTO ||
        mode == VFIO_MSIX_RELOCATION_WHERE_HELPFUL) {
        for (bar = 0; bar < PCI_ROM_SLOT; bar++) {
            if (slot_free(&slots[bar])) {
                reloc_new(bar, need, table_size, page_size, res);
                return true;
            }
        }
        if (!reloc_double(slots, table_bar, need, table_size, page_size,
                          res, errp)) {
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
        reloc_new(bar, need, table_size, page_size, res);
        return true;
    }
    return reloc_double(slots, bar, need, table_size, page_size, res, errp);
}

static bool still_trapped(const VFIOBarPlan *moved, uint64_t off)
{
    uint32_t j;

    for (j = 0; moved && j < moved->nr_trapped; j++) {
        if (off >= moved->trapped[j].offset &&
            off - moved->trapped[j].offset < moved->trapped[j].size) {
            return true;
        }
    }
    return false;
}

/*
 * Bytes of the page [start, end) that are neither MSI-X structure nor
 * behind one: what lies before the first structure on the page.  Bytes
 * after the last one cannot be told from padding (a table on a page of
 * its own is followed by nothing), so they do not count.
 */
static uint64_t register_bytes(const VFIOBarPlan *now, uint64_t start,
                               uint64_t end)
{
    uint64_t first = end;
    uint32_t i;

    for (i = 0; i < now->nr_overlays; i++) {
        const VFIOBarOverlay *ov = &now->overlays[i];

        if (ov->offset < end && ov->offset + ov->size > start) {
            first = MIN(first, MAX(ov->offset, start));
        }
    }
    return first - start;
}

uint64_t vfio_msix_relocation_untrapped(const VFIOBarPlan *now,
                                        const VFIOBarPlan *moved,
                                        uint64_t *first_page)
{
    uint64_t bytes = 0;
    uint32_t i;

    if (!now || !now->page_size) {
        return 0;
    }
    for (i = 0; i < now->nr_trapped; i++) {
        const VFIOBarRange *t = &now->trapped[i];
        uint64_t off;

        for (off = t->offset; off < t->offset + t->size;
             off += now->page_size) {
            uint64_t end = MIN(off + now->page_size, t->offset + t->size);
            uint64_t regs;

            if (still_trapped(moved, off)) {
                continue;
            }
            regs = register_bytes(now, off, end);
            if (regs && !bytes && first_page) {
                *first_page = off;
            }
            bytes += regs;
        }
    }
    return bytes;
}
