/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Region-info capability chains: valid chains parse, every kind of
 * malformation is an error (never a crash, hang or out-of-bounds read;
 * run under ASan to see the latter).
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/vfio-region-info.h"

#define HDR sizeof(struct vfio_region_info)     /* first capability offset */

static struct vfio_info_cap_header *cap_hdr(struct vfio_region_info *info,
                                            size_t off)
{
    return (struct vfio_info_cap_header *)((uint8_t *)info + off);
}

static void assert_parse_fails(struct vfio_region_info *info, size_t len,
                               const char *needle)
{
    VFIORegionCaps caps;
    Error *err = NULL;

    g_assert_false(vfio_region_info_check(info, len, &err));
    g_assert_nonnull(err);
    if (needle && !strstr(error_get_pretty(err), needle)) {
        g_error("error '%s' does not mention '%s'", error_get_pretty(err),
                needle);
    }
    error_free(err);
    err = NULL;
    caps.nr_sparse_areas = 77;
    g_assert_false(vfio_region_info_parse_caps(info, len, &caps, &err));
    g_assert_nonnull(err);
    g_assert_cmpuint(caps.nr_sparse_areas, ==, 0);
    g_assert_null(caps.sparse_areas);
    error_free(err);
}

/* sparse (2 areas) at 32, type at 80, msix-mappable at 96; len 104 */
static struct vfio_region_info *build_full(size_t *len)
{
    static const VFIOSparseArea areas[] = {
        { 0x0, 0x1000 }, { 0x2000, 0x2000 },
    };
    VFIORegionInfoBuilder *b =
        vfio_region_info_builder_new(0, VFIO_REGION_INFO_FLAG_READ |
                                     VFIO_REGION_INFO_FLAG_WRITE |
                                     VFIO_REGION_INFO_FLAG_MMAP,
                                     0x4000, 0x10000000000ULL);

    vfio_region_info_builder_add_sparse(b, areas, ARRAY_SIZE(areas));
    vfio_region_info_builder_add_type(b, 0x80008086, 3);
    vfio_region_info_builder_add_msix_mappable(b);
    return vfio_region_info_builder_finish(b, len);
}

static void test_no_caps(void)
{
    g_autoptr(VFIORegionInfoBuilder) b =
        vfio_region_info_builder_new(2, VFIO_REGION_INFO_FLAG_MMAP, 0x1000, 0);
    g_autofree struct vfio_region_info *info = NULL;
    const struct vfio_info_cap_header *cap = (void *)1;
    VFIORegionCaps caps;
    size_t len;

    info = vfio_region_info_builder_finish(g_steal_pointer(&b), &len);
    g_assert_cmpuint(len, ==, HDR);
    g_assert_cmpuint(info->argsz, ==, HDR);
    g_assert_false(info->flags & VFIO_REGION_INFO_FLAG_CAPS);
    g_assert_true(vfio_region_info_check(info, len, &error_abort));
    g_assert_true(vfio_region_info_find_cap(info, len,
                                            VFIO_REGION_INFO_CAP_SPARSE_MMAP,
                                            &cap, &error_abort));
    g_assert_null(cap);
    g_assert_true(vfio_region_info_parse_caps(info, len, &caps,
                                              &error_abort));
    g_assert_false(caps.has_sparse);
    g_assert_false(caps.has_type);
    g_assert_false(caps.msix_mappable);

    /* Without the CAPS flag a stray cap_offset is not followed. */
    info->cap_offset = 0xdead;
    g_assert_true(vfio_region_info_check(info, len, &error_abort));
    /* With the flag and offset 0, the chain is empty. */
    info->cap_offset = 0;
    info->flags |= VFIO_REGION_INFO_FLAG_CAPS;
    g_assert_true(vfio_region_info_check(info, len, &error_abort));
}

