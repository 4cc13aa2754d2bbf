/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio_bar_plan(): every rule of the decision, the layouts the qtests
 * use, and a randomized comparison with a page-by-page reference model.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/vfio/bar-plan.h"

#define KiB 1024ULL
#define PAGE_4K (4 * KiB)
#define PAGE_64K (64 * KiB)
#define RW_MMAP (VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE | \
                 VFIO_REGION_INFO_FLAG_MMAP)

static VFIOBarPlanInput plain_bar(uint64_t size, uint64_t page)
{
    return (VFIOBarPlanInput) {
        .bar = 0,
        .size = size,
        .flags = RW_MMAP,
        .host_page_size = page,
        .msix_mappable = VFIO_MSIX_MAPPABLE_AUTO,
    };
}

static void with_table(VFIOBarPlanInput *in, uint64_t offset, uint64_t size)
{
    in->table = (VFIOBarPlanMsixPart) { true, offset, size, true };
}

static void with_pba(VFIOBarPlanInput *in, uint64_t offset, uint64_t size,
                     bool enabled)
{
    in->pba = (VFIOBarPlanMsixPart) { true, offset, size, enabled };
}

static const VFIORegionCaps cap_msix = { .msix_mappable = true };

static char *ranges_str(const VFIOBarRange *r, uint32_t n)
{
    GString *s = g_string_new(NULL);
    uint32_t i;

    for (i = 0; i < n; i++) {
        g_string_append_printf(s, "%s0x%" PRIx64 "+0x%" PRIx64, i ? " " : "",
                               r[i].offset, r[i].size);
    }
    return g_string_free(s, false);
}

static bool page_hits(uint64_t p, uint64_t page, uint64_t off, uint64_t len)
{
    return p < off + len && off < p + page;
}

/*
 * Page-by-page reference model of the rules in bar-plan.h, written
 * independently of the range arithmetic in bar-plan.c.  Every plan the
 * tests make is compared against it, which also checks the invariants:
 * areas page-aligned, inside the BAR, sorted, disjoint; trapped pages
 * exactly the unmapped ones plus those under an enabled overlay; the
 * table's pages never mapped without the capability.
 */
static void check_plan(const VFIOBarPlanInput *in, const VFIOBarPlan *plan)
{
    uint64_t page = in->page_size_override ? in->page_size_override
                                           : in->host_page_size;
    bool mappable = in->size && (in->flags & VFIO_REGION_INFO_FLAG_MMAP) &&
                    !in->no_mmap;
    bool cap = mappable && in->caps && in->caps->msix_mappable &&
               in->msix_mappable != VFIO_MSIX_MAPPABLE_OFF;
    bool table_on = in->table.present && in->table.enabled &&
                    !in->no_msix_emulation;
    bool pba_on = in->pba.present && in->pba.enabled;
    uint64_t p, prev_end = 0;
    uint32_t i, a = 0, t = 0;

    g_assert_cmpuint(plan->page_size, ==, page);
    g_assert_cmpuint(plan->size, ==, in->size);
    g_assert_cmpuint(plan->msix_mappable, ==, cap);

    for (i = 0; i < plan->nr_areas; i++) {
        const VFIOBarRange *r = &plan->areas[i];

        g_assert_cmpuint(r->size, >, 0);
        g_assert_cmpuint(r->offset % page, ==, 0);
        g_assert_true((r->offset + r->size) % page == 0 ||
                      r->offset + r->size == in->size);
        g_assert_cmpuint(r->offset + r->size, <=, in->size);
        /* sorted, disjoint and merged */
        g_assert_true(i == 0 || r->offset > prev_end);
        prev_end = r->offset + r->size;
    }
    for (i = 0; i < plan->nr_trapped; i++) {
        const VFIOBarRange *r = &plan->trapped[i];

        g_assert_cmpuint(r->size, >, 0);
        g_assert_cmpuint(r->offset % page, ==, 0);
        g_assert_true((r->offset + r->size) % page == 0 ||
                      r->offset + r->size == in->size);
        g_assert_cmpuint(r->offset + r->size, <=, in->size);
        g_assert_true(i == 0 || r->offset > prev_end);
        prev_end = r->offset + r->size;
    }
    g_assert_cmpuint(plan->whole_bar_mapped, ==,
                     plan->nr_areas == 1 && plan->areas[0].offset == 0 &&
                     plan->areas[0].size == in->size);

    for (p = 0; p < in->size; p += page) {
        uint64_t p_end = MIN(p + page, in->size);
        bool mapped_ref = false, trapped_ref;
        bool mapped, trapped;

        if (mappable) {
            if (in->caps && in->caps->has_sparse) {
                for (i = 0; i < in->caps->nr_sparse_areas; i++) {
                    const VFIOSparseArea *s = &in->caps->sparse_areas[i];
                    uint64_t s_end = MIN(s->offset + s->size, in->size);

                    mapped_ref |= p >= s->offset && p_end <= s_end;
                }
            } else {
                mapped_ref = true;
            }
            if (!cap && in->table.present &&
                page_hits(p, page, in->table.offset, in->table.size)) {
                mapped_ref = false;
            }
        }
        trapped_ref = !mapped_ref ||
            (table_on && page_hits(p, page, in->table.offset,
                                   in->table.size)) ||
            (pba_on && page_hits(p, page, in->pba.offset, in->pba.size));

        while (a < plan->nr_areas &&
               plan->areas[a].offset + plan->areas[a].size <= p) {
            a++;
        }
        mapped = a < plan->nr_areas && plan->areas[a].offset <= p;
        while (t < plan->nr_trapped &&
               plan->trapped[t].offset + plan->trapped[t].size <= p) {
            t++;
        }
        trapped = t < plan->nr_trapped && plan->trapped[t].offset <= p;
        if (mapped != mapped_ref || trapped != trapped_ref) {
            g_autofree char *desc = vfio_bar_plan_describe(plan);
            g_error("page 0x%" PRIx64 ": mapped %d (want %d) trapped %d"
                    " (want %d) in %s", p, mapped, mapped_ref, trapped,
                    trapped_ref, desc);
        }
        g_assert_cmpuint(vfio_bar_plan_is_trapped(plan, p), ==, trapped_ref);
        g_assert_cmpuint(vfio_bar_plan_is_trapped(plan, p_end - 1), ==,
                         trapped_ref);
    }
}

