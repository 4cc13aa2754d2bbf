/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: the virtio-blk request parser
 * (hw/virtio/virtio-blk-req.c) on fuzzed elements.
 *
 * Input: a byte of flags (read-only, capacity choice), a byte with the
 * number of readable pieces and one with writable pieces, then one
 * length byte per piece, then the bytes the pieces are cut from.  The
 * data slices and the status byte must lie inside the element's
 * pieces, and an OK read or write must fit the disk.
 */
#include "qemu/osdep.h"
#include <linux/virtio_blk.h>
#include "hw/virtio/virtio-blk-req.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static VirtQueueElement elem;
static VirtIOBlkRequest req;
static uint8_t pool[8192];

static bool inside(const void *p, size_t len)
{
    const uint8_t *b = p;

    return b >= pool && b + len <= pool + sizeof(pool);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned nout, nin, off = 0;
    uint64_t cap;
    bool ro;
    const char *why;
    VirtIOBlkParse p;
    VirtIOBlkLimits lim;

    if (size < 3) {
        return 0;
    }
    ro = data[0] & 1;
    cap = (data[0] & 2) ? UINT64_MAX / 512 : (data[0] >> 2);
    nout = data[1] % 8;
    nin = data[2] % 8;
    if (size < 3 + nout + nin) {
        return 0;
    }
    memset(pool, 0, sizeof(pool));
    memcpy(pool, data + 3 + nout + nin, MIN(size - 3 - nout - nin,
                                            sizeof(pool)));
    memset(&elem, 0, sizeof(elem));
    for (unsigned i = 0; i < nout + nin; i++) {
        size_t len = data[3 + i] * 4;

        if (off + len > sizeof(pool)) {
            len = sizeof(pool) - off;
        }
        elem.sg[i].iov_base = pool + off;
        elem.sg[i].iov_len = len;
        if (i < nout) {
            elem.out_num++;
            elem.out_len += len;
        } else {
            elem.in_num++;
            elem.in_len += len;
        }
        off += len;
    }
    lim = (VirtIOBlkLimits) {
        .capacity = cap, .read_only = ro,
        /* Bits 3-7 of the third byte: which features, what limits. */
        .max_discard_sectors = (data[2] & 8) ? (data[2] & 16 ? 8 : ~0u) : 0,
        .max_discard_seg = (data[2] & 32) ? 1 : VIRTIO_BLK_MAX_SEGS,
        .max_write_zeroes_sectors = (data[2] & 64) ? 64 : 0,
        .max_write_zeroes_seg = (data[2] & 128) ? 2 : 1,
    };
    p = virtio_blk_parse(&elem, &lim, &req, &why);
    if (p != VIRTIO_BLK_PARSE_OK) {
        assert(why);
    }
    if (p != VIRTIO_BLK_PARSE_NO_STATUS) {
        assert(req.status && inside(req.status, 1));
    }
    if (p == VIRTIO_BLK_PARSE_OK) {
        size_t total = 0;

        for (unsigned i = 0; i < req.data_niov; i++) {
            assert(inside(req.data[i].iov_base, req.data[i].iov_len));
            /* Data never overlaps the status byte. */
            assert(!(req.status >= (uint8_t *)req.data[i].iov_base &&
                     req.status < (uint8_t *)req.data[i].iov_base +
                                  req.data[i].iov_len));
            total += req.data[i].iov_len;
        }
        assert(total == req.data_len);
        if (req.type == VIRTIO_BLK_T_IN || req.type == VIRTIO_BLK_T_OUT) {
            assert(req.sector <= cap &&
                   req.data_len / 512 <= cap - req.sector);
            assert(!(ro && req.type == VIRTIO_BLK_T_OUT));
        }
        if (req.type == VIRTIO_BLK_T_DISCARD ||
            req.type == VIRTIO_BLK_T_WRITE_ZEROES) {
            bool d = req.type == VIRTIO_BLK_T_DISCARD;

            assert(!ro && req.nsegs >= 1);
            assert(req.nsegs <= (d ? lim.max_discard_seg
                                   : lim.max_write_zeroes_seg));
            for (unsigned i = 0; i < req.nsegs; i++) {
                assert(req.segs[i].sector <= cap &&
                       req.segs[i].num_sectors <= cap - req.segs[i].sector);
                assert(req.segs[i].num_sectors <=
                       (d ? lim.max_discard_sectors
                          : lim.max_write_zeroes_sectors));
                assert(!(d && req.segs[i].unmap));
            }
        }
    }
    return 0;
}
