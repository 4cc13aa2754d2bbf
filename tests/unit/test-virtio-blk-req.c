/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
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
    const char *why;

    return virtio_blk_parse(&t->elem, CAP, ro, &t->req, &why);
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/virtio-blk-req/read-write", test_read_write);
    g_test_add_func("/virtio-blk-req/one-piece",
                    test_header_with_data_in_one_piece);
    g_test_add_func("/virtio-blk-req/errors", test_errors);
    return g_test_run();
}
