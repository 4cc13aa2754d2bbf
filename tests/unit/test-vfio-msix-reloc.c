/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio_msix_relocation_plan(): where x-msix-relocation puts the emulated
 * MSI-X table and PBA, and when it must refuse.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/vfio/pci.h"

#define KiB 1024ULL
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)

/* BAR0 64-bit 16 KiB (so BAR1 is its upper half), the rest as given. */
static void nvme_like(VFIOMsixRelocSlot s[PCI_ROM_SLOT])
{
    memset(s, 0, sizeof(VFIOMsixRelocSlot) * PCI_ROM_SLOT);
    s[0] = (VFIOMsixRelocSlot) { .size = 16 * KiB, .mem64 = true };
    s[1] = (VFIOMsixRelocSlot) { .upper_half = true };
}

static void all_full(VFIOMsixRelocSlot s[PCI_ROM_SLOT], uint64_t size)
{
    for (int i = 0; i < PCI_ROM_SLOT; i++) {
        s[i] = (VFIOMsixRelocSlot) { .size = size };
    }
}

static uint64_t page_size = 4 * KiB;

static bool plan(const VFIOMsixRelocSlot *s, VFIOMsixRelocation mode,
                 uint32_t table_bar, uint16_t entries,
                 VFIOMsixRelocResult *res, char **msg)
{
    Error *err = NULL;
    bool ok = vfio_msix_relocation_plan(s, mode, table_bar, entries,
                                        page_size, res, &err);

    g_assert_true(ok == !err);
    if (msg) {
        *msg = err ? g_strdup(error_get_pretty(err)) : NULL;
    }
    error_free(err);
    return ok;
}

static void test_auto_first_free_slot(void)
{
    VFIOMsixRelocSlot s[PCI_ROM_SLOT];
    VFIOMsixRelocResult r;

    nvme_like(s);
    /* BAR1 is taken by the 64-bit BAR0: BAR2 is the first free slot. */
    g_assert_true(plan(s, VFIO_MSIX_RELOCATION_AUTO, 0, 65, &r, NULL));
    g_assert_cmpuint(r.bar, ==, 2);
    g_assert_true(r.new_bar);
    g_assert_cmphex(r.table_offset, ==, 0);
    g_assert_cmphex(r.pba_offset, ==, 65 * 16);
    g_assert_cmphex(r.bar_size, ==, 4 * KiB);

    s[0].mem64 = false;
    s[1].upper_half = false;
    g_assert_true(plan(s, VFIO_MSIX_RELOCATION_AUTO, 0, 65, &r, NULL));
    g_assert_cmpuint(r.bar, ==, 1);
}

static void test_new_bar_size_fits_table_and_pba(void)
{
    VFIOMsixRelocSlot s[PCI_ROM_SLOT];
    VFIOMsixRelocResult r;

    nvme_like(s);
    g_assert_true(plan(s, VFIO_MSIX_RELOCATION_AUTO, 0, 2048, &r, NULL));
    /* 32 KiB of table + 256 bytes of PBA: next power of two. */
    g_assert_cmphex(r.pba_offset, ==, 32 * KiB);
    g_assert_cmphex(r.bar_size, ==, 64 * KiB);
    g_assert_cmphex(r.pba_offset + 256, <=, r.bar_size);
}

static void test_auto_doubles_table_bar(void)
{
    VFIOMsixRelocSlot s[PCI_ROM_SLOT];
    VFIOMsixRelocResult r;

    all_full(s, 16 * KiB);
    g_assert_true(plan(s, VFIO_MSIX_RELOCATION_AUTO, 3, 8, &r, NULL));
    g_assert_cmpuint(r.bar, ==, 3);
    g_assert_false(r.new_bar);
    g_assert_cmphex(r.bar_size, ==, 32 * KiB);
    g_assert_cmphex(r.table_offset, ==, 16 * KiB);
    g_assert_cmphex(r.pba_offset, ==, 16 * KiB + 8 * 16);
}

