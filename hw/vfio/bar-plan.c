/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio_bar_plan(): the pure BAR mapping decision (see hw/vfio/bar-plan.h
 * for the rules).  Everything here is arithmetic on ranges.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "bar-plan.h"
#include "trace.h"

#define MIN_PAGE_SIZE 4096
/* The largest page a pfnmap may be backed with (x86 and arm64 PUD). */
#define MAX_MMAP_ALIGN (1ULL << 30)
/* x-host-page-size reproduces 64 KiB-page hosts; 1 GiB is far beyond any. */
#define MAX_PAGE_SIZE_OVERRIDE (1ULL << 30)

static int range_cmp(gconstpointer a, gconstpointer b)
{
    const VFIOBarRange *ra = a, *rb = b;

    if (ra->offset != rb->offset) {
        return ra->offset < rb->offset ? -1 : 1;
    }
    return 0;
}

static void range_add(GArray *ranges, uint64_t start, uint64_t end)
{
    VFIOBarRange r = { .offset = start, .size = end - start };

    if (start < end) {
        g_array_append_val(ranges, r);
    }
}

/* Sorts and merges overlapping or adjacent ranges in place. */
static void ranges_normalize(GArray *ranges)
{
    guint i, out = 0;

    g_array_sort(ranges, range_cmp);
    for (i = 0; i < ranges->len; i++) {
        VFIOBarRange *r = &g_array_index(ranges, VFIOBarRange, i);
        VFIOBarRange *last = out ? &g_array_index(ranges, VFIOBarRange,
                                                  out - 1) : NULL;

        if (last && r->offset <= last->offset + last->size) {
            uint64_t end = MAX(last->offset + last->size,
                               r->offset + r->size);
            last->size = end - last->offset;
        } else {
            g_array_index(ranges, VFIOBarRange, out++) = *r;
        }
    }
    g_array_set_size(ranges, out);
}

/* Removes [start, end) from every range. */
static void ranges_subtract(GArray *ranges, uint64_t start, uint64_t end)
{
    g_autoptr(GArray) out = g_array_new(false, false, sizeof(VFIOBarRange));
    guint i;

    for (i = 0; i < ranges->len; i++) {
        VFIOBarRange r = g_array_index(ranges, VFIOBarRange, i);
        uint64_t r_end = r.offset + r.size;

        if (r_end <= start || r.offset >= end) {
            g_array_append_val(out, r);
            continue;
        }
        range_add(out, r.offset, MIN(start, r_end));
        range_add(out, MAX(end, r.offset), r_end);
    }
    g_array_set_size(ranges, 0);
    g_array_append_vals(ranges, out->data, out->len);
}

/* Rounds @end up to a page, without wrapping, and clips it to @size. */
static uint64_t page_end(uint64_t end, uint64_t page, uint64_t size)
{
    if (end >= size || end > UINT64_MAX - (page - 1)) {
        return size;
    }
    return MIN(ROUND_UP(end, page), size);
}

static bool check_msix_part(const VFIOBarPlanInput *in,
                            const VFIOBarPlanMsixPart *part,
                            const char *what, Error **errp)
{
    if (!part->present) {
        return true;
    }
    if (!part->size || part->offset >= in->size ||
        part->size > in->size - part->offset) {
        error_setg(errp, "BAR %u: MSI-X %s [0x%" PRIx64 " + 0x%" PRIx64
                   "] does not fit in the 0x%" PRIx64 "-byte BAR",
                   in->bar, what, part->offset, part->size, in->size);
        return false;
    }
    return true;
}

static bool check_input(const VFIOBarPlanInput *in, Error **errp)
{
    if (!is_power_of_2(in->host_page_size) ||
        in->host_page_size < MIN_PAGE_SIZE) {
        error_setg(errp, "BAR %u: host page size 0x%" PRIx64
                   " is not a power of two >= 0x%x", in->bar,
                   in->host_page_size, MIN_PAGE_SIZE);
        return false;
    }
    if (in->page_size_override &&
        (!is_power_of_2(in->page_size_override) ||
         in->page_size_override < in->host_page_size)) {
        error_setg(errp, "x-host-page-size 0x%" PRIx64 " must be a power of"
                   " two not smaller than the host page size 0x%" PRIx64,
                   in->page_size_override, in->host_page_size);
        return false;
    }
    /* Beyond any real page size, and offsets rounded to it would overflow. */
    if (in->page_size_override > MAX_PAGE_SIZE_OVERRIDE) {
        error_setg(errp, "x-host-page-size 0x%" PRIx64 " is larger than the"
                   " largest supported, 0x%llx", in->page_size_override,
                   MAX_PAGE_SIZE_OVERRIDE);
        return false;
    }
    return check_msix_part(in, &in->table, "table", errp) &&
           check_msix_part(in, &in->pba, "PBA", errp);
}

