/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user codecs: every decoder with valid and malformed input.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "vfio-user/protocol.h"

/* ---- header ---- */

static void test_hdr_valid(void)
{
    VFIOUserHdr h;

    vfio_user_hdr_init(&h, 7, VFIO_USER_DMA_MAP, 16 + 32, 0);
    g_assert_true(vfio_user_hdr_validate(&h, 32, &error_abort));
    h.flags = VFIO_USER_F_TYPE_REPLY | VFIO_USER_F_ERROR;
    g_assert_true(vfio_user_hdr_validate(&h, 32, &error_abort));
    g_assert_cmpstr(vfio_user_command_name(VFIO_USER_DMA_MAP), ==,
                    "DMA_MAP");
    g_assert_cmpstr(vfio_user_command_name(14), ==, "UNKNOWN");
    g_assert_cmpstr(vfio_user_command_name(0xffff), ==, "UNKNOWN");
}

static void test_hdr_malformed(void)
{
    VFIOUserHdr h;
    Error *err = NULL;

    vfio_user_hdr_init(&h, 1, VFIO_USER_VERSION, 15, 0);
    g_assert_false(vfio_user_hdr_validate(&h, 64, &err));
    error_free_or_abort(&err);

    vfio_user_hdr_init(&h, 1, VFIO_USER_VERSION, 16 + 65, 0);
    g_assert_false(vfio_user_hdr_validate(&h, 64, &err));
    error_free_or_abort(&err);

    vfio_user_hdr_init(&h, 1, VFIO_USER_VERSION, UINT32_MAX, 0);
    g_assert_false(vfio_user_hdr_validate(&h, 64, &err));
    error_free_or_abort(&err);

    vfio_user_hdr_init(&h, 1, VFIO_USER_VERSION, 16, 2);
    g_assert_false(vfio_user_hdr_validate(&h, 64, &err));
    error_free_or_abort(&err);

    vfio_user_hdr_init(&h, 1, VFIO_USER_VERSION, 16, 1u << 6);
    g_assert_false(vfio_user_hdr_validate(&h, 64, &err));
    error_free_or_abort(&err);
}

/* ---- VERSION ---- */

static bool parse_json(const char *json, VFIOUserCaps *caps, Error **errp)
{
    size_t jlen = strlen(json) + 1;
    g_autofree uint8_t *buf = g_malloc0(4 + jlen);
    uint16_t major, minor;

    stw_le_p(buf, 0);
    stw_le_p(buf + 2, 1);
    memcpy(buf + 4, json, jlen);
    return vfio_user_version_parse(buf, 4 + jlen, &major, &minor, caps, errp);
}

static void test_version_roundtrip(void)
{
    VFIOUserCaps in = {
        .max_msg_fds = 5, .max_data_xfer_size = 65536,
        .max_dma_maps = 100, .pgsizes = 4096 | 2 * 1024 * 1024,
    };
    VFIOUserCaps out;
    uint16_t major, minor;
    size_t len;
    g_autofree void *p = vfio_user_version_build(0, 1, &in, &len);

    g_assert_true(vfio_user_version_parse(p, len, &major, &minor, &out,
                                          &error_abort));
    g_assert_cmpint(major, ==, 0);
    g_assert_cmpint(minor, ==, 1);
    g_assert_cmpuint(out.max_msg_fds, ==, 5);
    g_assert_cmpuint(out.max_data_xfer_size, ==, 65536);
    g_assert_cmpuint(out.max_dma_maps, ==, 100);
    g_assert_cmpuint(out.pgsizes, ==, 4096 | 2 * 1024 * 1024);
}

static void test_version_defaults(void)
{
    uint8_t bare[4] = { 0, 0, 3, 0 };
    VFIOUserCaps caps;
    uint16_t major, minor;

    g_assert_true(vfio_user_version_parse(bare, 4, &major, &minor, &caps,
                                          &error_abort));
    g_assert_cmpint(minor, ==, 3);
    g_assert_cmpuint(caps.max_msg_fds, ==, VFIO_USER_DEF_MAX_FDS);
    g_assert_cmpuint(caps.max_data_xfer_size, ==,
                     VFIO_USER_DEF_MAX_DATA_XFER);
    g_assert_cmpuint(caps.max_dma_maps, ==, VFIO_USER_DEF_MAX_DMA_MAPS);
    g_assert_cmpuint(caps.pgsizes, ==, VFIO_USER_DEF_PGSIZES);

    /* Only some keys: the others keep their defaults; unknown ignored. */
    g_assert_true(parse_json("{\"capabilities\":{\"max_msg_fds\":3,"
                             "\"twin_socket\":{\"supported\":false},"
                             "\"migration\":{\"pgsize\":4096}}}",
                             &caps, &error_abort));
    g_assert_cmpuint(caps.max_msg_fds, ==, 3);
    g_assert_cmpuint(caps.max_data_xfer_size, ==,
                     VFIO_USER_DEF_MAX_DATA_XFER);
    g_assert_true(parse_json("{}", &caps, &error_abort));
    g_assert_true(parse_json("", &caps, &error_abort));

    /* Huge values are clamped to our ceilings, not trusted. */
    g_assert_true(parse_json("{\"capabilities\":{\"max_msg_fds\":100000,"
                             "\"max_data_xfer_size\":1099511627776}}",
                             &caps, &error_abort));
    g_assert_cmpuint(caps.max_msg_fds, ==, VFIO_USER_LIMIT_MAX_FDS);
    g_assert_cmpuint(caps.max_data_xfer_size, ==,
                     VFIO_USER_LIMIT_MAX_DATA_XFER);
}

