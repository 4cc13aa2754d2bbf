/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-blk request parsing (virtio 1.x, 5.2.6), a pure function of a
 * popped element so that it can be unit-tested and fuzzed.
 *
 * A request is a 16-byte header (type, reserved, sector) in the
 * device-readable part, then data (readable for writes, DISCARD and
 * WRITE_ZEROES, writable for reads and GET_ID), then one writable status
 * byte at the very end.  The data of DISCARD and WRITE_ZEROES is an array
 * of 16-byte segments (sector, number of sectors, flags).
 */
#ifndef HW_VIRTIO_VIRTIO_BLK_REQ_H
#define HW_VIRTIO_VIRTIO_BLK_REQ_H

#include <stdbool.h>
#include <stdint.h>
#include "hw/virtio/virtqueue.h"

#define VIRTIO_BLK_SECTOR_SIZE 512

typedef enum VirtIOBlkParse {
    VIRTIO_BLK_PARSE_OK,        /* do the I/O */
    VIRTIO_BLK_PARSE_IOERR,     /* complete with VIRTIO_BLK_S_IOERR */
    VIRTIO_BLK_PARSE_UNSUPP,    /* complete with VIRTIO_BLK_S_UNSUPP */
    VIRTIO_BLK_PARSE_NO_STATUS, /* no status byte: return the buffer only */
} VirtIOBlkParse;

/* Most segments one DISCARD or WRITE_ZEROES request may carry. */
#define VIRTIO_BLK_MAX_SEGS 16

/* What the device offers and the driver accepted. */
typedef struct VirtIOBlkLimits {
    uint64_t capacity;          /* 512-byte sectors */
    bool read_only;
    /* 0 when the feature was not negotiated. */
    uint32_t max_discard_sectors;
    uint32_t max_discard_seg;   /* <= VIRTIO_BLK_MAX_SEGS */
    uint32_t max_write_zeroes_sectors;
    uint32_t max_write_zeroes_seg;
} VirtIOBlkLimits;

typedef struct VirtIOBlkSegment {
    uint64_t sector;
    uint32_t num_sectors;
    bool unmap;                 /* WRITE_ZEROES may deallocate */
} VirtIOBlkSegment;

typedef struct VirtIOBlkRequest {
    uint32_t type;
    uint64_t sector;
    uint8_t *status;            /* host address of the status byte */
    struct iovec data[VIRTQUEUE_MAX_SG];
    unsigned data_niov;
    size_t data_len;
    /* DISCARD and WRITE_ZEROES, checked against the limits. */
    VirtIOBlkSegment segs[VIRTIO_BLK_MAX_SEGS];
    unsigned nsegs;
} VirtIOBlkRequest;

/*
 * *why names the problem for the guest error log when the result is not
 * OK.
 */
VirtIOBlkParse virtio_blk_parse(const VirtQueueElement *elem,
                                const VirtIOBlkLimits *lim,
                                VirtIOBlkRequest *req, const char **why);

#endif