/* Plans, checks against the model, and compares areas/trapped. */
static void expect_plan(const VFIOBarPlanInput *in, const char *areas,
                        const char *trapped)
{
    g_autoptr(VFIOBarPlan) plan = vfio_bar_plan(in, &error_abort);
    g_autofree char *got_areas = ranges_str(plan->areas, plan->nr_areas);
    g_autofree char *got_trapped = ranges_str(plan->trapped,
                                              plan->nr_trapped);

    check_plan(in, plan);
    g_assert_cmpstr(got_areas, ==, areas);
    g_assert_cmpstr(got_trapped, ==, trapped);
}

static void expect_error(const VFIOBarPlanInput *in, const char *needle)
{
    Error *err = NULL;

    g_assert_null(vfio_bar_plan(in, &err));
    g_assert_nonnull(err);
    if (!strstr(error_get_pretty(err), needle)) {
        g_error("error '%s' does not mention '%s'", error_get_pretty(err),
                needle);
    }
    error_free(err);
}

/*
 * The rules one input at a time: each row is planned, checked against
 * the page model, and its areas and trapped pages compared; or, for a
 * row with .error, refused with a message containing it.  Rows under one
 * path prefix are the steps of one scenario.
 */
typedef struct PlanCase {
    const char *path;
    VFIOBarPlanInput in;
    const char *areas;          /* mmap areas, as ranges_str() prints them */
    const char *trapped;        /* trapped pages */
    const char *describe;       /* if set, all of vfio_bar_plan_describe() */
    const char *error;          /* if set, planning fails with this */
} PlanCase;

/* A mappable BAR; x-msix-mappable is auto (0) unless a row says so. */
#define BAR(sz, page) .size = (sz), .flags = RW_MMAP, .host_page_size = (page)
#define TABLE(off, sz) .table = { true, (off), (sz), true }
#define PBA(off, sz, enabled) .pba = { true, (off), (sz), (enabled) }

static const VFIOSparseArea several_areas[] = {
    { 0x8000, 0x8000 },
    { 0x0, 0x3000 },
    { 0x3800, 0x2000 },         /* unaligned: only 0x4000-0x5000 */
    { 0x6100, 0x800 },          /* smaller than a page: nothing */
};
static const VFIORegionCaps sparse_several = {
    .has_sparse = true,
    .nr_sparse_areas = ARRAY_SIZE(several_areas),
    .sparse_areas = (VFIOSparseArea *)several_areas,
};
static const VFIORegionCaps sparse_several_msix = {
    .has_sparse = true,
    .nr_sparse_areas = ARRAY_SIZE(several_areas),
    .sparse_areas = (VFIOSparseArea *)several_areas,
    .msix_mappable = true,
};

static const VFIOSparseArea overlapping_areas[] = {
    { 0x1000, 0x1000 },
    { 0x2000, 0x1000 },         /* adjacent: merged */
    { 0x1800, 0x2800 },         /* overlapping: merged */
    { 0x6000, 0x100000 },       /* past the BAR: clipped */
    { UINT64_MAX - 0xfff, 0x2000 },     /* wraps: ignored */
};
static const VFIORegionCaps sparse_overlapping = {
    .has_sparse = true,
    .nr_sparse_areas = ARRAY_SIZE(overlapping_areas),
    .sparse_areas = (VFIOSparseArea *)overlapping_areas,
};
/* SPARSE_MMAP with no areas at all: the device allows no mmap. */
static const VFIORegionCaps sparse_none = { .has_sparse = true };

static const VFIOSparseArea first_16k[] = { { 0, 0x4000 } };
static const VFIORegionCaps sparse_first_16k = {
    .has_sparse = true,
    .nr_sparse_areas = 1,
    .sparse_areas = (VFIOSparseArea *)first_16k,
};