static void test_version_malformed(void)
{
    static const char *const bad[] = {
        "{",
        "[1,2]",
        "42",
        "{\"capabilities\":7}",
        "{\"capabilities\":{\"max_msg_fds\":\"8\"}}",
        "{\"capabilities\":{\"max_msg_fds\":1.5}}",
        "{\"capabilities\":{\"max_msg_fds\":0}}",
        "{\"capabilities\":{\"max_data_xfer_size\":-4096}}",
        "{\"capabilities\":{\"pgsizes\":true}}",
        "{\"capabilities\":{\"max_dma_maps\":null}}",
    };
    VFIOUserCaps caps;
    uint16_t major, minor;
    Error *err = NULL;

    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        g_assert_false(parse_json(bad[i], &caps, &err));
        error_free_or_abort(&err);
    }

    /* Short payload. */
    g_assert_false(vfio_user_version_parse("\0\0", 2, &major, &minor, &caps,
                                           &err));
    error_free_or_abort(&err);
    /* Missing terminating NUL. */
    {
        uint8_t buf[6] = { 0, 0, 1, 0, '{', '}' };

        g_assert_false(vfio_user_version_parse(buf, sizeof(buf), &major,
                                               &minor, &caps, &err));
        error_free_or_abort(&err);
    }
    /* Embedded NUL: the string is shorter than the payload says. */
    {
        uint8_t buf[8] = { 0, 0, 1, 0, '{', '}', 0, 0 };

        g_assert_false(vfio_user_version_parse(buf, sizeof(buf), &major,
                                               &minor, &caps, &err));
        error_free_or_abort(&err);
    }
    /* Oversized JSON. */
    {
        size_t n = VFIO_USER_LIMIT_VERSION_JSON + 10;
        g_autofree char *json = g_malloc(n + 1);

        memset(json, ' ', n);
        json[0] = '{';
        json[n - 1] = '}';
        json[n] = 0;
        g_assert_false(parse_json(json, &caps, &err));
        error_free_or_abort(&err);
    }
}

static void test_caps_negotiate(void)
{
    VFIOUserCaps a = { 8, 1 << 20, 1000, 4096 | 65536 };
    VFIOUserCaps b = { 2, 1 << 16, 5000, 4096 };
    VFIOUserCaps c = { 2, 1 << 16, 5000, 0 };
    VFIOUserCaps out;
    Error *err = NULL;

    g_assert_true(vfio_user_caps_negotiate(&a, &b, &out, &error_abort));
    g_assert_cmpuint(out.max_msg_fds, ==, 2);
    g_assert_cmpuint(out.max_data_xfer_size, ==, 1 << 16);
    g_assert_cmpuint(out.max_dma_maps, ==, 1000);
    g_assert_cmpuint(out.pgsizes, ==, 4096);
    g_assert_false(vfio_user_caps_negotiate(&a, &c, &out, &err));
    error_free_or_abort(&err);
}

/*
 * A client on a 64 KiB-page host (POWER) names 64 KiB; a server that maps
 * in 4 KiB pages handles 64 KiB-aligned maps as well: they agree on
 * 64 KiB.  Requiring a common bit refused every such pair.
 */
static void test_pgsizes_negotiate(void)
{
    const uint64_t k4 = 4096, k64 = 65536, m2 = 2 * 1024 * 1024;

    g_assert_cmphex(vfio_user_pgsizes_negotiate(k64, k4), ==, k64);
    g_assert_cmphex(vfio_user_pgsizes_negotiate(k4, k64), ==, k64);
    g_assert_cmphex(vfio_user_pgsizes_negotiate(k4 | k64, k4), ==, k4);
    g_assert_cmphex(vfio_user_pgsizes_negotiate(k4 | m2, k4 | k64 | m2), ==,
                    k4 | m2);
    g_assert_cmphex(vfio_user_pgsizes_negotiate(k64 | m2, k4 | m2), ==,
                    k64 | m2);
    g_assert_cmphex(vfio_user_pgsizes_negotiate(k64 * 2, k4 | k64), ==,
                    k64 * 2);
    g_assert_cmphex(vfio_user_pgsizes_negotiate(0, k4), ==, 0);
    g_assert_cmphex(vfio_user_pgsizes_negotiate(k4, 0), ==, 0);
}

/* ---- DMA map / unmap ---- */

static VFIOUserDMAMap good_map(void)
{
    return (VFIOUserDMAMap) {
        .argsz = 32, .flags = VFIO_USER_DMA_MAP_FLAG_READ |
                              VFIO_USER_DMA_MAP_FLAG_WRITE,
        .offset = 0x1000, .address = 0x100000, .size = 0x10000,
    };
}

