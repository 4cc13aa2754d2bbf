/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: the region-info capability-chain walker
 * (util/vfio-region-info.c) and vfio_bar_plan() (hw/vfio/bar-plan.c) on an
 * arbitrary region info, MSI-X location and page size.  The plan's
 * invariants are checked on every success:
 *  - areas are non-empty, sorted, disjoint and not adjacent, inside the
 *    BAR, start on a page and end on one or at the end of the BAR;
 *  - nothing is mapped without FLAG_MMAP or with x-no-mmap;
 *  - the MSI-X table's pages are never mapped unless the plan uses the
 *    MSIX_MAPPABLE capability, which the region must advertise;
 *  - with SPARSE_MMAP, every mapped byte lies in a sparse area;
 *  - every page under an enabled overlay traps, every unmapped byte
 *    traps, and a mapped page with no enabled overlay on it does not
 *    (also after toggling the overlays, as lazy PBA does).
 *
 * Input: a 24-byte parameter block, then the region info buffer.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/vfio/bar-plan.h"
#include "qemu/vfio-region-info.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct FuzzParams {
    uint32_t table_offset;
    uint16_t table_size;
    uint16_t pba_size;
    uint32_t pba_offset;
    uint8_t bits;           /* present/enabled flags, modes */
    uint8_t pages;          /* host page shift, override shift */
    uint8_t pad[10];
} FuzzParams;
QEMU_BUILD_BUG_ON(sizeof(FuzzParams) != 24);

static bool in_ranges(const VFIOBarRange *r, uint32_t n, uint64_t off)
{
    for (uint32_t i = 0; i < n; i++) {
        if (off >= r[i].offset && off - r[i].offset < r[i].size) {
            return true;
        }
    }
    return false;
}

/* Whether the sparse areas (adjacent ones merge) cover [start, end). */
static bool in_sparse(const VFIORegionCaps *caps, uint64_t start,
                      uint64_t end)
{
    uint64_t pos = start;
    bool progress = true;

    while (pos < end && progress) {
        progress = false;
        for (uint32_t i = 0; i < caps->nr_sparse_areas; i++) {
            const VFIOSparseArea *a = &caps->sparse_areas[i];

            if (pos >= a->offset && pos - a->offset < a->size) {
                pos = a->size > UINT64_MAX - a->offset ? UINT64_MAX
                                                      : a->offset + a->size;
                progress = true;
            }
        }
    }
    return pos >= end;
}

/* Pages overlapping [off, off + size), clipped to the BAR. */
static void overlay_pages(const VFIOBarPlan *p, uint64_t off, uint64_t size,
                          uint64_t *start, uint64_t *end)
{
    *start = QEMU_ALIGN_DOWN(off, p->page_size);
    *end = off + size;
    if (*end >= p->size || *end > UINT64_MAX - (p->page_size - 1)) {
        *end = p->size;
    } else {
        *end = MIN(ROUND_UP(*end, p->page_size), p->size);
    }
}

static bool overlay_covers(const VFIOBarPlan *p, uint64_t off)
{
    for (uint32_t i = 0; i < p->nr_overlays; i++) {
        uint64_t s, e;

        if (!p->overlays[i].enabled) {
            continue;
        }
        overlay_pages(p, p->overlays[i].offset, p->overlays[i].size, &s, &e);
        if (off >= s && off < e) {
            return true;
        }
    }
    return false;
}

/* A few offsets worth probing: range edges of everything in the plan. */
static void check_trapped(const VFIOBarPlan *p)
{
    g_autoptr(GArray) probes = g_array_new(false, false, sizeof(uint64_t));
    uint64_t v;

#define PROBE(x) do { v = (x); if (v < p->size) { \
        g_array_append_val(probes, v); } } while (0)
    PROBE(0);
    PROBE(p->size - 1);
    for (uint32_t i = 0; i < p->nr_areas; i++) {
        PROBE(p->areas[i].offset);
        PROBE(p->areas[i].offset + p->areas[i].size - 1);
        PROBE(p->areas[i].offset + p->areas[i].size);
        if (p->areas[i].offset) {
            PROBE(p->areas[i].offset - 1);
        }
    }
    for (uint32_t i = 0; i < p->nr_overlays; i++) {
        uint64_t s, e;

        overlay_pages(p, p->overlays[i].offset, p->overlays[i].size, &s, &e);
        PROBE(s);
        PROBE(e - 1);
        PROBE(e);
        if (s) {
            PROBE(s - 1);
        }
    }