static const PlanCase plan_cases[] = {
    /* What stops any mmap. */
    { "/vfio/bar-plan/no-mmap-flag/all-trapped",
      { .size = 0x4000, .host_page_size = PAGE_4K,
        .flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE,
        .caps = &cap_msix, TABLE(0x3000, 0x100) },
      .areas = "", .trapped = "0x0+0x4000" },
    { "/vfio/bar-plan/x-no-mmap/all-trapped",
      { BAR(0x4000, PAGE_4K), .no_mmap = true, .caps = &cap_msix,
        TABLE(0x3000, 0x100) },
      .areas = "", .trapped = "0x0+0x4000" },
    /* x-no-mmap wins over x-msix-mappable=on: nothing to require. */
    { "/vfio/bar-plan/x-no-mmap/wins-over-msix-mappable-on",
      { BAR(0x4000, PAGE_4K), .no_mmap = true,
        .msix_mappable = VFIO_MSIX_MAPPABLE_ON, TABLE(0x3000, 0x100) },
      .areas = "", .trapped = "0x0+0x4000" },
    { "/vfio/bar-plan/no-msix/whole-bar-mapped",
      { BAR(0x4000, PAGE_4K) },
      .areas = "0x0+0x4000", .trapped = "",
      .describe = "bar0 size 0x4000 page 0x1000 whole-bar mmap [0x0+0x4000]"
                  " trapped []" },
    { "/vfio/bar-plan/absent-bar/empty",
      { BAR(0, PAGE_4K) },
      .areas = "", .trapped = "" },

    /* Without the capability the table's pages are cut out and trapped. */
    { "/vfio/bar-plan/table/at-start",
      { BAR(0x4000, PAGE_4K), TABLE(0, 0x100) },
      .areas = "0x1000+0x3000", .trapped = "0x0+0x1000" },
    { "/vfio/bar-plan/table/in-middle/one-page",
      { BAR(0x8000, PAGE_4K), TABLE(0x2800, 0x800) },
      .areas = "0x0+0x2000 0x3000+0x5000", .trapped = "0x2000+0x1000" },
    /* A table straddling a page boundary takes both pages. */
    { "/vfio/bar-plan/table/in-middle/straddling-two-pages",
      { BAR(0x8000, PAGE_4K), TABLE(0x2800, 0x1000) },
      .areas = "0x0+0x2000 0x4000+0x4000", .trapped = "0x2000+0x2000" },
    { "/vfio/bar-plan/table/at-end",
      { BAR(0x4000, PAGE_4K), TABLE(0x3f00, 0x100) },
      .areas = "0x0+0x3000", .trapped = "0x3000+0x1000" },
    { "/vfio/bar-plan/table/whole-bar/cut-out",
      { BAR(0x2000, PAGE_4K), TABLE(0, 0x2000) },
      .areas = "", .trapped = "0x0+0x2000" },
    /* With the capability the table is an overlay over one mapping. */
    { "/vfio/bar-plan/table/whole-bar/msix-mappable",
      { BAR(0x2000, PAGE_4K), TABLE(0, 0x2000), .caps = &cap_msix },
      .areas = "0x0+0x2000", .trapped = "0x0+0x2000" },
    { "/vfio/bar-plan/table-and-pba-in-different-bars/table-bar",
      { BAR(0x4000, PAGE_4K), TABLE(0x2000, 0x200) },
      .areas = "0x0+0x2000 0x3000+0x1000", .trapped = "0x2000+0x1000" },
    /* The PBA is never cut out; an enabled PBA traps its page. */
    { "/vfio/bar-plan/table-and-pba-in-different-bars/pba-bar",
      { BAR(0x2000, PAGE_4K), .bar = 2, PBA(0x1000, 0x8, true) },
      .areas = "0x0+0x2000", .trapped = "0x1000+0x1000" },
    { "/vfio/bar-plan/table-and-pba-in-different-bars/pba-bar-disabled",
      { BAR(0x2000, PAGE_4K), .bar = 2, PBA(0x1000, 0x8, false) },
      .areas = "0x0+0x2000", .trapped = "" },

    /* Page sizes. */
    { "/vfio/bar-plan/page-size/64k/cut-out",
      { BAR(0x40000, PAGE_64K), TABLE(0x12000, 0x100) },
      .areas = "0x0+0x10000 0x20000+0x20000", .trapped = "0x10000+0x10000" },
    { "/vfio/bar-plan/page-size/64k/msix-mappable",
      { BAR(0x40000, PAGE_64K), TABLE(0x12000, 0x100), .caps = &cap_msix },
      .areas = "0x0+0x40000", .trapped = "0x10000+0x10000" },
    { "/vfio/bar-plan/page-size/x-host-page-size/unset",
      { BAR(0x40000, PAGE_4K), TABLE(0x12000, 0x100) },
      .areas = "0x0+0x12000 0x13000+0x2d000", .trapped = "0x12000+0x1000" },
    { "/vfio/bar-plan/page-size/x-host-page-size/64k",
      { BAR(0x40000, PAGE_4K), TABLE(0x12000, 0x100),
        .page_size_override = PAGE_64K },
      .areas = "0x0+0x10000 0x20000+0x20000", .trapped = "0x10000+0x10000" },
    /* Equal to the real one is allowed. */
    { "/vfio/bar-plan/page-size/x-host-page-size/equal",
      { BAR(0x40000, PAGE_4K), TABLE(0x12000, 0x100),
        .page_size_override = PAGE_4K },
      .areas = "0x0+0x12000 0x13000+0x2d000", .trapped = "0x12000+0x1000" },
    { "/vfio/bar-plan/page-size/invalid/override-not-power-of-two",
      { BAR(0x4000, PAGE_4K), .page_size_override = 0x3000 },
      .error = "x-host-page-size 0x3000 must be a power of two" },
    { "/vfio/bar-plan/page-size/invalid/override-below-host",
      { BAR(0x4000, PAGE_64K), .page_size_override = PAGE_4K },
      .error = "not smaller than the host page size 0x10000" },
    { "/vfio/bar-plan/page-size/invalid/override-2g",
      { BAR(0x4000, PAGE_64K), .page_size_override = 1ULL << 31 },
      .error = "x-host-page-size 0x80000000 is larger than" },
    { "/vfio/bar-plan/page-size/invalid/override-2^63",
      { BAR(0x4000, PAGE_64K), .page_size_override = 1ULL << 63 },
      .error = "is larger than the largest supported, 0x40000000" },
    { "/vfio/bar-plan/page-size/invalid/host-2k",
      { BAR(0x4000, 2048) },
      .error = "host page size 0x800" },
    { "/vfio/bar-plan/page-size/invalid/host-0",
      { BAR(0x4000, 0) },
      .error = "host page size 0x0" },
    { "/vfio/bar-plan/page-size/invalid/host-not-power-of-two",
      { BAR(0x4000, 0x5000) },
      .error = "not a power of two" },

    /* Table or PBA outside the BAR. */
    { "/vfio/bar-plan/msix-location/invalid/table-past-end",
      { BAR(0x4000, PAGE_4K), .bar = 4, TABLE(0x4000, 0x10) },
      .error = "BAR 4: MSI-X table [0x4000 + 0x10] does not fit" },
    { "/vfio/bar-plan/msix-location/invalid/table-across-end",
      { BAR(0x4000, PAGE_4K), .bar = 4, TABLE(0x3ff0, 0x20) },
      .error = "does not fit" },
    { "/vfio/bar-plan/msix-location/invalid/table-empty",
      { BAR(0x4000, PAGE_4K), .bar = 4, TABLE(0x10, 0) },
      .error = "does not fit" },
    { "/vfio/bar-plan/msix-location/invalid/table-wraps",
      { BAR(0x4000, PAGE_4K), .bar = 4, TABLE(0x10, UINT64_MAX) },
      .error = "does not fit" },
    { "/vfio/bar-plan/msix-location/invalid/pba-wraps",
      { BAR(0x4000, PAGE_4K), .bar = 4, TABLE(0, 0x10),
        PBA(UINT64_MAX - 4, 8, true) },
      .error = "MSI-X PBA" },

    /* Sparse mmap areas. */
    { "/vfio/bar-plan/sparse/several-areas/no-table",
      { BAR(0x10000, PAGE_4K), .caps = &sparse_several },
      .areas = "0x0+0x3000 0x4000+0x1000 0x8000+0x8000",
      .trapped = "0x3000+0x1000 0x5000+0x3000" },
    { "/vfio/bar-plan/sparse/several-areas/table-cut-out",
      { BAR(0x10000, PAGE_4K), .caps = &sparse_several,
        TABLE(0x9000, 0x200) },
      .areas = "0x0+0x3000 0x4000+0x1000 0x8000+0x1000 0xa000+0x6000",
      .trapped = "0x3000+0x1000 0x5000+0x3000 0x9000+0x1000" },
    /* With the capability, the sparse areas are kept and not cut. */
    { "/vfio/bar-plan/sparse/several-areas/msix-mappable",
      { BAR(0x10000, PAGE_4K), .caps = &sparse_several_msix,
        TABLE(0x9000, 0x200) },
      .areas = "0x0+0x3000 0x4000+0x1000 0x8000+0x8000",
      .trapped = "0x3000+0x1000 0x5000+0x3000 0x9000+0x1000" },
    { "/vfio/bar-plan/sparse/several-areas/msix-mappable-table-off",
      { BAR(0x10000, PAGE_4K), .caps = &sparse_several_msix,
        .table = { true, 0x9000, 0x200, false } },
      .areas = "0x0+0x3000 0x4000+0x1000 0x8000+0x8000",
      .trapped = "0x3000+0x1000 0x5000+0x3000" },
    { "/vfio/bar-plan/sparse/merge-and-clip/areas",
      { BAR(0x8000, PAGE_4K), .caps = &sparse_overlapping },
      .areas = "0x1000+0x3000 0x6000+0x2000",
      .trapped = "0x0+0x1000 0x4000+0x2000" },
    { "/vfio/bar-plan/sparse/merge-and-clip/no-areas",
      { BAR(0x8000, PAGE_4K), .caps = &sparse_none },
      .areas = "", .trapped = "0x0+0x8000" },
    /* A 16 KiB BAR on a 64 KiB host: an area ending at the BAR end. */
    { "/vfio/bar-plan/sparse/sub-page-bar",
      { BAR(0x4000, PAGE_4K), .caps = &sparse_first_16k,
        .page_size_override = PAGE_64K },
      .areas = "0x0+0x4000", .trapped = "" },

    /* x-msix-mappable against the capability. */
    { "/vfio/bar-plan/msix-mappable/modes/absent-auto",
      { BAR(0x4000, PAGE_4K), TABLE(0x2000, 0x100) },
      .areas = "0x0+0x2000 0x3000+0x1000", .trapped = "0x2000+0x1000" },
    { "/vfio/bar-plan/msix-mappable/modes/present-auto",
      { BAR(0x4000, PAGE_4K), TABLE(0x2000, 0x100), .caps = &cap_msix },
      .areas = "0x0+0x4000", .trapped = "0x2000+0x1000",
      .describe = "bar0 size 0x4000 page 0x1000 msix-mappable whole-bar"
                  " mmap [0x0+0x4000] trapped [0x2000+0x1000]"
                  " table 0x2000+0x100 on" },
    { "/vfio/bar-plan/msix-mappable/modes/present-off",
      { BAR(0x4000, PAGE_4K), TABLE(0x2000, 0x100), .caps = &cap_msix,
        .msix_mappable = VFIO_MSIX_MAPPABLE_OFF },
      .areas = "0x0+0x2000 0x3000+0x1000", .trapped = "0x2000+0x1000" },
    { "/vfio/bar-plan/msix-mappable/modes/present-on",
      { BAR(0x4000, PAGE_4K), TABLE(0x2000, 0x100), .caps = &cap_msix,
        .msix_mappable = VFIO_MSIX_MAPPABLE_ON },
      .areas = "0x0+0x4000", .trapped = "0x2000+0x1000" },
    /* Absent, on: refused for the BAR holding the table... */
    { "/vfio/bar-plan/msix-mappable/modes/absent-on-table-bar",
      { BAR(0x4000, PAGE_4K), TABLE(0x2000, 0x100),
        .msix_mappable = VFIO_MSIX_MAPPABLE_ON },
      .error = "BAR 0 holds the MSI-X table but its region does not"
               " advertise MSIX_MAPPABLE" },
    /* ...but fine for another BAR. */
    { "/vfio/bar-plan/msix-mappable/modes/absent-on-other-bar",
      { BAR(0x4000, PAGE_4K), .table = { false, 0x2000, 0x100, true },
        .msix_mappable = VFIO_MSIX_MAPPABLE_ON },
      .areas = "0x0+0x4000", .trapped = "" },
    /*
     * The emulated table moved elsewhere: its page is neither cut nor
     * trapped with the capability, and still cut without it.
     */
    { "/vfio/bar-plan/msix-mappable/table-relocated/present",
      { BAR(0x4000, PAGE_4K), .table = { true, 0x1800, 0x100, false },
        .caps = &cap_msix },
      .areas = "0x0+0x4000", .trapped = "" },
    { "/vfio/bar-plan/msix-mappable/table-relocated/absent",
      { BAR(0x4000, PAGE_4K), .table = { true, 0x1800, 0x100, false } },
      .areas = "0x0+0x1000 0x2000+0x2000", .trapped = "0x1000+0x1000" },
};