static void test_explicit_bar(void)
{
    VFIOMsixRelocSlot s[PCI_ROM_SLOT];
    VFIOMsixRelocResult r;

    nvme_like(s);
    g_assert_true(plan(s, VFIO_MSIX_RELOCATION_BAR0 + 5, 0, 8, &r, NULL));
    g_assert_cmpuint(r.bar, ==, 5);
    g_assert_true(r.new_bar);
    /* An occupied memory BAR is doubled, table in the upper half. */
    g_assert_true(plan(s, VFIO_MSIX_RELOCATION_BAR0, 0, 8, &r, NULL));
    g_assert_cmpuint(r.bar, ==, 0);
    g_assert_false(r.new_bar);
    g_assert_cmphex(r.bar_size, ==, 32 * KiB);
    g_assert_cmphex(r.table_offset, ==, 16 * KiB);
}

static void test_refusals(void)
{
    VFIOMsixRelocSlot s[PCI_ROM_SLOT];
    VFIOMsixRelocResult r;
    g_autofree char *upper = NULL, *io = NULL, *big = NULL, *small = NULL;
    g_autofree char *full = NULL;

    nvme_like(s);
    g_assert_false(plan(s, VFIO_MSIX_RELOCATION_BAR0 + 1, 0, 8, &r, &upper));
    g_assert_nonnull(strstr(upper, "upper half"));

    s[2] = (VFIOMsixRelocSlot) { .size = 256, .io = true };
    g_assert_false(plan(s, VFIO_MSIX_RELOCATION_BAR0 + 2, 0, 8, &r, &io));
    g_assert_nonnull(strstr(io, "I/O"));

    s[3] = (VFIOMsixRelocSlot) { .size = 2 * GiB };
    g_assert_false(plan(s, VFIO_MSIX_RELOCATION_BAR0 + 3, 0, 8, &r, &big));
    g_assert_nonnull(strstr(big, "2 GiB"));

    /* Below a page, the upper half grows to a page: 64 vectors fit... */
    s[4] = (VFIOMsixRelocSlot) { .size = 1 * KiB };
    g_assert_true(plan(s, VFIO_MSIX_RELOCATION_BAR0 + 4, 0, 64, &r, NULL));
    g_assert_cmphex(r.table_offset, ==, 4 * KiB);
    g_assert_cmphex(r.bar_size, ==, 8 * KiB);
    /* ...2048 do not. */
    g_assert_false(plan(s, VFIO_MSIX_RELOCATION_BAR0 + 4, 0, 2048, &r,
                        &small));
    g_assert_nonnull(strstr(small, "too small"));

    all_full(s, 4 * GiB);
    g_assert_false(plan(s, VFIO_MSIX_RELOCATION_AUTO, 0, 8, &r, &full));
    g_assert_nonnull(strstr(full, "no free BAR slot"));
}

static void test_large_bars_that_may_double(void)
{
    VFIOMsixRelocSlot s[PCI_ROM_SLOT];
    VFIOMsixRelocResult r;

    all_full(s, 1 * GiB);
    /* A 1 GiB 32-bit BAR doubles to 2 GiB, still below 4 GiB. */
    g_assert_true(plan(s, VFIO_MSIX_RELOCATION_BAR0 + 2, 0, 8, &r, NULL));
    g_assert_cmphex(r.bar_size, ==, 2 * GiB);
    s[4] = (VFIOMsixRelocSlot) { .size = 2 * GiB, .mem64 = true };
    s[5] = (VFIOMsixRelocSlot) { .upper_half = true };
    g_assert_true(plan(s, VFIO_MSIX_RELOCATION_BAR0 + 4, 0, 8, &r, NULL));
    g_assert_cmphex(r.bar_size, ==, 4 * GiB);
    g_assert_cmphex(r.table_offset, ==, 2 * GiB);
}

static void test_offset_must_fit_capability(void)
{
    VFIOMsixRelocSlot s[PCI_ROM_SLOT];
    VFIOMsixRelocResult r;
    g_autofree char *msg = NULL;

    all_full(s, 1 * GiB);
    s[4] = (VFIOMsixRelocSlot) { .size = 8 * GiB, .mem64 = true };
    s[5] = (VFIOMsixRelocSlot) { .upper_half = true };
    /* The table offset field is 32 bits wide. */
    g_assert_false(plan(s, VFIO_MSIX_RELOCATION_BAR0 + 4, 0, 8, &r, &msg));
    g_assert_nonnull(strstr(msg, "4 GiB"));
}

