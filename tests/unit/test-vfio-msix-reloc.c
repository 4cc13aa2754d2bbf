/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio_msix_relocation_decide(), every rule of msix-reloc.h: whether
 * x-msix-relocation moves the emulated MSI-X table and PBA (the modes,
 * and for where-helpful what the BAR plans say moving would untrap),
 * where they go, when it must refuse, and what it says about it.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/vfio/msix-reloc.h"

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

static const VFIORegionCaps cap_msix = { .msix_mappable = true };
static const VFIORegionCaps cap_none;

#define RW_MMAP (VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE | \
                 VFIO_REGION_INFO_FLAG_MMAP)

/*
 * The decision's input for @s with the table in @table_bar.  Only
 * where-helpful reads the BAR plans: the table's BAR is NVMe-like, with
 * registers at 0, the table at 0x1800 (doorbell page 0x1000) and the
 * PBA at 0x2000, mappable with MSIX_MAPPABLE.
 */
static VFIOMsixRelocInput input(const VFIOMsixRelocSlot *s,
                                VFIOMsixRelocation mode, uint32_t table_bar,
                                uint16_t entries)
{
    VFIOMsixRelocInput in = {
        .mode = mode,
        .entries = entries,
        .table_bar = table_bar,
        .table_offset = 0x1800,
        .pba_bar = table_bar,
        .pba_offset = 0x2000,
        .page_size = page_size,
    };

    memcpy(in.slots, s, sizeof(in.slots));
    for (int i = 0; i < PCI_ROM_SLOT; i++) {
        in.bar_plans[i] = (VFIOBarPlanInput) {
            .bar = i,
            .size = s[i].size,
            .flags = RW_MMAP,
            .caps = &cap_msix,
            .host_page_size = 4 * KiB,
            .page_size_override = page_size == 4 * KiB ? 0 : page_size,
            .lazy_pba = true,
        };
    }
    return in;
}

static bool decide(const VFIOMsixRelocInput *in, VFIOMsixRelocDecision *d,
                   char **msg)
{
    Error *err = NULL;
    bool ok = vfio_msix_relocation_decide(in, d, &err);

    g_assert_true(ok == !err);
    /* Every decision explains itself; a refusal explains nothing. */
    g_assert_true(ok == (d->explanation != NULL));
    if (msg) {
        *msg = ok ? g_strdup(d->explanation)
                  : g_strdup(error_get_pretty(err));
    }
    error_free(err);
    vfio_msix_relocation_decision_clear(d);
    return ok;
}

/* Placement: the mode must relocate (auto, barN) or helps (where-helpful). */
static bool plan(const VFIOMsixRelocSlot *s, VFIOMsixRelocation mode,
                 uint32_t table_bar, uint16_t entries,
                 VFIOMsixRelocDecision *res, char **msg)
{
    VFIOMsixRelocInput in = input(s, mode, table_bar, entries);
    bool ok = decide(&in, res, msg);

    g_assert_true(!ok || res->relocated);
    return ok;
}

static void test_auto_first_free_slot(void)
{
    VFIOMsixRelocSlot s[PCI_ROM_SLOT];
    VFIOMsixRelocDecision r;

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
    VFIOMsixRelocDecision r;

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
    VFIOMsixRelocDecision r;

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
    VFIOMsixRelocDecision r;

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
    VFIOMsixRelocDecision r;
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
    VFIOMsixRelocDecision r;

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
    VFIOMsixRelocDecision r;
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
    VFIOMsixRelocDecision r;
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
    VFIOMsixRelocDecision r;
    g_autofree char *msg = NULL;

    nvme_like(s);
    page_size = 12 * KiB;
    g_assert_false(plan(s, VFIO_MSIX_RELOCATION_AUTO, 0, 8, &r, &msg));
    g_assert_nonnull(strstr(msg, "page size"));
    page_size = 4 * KiB;
}

/* ---- where-helpful: whether moving untraps registers ---- */