static void test_plan_case(const void *opaque)
{
    const PlanCase *c = opaque;
    g_autoptr(VFIOBarPlan) plan = NULL;
    g_autofree char *desc = NULL;

    if (c->error) {
        expect_error(&c->in, c->error);
        return;
    }
    expect_plan(&c->in, c->areas, c->trapped);
    if (c->describe) {
        plan = vfio_bar_plan(&c->in, &error_abort);
        desc = vfio_bar_plan_describe(plan);
        g_assert_cmpstr(desc, ==, c->describe);
    }
}

static void test_nvme_doorbell_page(void)
{
    /* Table at 0x1800 and PBA at 0x1c00, on the doorbell page 0x1000. */
    VFIOBarPlanInput in = plain_bar(0x4000, PAGE_4K);
    g_autoptr(VFIOBarPlan) plan = NULL;

    with_table(&in, 0x1800, 0x100);
    with_pba(&in, 0x1c00, 0x8, false);
    in.caps = &cap_msix;
    expect_plan(&in, "0x0+0x4000", "0x1000+0x1000");
    plan = vfio_bar_plan(&in, &error_abort);
    g_assert_true(vfio_bar_plan_is_trapped(plan, 0x1000));
    g_assert_false(vfio_bar_plan_is_trapped(plan, 0xfff));
    g_assert_false(vfio_bar_plan_is_trapped(plan, 0x2000));
    g_assert_cmpuint(plan->nr_overlays, ==, 2);
    g_assert_cmpuint(plan->overlays[0].kind, ==, VFIO_BAR_OVERLAY_MSIX_TABLE);
    g_assert_true(plan->overlays[0].enabled);
    g_assert_cmpuint(plan->overlays[1].kind, ==, VFIO_BAR_OVERLAY_MSIX_PBA);
    g_assert_false(plan->overlays[1].enabled);

    in.caps = NULL;
    expect_plan(&in, "0x0+0x1000 0x2000+0x2000", "0x1000+0x1000");
}

