/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-blk request parser (virtio-blk-req.h).
 */
#include "qemu/osdep.h"
#include <linux/virtio_blk.h>
#include "hw/virtio/virtio-blk-req.h"

/* Copies iov[skip bytes .. skip + len) into out; returns pieces, -1 if too many. */
static int iov_slice(const struct iovec *iov, unsigned n, size_t skip,
                     size_t len, struct iovec *out, unsigned max)
{
    unsigned k = 0;

    for (unsigned i = 0; i < n && len; i++) {
        size_t l = iov[i].iov_len;

        if (skip >= l) {
            skip -= l;
            continue;
        }
        if (k >= max) {
            return -1;
        }
        out[k].iov_base = (uint8_t *)iov[i].iov_base + skip;
        out[k].iov_len = MIN(l - skip, len);
        len -= out[k].iov_len;
        skip = 0;
        k++;
    }
    return k;
}

/* The last byte of the writable part. */
static uint8_t *last_in_byte(const VirtQueueElement *elem)
{
    for (unsigned i = elem->out_num + elem->in_num; i > elem->out_num; i--) {
        const struct iovec *v = &elem->sg[i - 1];

        if (v->iov_len) {
            return (uint8_t *)v->iov_base + v->iov_len - 1;
        }
    }
    return NULL;
}

static bool in_range(uint64_t sector, size_t len, uint64_t capacity)
{
    uint64_t n = len / VIRTIO_BLK_SECTOR_SIZE;

    return sector <= capacity && n <= capacity - sector;
}

/*
 * The segments of a DISCARD or WRITE_ZEROES request (virtio 1.2,
 * 5.2.6.2): each within the disk and the per-segment limit, no reserved
 * flag, and the unmap flag only for WRITE_ZEROES.
 */
static VirtIOBlkParse parse_segments(const VirtQueueElement *elem,
                                     const VirtIOBlkLimits *lim,
                                     VirtIOBlkRequest *req, const char **why)
{
    bool discard = req->type == VIRTIO_BLK_T_DISCARD;
    uint32_t max_sectors = discard ? lim->max_discard_sectors
                                   : lim->max_write_zeroes_sectors;
    uint32_t max_seg = discard ? lim->max_discard_seg
                               : lim->max_write_zeroes_seg;
    size_t len = elem->out_len - sizeof(struct virtio_blk_outhdr);
    struct virtio_blk_discard_write_zeroes seg;

    if (!max_sectors || !max_seg) {
        *why = discard ? "DISCARD not negotiated"
                       : "WRITE_ZEROES not negotiated";
        return VIRTIO_BLK_PARSE_UNSUPP;
    }
    if (lim->read_only) {
        *why = "DISCARD or WRITE_ZEROES on a read-only disk";
        return VIRTIO_BLK_PARSE_IOERR;
    }
    if (!len || len % sizeof(seg)) {
        *why = "segment list not a multiple of 16 bytes";
        return VIRTIO_BLK_PARSE_IOERR;
    }
    if (len / sizeof(seg) > MIN(max_seg, VIRTIO_BLK_MAX_SEGS)) {
        *why = "more segments than the device offers";
        return VIRTIO_BLK_PARSE_UNSUPP;
    }
    req->nsegs = len / sizeof(seg);
    for (unsigned i = 0; i < req->nsegs; i++) {
        uint32_t flags;

        iov_to_buf(elem->sg, elem->out_num,
                   sizeof(struct virtio_blk_outhdr) + i * sizeof(seg),
                   &seg, sizeof(seg));
        req->segs[i].sector = GUINT64_FROM_LE(seg.sector);
        req->segs[i].num_sectors = GUINT32_FROM_LE(seg.num_sectors);
        flags = GUINT32_FROM_LE(seg.flags);
        req->segs[i].unmap = flags & VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP;
        if (flags & ~VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP) {
            *why = "reserved segment flag set";
            return VIRTIO_BLK_PARSE_UNSUPP;
        }
        if (discard && req->segs[i].unmap) {
            *why = "unmap flag set on DISCARD";
            return VIRTIO_BLK_PARSE_UNSUPP;
        }
        if (req->segs[i].num_sectors > max_sectors) {
            *why = "segment longer than the device's limit";
            return VIRTIO_BLK_PARSE_IOERR;
        }
        if (req->segs[i].sector > lim->capacity ||
            req->segs[i].num_sectors > lim->capacity - req->segs[i].sector) {
            *why = "segment beyond the end of the disk";
            return VIRTIO_BLK_PARSE_IOERR;
        }
    }
    return VIRTIO_BLK_PARSE_OK;
}

VirtIOBlkParse virtio_blk_parse(const VirtQueueElement *elem,
                                const VirtIOBlkLimits *lim,
                                VirtIOBlkRequest *req, const char **why)
{
    uint64_t capacity = lim->capacity;
    bool read_only = lim->read_only;

    const struct iovec *out = elem->sg;
    const struct iovec *in = elem->sg + elem->out_num;
    struct virtio_blk_outhdr hdr;
    int k;

    *why = NULL;
    req->data_niov = 0;
    req->data_len = 0;
    req->type = 0;
    req->sector = 0;
    req->nsegs = 0;
    req->status = last_in_byte(elem);
    if (!req->status) {
        *why = "no writable status byte";
        return VIRTIO_BLK_PARSE_NO_STATUS;
    }
    if (elem->out_len < sizeof(hdr)) {
        *why = "request header shorter than 16 bytes";
        return VIRTIO_BLK_PARSE_IOERR;
    }
    iov_to_buf(out, elem->out_num, 0, &hdr, sizeof(hdr));
    req->type = GUINT32_FROM_LE(hdr.type);
    req->sector = GUINT64_FROM_LE(hdr.sector);

    switch (req->type) {
    case VIRTIO_BLK_T_IN:
    case VIRTIO_BLK_T_GET_ID:
        req->data_len = elem->in_len - 1;
        k = iov_slice(in, elem->in_num, 0, req->data_len, req->data,
                      VIRTQUEUE_MAX_SG);
        break;
    case VIRTIO_BLK_T_OUT:
        req->data_len = elem->out_len - sizeof(hdr);
        k = iov_slice(out, elem->out_num, sizeof(hdr), req->data_len,
                      req->data, VIRTQUEUE_MAX_SG);
        break;
    case VIRTIO_BLK_T_FLUSH:
        return VIRTIO_BLK_PARSE_OK;
    case VIRTIO_BLK_T_DISCARD:
    case VIRTIO_BLK_T_WRITE_ZEROES:
        return parse_segments(elem, lim, req, why);
    default:
        *why = "unsupported request type";
        return VIRTIO_BLK_PARSE_UNSUPP;
    }
    if (k < 0) {
        *why = "too many data pieces";
        return VIRTIO_BLK_PARSE_IOERR;
    }
    req->data_niov = k;
    if (req->type == VIRTIO_BLK_T_GET_ID) {
        return VIRTIO_BLK_PARSE_OK;
    }
    if (req->data_len % VIRTIO_BLK_SECTOR_SIZE) {
        *why = "data length not a multiple of 512";
        return VIRTIO_BLK_PARSE_IOERR;
    }
    if (!in_range(req->sector, req->data_len, capacity)) {
        *why = "sector range beyond the end of the disk";
        return VIRTIO_BLK_PARSE_IOERR;
    }
    if (req->type == VIRTIO_BLK_T_OUT && read_only) {
        *why = "write to a read-only disk";
        return VIRTIO_BLK_PARSE_IOERR;
    }
    return VIRTIO_BLK_PARSE_OK;
}
