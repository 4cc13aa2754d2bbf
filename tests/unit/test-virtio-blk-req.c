/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-blk request parsing (hw/virtio/virtio-blk-req.c).
 */
#include "qemu/osdep.h"
#include <linux/virtio_blk.h>
#include "hw/virtio/virtio-blk-req.h"

#define CAP 100     /* sectors */

typedef struct T {
    struct virtio_blk_outhdr hdr;
    uint8_t data[2048];
    uint8_t status;
    VirtQueueElement elem;
    VirtIOBlkRequest req;
} T;

static void build(T *t, uint32_t type, uint64_t sector, size_t out_data,
                  size_t in_data, bool status)
{
    VirtQueueElement *e = &t->elem;

    memset(e, 0, sizeof(*e));
    t->hdr.type = GUINT32_TO_LE(type);
    t->hdr.ioprio = 0;
    t->hdr.sector = GUINT64_TO_LE(sector);
    e->sg[e->out_num++] = (struct iovec){ &t->hdr, sizeof(t->hdr) };
    e->out_len = sizeof(t->hdr);
    if (out_data) {
        e->sg[e->out_num++] = (struct iovec){ t->data, out_data };
        e->out_len += out_data;
    }
    if (in_data) {
        e->sg[e->out_num + e->in_num++] = (struct iovec){ t->data, in_data };
        e->in_len += in_data;
    }
    if (status) {
        e->sg[e->out_num + e->in_num++] = (struct iovec){ &t->status, 1 };
        e->in_len += 1;
    }
}

static VirtIOBlkParse parse(T *t, bool ro)
{
    VirtIOBlkLimits lim = { .capacity = CAP, .read_only = ro };
    const char *why;

    return virtio_blk_parse(&t->elem, &lim, &t->req, &why);
}

static void test_read_write(void)
{
    T t;

    build(&t, VIRTIO_BLK_T_IN, 4, 0, 1024, true);
    g_assert_cmpint(parse(&t, false), ==, VIRTIO_BLK_PARSE_OK);
    g_assert_cmpuint(t.req.sector, ==, 4);
    g_assert_cmpuint(t.req.data_len, ==, 1024);
    g_assert_true(t.req.status == &t.status);
    g_assert_true(t.req.data[0].iov_base == t.data);

    build(&t, VIRTIO_BLK_T_OUT, CAP - 2, 1024, 0, true);
    g_assert_cmpint(parse(&t, false), ==, VIRTIO_BLK_PARSE_OK);
    g_assert_cmpuint(t.req.data_len, ==, 1024);
    g_assert_cmpint(parse(&t, true), ==, VIRTIO_BLK_PARSE_IOERR);

    build(&t, VIRTIO_BLK_T_FLUSH, 0, 0, 0, true);
    g_assert_cmpint(parse(&t, true), ==, VIRTIO_BLK_PARSE_OK);
    build(&t, VIRTIO_BLK_T_GET_ID, 0, 0, 20, true);
    g_assert_cmpint(parse(&t, false), ==, VIRTIO_BLK_PARSE_OK);
    g_assert_cmpuint(t.req.data_len, ==, 20);
}

static void test_header_with_data_in_one_piece(void)
{
    T t;
    uint8_t buf[16 + 512];
    struct virtio_blk_outhdr h = { GUINT32_TO_LE(VIRTIO_BLK_T_OUT), 0,
                                   GUINT64_TO_LE(1) };

    memcpy(buf, &h, sizeof(h));
    memset(&t.elem, 0, sizeof(t.elem));
    t.elem.sg[0] = (struct iovec){ buf, sizeof(buf) };
    t.elem.out_num = 1;
    t.elem.out_len = sizeof(buf);
    t.elem.sg[1] = (struct iovec){ &t.status, 1 };
    t.elem.in_num = 1;
    t.elem.in_len = 1;
    g_assert_cmpint(parse(&t, false), ==, VIRTIO_BLK_PARSE_OK);
    g_assert_cmpuint(t.req.data_niov, ==, 1);
    g_assert_true(t.req.data[0].iov_base == buf + 16);
    g_assert_cmpuint(t.req.data[0].iov_len, ==, 512);
}