/*
 * With 64 KiB host pages (x-host-page-size=65536, ppc64le, arm64), what
 * holds the emulated table must be a whole page, page-aligned, or the
 * table shares a host page with device registers again.
 */
static void test_host_page_64k(void)
{
    VFIOMsixRelocSlot s[PCI_ROM_SLOT];
    VFIOMsixRelocResult r;
    g_autofree char *msg = NULL;

    page_size = 64 * KiB;
    nvme_like(s);
    g_assert_true(plan(s, VFIO_MSIX_RELOCATION_AUTO, 0, 65, &r, NULL));
    g_assert_true(r.new_bar);
    g_assert_cmphex(r.bar_size, ==, 64 * KiB);
    g_assert_cmphex(r.table_offset, ==, 0);
    g_assert_true(plan(s, VFIO_MSIX_RELOCATION_WHERE_HELPFUL, 0, 65, &r,
                       NULL));
    g_assert_cmphex(r.bar_size, ==, 64 * KiB);
    /* A 16 KiB BAR doubled: its upper half starts on the next page. */
    g_assert_true(plan(s, VFIO_MSIX_RELOCATION_BAR0, 0, 8, &r, NULL));
    g_assert_false(r.new_bar);
    g_assert_cmphex(r.table_offset, ==, 64 * KiB);
    g_assert_cmphex(r.bar_size, ==, 128 * KiB);
    g_assert_cmphex(r.pba_offset, ==, 64 * KiB + 8 * 16);
    /* A BAR of a page or more doubles as before. */
    all_full(s, 256 * KiB);
    g_assert_true(plan(s, VFIO_MSIX_RELOCATION_AUTO, 1, 8, &r, NULL));
    g_assert_cmphex(r.table_offset, ==, 256 * KiB);
    g_assert_cmphex(r.bar_size, ==, 512 * KiB);
    /* A 32-bit BAR may not grow past 2 GiB to reach a page. */
    all_full(s, 1 * GiB);
    page_size = 2 * GiB;
    g_assert_false(plan(s, VFIO_MSIX_RELOCATION_AUTO, 0, 8, &r, &msg));
    g_assert_nonnull(strstr(msg, "2 GiB"));
    page_size = 4 * KiB;
}

static void test_bad_page_size(void)
{
    VFIOMsixRelocSlot s[PCI_ROM_SLOT];
    VFIOMsixRelocResult r;
    g_autofree char *msg = NULL;

    nvme_like(s);
    page_size = 12 * KiB;
    g_assert_false(plan(s, VFIO_MSIX_RELOCATION_AUTO, 0, 8, &r, &msg));
    g_assert_nonnull(strstr(msg, "page size"));
    page_size = 4 * KiB;
}

/* An NVMe-like BAR0: registers at 0, doorbells and table on page 0x1000. */
static VFIOBarPlan *db_page_plan(uint64_t page, bool mappable, bool table_on,
                                 bool pba_on)
{
    static VFIORegionCaps caps;
    VFIOBarPlanInput in = {
        .bar = 0,
        .size = 16 * KiB,
        .flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE |
                 VFIO_REGION_INFO_FLAG_MMAP,
        .caps = &caps,
        .table = { true, 0x1800, 65 * 16, table_on },
        .pba = { true, 0x2000, 16, pba_on },
        .host_page_size = 4 * KiB,
        .page_size_override = page,
    };

    caps.msix_mappable = mappable;
    return vfio_bar_plan(&in, &error_abort);
}