static void test_valid_chain(void)
{
    size_t len;
    g_autofree struct vfio_region_info *info = build_full(&len);
    const struct vfio_info_cap_header *cap;
    VFIORegionCaps caps;
    uint32_t type = 0, subtype = 0;
    bool found;

    g_assert_cmpuint(len, ==, 104);
    g_assert_true(info->flags & VFIO_REGION_INFO_FLAG_CAPS);
    g_assert_cmpuint(info->cap_offset, ==, HDR);
    g_assert_cmpuint(info->size, ==, 0x4000);
    g_assert_true(vfio_region_info_check(info, len, &error_abort));

    g_assert_true(vfio_region_info_find_cap(info, len,
                                            VFIO_REGION_INFO_CAP_TYPE,
                                            &cap, &error_abort));
    g_assert_nonnull(cap);
    g_assert_cmpuint((uint8_t *)cap - (uint8_t *)info, ==, 80);
    g_assert_cmpuint(cap->version, ==, 1);
    g_assert_true(vfio_region_info_get_type(info, len, &found, &type,
                                            &subtype, &error_abort));
    g_assert_true(found);
    g_assert_cmphex(type, ==, 0x80008086);
    g_assert_cmpuint(subtype, ==, 3);

    g_assert_true(vfio_region_info_parse_caps(info, len, &caps,
                                              &error_abort));
    g_assert_true(caps.has_sparse);
    g_assert_cmpuint(caps.nr_sparse_areas, ==, 2);
    g_assert_cmphex(caps.sparse_areas[0].offset, ==, 0);
    g_assert_cmphex(caps.sparse_areas[0].size, ==, 0x1000);
    g_assert_cmphex(caps.sparse_areas[1].offset, ==, 0x2000);
    g_assert_cmphex(caps.sparse_areas[1].size, ==, 0x2000);
    g_assert_true(caps.has_type);
    g_assert_true(caps.msix_mappable);
    vfio_region_caps_clear(&caps);
    g_assert_null(caps.sparse_areas);
    g_assert_false(caps.msix_mappable);

    /* A capability id that is not in the chain. */
    g_assert_true(vfio_region_info_find_cap(info, len, 42, &cap,
                                            &error_abort));
    g_assert_null(cap);
}

static void test_unknown_and_duplicate_caps(void)
{
    static const uint8_t blob[12] = { 1, 2, 3 };
    VFIORegionInfoBuilder *b =
        vfio_region_info_builder_new(0, VFIO_REGION_INFO_FLAG_MMAP, 0x1000, 0);
    g_autofree struct vfio_region_info *info = NULL;
    VFIORegionCaps caps;
    size_t len;

    vfio_region_info_builder_add_raw(b, 99, 7, blob, sizeof(blob));
    vfio_region_info_builder_add_type(b, 1, 2);
    vfio_region_info_builder_add_type(b, 5, 6);
    vfio_region_info_builder_add_sparse(b, NULL, 0);
    info = vfio_region_info_builder_finish(b, &len);

    g_assert_true(vfio_region_info_parse_caps(info, len, &caps,
                                              &error_abort));
    /* The unknown capability is skipped, the first TYPE wins. */
    g_assert_true(caps.has_type);
    g_assert_cmpuint(caps.type, ==, 1);
    g_assert_cmpuint(caps.subtype, ==, 2);
    /* A sparse capability with no areas: nothing may be mmapped. */
    g_assert_true(caps.has_sparse);
    g_assert_cmpuint(caps.nr_sparse_areas, ==, 0);
    g_assert_null(caps.sparse_areas);
    g_assert_false(caps.msix_mappable);
    vfio_region_caps_clear(&caps);
}

static void test_short_buffer(void)
{
    size_t len;
    g_autofree struct vfio_region_info *info = build_full(&len);
    const struct vfio_info_cap_header *cap;
    Error *err = NULL;

    assert_parse_fails(info, HDR - 1, "truncated");
    g_assert_false(vfio_region_info_find_cap(info, 0, 1, &cap, &err));
    error_free_or_abort(&err);
}

static void test_argsz_too_small(void)
{
    size_t len;
    g_autofree struct vfio_region_info *info = build_full(&len);

    info->argsz = HDR - 4;
    assert_parse_fails(info, len, "argsz");
}

static void test_offset_in_header(void)
{
    size_t len;
    g_autofree struct vfio_region_info *info = build_full(&len);

    info->cap_offset = 8;
    assert_parse_fails(info, len, "overlaps the info header");
}

static void test_offset_unaligned(void)
{
    size_t len;
    g_autofree struct vfio_region_info *info = build_full(&len);

    info->cap_offset = HDR + 4;
    assert_parse_fails(info, len, "aligned");
    /* An unaligned "next" too. */
    info->cap_offset = HDR;
    cap_hdr(info, 80)->next = 97;
    assert_parse_fails(info, len, "aligned");
}

static void test_offset_outside_argsz(void)
{
    size_t len;
    g_autofree struct vfio_region_info *info = build_full(&len);

    /* The bytes are there, but argsz says the chain ends before them. */
    info->argsz = 96;
    assert_parse_fails(info, len, "outside");
    info->argsz = len;
    info->cap_offset = 0xfffffff8;
    assert_parse_fails(info, len, "outside");
}

static void test_offset_outside_buffer(void)
{
    size_t len;
    g_autofree struct vfio_region_info *info = build_full(&len);

    /* argsz claims more than the caller holds: bound by what is held. */
    info->argsz = 4096;
    assert_parse_fails(info, 96, "outside");
    g_assert_true(vfio_region_info_check(info, len, &error_abort));
}