static void test_lazy_pba(void)
{
    /* Table on its own page, PBA on the doorbell page. */
    VFIOBarPlanInput in = plain_bar(0x4000, PAGE_4K);
    g_autoptr(VFIOBarPlan) plan = NULL;
    g_autofree char *areas_before = NULL, *areas_after = NULL;
    g_autofree char *trapped = NULL;

    with_table(&in, 0x3000, 0x100);
    with_pba(&in, 0x1c00, 0x8, false);
    in.caps = &cap_msix;
    expect_plan(&in, "0x0+0x4000", "0x3000+0x1000");
    in.pba.enabled = true;
    expect_plan(&in, "0x0+0x4000", "0x1000+0x1000 0x3000+0x1000");

    /* Toggling the overlay changes the trapped pages only. */
    in.pba.enabled = false;
    plan = vfio_bar_plan(&in, &error_abort);
    areas_before = ranges_str(plan->areas, plan->nr_areas);
    /* Both trapped sets are there from the start; a toggle selects one. */
    {
        g_autofree char *off = ranges_str(plan->trapped_view[0],
                                          plan->nr_trapped_view[0]);
        g_autofree char *on = ranges_str(plan->trapped_view[1],
                                         plan->nr_trapped_view[1]);
        VFIOBarRange *views[2] = { plan->trapped_view[0],
                                   plan->trapped_view[1] };

        g_assert_cmpstr(off, ==, "0x3000+0x1000");
        g_assert_cmpstr(on, ==, "0x1000+0x1000 0x3000+0x1000");
        g_assert_true(plan->trapped == views[0]);
        vfio_bar_plan_set_overlay_enabled(plan, VFIO_BAR_OVERLAY_MSIX_PBA,
                                          true);
        g_assert_true(plan->trapped == views[1]);
        vfio_bar_plan_set_overlay_enabled(plan, VFIO_BAR_OVERLAY_MSIX_PBA,
                                          false);
        g_assert_true(plan->trapped == views[0]);
        g_assert_true(plan->trapped_view[1] == views[1]);
    }
    g_assert_false(vfio_bar_plan_is_trapped(plan, 0x1000));
    g_assert_true(vfio_bar_plan_set_overlay_enabled(
                      plan, VFIO_BAR_OVERLAY_MSIX_PBA, true));
    g_assert_true(vfio_bar_plan_is_trapped(plan, 0x1000));
    trapped = ranges_str(plan->trapped, plan->nr_trapped);
    g_assert_cmpstr(trapped, ==, "0x1000+0x1000 0x3000+0x1000");
    g_assert_true(vfio_bar_plan_set_overlay_enabled(
                      plan, VFIO_BAR_OVERLAY_MSIX_PBA, false));
    g_assert_false(vfio_bar_plan_is_trapped(plan, 0x1000));
    g_assert_true(vfio_bar_plan_is_trapped(plan, 0x3000));
    areas_after = ranges_str(plan->areas, plan->nr_areas);
    g_assert_cmpstr(areas_before, ==, areas_after);
    check_plan(&in, plan);

    /* Without the capability the PBA page stays mapped, trapped if on. */
    in.caps = NULL;
    expect_plan(&in, "0x0+0x3000", "0x3000+0x1000");
    in.pba.enabled = true;
    expect_plan(&in, "0x0+0x3000", "0x1000+0x1000 0x3000+0x1000");
}