static void expect_map_fail(VFIOUserDMAMap m, size_t len, size_t nfds,
                            int want_errno)
{
    VFIOUserDMAMap out;
    uint8_t buf[64] = { 0 };
    Error *err = NULL;
    int e = 0;

    memcpy(buf, &m, sizeof(m));
    g_assert_false(vfio_user_dma_map_decode(buf, len, nfds, &out, &e, &err));
    g_assert_cmpint(e, ==, want_errno);
    error_free_or_abort(&err);
}

static void test_dma_map(void)
{
    VFIOUserDMAMap m = good_map(), out;

    g_assert_true(vfio_user_dma_map_decode(&m, sizeof(m), 1, &out, NULL,
                                           &error_abort));
    g_assert_cmpuint(out.address, ==, 0x100000);
    g_assert_cmpuint(out.offset, ==, 0x1000);
    g_assert_true(vfio_user_dma_map_decode(&m, sizeof(m), 0, &out, NULL,
                                           &error_abort));
    /* A range ending exactly at the top of the address space is fine. */
    m.address = UINT64_MAX - 0xffff;
    g_assert_true(vfio_user_dma_map_decode(&m, sizeof(m), 0, &out, NULL,
                                           &error_abort));

    expect_map_fail(good_map(), 31, 1, EINVAL);
    expect_map_fail(good_map(), 33, 1, EINVAL);
    m = good_map();
    m.argsz = 40;
    expect_map_fail(m, 32, 1, EINVAL);
    m = good_map();
    m.flags = 4;
    expect_map_fail(m, 32, 1, EINVAL);
    m = good_map();
    m.size = 0;
    expect_map_fail(m, 32, 1, EINVAL);
    m = good_map();
    m.address = UINT64_MAX - 0xfff;
    expect_map_fail(m, 32, 0, EINVAL);
    expect_map_fail(good_map(), 32, 2, EINVAL);
    m = good_map();
    m.offset = UINT64_MAX - 0x100;
    expect_map_fail(m, 32, 1, EINVAL);
}

static void expect_unmap(VFIOUserDMAUnmap u, size_t nfds, int want_errno)
{
    VFIOUserDMAUnmap out;
    Error *err = NULL;
    int e = 0;
    bool ok = vfio_user_dma_unmap_decode(&u, sizeof(u), nfds, &out, &e,
                                         &err);

    if (!want_errno) {
        g_assert_true(ok);
        g_assert_null(err);
        g_assert_cmpuint(out.address, ==, u.address);
    } else {
        g_assert_false(ok);
        g_assert_cmpint(e, ==, want_errno);
        error_free_or_abort(&err);
    }
}

static void test_dma_unmap(void)
{
    VFIOUserDMAUnmap u = { 24, 0, 0x100000, 0x10000 };
    VFIOUserDMAUnmap out;
    Error *err = NULL;

    expect_unmap(u, 0, 0);
    expect_unmap(u, 1, EINVAL);
    expect_unmap((VFIOUserDMAUnmap) { 24, VFIO_DMA_UNMAP_FLAG_ALL, 0, 0 },
                 0, 0);
    expect_unmap((VFIOUserDMAUnmap) { 24, VFIO_DMA_UNMAP_FLAG_ALL, 0, 1 },
                 0, EINVAL);
    expect_unmap((VFIOUserDMAUnmap) { 24,
                 VFIO_DMA_UNMAP_FLAG_GET_DIRTY_BITMAP, 0x1000, 0x1000 },
                 0, ENOTSUP);
    expect_unmap((VFIOUserDMAUnmap) { 24, 1u << 7, 0x1000, 0x1000 },
                 0, EINVAL);
    expect_unmap((VFIOUserDMAUnmap) { 24, 0, 0x1000, 0 }, 0, EINVAL);
    expect_unmap((VFIOUserDMAUnmap) { 24, 0, UINT64_MAX, 2 }, 0, EINVAL);
    expect_unmap((VFIOUserDMAUnmap) { 8, 0, 0x1000, 0x1000 }, 0, EINVAL);
    g_assert_false(vfio_user_dma_unmap_decode(&u, 16, 0, &out, NULL, &err));
    error_free_or_abort(&err);
}

static void test_ranges_overlap(void)
{
    g_assert_true(vfio_user_ranges_overlap(0x1000, 0x1000, 0x1fff, 1));
    g_assert_false(vfio_user_ranges_overlap(0x1000, 0x1000, 0x2000, 1));
    g_assert_false(vfio_user_ranges_overlap(0x2000, 1, 0x1000, 0x1000));
    g_assert_true(vfio_user_ranges_overlap(0, UINT64_MAX, UINT64_MAX - 1, 1));
    g_assert_true(vfio_user_ranges_overlap(UINT64_MAX - 0xfff, 0x1000,
                                           UINT64_MAX, 1));
    g_assert_true(vfio_user_ranges_overlap(0x3000, 0x100, 0x1000, 0x10000));
    g_assert_false(vfio_user_ranges_overlap(0x1000, 0, 0x1000, 0x1000));
}

/* ---- region / DMA read-write ---- */