/* The doorbell page shares the table's page: moving maps it. */
static void test_helpful_doorbell_page(void)
{
    VFIOMsixRelocSlot s[PCI_ROM_SLOT];
    VFIOMsixRelocInput in;
    VFIOMsixRelocDecision d;
    g_autofree char *why = NULL;

    nvme_like(s);
    in = input(s, VFIO_MSIX_RELOCATION_WHERE_HELPFUL, 0, 65);
    g_assert_true(vfio_msix_relocation_decide(&in, &d, &error_abort));
    g_assert_true(d.relocated);
    g_assert_true(d.notable);
    g_assert_false(d.impossible);
    g_assert_cmphex(d.gain_bytes, ==, 0x800);
    g_assert_cmpuint(d.gain_bar, ==, 0);
    g_assert_cmphex(d.gain_page, ==, 0x1000);
    g_assert_cmpuint(d.bar, ==, 2);
    g_assert_true(d.new_bar);
    g_assert_nonnull(strstr(d.explanation, "BAR0 page 0x1000 is mapped"));
    g_assert_nonnull(strstr(d.explanation, "x-msix-relocation=off"));
    vfio_msix_relocation_decision_clear(&d);

    /* One 64 KiB page holds the whole BAR: the registers before 0x1800. */
    page_size = 64 * KiB;
    in = input(s, VFIO_MSIX_RELOCATION_WHERE_HELPFUL, 0, 65);
    g_assert_true(vfio_msix_relocation_decide(&in, &d, &error_abort));
    g_assert_true(d.relocated);
    g_assert_cmphex(d.gain_bytes, ==, 0x1800);
    g_assert_cmphex(d.gain_page, ==, 0);
    g_assert_cmphex(d.bar_size, ==, 64 * KiB);
    vfio_msix_relocation_decision_clear(&d);
    page_size = 4 * KiB;

    /* auto and barN move whatever the plans say, quietly. */
    in = input(s, VFIO_MSIX_RELOCATION_BAR0 + 3, 0, 65);
    g_assert_true(decide(&in, &d, &why));
    g_assert_true(d.relocated);
    g_assert_false(d.notable);
    g_assert_cmpstr(why, ==, "MSI-X table and PBA relocated to BAR3 offset "
                    "0x0 (x-msix-relocation=bar3)");
}

/* Nothing to gain: the table stays, and the decision says why. */
static void test_helpful_keeps_table(void)
{
    VFIOMsixRelocSlot s[PCI_ROM_SLOT];
    VFIOMsixRelocInput in;
    VFIOMsixRelocDecision d;
    g_autofree char *nocap = NULL, *own = NULL, *pba = NULL, *spapr = NULL;
    g_autofree char *off = NULL;

    nvme_like(s);
    /* Without MSIX_MAPPABLE the page stays unmapped anyway. */
    in = input(s, VFIO_MSIX_RELOCATION_WHERE_HELPFUL, 0, 65);
    in.bar_plans[0].caps = &cap_none;
    g_assert_true(decide(&in, &d, &nocap));
    g_assert_false(d.relocated);
    g_assert_false(d.notable);
    g_assert_cmphex(d.gain_bytes, ==, 0);
    g_assert_nonnull(strstr(nocap, "shares no host page"));

    /* A table alone on its page (QEMU's emulated NVMe). */
    in = input(s, VFIO_MSIX_RELOCATION_WHERE_HELPFUL, 0, 65);
    in.table_offset = 0x2000;
    in.pba_offset = 0x3000;
    g_assert_true(decide(&in, &d, &own));
    g_assert_false(d.relocated);

    /* An always-on PBA at the start of its page: nothing before it. */
    in.bar_plans[0].lazy_pba = false;
    g_assert_true(decide(&in, &d, &pba));
    g_assert_false(d.relocated);

    /* pseries does not emulate the table: moving it would help nothing. */
    in = input(s, VFIO_MSIX_RELOCATION_WHERE_HELPFUL, 0, 65);
    in.bar_plans[0].no_msix_emulation = true;
    g_assert_true(decide(&in, &d, &spapr));
    g_assert_false(d.relocated);
    g_assert_nonnull(strstr(spapr, "vfio-no-msix-emulation"));

    in = input(s, VFIO_MSIX_RELOCATION_OFF, 0, 65);
    g_assert_true(decide(&in, &d, &off));
    g_assert_false(d.relocated);
    g_assert_cmpstr(off, ==,
                    "MSI-X table kept in place (x-msix-relocation=off)");
}