/*
 * vfio_bar_plan_explain(): the hot-page hint names the option that would
 * stop a page from trapping, or says that none can.
 */
static const char *explain(const VFIOBarPlanInput *in, uint64_t page)
{
    g_autoptr(VFIOBarPlan) plan = vfio_bar_plan(in, &error_abort);

    /* The hint is a static string: it outlives the plan. */
    return vfio_bar_plan_explain(in, plan, page);
}

static void test_explain(void)
{
    VFIOBarPlanInput in = plain_bar(0x4000, PAGE_4K);
    g_autoptr(VFIOBarPlan) plan = NULL;

    /* Table on a mapped page (capability): relocation moves it away. */
    with_table(&in, 0x3000, 0x100);
    in.caps = &cap_msix;
    g_assert_nonnull(strstr(explain(&in, 0x3000), "x-msix-relocation=auto"));
    /* An untrapped page has nothing to explain. */
    g_assert_null(explain(&in, 0x0));

    /* Without the capability no option helps, and the hint says so. */
    in.caps = NULL;
    g_assert_nonnull(strstr(explain(&in, 0x3000),
                            "does not advertise MSIX_MAPPABLE"));

    /* x-msix-mappable=off while the region advertises it. */
    in.caps = &cap_msix;
    in.msix_mappable = VFIO_MSIX_MAPPABLE_OFF;
    g_assert_cmpstr(explain(&in, 0x3000), ==,
                    "x-msix-mappable=auto maps the MSI-X table page");
    in.msix_mappable = VFIO_MSIX_MAPPABLE_AUTO;

    /* x-no-mmap on a mappable region; not on one without the flag. */
    in.no_mmap = true;
    g_assert_cmpstr(explain(&in, 0x1000), ==, "x-no-mmap=off maps the BAR");
    in.flags &= ~VFIO_REGION_INFO_FLAG_MMAP;
    g_assert_null(explain(&in, 0x1000));
    in.flags |= VFIO_REGION_INFO_FLAG_MMAP;
    in.no_mmap = false;

    /* A PBA shown all the time on a mapped page: x-lazy-pba=on. */
    with_pba(&in, 0x1c00, 0x8, true);
    in.lazy_pba = false;
    g_assert_cmpstr(explain(&in, 0x1000), ==,
                    "x-lazy-pba=on maps the PBA page while nothing is "
                    "pending");
    /* Lazy already: the PBA traps only while a vector is pending. */
    in.lazy_pba = true;
    g_assert_null(explain(&in, 0x1000));

    /* The hint follows the plan's current PBA state. */
    in.lazy_pba = false;
    in.pba.enabled = false;
    plan = vfio_bar_plan(&in, &error_abort);
    g_assert_null(vfio_bar_plan_explain(&in, plan, 0x1000));
    vfio_bar_plan_set_overlay_enabled(plan, VFIO_BAR_OVERLAY_MSIX_PBA, true);
    g_assert_nonnull(vfio_bar_plan_explain(&in, plan, 0x1000));
}