static void test_region_rw(void)
{
    uint8_t buf[16 + 8] = { 0 };
    VFIOUserRegionRW *rw = (VFIOUserRegionRW *)buf;
    const VFIOUserRegionRW *out;
    Error *err = NULL;
    int e = 0;

    rw->offset = 0x10;
    rw->region = 0;
    rw->count = 8;
    g_assert_true(vfio_user_region_rw_decode(buf, 16, false, 4096, 0, &out,
                                             NULL, &error_abort));
    g_assert_true(out == rw);
    g_assert_true(vfio_user_region_rw_decode(buf, 24, true, 4096, 0, &out,
                                             NULL, &error_abort));
    /* Write whose data is shorter/longer than count. */
    g_assert_false(vfio_user_region_rw_decode(buf, 23, true, 4096, 0, &out,
                                              &e, &err));
    g_assert_cmpint(e, ==, EINVAL);
    error_free_or_abort(&err);
    /* Read carrying data. */
    g_assert_false(vfio_user_region_rw_decode(buf, 24, false, 4096, 0, &out,
                                              &e, &err));
    error_free_or_abort(&err);
    /* Short. */
    g_assert_false(vfio_user_region_rw_decode(buf, 12, false, 4096, 0, &out,
                                              &e, &err));
    error_free_or_abort(&err);
    /* fds are never expected. */
    g_assert_false(vfio_user_region_rw_decode(buf, 16, false, 4096, 1, &out,
                                              &e, &err));
    error_free_or_abort(&err);
    /* Count above max_data_xfer_size. */
    rw->count = 4097;
    g_assert_false(vfio_user_region_rw_decode(buf, 16, false, 4096, 0, &out,
                                              &e, &err));
    g_assert_cmpint(e, ==, E2BIG);
    error_free_or_abort(&err);
    /* Zero count. */
    rw->count = 0;
    g_assert_false(vfio_user_region_rw_decode(buf, 16, false, 4096, 0, &out,
                                              &e, &err));
    error_free_or_abort(&err);

    /* Replies must echo the request. */
    rw->count = 8;
    g_assert_true(vfio_user_region_rw_reply_check(buf, 24, false, 0, 0x10, 8,
                                                  &error_abort));
    g_assert_true(vfio_user_region_rw_reply_check(buf, 16, true, 0, 0x10, 8,
                                                  &error_abort));
    g_assert_false(vfio_user_region_rw_reply_check(buf, 16, false, 0, 0x10,
                                                   8, &err));
    error_free_or_abort(&err);
    g_assert_false(vfio_user_region_rw_reply_check(buf, 24, false, 1, 0x10,
                                                   8, &err));
    error_free_or_abort(&err);
}

/*
 * A read reply for count 2^64 - 16 "expects" 16 + count == 0 bytes: an
 * empty payload must not pass, or the fields are read past the buffer.
 * Found by fuzz-vfio-user-codec.
 */
static void test_dma_rw_reply_count_wrap(void)
{
    VFIOUserDMARW rw = { .address = 0x1000, .count = UINT64_MAX - 15 };
    Error *err = NULL;

    /* The fields behind the (claimed) end match, so only length saves us. */
    g_assert_false(vfio_user_dma_rw_reply_check(&rw, 0, false, 0x1000,
                                                UINT64_MAX - 15, &err));
    error_free_or_abort(&err);
    rw.count = UINT64_MAX - 7;
    g_assert_false(vfio_user_dma_rw_reply_check(&rw, 8, false, 0x1000,
                                                UINT64_MAX - 7, &err));
    error_free_or_abort(&err);
}

static void test_dma_rw(void)
{
    uint8_t buf[16 + 4] = { 0 };
    VFIOUserDMARW *rw = (VFIOUserDMARW *)buf;
    const VFIOUserDMARW *out;
    Error *err = NULL;
    int e = 0;

    rw->address = 0x2000;
    rw->count = 4;
    g_assert_true(vfio_user_dma_rw_decode(buf, 20, true, 64, 0, &out, NULL,
                                          &error_abort));
    g_assert_true(vfio_user_dma_rw_decode(buf, 16, false, 64, 0, &out, NULL,
                                          &error_abort));
    g_assert_true(vfio_user_dma_rw_reply_check(buf, 20, false, 0x2000, 4,
                                               &error_abort));
    g_assert_false(vfio_user_dma_rw_reply_check(buf, 20, false, 0x2004, 4,
                                                &err));
    error_free_or_abort(&err);
    rw->address = UINT64_MAX - 1;
    g_assert_false(vfio_user_dma_rw_decode(buf, 20, true, 64, 0, &out, &e,
                                           &err));
    g_assert_cmpint(e, ==, EINVAL);
    error_free_or_abort(&err);
    rw->address = 0;
    rw->count = UINT64_MAX;
    g_assert_false(vfio_user_dma_rw_decode(buf, 16, false, 64, 0, &out, &e,
                                           &err));
    g_assert_cmpint(e, ==, E2BIG);
    error_free_or_abort(&err);
}

/* ---- SET_IRQS ---- */

static bool irq_set(uint32_t flags, uint32_t start, uint32_t count,
                    size_t extra, size_t len_adjust, size_t nfds,
                    uint32_t index_count, int *e)
{
    size_t len = sizeof(struct vfio_irq_set) + extra;
    g_autofree struct vfio_irq_set *s = g_malloc0(len);
    const struct vfio_irq_set *out;
    Error *err = NULL;
    bool ok;

    s->argsz = len + len_adjust;
    s->flags = flags;
    s->index = VFIO_PCI_MSIX_IRQ_INDEX;
    s->start = start;
    s->count = count;
    ok = vfio_user_irq_set_decode(s, len, nfds, index_count, &out, e, &err);
    g_assert_true(ok == !err);
    error_free(err);
    return ok;
}