/* Candidate mmap areas before the MSI-X table is considered. */
static void mappable_areas(const VFIOBarPlanInput *in, uint64_t page,
                           GArray *areas)
{
    uint32_t i;

    if (!in->caps || !in->caps->has_sparse) {
        range_add(areas, 0, in->size);
        return;
    }
    for (i = 0; i < in->caps->nr_sparse_areas; i++) {
        const VFIOSparseArea *a = &in->caps->sparse_areas[i];
        uint64_t start = MIN(a->offset, in->size);
        uint64_t end = a->size > in->size - start ? in->size
                                                  : start + a->size;

        /* Only whole pages inside the area, except at the end of the BAR. */
        start = page_end(start, page, in->size);
        if (end < in->size) {
            end = QEMU_ALIGN_DOWN(end, page);
        }
        range_add(areas, start, end);
    }
}

static void overlay_pages(const VFIOBarPlan *plan, const VFIOBarOverlay *ov,
                          uint64_t *start, uint64_t *end)
{
    *start = QEMU_ALIGN_DOWN(ov->offset, plan->page_size);
    *end = page_end(ov->offset + ov->size, plan->page_size, plan->size);
}

/*
 * trapped = [0, size) minus the areas, plus pages under enabled overlays;
 * @pba_on stands for the PBA overlay's state.
 */
static void plan_compute_trapped(const VFIOBarPlan *plan, bool pba_on,
                                 VFIOBarRange **out, uint32_t *nr_out)
{
    g_autoptr(GArray) trapped = g_array_new(false, false,
                                            sizeof(VFIOBarRange));
    uint32_t i;

    range_add(trapped, 0, plan->size);
    for (i = 0; i < plan->nr_areas; i++) {
        ranges_subtract(trapped, plan->areas[i].offset,
                        plan->areas[i].offset + plan->areas[i].size);
    }
    for (i = 0; i < plan->nr_overlays; i++) {
        const VFIOBarOverlay *ov = &plan->overlays[i];
        bool on = ov->kind == VFIO_BAR_OVERLAY_MSIX_PBA ? pba_on
                                                         : ov->enabled;
        uint64_t start, end;

        if (on) {
            overlay_pages(plan, ov, &start, &end);
            range_add(trapped, start, end);
        }
    }
    ranges_normalize(trapped);
    *nr_out = trapped->len;
    *out = (VFIOBarRange *)g_array_free(g_steal_pointer(&trapped), false);
}

static const VFIOBarOverlay *plan_overlay(const VFIOBarPlan *plan,
                                          VFIOBarOverlayKind kind)
{
    uint32_t i;

    for (i = 0; i < plan->nr_overlays; i++) {
        if (plan->overlays[i].kind == kind) {
            return &plan->overlays[i];
        }
    }
    return NULL;
}

/* Makes plan->trapped the view for the PBA overlay's current state. */
static void plan_select_view(VFIOBarPlan *plan)
{
    const VFIOBarOverlay *pba = plan_overlay(plan, VFIO_BAR_OVERLAY_MSIX_PBA);
    int v = pba && pba->enabled;

    plan->trapped = plan->trapped_view[v];
    plan->nr_trapped = plan->nr_trapped_view[v];
}

static void plan_compute_views(VFIOBarPlan *plan)
{
    int v;

    for (v = 0; v < 2; v++) {
        g_free(plan->trapped_view[v]);
        plan_compute_trapped(plan, v, &plan->trapped_view[v],
                             &plan->nr_trapped_view[v]);
    }
    plan_select_view(plan);
}

/* x-coalesce-trapped-writes, as bar-plan.h states it. */
static bool coalesce_trapped_writes(const VFIOBarPlanInput *in)
{
    switch (in->coalesce) {
    case VFIO_COALESCE_ON:
        return true;
    case VFIO_COALESCE_OFF:
        return false;
    default:
        return in->online_cpus >= VFIO_BAR_PLAN_COALESCE_MIN_CPUS;
    }
}