/*
 * The PBA decides too, when it is always shown (x-lazy-pba=off): the
 * registers before it on its page trap only because of it.  A lazy PBA
 * leaves its page mapped: nothing to gain.
 */
static void test_helpful_pba_page(void)
{
    VFIOMsixRelocSlot s[PCI_ROM_SLOT];
    VFIOMsixRelocInput in;
    VFIOMsixRelocDecision d;
    g_autofree char *lazy = NULL;

    nvme_like(s);
    in = input(s, VFIO_MSIX_RELOCATION_WHERE_HELPFUL, 0, 65);
    in.table_offset = 0x2000;           /* a page of its own */
    in.pba_offset = 0x3800;             /* registers at 0x3000..0x37ff */
    g_assert_true(decide(&in, &d, &lazy));
    g_assert_false(d.relocated);
    in.bar_plans[0].lazy_pba = false;
    g_assert_true(vfio_msix_relocation_decide(&in, &d, &error_abort));
    g_assert_true(d.relocated);
    g_assert_cmpuint(d.gain_bar, ==, 0);
    g_assert_cmphex(d.gain_page, ==, 0x3000);
    g_assert_cmphex(d.gain_bytes, ==, 0x800);
    vfio_msix_relocation_decision_clear(&d);

    /* The same PBA in a BAR of its own: that BAR's plan is asked. */
    s[2] = (VFIOMsixRelocSlot) { .size = 16 * KiB };
    in = input(s, VFIO_MSIX_RELOCATION_WHERE_HELPFUL, 0, 65);
    in.table_offset = 0x2000;
    in.pba_bar = 2;
    in.pba_offset = 0x800;
    in.bar_plans[2].lazy_pba = false;
    g_assert_true(vfio_msix_relocation_decide(&in, &d, &error_abort));
    g_assert_true(d.relocated);
    g_assert_cmpuint(d.gain_bar, ==, 2);
    g_assert_cmphex(d.gain_page, ==, 0);
    g_assert_cmpuint(d.bar, ==, 3);
    vfio_msix_relocation_decision_clear(&d);
}

/* The default wants to move the table and cannot: it says so, no error. */
static void test_helpful_but_impossible(void)
{
    VFIOMsixRelocSlot s[PCI_ROM_SLOT];
    VFIOMsixRelocInput in;
    VFIOMsixRelocDecision d;
    g_autofree char *msg = NULL;

    /* No free slot, and a 2 GiB 32-bit BAR cannot double. */
    all_full(s, 2 * GiB);
    in = input(s, VFIO_MSIX_RELOCATION_WHERE_HELPFUL, 0, 65);
    g_assert_true(vfio_msix_relocation_decide(&in, &d, &error_abort));
    g_assert_false(d.relocated);
    g_assert_true(d.impossible);
    g_assert_true(d.notable);
    g_assert_nonnull(strstr(d.explanation, "kept on BAR0 page 0x1000"));
    g_assert_nonnull(strstr(d.explanation, "2 GiB"));
    vfio_msix_relocation_decision_clear(&d);
    /* auto, told the same, refuses to realize. */
    in.mode = VFIO_MSIX_RELOCATION_AUTO;
    g_assert_false(decide(&in, &d, &msg));
    g_assert_nonnull(strstr(msg, "no free BAR slot"));
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
    g_test_add_func("/vfio/msix-relocation/where-helpful/doorbell-page",
                    test_helpful_doorbell_page);
    g_test_add_func("/vfio/msix-relocation/where-helpful/keeps-table",
                    test_helpful_keeps_table);
    g_test_add_func("/vfio/msix-relocation/where-helpful/pba-page",
                    test_helpful_pba_page);
    g_test_add_func("/vfio/msix-relocation/where-helpful/impossible",
                    test_helpful_but_impossible);
    return g_test_run();
}