static void test_irq_set(void)
{
    const uint32_t efd = VFIO_IRQ_SET_DATA_EVENTFD |
                         VFIO_IRQ_SET_ACTION_TRIGGER;
    const uint32_t none = VFIO_IRQ_SET_DATA_NONE |
                          VFIO_IRQ_SET_ACTION_TRIGGER;
    const uint32_t mask_bool = VFIO_IRQ_SET_DATA_BOOL |
                               VFIO_IRQ_SET_ACTION_MASK;
    int e = 0;

    g_assert_true(irq_set(efd, 0, 4, 0, 0, 4, 4, &e));
    g_assert_true(irq_set(efd, 2, 2, 0, 0, 0, 4, &e));      /* de-assign */
    g_assert_true(irq_set(efd, 0, 4, 16, 0, 4, 4, &e));     /* fd array */
    g_assert_true(irq_set(none, 0, 0, 0, 0, 0, 4, &e));     /* disable all */
    g_assert_true(irq_set(mask_bool, 1, 3, 3, 0, 0, 4, &e));
    g_assert_true(irq_set(VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_UNMASK,
                          3, 1, 0, 0, 0, 4, &e));

    /* Missing and surplus fds. */
    g_assert_false(irq_set(efd, 0, 4, 0, 0, 3, 4, &e));
    g_assert_cmpint(e, ==, EINVAL);
    g_assert_false(irq_set(efd, 0, 2, 0, 0, 3, 4, &e));
    g_assert_false(irq_set(none, 0, 1, 0, 0, 1, 4, &e));
    /* Out of range vectors, including a start+count that wraps 32 bits. */
    g_assert_false(irq_set(efd, 3, 2, 0, 0, 2, 4, &e));
    g_assert_false(irq_set(efd, UINT32_MAX, 2, 0, 0, 2, 4, &e));
    g_assert_false(irq_set(efd, 0, 1, 0, 0, 1, 0, &e));
    /* count 0 only means "disable all" for DATA_NONE|TRIGGER at 0. */
    g_assert_false(irq_set(none, 1, 0, 0, 0, 0, 4, &e));
    g_assert_false(irq_set(VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_MASK,
                           0, 0, 0, 0, 0, 4, &e));
    /* Flag combinations. */
    g_assert_false(irq_set(VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_DATA_BOOL |
                           VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, 0, 0, 0, 4, &e));
    g_assert_false(irq_set(VFIO_IRQ_SET_DATA_NONE, 0, 1, 0, 0, 0, 4, &e));
    g_assert_false(irq_set(none | VFIO_IRQ_SET_ACTION_MASK, 0, 1, 0, 0, 0, 4,
                           &e));
    g_assert_false(irq_set(none | (1u << 6), 0, 1, 0, 0, 0, 4, &e));
    /* BOOL data of the wrong size; NONE with data; argsz mismatch. */
    g_assert_false(irq_set(mask_bool, 0, 4, 3, 0, 0, 4, &e));
    g_assert_false(irq_set(none, 0, 1, 4, 0, 0, 4, &e));
    g_assert_false(irq_set(none, 0, 1, 0, 4, 0, 4, &e));
    /* Short. */
    {
        struct vfio_irq_set s = { .argsz = 12 };
        const struct vfio_irq_set *out;
        Error *err = NULL;

        g_assert_false(vfio_user_irq_set_decode(&s, 12, 0, 4, &out, &e,
                                                &err));
        error_free_or_abort(&err);
    }
}


/* ---- migration ---- */