static void test_untrapped(void)
{
    g_autoptr(VFIOBarPlan) now = db_page_plan(0, true, true, false);
    g_autoptr(VFIOBarPlan) moved = db_page_plan(0, true, false, false);
    g_autoptr(VFIOBarPlan) now_nocap = db_page_plan(0, false, true, false);
    g_autoptr(VFIOBarPlan) moved_nocap = db_page_plan(0, false, false, false);
    g_autoptr(VFIOBarPlan) now_pba = db_page_plan(0, true, false, true);
    g_autoptr(VFIOBarPlan) now_64k = db_page_plan(64 * KiB, true, true,
                                                  false);
    g_autoptr(VFIOBarPlan) moved_64k = db_page_plan(64 * KiB, true, false,
                                                    false);
    uint64_t page = ~0ULL;

    /* The table's page holds doorbells the capability lets us map. */
    g_assert_cmphex(vfio_msix_relocation_untrapped(now, moved, &page), ==,
                    0x800);
    g_assert_cmphex(page, ==, 0x1000);
    /* Without MSIX_MAPPABLE the page stays unmapped: nothing to gain. */
    g_assert_cmphex(vfio_msix_relocation_untrapped(now_nocap, moved_nocap,
                                                   NULL), ==, 0);
    /* An enabled PBA overlay at the start of its page: nothing before. */
    g_assert_cmphex(vfio_msix_relocation_untrapped(now_pba, moved, NULL),
                    ==, 0);
    /* Moving changes nothing: nothing gained. */
    g_assert_cmphex(vfio_msix_relocation_untrapped(moved, moved, NULL), ==,
                    0);
    /* One 64 KiB page holds the whole 16 KiB BAR, registers first. */
    page = ~0ULL;
    g_assert_cmphex(vfio_msix_relocation_untrapped(now_64k, moved_64k,
                                                   &page), ==, 0x1800);
    g_assert_cmphex(page, ==, 0);
}

/* A table alone on a page (QEMU's emulated NVMe): nothing to gain. */
static void test_untrapped_table_own_page(void)
{
    static VFIORegionCaps caps = { .msix_mappable = true };
    VFIOBarPlanInput in = {
        .size = 16 * KiB,
        .flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE |
                 VFIO_REGION_INFO_FLAG_MMAP,
        .caps = &caps,
        .table = { true, 0x2000, 65 * 16, true },
        .pba = { true, 0x3000, 16, false },
        .host_page_size = 4 * KiB,
    };
    g_autoptr(VFIOBarPlan) now = vfio_bar_plan(&in, &error_abort);
    g_autoptr(VFIOBarPlan) moved = NULL;

    in.table.enabled = false;
    moved = vfio_bar_plan(&in, &error_abort);
    g_assert_cmpuint(now->nr_trapped, ==, 1);
    g_assert_cmpuint(moved->nr_trapped, ==, 0);
    g_assert_cmphex(vfio_msix_relocation_untrapped(now, moved, NULL), ==, 0);
    /* With 64 KiB pages the registers at 0 share the table's page. */
    in.page_size_override = 64 * KiB;
    in.table.enabled = true;
    g_clear_pointer(&now, vfio_bar_plan_free);
    g_clear_pointer(&moved, vfio_bar_plan_free);
    now = vfio_bar_plan(&in, &error_abort);
    in.table.enabled = false;
    moved = vfio_bar_plan(&in, &error_abort);
    g_assert_cmphex(vfio_msix_relocation_untrapped(now, moved, NULL), ==,
                    0x2000);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vfio/msix-relocation/auto-first-free-slot",
                    test_auto_first_free_slot);
    g_test_add_func("/vfio/msix-relocation/new-bar-fits-table-and-pba",
                    test_new_bar_size_fits_table_and_pba);
    g_test_add_func("/vfio/msix-relocation/auto-doubles-table-bar",
                    test_auto_doubles_table_bar);
    g_test_add_func("/vfio/msix-relocation/explicit-bar",
                    test_explicit_bar);
    g_test_add_func("/vfio/msix-relocation/refusals", test_refusals);
    g_test_add_func("/vfio/msix-relocation/large-bars-double",
                    test_large_bars_that_may_double);
    g_test_add_func("/vfio/msix-relocation/offset-fits-capability",
                    test_offset_must_fit_capability);
    g_test_add_func("/vfio/msix-relocation/host-page-64k",
                    test_host_page_64k);
    g_test_add_func("/vfio/msix-relocation/bad-page-size",
                    test_bad_page_size);
    g_test_add_func("/vfio/msix-relocation/untrapped", test_untrapped);
    g_test_add_func("/vfio/msix-relocation/untrapped-table-own-page",
                    test_untrapped_table_own_page);
    return g_test_run();
}
