/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x-msix-relocation: the pure decision of msix-reloc.h -- whether the
 * emulated MSI-X table and PBA move (the mode, and for where-helpful what
 * the BAR plans say moving would untrap), and where they go.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/pci/msix.h"
#include "msix-reloc.h"

/* A doubled 32-bit BAR must stay below 2 GiB. */
#define VFIO_RELOC_MAX_BAR32 (1ULL << 30)
#define VFIO_RELOC_MIN_BAR 0x1000
/* The capability's table offset is 32 bits: the upper half must start below. */
#define VFIO_RELOC_MAX_OFFSET (1ULL << 31)

const char *const vfio_msix_relocation_names[] = {
    "off", "auto", "bar0", "bar1", "bar2", "bar3", "bar4", "bar5",
    "where-helpful", NULL,
};

/* ---- where ---- */

static bool slot_free(const VFIOMsixRelocSlot *s)
{
    return !s->size && !s->upper_half;
}

static bool reloc_double(const VFIOMsixRelocSlot slots[PCI_ROM_SLOT],
                         uint32_t bar, uint64_t need, uint64_t table_size,
                         uint64_t page_size, VFIOMsixRelocDecision *res,
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
    res->bar = bar;
    res->new_bar = false;
    res->bar_size = half * 2;
    res->table_offset = half;
    res->pba_offset = half + table_size;
    return true;
}

static void reloc_new(uint32_t bar, uint64_t need, uint64_t table_size,
                      uint64_t page_size, VFIOMsixRelocDecision *res)
{
    res->bar = bar;
    res->new_bar = true;
    res->bar_size = MAX(MAX(VFIO_RELOC_MIN_BAR, page_size), pow2ceil(need));
    res->table_offset = 0;
    res->pba_offset = table_size;
}

/* Where: fills the placement fields of @res (see msix-reloc.h). */
static bool reloc_place(const VFIOMsixRelocInput *in,
                        VFIOMsixRelocDecision *res, Error **errp)
{
    const VFIOMsixRelocSlot *slots = in->slots;
    VFIOMsixRelocation mode = in->mode;
    uint32_t table_bar = in->table_bar;
    uint16_t entries = in->entries;
    uint64_t page_size = in->page_size;
    uint64_t table_size = msix_table_size(entries);
    uint64_t need = table_size + msix_pba_size(entries);
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

/* ---- whether (where-helpful) ---- */

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

/*
 * Bytes of device registers that trap with the MSI-X structures in place
 * (@now) but not once they are moved away (@moved): on each page that
 * moving untraps, the bytes before the first MSI-X structure on it.
 * *@first_page gets the first page that gains.
 */
static uint64_t reloc_untrapped(const VFIOBarPlan *now,
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

/*
 * Register bytes of @bar that trap only because the emulated table or
 * PBA sits on their page, which the device lets us map; *@page gets the
 * first such page.  A plan that fails here fails again, with its
 * message, when the BAR is realized.
 */
static uint64_t reloc_gain(const VFIOMsixRelocInput *in, uint32_t bar,
                           uint64_t *page)
{
    VFIOBarPlanInput now = in->bar_plans[bar];
    VFIOBarPlanInput moved;
    g_autoptr(VFIOBarPlan) now_plan = NULL;
    g_autoptr(VFIOBarPlan) moved_plan = NULL;

    if (in->table_bar == bar) {
        now.table = (VFIOBarPlanMsixPart) {
            .present = true,
            .offset = in->table_offset,
            .size = msix_table_size(in->entries),
            .enabled = true,
        };
    }
    /* Moved away, the table is disabled and the PBA gone with it. */
    moved = now;
    moved.table.enabled = false;
    if (in->pba_bar == bar) {
        now.pba = (VFIOBarPlanMsixPart) {
            .present = true,
            .offset = in->pba_offset,
            .size = msix_pba_size(in->entries),
            .enabled = !now.lazy_pba,
        };
    }
    now_plan = vfio_bar_plan(&now, NULL);
    moved_plan = vfio_bar_plan(&moved, NULL);
    if (!now_plan || !moved_plan) {
        return 0;
    }
    return reloc_untrapped(now_plan, moved_plan, page);
}

/* ---- the decision ---- */

bool vfio_msix_relocation_decide(const VFIOMsixRelocInput *in,
                                 VFIOMsixRelocDecision *out, Error **errp)
{
    bool by_default = in->mode == VFIO_MSIX_RELOCATION_WHERE_HELPFUL;
    Error *err = NULL;

    *out = (VFIOMsixRelocDecision) { .gain_bar = in->table_bar };
    if (in->mode == VFIO_MSIX_RELOCATION_OFF) {
        out->explanation = g_strdup(
            "MSI-X table kept in place (x-msix-relocation=off)");
        return true;
    }
    if (by_default) {
        if (in->table_bar >= PCI_ROM_SLOT || in->pba_bar >= PCI_ROM_SLOT) {
            error_setg(errp, "no MSI-X table to relocate");
            return false;
        }
        if (in->bar_plans[in->table_bar].no_msix_emulation) {
            out->explanation = g_strdup(
                "MSI-X table kept in place: the machine does not emulate "
                "it (vfio-no-msix-emulation)");
            return true;
        }
        out->gain_bytes = reloc_gain(in, in->table_bar, &out->gain_page);
        if (!out->gain_bytes && in->pba_bar != in->table_bar) {
            out->gain_bar = in->pba_bar;
            out->gain_bytes = reloc_gain(in, in->pba_bar, &out->gain_page);
        }
        if (!out->gain_bytes) {
            out->explanation = g_strdup(
                "MSI-X table kept in place: it shares no host page with "
                "device registers that could then be mapped");
            return true;
        }
    }
    if (!reloc_place(in, out, &err)) {
        if (!by_default) {
            error_propagate(errp, err);
            return false;
        }
        /* The hot-page warning repeats this if the page turns out hot. */
        out->impossible = true;
        out->notable = true;
        out->explanation = g_strdup_printf(
            "MSI-X table kept on BAR%u page 0x%" PRIx64 ", which therefore "
            "traps: it cannot be relocated (%s)", out->gain_bar,
            out->gain_page, error_get_pretty(err));
        error_free(err);
        return true;
    }
    out->relocated = true;
    if (by_default) {
        out->notable = true;
        out->explanation = g_strdup_printf(
            "MSI-X table and PBA relocated to BAR%u offset 0x%" PRIx64
            " (%s of 0x%" PRIx64 " bytes) so that BAR%u page 0x%" PRIx64
            " is mapped, not trapped; x-msix-relocation=off keeps them in "
            "place", out->bar, out->table_offset,
            out->new_bar ? "a new BAR" : "the BAR doubled", out->bar_size,
            out->gain_bar, out->gain_page);
    } else {
        out->explanation = g_strdup_printf(
            "MSI-X table and PBA relocated to BAR%u offset 0x%" PRIx64
            " (x-msix-relocation=%s)", out->bar, out->table_offset,
            vfio_msix_relocation_names[in->mode]);
    }
    return true;
}

void vfio_msix_relocation_decision_clear(VFIOMsixRelocDecision *out)
{
    g_clear_pointer(&out->explanation, g_free);
}