static void test_mig_fsm(void)
{
    enum { S = VFIO_MIG_STATE_STOP, R = VFIO_MIG_STATE_RUNNING,
           C = VFIO_MIG_STATE_STOP_COPY, L = VFIO_MIG_STATE_RESUMING,
           P = VFIO_MIG_STATE_PRE_COPY, E = VFIO_MIG_STATE_ERROR };
    /* Direct arcs of the spec. */
    g_assert_cmpint(vfio_mig_next_state(R, S, false), ==, S);
    g_assert_cmpint(vfio_mig_next_state(S, C, false), ==, C);
    g_assert_cmpint(vfio_mig_next_state(C, S, false), ==, S);
    g_assert_cmpint(vfio_mig_next_state(S, L, false), ==, L);
    g_assert_cmpint(vfio_mig_next_state(L, S, false), ==, S);
    g_assert_cmpint(vfio_mig_next_state(S, R, false), ==, R);
    g_assert_cmpint(vfio_mig_next_state(R, P, true), ==, P);
    g_assert_cmpint(vfio_mig_next_state(P, C, true), ==, C);
    g_assert_cmpint(vfio_mig_next_state(P, R, true), ==, R);
    /* Combined: through STOP, never through a saving state. */
    g_assert_cmpint(vfio_mig_next_state(R, C, false), ==, S);
    g_assert_cmpint(vfio_mig_next_state(R, L, false), ==, S);
    g_assert_cmpint(vfio_mig_next_state(C, R, false), ==, S);
    g_assert_cmpint(vfio_mig_next_state(L, R, false), ==, S);
    g_assert_cmpint(vfio_mig_next_state(P, S, true), ==, R);
    g_assert_cmpint(vfio_mig_next_state(S, P, true), ==, R);
    /* Refused: STOP_COPY -> PRE_COPY, PRE_COPY not offered, P2P, junk. */
    g_assert_cmpint(vfio_mig_next_state(C, P, true), ==, E);
    g_assert_cmpint(vfio_mig_next_state(R, P, false), ==, E);
    g_assert_cmpint(vfio_mig_next_state(R, VFIO_MIG_STATE_RUNNING_P2P,
                                        true), ==, E);
    g_assert_cmpint(vfio_mig_next_state(E, R, true), ==, E);
    g_assert_cmpint(vfio_mig_next_state(R, 99, true), ==, E);
    g_assert_cmpint(vfio_mig_next_state(UINT32_MAX, R, true), ==, E);
    g_assert_cmpint(vfio_mig_next_state(L, L, false), ==, L);
    /* Every path from every state ends where it was asked to go. */
    for (uint32_t from = S; from <= L; from++) {
        for (uint32_t to = S; to <= L; to++) {
            uint32_t cur = from;

            for (int steps = 0; cur != to; steps++) {
                g_assert_cmpint(steps, <, 3);
                cur = vfio_mig_next_state(cur, to, false);
                g_assert_cmpint(cur, !=, E);
                if (cur != to) {
                    g_assert_true(cur != C && cur != P);
                }
            }
        }
    }
    g_assert_cmpstr(vfio_mig_state_name(C), ==, "STOP_COPY");
    g_assert_cmpstr(vfio_mig_state_name(1000), ==, "INVALID");
}

static void test_device_feature(void)
{
    uint8_t buf[8 + 8] = { 0 };
    VFIOUserDeviceFeature *f = (VFIOUserDeviceFeature *)buf;
    uint32_t feature, flags;
    const uint8_t *data;
    size_t dlen;
    Error *err = NULL;
    int e = 0;

    f->argsz = 16;
    f->flags = VFIO_DEVICE_FEATURE_SET | VFIO_USER_FEATURE_MIG_DEVICE_STATE;
    g_assert_true(vfio_user_device_feature_decode(buf, 16, 0, &feature,
                                                  &flags, &data, &dlen, &e,
                                                  &error_abort));
    g_assert_cmpuint(feature, ==, VFIO_USER_FEATURE_MIG_DEVICE_STATE);
    g_assert_cmpuint(dlen, ==, 8);
    g_assert_true(data == buf + 8);
    /* Too short, fds, bad argsz, unknown flags, GET|SET, no operation. */
    g_assert_false(vfio_user_device_feature_decode(buf, 7, 0, &feature,
                                                   &flags, &data, &dlen, &e,
                                                   &err));
    error_free_or_abort(&err);
    g_assert_false(vfio_user_device_feature_decode(buf, 16, 1, &feature,
                                                   &flags, &data, &dlen, &e,
                                                   &err));
    error_free_or_abort(&err);
    f->argsz = 4;
    g_assert_false(vfio_user_device_feature_decode(buf, 16, 0, &feature,
                                                   &flags, &data, &dlen, &e,
                                                   &err));
    error_free_or_abort(&err);
    f->argsz = 16;
    f->flags |= 1u << 20;
    g_assert_false(vfio_user_device_feature_decode(buf, 16, 0, &feature,
                                                   &flags, &data, &dlen, &e,
                                                   &err));
    g_assert_cmpint(e, ==, EINVAL);
    error_free_or_abort(&err);
    f->flags = VFIO_DEVICE_FEATURE_SET | VFIO_DEVICE_FEATURE_GET | 2;
    g_assert_false(vfio_user_device_feature_decode(buf, 16, 0, &feature,
                                                   &flags, &data, &dlen, &e,
                                                   &err));
    error_free_or_abort(&err);
    f->flags = 2;
    g_assert_false(vfio_user_device_feature_decode(buf, 16, 0, &feature,
                                                   &flags, &data, &dlen, &e,
                                                   &err));
    error_free_or_abort(&err);
    /* Probing GET|SET together is allowed. */
    f->flags = VFIO_DEVICE_FEATURE_PROBE | VFIO_DEVICE_FEATURE_SET |
               VFIO_DEVICE_FEATURE_GET | 2;
    g_assert_true(vfio_user_device_feature_decode(buf, 8, 0, &feature,
                                                  &flags, &data, &dlen, &e,
                                                  &error_abort));

    /* Replies: flags echoed, argsz = length, exact data size. */
    f->flags = VFIO_DEVICE_FEATURE_GET | 1;
    g_assert_true(vfio_user_device_feature_reply_check(buf, 16, f->flags, 8,
                                                       &error_abort));
    g_assert_false(vfio_user_device_feature_reply_check(buf, 16, f->flags,
                                                        4, &err));
    error_free_or_abort(&err);
    g_assert_false(vfio_user_device_feature_reply_check(buf, 16, 2, 8,
                                                        &err));
    error_free_or_abort(&err);
    f->argsz = 1000;
    g_assert_false(vfio_user_device_feature_reply_check(buf, 16, f->flags,
                                                        8, &err));
    error_free_or_abort(&err);
    g_assert_false(vfio_user_device_feature_reply_check(buf, 3, 0, 0, &err));
    error_free_or_abort(&err);
}