#undef PROBE
    for (guint i = 0; i < probes->len; i++) {
        uint64_t off = g_array_index(probes, uint64_t, i);
        bool mapped = in_ranges(p->areas, p->nr_areas, off);
        bool want = !mapped || overlay_covers(p, off);

        g_assert(vfio_bar_plan_is_trapped(p, off) == want);
    }
    for (uint32_t i = 0; i < p->nr_trapped; i++) {
        g_assert(p->trapped[i].size);
        g_assert(p->trapped[i].offset <= p->size &&
                 p->trapped[i].size <= p->size - p->trapped[i].offset);
        if (i) {
            g_assert(p->trapped[i - 1].offset + p->trapped[i - 1].size <
                     p->trapped[i].offset);
        }
    }
}

static void check_plan(const VFIOBarPlanInput *in, const VFIOBarPlan *p)
{
    uint64_t page = in->page_size_override ? in->page_size_override
                                           : in->host_page_size;

    g_assert(p->size == in->size);
    g_assert(p->page_size == page);
    if (!(in->flags & VFIO_REGION_INFO_FLAG_MMAP) || in->no_mmap) {
        g_assert(p->nr_areas == 0);
    }
    if (p->msix_mappable) {
        g_assert(in->caps && in->caps->msix_mappable);
        g_assert(in->msix_mappable != VFIO_MSIX_MAPPABLE_OFF);
    }
    for (uint32_t i = 0; i < p->nr_areas; i++) {
        const VFIOBarRange *a = &p->areas[i];
        uint64_t end = a->offset + a->size;

        g_assert(a->size);
        g_assert(a->offset < in->size && a->size <= in->size - a->offset);
        g_assert(a->offset % page == 0);
        g_assert(end % page == 0 || end == in->size);
        if (i) {
            g_assert(p->areas[i - 1].offset + p->areas[i - 1].size <
                     a->offset);
        }
        if (in->caps && in->caps->has_sparse) {
            g_assert(in_sparse(in->caps, a->offset, end));
        }
        if (in->table.present && !p->msix_mappable) {
            uint64_t s, e;

            overlay_pages(p, in->table.offset, in->table.size, &s, &e);
            g_assert(end <= s || a->offset >= e);
        }
    }
    g_assert(p->whole_bar_mapped ==
             (p->nr_areas == 1 && p->areas[0].offset == 0 &&
              p->areas[0].size == p->size));
    check_trapped(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree struct vfio_region_info *info = NULL;
    VFIORegionCaps caps = { 0 };
    VFIOBarPlanInput in = { 0 };
    g_autoptr(VFIOBarPlan) plan = NULL;
    g_autofree char *desc = NULL;
    FuzzParams prm;
    size_t len;

    if (size < sizeof(prm)) {
        return 0;
    }
    memcpy(&prm, data, sizeof(prm));
    len = size - sizeof(prm);
    info = g_malloc(len ? len : 1);
    memcpy(info, data + sizeof(prm), len);

    if (!vfio_region_info_check(info, len, NULL)) {
        return 0;
    }
    if (!vfio_region_info_parse_caps(info, len, &caps, NULL)) {
        return 0;
    }

    in.bar = info->index;
    in.size = info->size;
    in.flags = info->flags;
    in.caps = (prm.bits & 0x80) ? NULL : &caps;
    in.table = (VFIOBarPlanMsixPart) {
        .present = prm.bits & 1, .offset = prm.table_offset,
        .size = prm.table_size, .enabled = prm.bits & 2,
    };
    in.pba = (VFIOBarPlanMsixPart) {
        .present = prm.bits & 4, .offset = prm.pba_offset,
        .size = prm.pba_size, .enabled = prm.bits & 8,
    };
    in.host_page_size = 4096ull << (prm.pages & 7);
    in.page_size_override = (prm.pages & 0x80) ? 4096ull << ((prm.pages >> 3)
                                                           & 15) : 0;
    in.no_mmap = prm.bits & 0x10;
    in.msix_mappable = ((prm.bits >> 5) & 3) % 3;
    in.no_msix_emulation = prm.pad[0] & 1;

    plan = vfio_bar_plan(&in, NULL);
    if (plan) {
        check_plan(&in, plan);
        desc = vfio_bar_plan_describe(plan);
        /* Lazy PBA and table relocation toggle overlays after the fact. */
        vfio_bar_plan_set_overlay_enabled(plan, VFIO_BAR_OVERLAY_MSIX_PBA,
                                          prm.pad[1] & 1);
        vfio_bar_plan_set_overlay_enabled(plan, VFIO_BAR_OVERLAY_MSIX_TABLE,
                                          prm.pad[1] & 2);
        check_plan(&in, plan);
    }
    vfio_region_caps_clear(&caps);
    return 0;
}