VFIOBarPlan *vfio_bar_plan(const VFIOBarPlanInput *in, Error **errp)
{
    g_autoptr(VFIOBarPlan) plan = NULL;
    g_autoptr(GArray) areas = NULL;
    bool has_cap = in->caps && in->caps->msix_mappable;
    bool mappable;

    if (!check_input(in, errp)) {
        return NULL;
    }
    plan = g_new0(VFIOBarPlan, 1);
    plan->bar = in->bar;
    plan->size = in->size;
    plan->page_size = in->page_size_override ? in->page_size_override
                                             : in->host_page_size;
    plan->coalesce_served = coalesce_trapped_writes(in);
    plan->coalesce_forward = plan->coalesce_served && in->posts_writes;
    if (in->table.present) {
        plan->overlays[plan->nr_overlays++] = (VFIOBarOverlay) {
            .kind = VFIO_BAR_OVERLAY_MSIX_TABLE,
            .offset = in->table.offset,
            .size = in->table.size,
            .enabled = in->table.enabled && !in->no_msix_emulation,
        };
    }
    if (in->pba.present) {
        plan->overlays[plan->nr_overlays++] = (VFIOBarOverlay) {
            .kind = VFIO_BAR_OVERLAY_MSIX_PBA,
            .offset = in->pba.offset,
            .size = in->pba.size,
            .enabled = in->pba.enabled,
        };
    }

    areas = g_array_new(false, false, sizeof(VFIOBarRange));
    mappable = in->size && (in->flags & VFIO_REGION_INFO_FLAG_MMAP) &&
               !in->no_mmap;
    if (mappable) {
        if (in->msix_mappable == VFIO_MSIX_MAPPABLE_ON && !has_cap &&
            in->table.present) {
            error_setg(errp, "BAR %u holds the MSI-X table but its region"
                       " does not advertise MSIX_MAPPABLE", in->bar);
            error_append_hint(errp, "Use x-msix-mappable=auto or off\n");
            return NULL;
        }
        plan->msix_mappable = has_cap &&
                              in->msix_mappable != VFIO_MSIX_MAPPABLE_OFF;
        mappable_areas(in, plan->page_size, areas);
        if (!plan->msix_mappable && in->table.present) {
            /* The host refuses to mmap the table's pages: leave them. */
            ranges_subtract(areas,
                            QEMU_ALIGN_DOWN(in->table.offset,
                                            plan->page_size),
                            page_end(in->table.offset + in->table.size,
                                     plan->page_size, in->size));
        }
        ranges_normalize(areas);
    }
    plan->nr_areas = areas->len;
    plan->areas = (VFIOBarRange *)g_array_free(g_steal_pointer(&areas),
                                               false);
    plan->whole_bar_mapped = plan->nr_areas == 1 &&
                             plan->areas[0].offset == 0 &&
                             plan->areas[0].size == plan->size;
    plan_compute_views(plan);

    if (trace_event_is_enabled("vfio_bar_plan")) {
        g_autofree char *desc = vfio_bar_plan_describe(plan);
        trace_vfio_bar_plan(in->name ? in->name : "-", desc);
    }
    return g_steal_pointer(&plan);
}

void vfio_bar_plan_free(VFIOBarPlan *plan)
{
    if (plan) {
        g_free(plan->areas);
        g_free(plan->trapped_view[0]);
        g_free(plan->trapped_view[1]);
        g_free(plan);
    }
}

bool vfio_bar_plan_set_overlay_enabled(VFIOBarPlan *plan,
                                       VFIOBarOverlayKind kind, bool enabled)
{
    VFIOBarOverlay *ov = (VFIOBarOverlay *)plan_overlay(plan, kind);

    if (!ov) {
        return false;
    }
    if (ov->enabled != enabled) {
        ov->enabled = enabled;
        if (kind == VFIO_BAR_OVERLAY_MSIX_PBA) {
            plan_select_view(plan);
        } else {
            plan_compute_views(plan);
        }
    }
    return true;
}

bool vfio_bar_plan_is_trapped(const VFIOBarPlan *plan, uint64_t offset)
{
    uint32_t i;

    for (i = 0; i < plan->nr_trapped; i++) {
        if (offset >= plan->trapped[i].offset &&
            offset - plan->trapped[i].offset < plan->trapped[i].size) {
            return true;
        }
    }
    return false;
}