static void test_dma_logging(void)
{
    uint8_t buf[16 + 2 * 16] = { 0 };
    VFIOUserDmaLoggingControl ctl = { .page_size = 4096, .num_ranges = 2 };
    VFIOUserDmaLoggingRange r[2] = {
        { 0, 0x100000 }, { 0x100000000ull, 0x2000 },
    };
    const VFIOUserDmaLoggingRange *out;
    VFIOUserDmaLoggingReport rep = { 0x1000, 0x40000, 4096 };
    VFIOUserDmaLoggingControl got;
    size_t bm;
    Error *err = NULL;
    int e = 0;

    memcpy(buf, &ctl, sizeof(ctl));
    memcpy(buf + 16, r, sizeof(r));
    g_assert_true(vfio_user_dma_logging_start_decode(buf, sizeof(buf), &got,
                                                     &out, &e,
                                                     &error_abort));
    g_assert_cmpuint(got.num_ranges, ==, 2);
    /* Count and length disagree. */
    g_assert_false(vfio_user_dma_logging_start_decode(buf, sizeof(buf) - 16,
                                                      &got, &out, &e, &err));
    error_free_or_abort(&err);
    /* A page size that is no power of two, or too small. */
    ctl.page_size = 4097;
    memcpy(buf, &ctl, sizeof(ctl));
    g_assert_false(vfio_user_dma_logging_start_decode(buf, sizeof(buf), &got,
                                                      &out, &e, &err));
    error_free_or_abort(&err);
    ctl.page_size = 512;
    memcpy(buf, &ctl, sizeof(ctl));
    g_assert_false(vfio_user_dma_logging_start_decode(buf, sizeof(buf), &got,
                                                      &out, &e, &err));
    error_free_or_abort(&err);
    ctl.page_size = 4096;
    /* Too many ranges. */
    ctl.num_ranges = VFIO_USER_LIMIT_LOG_RANGES + 1;
    memcpy(buf, &ctl, sizeof(ctl));
    g_assert_false(vfio_user_dma_logging_start_decode(buf, sizeof(buf), &got,
                                                      &out, &e, &err));
    g_assert_cmpint(e, ==, E2BIG);
    error_free_or_abort(&err);
    ctl.num_ranges = 2;
    memcpy(buf, &ctl, sizeof(ctl));
    /* Overlapping, wrapping, unaligned, empty ranges. */
    r[1].iova = 0x80000;
    memcpy(buf + 16, r, sizeof(r));
    g_assert_false(vfio_user_dma_logging_start_decode(buf, sizeof(buf), &got,
                                                      &out, &e, &err));
    error_free_or_abort(&err);
    r[1].iova = UINT64_MAX - 0xfff;
    memcpy(buf + 16, r, sizeof(r));
    g_assert_false(vfio_user_dma_logging_start_decode(buf, sizeof(buf), &got,
                                                      &out, &e, &err));
    error_free_or_abort(&err);
    r[1].iova = 0x200800;
    memcpy(buf + 16, r, sizeof(r));
    g_assert_false(vfio_user_dma_logging_start_decode(buf, sizeof(buf), &got,
                                                      &out, &e, &err));
    error_free_or_abort(&err);
    r[1] = (VFIOUserDmaLoggingRange) { 0x200000, 0 };
    memcpy(buf + 16, r, sizeof(r));
    g_assert_false(vfio_user_dma_logging_start_decode(buf, sizeof(buf), &got,
                                                      &out, &e, &err));
    error_free_or_abort(&err);
    g_assert_false(vfio_user_dma_logging_start_decode(buf, 15, &got, &out,
                                                      &e, &err));
    error_free_or_abort(&err);

    /* Reports: 64 pages: one u64 word. */
    g_assert_true(vfio_user_dma_logging_report_decode(
        (const uint8_t *)&rep, sizeof(rep), 8, &rep, &bm, &e,
        &error_abort));
    g_assert_cmpuint(bm, ==, 8);
    g_assert_false(vfio_user_dma_logging_report_decode(
        (const uint8_t *)&rep, sizeof(rep) - 1, 8, &rep, &bm, &e, &err));
    error_free_or_abort(&err);
    /* The bitmap would exceed what a message may carry. */
    rep.length = 0x40000ull * 64 * 1024;
    g_assert_false(vfio_user_dma_logging_report_decode(
        (const uint8_t *)&rep, sizeof(rep), 4096, &rep, &bm, &e, &err));
    g_assert_cmpint(e, ==, E2BIG);
    error_free_or_abort(&err);
    rep = (VFIOUserDmaLoggingReport) { UINT64_MAX - 0xfff, 0x2000, 4096 };
    g_assert_false(vfio_user_dma_logging_report_decode(
        (const uint8_t *)&rep, sizeof(rep), 4096, &rep, &bm, &e, &err));
    error_free_or_abort(&err);
    rep = (VFIOUserDmaLoggingReport) { 0, 0x2000, 3000 };
    g_assert_false(vfio_user_dma_logging_report_decode(
        (const uint8_t *)&rep, sizeof(rep), 4096, &rep, &bm, &e, &err));
    error_free_or_abort(&err);
    rep = (VFIOUserDmaLoggingReport) { 0, 0x2100, 4096 };
    g_assert_false(vfio_user_dma_logging_report_decode(
        (const uint8_t *)&rep, sizeof(rep), 4096, &rep, &bm, &e, &err));
    error_free_or_abort(&err);
}