/* Protection from the region's flags; alignment for huge pfnmaps. */
static void test_mmap_prot_and_align(void)
{
    g_assert_cmpint(vfio_bar_plan_mmap_prot(RW_MMAP), ==,
                    PROT_READ | PROT_WRITE);
    g_assert_cmpint(vfio_bar_plan_mmap_prot(VFIO_REGION_INFO_FLAG_READ |
                                            VFIO_REGION_INFO_FLAG_MMAP), ==,
                    PROT_READ);
    g_assert_cmpint(vfio_bar_plan_mmap_prot(VFIO_REGION_INFO_FLAG_WRITE), ==,
                    PROT_WRITE);
    g_assert_cmpint(vfio_bar_plan_mmap_prot(VFIO_REGION_INFO_FLAG_MMAP), ==,
                    PROT_NONE);

    g_assert_cmpuint(vfio_bar_plan_mmap_align(0x4000, PAGE_4K), ==, 0x4000);
    g_assert_cmpuint(vfio_bar_plan_mmap_align(2ULL << 20, PAGE_4K), ==,
                     2ULL << 20);
    g_assert_cmpuint(vfio_bar_plan_mmap_align(16ULL << 30, PAGE_4K), ==,
                     1ULL << 30);
    /* Never below a page; a size that is not a power of two rounds down. */
    g_assert_cmpuint(vfio_bar_plan_mmap_align(0x100, PAGE_4K), ==, PAGE_4K);
    g_assert_cmpuint(vfio_bar_plan_mmap_align(0x4000, PAGE_64K), ==,
                     PAGE_64K);
    g_assert_cmpuint(vfio_bar_plan_mmap_align(0x3000, PAGE_4K), ==, 0x2000);
}

static void test_overlay_toggle_missing(void)
{
    VFIOBarPlanInput in = plain_bar(0x4000, PAGE_4K);
    g_autoptr(VFIOBarPlan) plan = NULL;

    with_table(&in, 0, 0x100);
    plan = vfio_bar_plan(&in, &error_abort);
    g_assert_false(vfio_bar_plan_set_overlay_enabled(
                       plan, VFIO_BAR_OVERLAY_MSIX_PBA, true));
    g_assert_cmpuint(plan->nr_overlays, ==, 1);
}

static void test_spapr_policy(void)
{
    /* vfio-no-msix-emulation: the table overlay is off. */
    VFIOBarPlanInput in = plain_bar(0x4000, PAGE_64K);
    g_autoptr(VFIOBarPlan) plan = NULL;

    in.bar = 1;
    in.no_msix_emulation = true;
    with_table(&in, 0x2000, 0x100);
    with_pba(&in, 0x3000, 0x8, false);
    in.caps = &cap_msix;
    expect_plan(&in, "0x0+0x4000", "");
    plan = vfio_bar_plan(&in, &error_abort);
    g_assert_false(plan->overlays[0].enabled);
    /* Without the capability the host still refuses the table page. */
    in.caps = NULL;
    expect_plan(&in, "", "0x0+0x4000");
}

static void test_seed_ppc64_small_bar(void)
{
    /* 16 KiB BAR0, table at 0x3000, inside one 64 KiB host page. */
    VFIOBarPlanInput in = plain_bar(0x4000, PAGE_4K);
    g_autoptr(VFIOBarPlan) plan = NULL;
    g_autofree char *desc = NULL;

    in.page_size_override = PAGE_64K;
    with_table(&in, 0x3000, 0x100);
    with_pba(&in, 0x3800, 0x8, false);
    in.caps = &cap_msix;
    expect_plan(&in, "0x0+0x4000", "0x0+0x4000");
    plan = vfio_bar_plan(&in, &error_abort);
    g_assert_true(plan->whole_bar_mapped);
    desc = vfio_bar_plan_describe(plan);
    g_assert_cmpstr(desc, ==, "bar0 size 0x4000 page 0x10000 msix-mappable"
                    " whole-bar mmap [0x0+0x4000] trapped [0x0+0x4000]"
                    " table 0x3000+0x100 on pba 0x3800+0x8 off");

    in.caps = NULL;
    expect_plan(&in, "", "0x0+0x4000");
}

static void test_describe_no_mmap(void)
{
    VFIOBarPlanInput in = plain_bar(0x2000, PAGE_4K);
    g_autoptr(VFIOBarPlan) plan = NULL;
    g_autofree char *desc = NULL;

    in.bar = 5;
    in.no_mmap = true;
    plan = vfio_bar_plan(&in, &error_abort);
    desc = vfio_bar_plan_describe(plan);
    g_assert_cmpstr(desc, ==, "bar5 size 0x2000 page 0x1000 mmap []"
                    " trapped [0x0+0x2000]");
}