static void test_errors(void)
{
    T t;

    build(&t, VIRTIO_BLK_T_IN, CAP, 0, 512, true);
    g_assert_cmpint(parse(&t, false), ==, VIRTIO_BLK_PARSE_IOERR);
    build(&t, VIRTIO_BLK_T_IN, CAP - 1, 0, 1024, true);
    g_assert_cmpint(parse(&t, false), ==, VIRTIO_BLK_PARSE_IOERR);
    build(&t, VIRTIO_BLK_T_IN, UINT64_MAX, 0, 512, true);
    g_assert_cmpint(parse(&t, false), ==, VIRTIO_BLK_PARSE_IOERR);
    build(&t, VIRTIO_BLK_T_IN, 0, 0, 100, true);
    g_assert_cmpint(parse(&t, false), ==, VIRTIO_BLK_PARSE_IOERR);
    build(&t, 0x55, 0, 0, 512, true);
    g_assert_cmpint(parse(&t, false), ==, VIRTIO_BLK_PARSE_UNSUPP);
    build(&t, VIRTIO_BLK_T_IN, 0, 0, 0, false);
    g_assert_cmpint(parse(&t, false), ==, VIRTIO_BLK_PARSE_NO_STATUS);
    /* Short header. */
    build(&t, VIRTIO_BLK_T_IN, 0, 0, 512, true);
    t.elem.sg[0].iov_len = 8;
    t.elem.out_len = 8;
    g_assert_cmpint(parse(&t, false), ==, VIRTIO_BLK_PARSE_IOERR);
}

/* Segments for DISCARD / WRITE_ZEROES in t->data. */
static void put_seg(T *t, unsigned i, uint64_t sector, uint32_t n,
                    uint32_t flags)
{
    struct virtio_blk_discard_write_zeroes seg = {
        .sector = GUINT64_TO_LE(sector),
        .num_sectors = GUINT32_TO_LE(n),
        .flags = GUINT32_TO_LE(flags),
    };

    memcpy(t->data + i * sizeof(seg), &seg, sizeof(seg));
}

static VirtIOBlkParse parse_lim(T *t, const VirtIOBlkLimits *lim)
{
    const char *why = NULL;
    VirtIOBlkParse p = virtio_blk_parse(&t->elem, lim, &t->req, &why);

    g_assert_true(p == VIRTIO_BLK_PARSE_OK || why);
    return p;
}