static void test_mig_data(void)
{
    uint8_t buf[8 + 16] = { 0 };
    VFIOUserMigData *m = (VFIOUserMigData *)buf;
    const VFIOUserMigData *out;
    Error *err = NULL;
    int e = 0;

    m->argsz = 24;
    m->size = 16;
    g_assert_true(vfio_user_mig_data_decode(buf, 8, false, 64, 0, &out, &e,
                                            &error_abort));
    g_assert_true(vfio_user_mig_data_decode(buf, 24, true, 64, 0, &out, &e,
                                            &error_abort));
    /* Length must match, size bounded and non-zero, no fds. */
    g_assert_false(vfio_user_mig_data_decode(buf, 24, false, 64, 0, &out, &e,
                                             &err));
    error_free_or_abort(&err);
    g_assert_false(vfio_user_mig_data_decode(buf, 20, true, 64, 0, &out, &e,
                                             &err));
    error_free_or_abort(&err);
    g_assert_false(vfio_user_mig_data_decode(buf, 24, true, 8, 0, &out, &e,
                                             &err));
    g_assert_cmpint(e, ==, E2BIG);
    error_free_or_abort(&err);
    g_assert_false(vfio_user_mig_data_decode(buf, 8, false, 64, 1, &out, &e,
                                             &err));
    error_free_or_abort(&err);
    g_assert_false(vfio_user_mig_data_decode(buf, 7, false, 64, 0, &out, &e,
                                             &err));
    error_free_or_abort(&err);
    m->size = 0;
    g_assert_false(vfio_user_mig_data_decode(buf, 8, false, 64, 0, &out, &e,
                                             &err));
    error_free_or_abort(&err);
    m->size = UINT32_MAX;
    g_assert_false(vfio_user_mig_data_decode(buf, 24, true, UINT64_MAX, 0,
                                             &out, &e, &err));
    error_free_or_abort(&err);

    /* Read replies: at most what was asked, argsz and size consistent. */
    m->argsz = 24;
    m->size = 16;
    g_assert_true(vfio_user_mig_data_read_reply_check(buf, 24, 16,
                                                      &error_abort));
    g_assert_false(vfio_user_mig_data_read_reply_check(buf, 24, 8, &err));
    error_free_or_abort(&err);
    m->size = 12;
    g_assert_false(vfio_user_mig_data_read_reply_check(buf, 24, 16, &err));
    error_free_or_abort(&err);
    /* Padding behind the data (libvfio-user), never past the ask. */
    m->argsz = 20;
    g_assert_true(vfio_user_mig_data_read_reply_check(buf, 24, 16,
                                                      &error_abort));
    g_assert_false(vfio_user_mig_data_read_reply_check(buf, 24, 15, &err));
    error_free_or_abort(&err);
    g_assert_false(vfio_user_mig_data_read_reply_check(buf, 19, 16, &err));
    error_free_or_abort(&err);
    m->size = 0;
    m->argsz = 8;
    g_assert_true(vfio_user_mig_data_read_reply_check(buf, 8, 16,
                                                      &error_abort));
    g_assert_false(vfio_user_mig_data_read_reply_check(buf, 4, 16, &err));
    error_free_or_abort(&err);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vfio-user/codec/hdr/valid", test_hdr_valid);
    g_test_add_func("/vfio-user/codec/hdr/malformed", test_hdr_malformed);
    g_test_add_func("/vfio-user/codec/version/roundtrip",
                    test_version_roundtrip);
    g_test_add_func("/vfio-user/codec/version/defaults-and-clamping",
                    test_version_defaults);
    g_test_add_func("/vfio-user/codec/version/malformed",
                    test_version_malformed);
    g_test_add_func("/vfio-user/codec/caps/negotiate", test_caps_negotiate);
    g_test_add_func("/vfio-user/codec/caps/pgsizes-64k-host-4k-peer",
                    test_pgsizes_negotiate);
    g_test_add_func("/vfio-user/codec/dma-map/validation", test_dma_map);
    g_test_add_func("/vfio-user/codec/dma-unmap/validation", test_dma_unmap);
    g_test_add_func("/vfio-user/codec/dma/ranges-overlap",
                    test_ranges_overlap);
    g_test_add_func("/vfio-user/codec/region-rw/validation", test_region_rw);
    g_test_add_func("/vfio-user/codec/dma-rw/validation", test_dma_rw);
    g_test_add_func("/vfio-user/codec/dma-rw/reply-count-wrap-refused",
                    test_dma_rw_reply_count_wrap);
    g_test_add_func("/vfio-user/codec/set-irqs/validation", test_irq_set);
    g_test_add_func("/vfio-user/codec/migration/state-machine",
                    test_mig_fsm);
    g_test_add_func("/vfio-user/codec/migration/device-feature",
                    test_device_feature);
    g_test_add_func("/vfio-user/codec/migration/dma-logging",
                    test_dma_logging);
    g_test_add_func("/vfio-user/codec/migration/mig-data", test_mig_data);
    return g_test_run();
}