/*
 * What the kernel and libvfu answer a buffer too small for the chain: the
 * size needed in argsz and no chain.  Valid; a reply that keeps pointing
 * at a chain it did not send is not.
 */
static void test_needed_size_reply(void)
{
    size_t len;
    g_autofree struct vfio_region_info *info = build_full(&len);
    const struct vfio_info_cap_header *cap;

    info->flags &= ~VFIO_REGION_INFO_FLAG_CAPS;
    info->cap_offset = 0;
    g_assert_true(vfio_region_info_check(info, HDR, &error_abort));
    g_assert_true(vfio_region_info_find_cap(info, HDR,
                                            VFIO_REGION_INFO_CAP_SPARSE_MMAP,
                                            &cap, &error_abort));
    g_assert_null(cap);
    info->flags |= VFIO_REGION_INFO_FLAG_CAPS;
    info->cap_offset = HDR;
    assert_parse_fails(info, HDR, "outside");
}

/* The builder's chain is what the checker demands: 8-byte aligned. */
static void test_builder_alignment(void)
{
    static const uint8_t odd[5] = { 1, 2, 3, 4, 5 };
    VFIORegionInfoBuilder *b = vfio_region_info_builder_new(0, 0, 0x1000, 0);
    g_autofree struct vfio_region_info *info = NULL;
    size_t len;

    vfio_region_info_builder_add_raw(b, 0x7777, 1, odd, sizeof(odd));
    vfio_region_info_builder_add_msix_mappable(b);
    info = vfio_region_info_builder_finish(b, &len);
    g_assert_cmpuint(info->cap_offset % 8, ==, 0);
    g_assert_cmpuint(cap_hdr(info, info->cap_offset)->next % 8, ==, 0);
    g_assert_true(vfio_region_info_check(info, len, &error_abort));
    /* The same chain 4-aligned, as a lax peer might send it, is refused. */
    cap_hdr(info, info->cap_offset)->next -= 4;
    memmove((uint8_t *)info + len - 12, (uint8_t *)info + len - 8, 8);
    assert_parse_fails(info, len - 4, "aligned");
}

static void test_bad_tail(void)
{
    size_t len;
    g_autofree struct vfio_region_info *info = build_full(&len);
    const struct vfio_info_cap_header *cap;

    /* Every known capability is fine; the link after the last is not. */
    cap_hdr(info, 96)->next = 0x1000;
    assert_parse_fails(info, len, "outside");
    g_assert_true(vfio_region_info_find_cap(info, len,
                                            VFIO_REGION_INFO_CAP_MSIX_MAPPABLE,
                                            &cap, &error_abort));
    g_assert_nonnull(cap);
}

static void test_loop(void)
{
    size_t len;
    g_autofree struct vfio_region_info *info = build_full(&len);
    const struct vfio_info_cap_header *cap;

    cap_hdr(info, 96)->next = HDR;              /* last -> first */
    assert_parse_fails(info, len, "loop");
    /* Capabilities before the bad link are still found. */
    g_assert_true(vfio_region_info_find_cap(info, len,
                                            VFIO_REGION_INFO_CAP_TYPE, &cap,
                                            &error_abort));
    g_assert_nonnull(cap);

    cap_hdr(info, 96)->next = 96;               /* self loop */
    assert_parse_fails(info, len, "loop");
}

static void test_truncated_entries(void)
{
    size_t len;
    g_autofree struct vfio_region_info *info = build_full(&len);

    /* The MSIX_MAPPABLE header (8 bytes at 96) cut short. */
    assert_parse_fails(info, len - 1, "outside");
    /* The TYPE body (16 bytes at 80) cut short by argsz. */
    info->argsz = 88;
    assert_parse_fails(info, len, "truncated");
    /* A TYPE body overlapped by the next capability. */
    info->argsz = len;
    cap_hdr(info, 80)->next = 88;
    assert_parse_fails(info, len, "overlaps the next");
}

static void test_sparse_nr_areas_overflow(void)
{
    size_t len;
    g_autofree struct vfio_region_info *info = build_full(&len);
    struct vfio_region_info_cap_sparse_mmap *sparse = (void *)cap_hdr(info,
                                                                      HDR);

    sparse->nr_areas = UINT32_MAX;
    assert_parse_fails(info, len, "areas");
    /* One more area than fits before the next capability (at 80). */
    sparse->nr_areas = 3;
    assert_parse_fails(info, len, "areas");
    /* The last capability may use the rest of the buffer, no more. */
    sparse->nr_areas = 2;
    g_assert_true(vfio_region_info_check(info, len, &error_abort));
    sparse->header.next = 0;
    sparse->nr_areas = 4;           /* (104 - 48) / 16 = 3 fit */
    assert_parse_fails(info, len, "areas");
    sparse->nr_areas = 3;
    sparse->areas[2].offset = 0x3000;
    sparse->areas[2].size = 0x1000;
    g_assert_true(vfio_region_info_check(info, len, &error_abort));
}