/* A random part inside [0, size), or absent. */
static VFIOBarPlanMsixPart random_part(uint64_t size, uint64_t page)
{
    VFIOBarPlanMsixPart part = { 0 };
    uint64_t granule = g_test_rand_bit() ? 0x100 : 8;

    if (g_test_rand_int_range(0, 4) == 0) {
        return part;
    }
    part.present = true;
    part.offset = QEMU_ALIGN_DOWN((uint64_t)g_test_rand_int_range(
                                      0, size), granule);
    part.size = granule * g_test_rand_int_range(1, 3 * page / granule);
    part.size = MIN(part.size, size - part.offset);
    part.enabled = g_test_rand_int_range(0, 3) != 0;
    return part;
}

static void test_random_property(void)
{
    static const uint64_t pages[] = { PAGE_4K, 16 * KiB, PAGE_64K };
    int iter, planned = 0, errors = 0;

    for (iter = 0; iter < 5000; iter++) {
        uint64_t host_page = pages[g_test_rand_int_range(0, 2) ? 0 : 2];
        uint64_t override = 0, page, size;
        VFIOSparseArea areas[6];
        VFIORegionCaps caps = { 0 };
        VFIOBarPlanInput in;
        g_autoptr(VFIOBarPlan) plan = NULL;
        Error *err = NULL;
        bool expect_fail;
        int i;

        if (host_page == PAGE_4K && g_test_rand_bit()) {
            override = pages[g_test_rand_int_range(0, 3)];
        }
        page = override ? override : host_page;
        /* Powers of two as real BARs, sometimes odd sizes as regions. */
        size = 1ULL << g_test_rand_int_range(12, 21);
        if (g_test_rand_int_range(0, 8) == 0) {
            size = g_test_rand_int_range(1, 1 << 20);
        }
        in = plain_bar(size, host_page);
        in.page_size_override = override;
        in.table = random_part(size, page);
        in.pba = random_part(size, page);
        in.no_mmap = g_test_rand_int_range(0, 10) == 0;
        if (g_test_rand_int_range(0, 10) == 0) {
            in.flags &= ~VFIO_REGION_INFO_FLAG_MMAP;
        }
        in.msix_mappable = g_test_rand_int_range(0, 3);
        in.no_msix_emulation = g_test_rand_int_range(0, 5) == 0;
        caps.msix_mappable = g_test_rand_bit();
        if (g_test_rand_int_range(0, 3) == 0) {
            caps.has_sparse = true;
            caps.nr_sparse_areas = g_test_rand_int_range(0, 7);
            for (i = 0; i < caps.nr_sparse_areas; i++) {
                areas[i].offset = g_test_rand_int_range(0, size + page);
                areas[i].size = g_test_rand_int_range(0, size + page);
                if (g_test_rand_bit()) {
                    areas[i].offset = QEMU_ALIGN_DOWN(areas[i].offset, page);
                    areas[i].size = QEMU_ALIGN_UP(areas[i].size, page);
                }
            }
            caps.sparse_areas = areas;
        }
        in.caps = g_test_rand_int_range(0, 4) ? &caps : NULL;

        expect_fail = in.msix_mappable == VFIO_MSIX_MAPPABLE_ON &&
                      !(in.caps && in.caps->msix_mappable) &&
                      in.table.present && !in.no_mmap &&
                      (in.flags & VFIO_REGION_INFO_FLAG_MMAP);
        plan = vfio_bar_plan(&in, &err);
        if (expect_fail) {
            g_assert_null(plan);
            error_free_or_abort(&err);
            errors++;
            continue;
        }
        g_assert_null(err);
        g_assert_nonnull(plan);
        check_plan(&in, plan);
        /* Lazy PBA toggling keeps the plan consistent with the model. */
        if (in.pba.present) {
            in.pba.enabled = !in.pba.enabled;
            g_assert_true(vfio_bar_plan_set_overlay_enabled(
                              plan, VFIO_BAR_OVERLAY_MSIX_PBA,
                              in.pba.enabled));
            check_plan(&in, plan);
        }
        planned++;
    }
    g_assert_cmpint(planned, >, 4000);
    g_assert_cmpint(errors, >, 10);
}

int main(int argc, char **argv)
{
    size_t i;

    g_test_init(&argc, &argv, NULL);
    for (i = 0; i < ARRAY_SIZE(plan_cases); i++) {
        g_test_add_data_func(plan_cases[i].path, &plan_cases[i],
                             test_plan_case);
    }
    g_test_add_func("/vfio/bar-plan/nvme/table-on-doorbell-page",
                    test_nvme_doorbell_page);
    g_test_add_func("/vfio/bar-plan/lazy-pba/toggle", test_lazy_pba);
    g_test_add_func("/vfio/bar-plan/explain/hints", test_explain);
    g_test_add_func("/vfio/bar-plan/mmap/prot-and-align",
                    test_mmap_prot_and_align);
    g_test_add_func("/vfio/bar-plan/lazy-pba/no-pba-overlay",
                    test_overlay_toggle_missing);
    g_test_add_func("/vfio/bar-plan/spapr/no-msix-emulation",
                    test_spapr_policy);
    g_test_add_func("/vfio/bar-plan/seed/ppc64-16k-bar-64k-page",
                    test_seed_ppc64_small_bar);
    g_test_add_func("/vfio/bar-plan/describe/no-mmap", test_describe_no_mmap);
    g_test_add_func("/vfio/bar-plan/random/matches-page-model",
                    test_random_property);
    return g_test_run();
}