const char *vfio_bar_plan_explain(const VFIOBarPlanInput *in,
                                  const VFIOBarPlan *plan, uint64_t page)
{
    bool has_cap = in->caps && in->caps->msix_mappable;
    bool mapped = false, table = false;
    uint32_t i;

    for (i = 0; i < plan->nr_areas; i++) {
        if (page >= plan->areas[i].offset &&
            page - plan->areas[i].offset < plan->areas[i].size) {
            mapped = true;
        }
    }
    for (i = 0; i < plan->nr_overlays; i++) {
        const VFIOBarOverlay *ov = &plan->overlays[i];
        uint64_t start = QEMU_ALIGN_DOWN(ov->offset, plan->page_size);

        if (!ov->enabled || page < start ||
            page >= ov->offset + ov->size) {
            continue;
        }
        if (ov->kind == VFIO_BAR_OVERLAY_MSIX_TABLE) {
            table = true;
        }
        /* Lifting an overlay only helps a page the mapping covers. */
        if (!mapped) {
            continue;
        }
        if (ov->kind == VFIO_BAR_OVERLAY_MSIX_TABLE) {
            /* The default tried and said why it could not. */
            if (in->relocation_refusal) {
                return in->relocation_refusal;
            }
            return "x-msix-relocation=auto moves the emulated MSI-X table "
                   "off this page";
        }
        if (!in->lazy_pba) {
            return "x-lazy-pba=on maps the PBA page while nothing is "
                   "pending";
        }
    }
    if (mapped) {
        return NULL;
    }
    if (in->no_mmap && (in->flags & VFIO_REGION_INFO_FLAG_MMAP)) {
        return "x-no-mmap=off maps the BAR";
    }
    if (has_cap && in->msix_mappable == VFIO_MSIX_MAPPABLE_OFF) {
        return "x-msix-mappable=auto maps the MSI-X table page";
    }
    if (table && !has_cap) {
        return "the device does not advertise MSIX_MAPPABLE, so the page "
               "holding the MSI-X table cannot be mapped (no option helps; "
               "Linux's vfio-pci advertises it since 4.16)";
    }
    return NULL;
}

int vfio_bar_plan_mmap_prot(uint32_t region_flags)
{
    return (region_flags & VFIO_REGION_INFO_FLAG_READ ? PROT_READ : 0) |
           (region_flags & VFIO_REGION_INFO_FLAG_WRITE ? PROT_WRITE : 0);
}

uint64_t vfio_bar_plan_mmap_align(uint64_t region_size, uint64_t page_size)
{
    uint64_t align = region_size ? 1ULL << (63 - __builtin_clzll(region_size))
                                 : 0;

    return MAX(MIN(align, MAX_MMAP_ALIGN), page_size);
}

static void describe_ranges(GString *s, const char *what,
                            const VFIOBarRange *r, uint32_t n)
{
    uint32_t i;

    g_string_append_printf(s, " %s [", what);
    for (i = 0; i < n; i++) {
        g_string_append_printf(s, "%s0x%" PRIx64 "+0x%" PRIx64,
                               i ? " " : "", r[i].offset, r[i].size);
    }
    g_string_append_c(s, ']');
}

char *vfio_bar_plan_describe(const VFIOBarPlan *plan)
{
    GString *s = g_string_new(NULL);
    uint32_t i;

    g_string_append_printf(s, "bar%u size 0x%" PRIx64 " page 0x%" PRIx64,
                           plan->bar, plan->size, plan->page_size);
    if (plan->msix_mappable) {
        g_string_append(s, " msix-mappable");
    }
    if (plan->whole_bar_mapped) {
        g_string_append(s, " whole-bar");
    }
    describe_ranges(s, "mmap", plan->areas, plan->nr_areas);
    describe_ranges(s, "trapped", plan->trapped, plan->nr_trapped);
    for (i = 0; i < plan->nr_overlays; i++) {
        const VFIOBarOverlay *ov = &plan->overlays[i];

        g_string_append_printf(s, " %s 0x%" PRIx64 "+0x%" PRIx64 " %s",
                               ov->kind == VFIO_BAR_OVERLAY_MSIX_TABLE
                               ? "table" : "pba",
                               ov->offset, ov->size,
                               ov->enabled ? "on" : "off");
    }
    return g_string_free(s, false);
}