static void test_discard_write_zeroes(void)
{
    VirtIOBlkLimits lim = {
        .capacity = CAP,
        .max_discard_sectors = 32, .max_discard_seg = 2,
        .max_write_zeroes_sectors = 64, .max_write_zeroes_seg = 1,
    };
    VirtIOBlkLimits none = { .capacity = CAP };
    T t;

    /* Two discard segments, the second ending at the last sector. */
    put_seg(&t, 0, 0, 8, 0);
    put_seg(&t, 1, CAP - 32, 32, 0);
    build(&t, VIRTIO_BLK_T_DISCARD, 0, 32, 0, true);
    g_assert_cmpint(parse_lim(&t, &lim), ==, VIRTIO_BLK_PARSE_OK);
    g_assert_cmpuint(t.req.nsegs, ==, 2);
    g_assert_cmpuint(t.req.segs[1].sector, ==, CAP - 32);
    g_assert_cmpuint(t.req.segs[1].num_sectors, ==, 32);
    g_assert_true(t.req.status == &t.status);
    /* Not negotiated: UNSUPP, as an unknown type. */
    g_assert_cmpint(parse_lim(&t, &none), ==, VIRTIO_BLK_PARSE_UNSUPP);
    /* Read-only disk. */
    lim.read_only = true;
    g_assert_cmpint(parse_lim(&t, &lim), ==, VIRTIO_BLK_PARSE_IOERR);
    lim.read_only = false;
    /* Beyond the end, by one sector; and a wrapping sector. */
    put_seg(&t, 1, CAP - 31, 32, 0);
    g_assert_cmpint(parse_lim(&t, &lim), ==, VIRTIO_BLK_PARSE_IOERR);
    put_seg(&t, 1, UINT64_MAX - 1, 8, 0);
    g_assert_cmpint(parse_lim(&t, &lim), ==, VIRTIO_BLK_PARSE_IOERR);
    /* Longer than max_discard_sectors. */
    put_seg(&t, 1, 0, 33, 0);
    g_assert_cmpint(parse_lim(&t, &lim), ==, VIRTIO_BLK_PARSE_IOERR);
    /* The unmap flag is for WRITE_ZEROES only; reserved flags. */
    put_seg(&t, 1, 0, 8, VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP);
    g_assert_cmpint(parse_lim(&t, &lim), ==, VIRTIO_BLK_PARSE_UNSUPP);
    put_seg(&t, 1, 0, 8, 2);
    g_assert_cmpint(parse_lim(&t, &lim), ==, VIRTIO_BLK_PARSE_UNSUPP);
    /* Three segments where two are offered; a torn segment; none. */
    put_seg(&t, 1, 0, 8, 0);
    put_seg(&t, 2, 0, 8, 0);
    build(&t, VIRTIO_BLK_T_DISCARD, 0, 48, 0, true);
    g_assert_cmpint(parse_lim(&t, &lim), ==, VIRTIO_BLK_PARSE_UNSUPP);
    build(&t, VIRTIO_BLK_T_DISCARD, 0, 24, 0, true);
    g_assert_cmpint(parse_lim(&t, &lim), ==, VIRTIO_BLK_PARSE_IOERR);
    build(&t, VIRTIO_BLK_T_DISCARD, 0, 0, 0, true);
    g_assert_cmpint(parse_lim(&t, &lim), ==, VIRTIO_BLK_PARSE_IOERR);

    /* WRITE_ZEROES: unmap allowed, its own limits. */
    put_seg(&t, 0, 4, 64, VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP);
    build(&t, VIRTIO_BLK_T_WRITE_ZEROES, 0, 16, 0, true);
    g_assert_cmpint(parse_lim(&t, &lim), ==, VIRTIO_BLK_PARSE_OK);
    g_assert_cmpuint(t.req.nsegs, ==, 1);
    g_assert_true(t.req.segs[0].unmap);
    g_assert_cmpuint(t.req.segs[0].sector, ==, 4);
    put_seg(&t, 0, 4, 65, 0);
    g_assert_cmpint(parse_lim(&t, &lim), ==, VIRTIO_BLK_PARSE_IOERR);
    put_seg(&t, 0, 4, 8, 0);
    put_seg(&t, 1, 4, 8, 0);
    build(&t, VIRTIO_BLK_T_WRITE_ZEROES, 0, 32, 0, true);
    g_assert_cmpint(parse_lim(&t, &lim), ==, VIRTIO_BLK_PARSE_UNSUPP);
    g_assert_cmpint(parse_lim(&t, &none), ==, VIRTIO_BLK_PARSE_UNSUPP);
    /* No status byte still wins over everything. */
    build(&t, VIRTIO_BLK_T_WRITE_ZEROES, 0, 16, 0, false);
    g_assert_cmpint(parse_lim(&t, &lim), ==, VIRTIO_BLK_PARSE_NO_STATUS);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/virtio-blk-req/read-write", test_read_write);
    g_test_add_func("/virtio-blk-req/one-piece",
                    test_header_with_data_in_one_piece);
    g_test_add_func("/virtio-blk-req/errors", test_errors);
    g_test_add_func("/virtio-blk-req/discard-write-zeroes",
                    test_discard_write_zeroes);
    return g_test_run();
}