static void test_sparse_area_outside_region(void)
{
    size_t len;
    g_autofree struct vfio_region_info *info = build_full(&len);
    struct vfio_region_info_cap_sparse_mmap *sparse = (void *)cap_hdr(info,
                                                                      HDR);

    sparse->areas[1].size = 0x2001;             /* ends past 0x4000 */
    assert_parse_fails(info, len, "outside the 0x4000-byte region");
    sparse->areas[1].offset = UINT64_MAX - 0xfff;   /* wraps */
    sparse->areas[1].size = 0x2000;
    assert_parse_fails(info, len, "outside");
}

/*
 * Random corruption of a valid buffer: whatever the bytes, the walker
 * returns (no crash or hang, ASan-clean) and a chain it accepts parses
 * into areas inside the region.
 */
static void test_random_corruption(void)
{
    size_t len;
    g_autofree struct vfio_region_info *orig = build_full(&len);
    int iter, accepted = 0, rejected = 0;

    for (iter = 0; iter < 20000; iter++) {
        g_autofree struct vfio_region_info *info = g_memdup2(orig, len);
        size_t held = g_test_rand_int_range(0, len + 1);
        int flips = g_test_rand_int_range(1, 4);
        VFIORegionCaps caps;
        Error *err = NULL;
        uint32_t i;

        while (flips--) {
            ((uint8_t *)info)[g_test_rand_int_range(0, len)] =
                g_test_rand_int_range(0, 256);
        }
        if (g_test_rand_bit()) {
            held = len;
        }
        if (vfio_region_info_parse_caps(info, held, &caps, &err)) {
            g_assert_null(err);
            g_assert_true(vfio_region_info_check(info, held, &error_abort));
            for (i = 0; i < caps.nr_sparse_areas; i++) {
                g_assert_cmpuint(caps.sparse_areas[i].offset, <=, info->size);
                g_assert_cmpuint(caps.sparse_areas[i].size, <=,
                                 info->size - caps.sparse_areas[i].offset);
            }
            g_assert_true(caps.nr_sparse_areas == 0 || caps.has_sparse);
            vfio_region_caps_clear(&caps);
            accepted++;
        } else {
            g_assert_nonnull(err);
            g_assert_false(vfio_region_info_check(info, held, NULL));
            error_free(err);
            rejected++;
        }
    }
    /* Both outcomes must have been exercised for the test to mean much. */
    g_assert_cmpint(accepted, >, 100);
    g_assert_cmpint(rejected, >, 100);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vfio/region-info/no-caps", test_no_caps);
    g_test_add_func("/vfio/region-info/valid-chain", test_valid_chain);
    g_test_add_func("/vfio/region-info/needed-size-reply",
                    test_needed_size_reply);
    g_test_add_func("/vfio/region-info/builder-8-byte-aligned",
                    test_builder_alignment);
    g_test_add_func("/vfio/region-info/unknown-and-duplicate",
                    test_unknown_and_duplicate_caps);
    g_test_add_func("/vfio/region-info/malformed/short-buffer",
                    test_short_buffer);
    g_test_add_func("/vfio/region-info/malformed/argsz-too-small",
                    test_argsz_too_small);
    g_test_add_func("/vfio/region-info/malformed/offset-in-header",
                    test_offset_in_header);
    g_test_add_func("/vfio/region-info/malformed/offset-unaligned",
                    test_offset_unaligned);
    g_test_add_func("/vfio/region-info/malformed/offset-outside-argsz",
                    test_offset_outside_argsz);
    g_test_add_func("/vfio/region-info/malformed/offset-outside-buffer",
                    test_offset_outside_buffer);
    g_test_add_func("/vfio/region-info/malformed/loop", test_loop);
    g_test_add_func("/vfio/region-info/malformed/bad-tail-after-known-caps",
                    test_bad_tail);
    g_test_add_func("/vfio/region-info/malformed/truncated-entries",
                    test_truncated_entries);
    g_test_add_func("/vfio/region-info/malformed/sparse-nr-areas-overflow",
                    test_sparse_nr_areas_overflow);
    g_test_add_func("/vfio/region-info/malformed/sparse-area-outside-region",
                    test_sparse_area_outside_region);
    g_test_add_func("/vfio/region-info/random-corruption",
                    test_random_corruption);
    return g_test_run();
}
