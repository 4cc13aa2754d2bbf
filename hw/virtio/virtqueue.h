/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Split virtqueues (virtio 1.x, 2.7): the device side of the descriptor
 * table, the available ring and the used ring, over a GuestMemMap.
 *
 * Everything the driver wrote is hostile.  virtqueue_pop() walks one
 * descriptor chain with these rules and reports what it found:
 *   - the available index may run at most the queue size ahead of us and
 *     a head must be below the queue size, else the queue is BROKEN (the
 *     device cannot tell which buffer to return; it sets NEEDS_RESET);
 *   - a chain longer than its table (a loop), a next index out of range,
 *     a nested or chained indirect table, an indirect table whose length
 *     is not a multiple of 16, an indirect descriptor without the
 *     feature, a readable descriptor after a writable one, a buffer that
 *     is not guest RAM, or more than VIRTQUEUE_MAX_SG pieces make the
 *     chain BAD: the element carries the head (to be returned to the
 *     driver with an error), whatever could be mapped, and where the
 *     chain's last byte is if its structure has an end (elem->tail).
 * The caller owns the element until virtqueue_push().  Functions need no
 * lock but must be called from one thread at a time per queue.
 */
#ifndef HW_VIRTIO_VIRTQUEUE_H
#define HW_VIRTIO_VIRTQUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/uio.h>
#include "hw/virtio/guest-mem.h"

#define VIRTQUEUE_MAX_SIZE 1024
#define VIRTQUEUE_MAX_SG 1024

typedef struct VirtQueue {
    /* Driver-programmed (common config), fixed once enabled. */
    uint16_t num;
    uint64_t desc;
    uint64_t avail;
    uint64_t used;
    bool indirect;          /* VIRTIO_RING_F_INDIRECT_DESC negotiated */
    bool event_idx;         /* VIRTIO_RING_F_EVENT_IDX negotiated */

    /* Device state. */
    uint16_t last_avail_idx;
    uint16_t used_idx;
    uint16_t signalled_used;
    bool signalled_used_valid;
    bool broken;
} VirtQueue;

typedef struct VirtQueueElement {
    uint16_t index;         /* head descriptor: what push returns */
    unsigned out_num;       /* device-readable pieces, first in sg[] */
    unsigned in_num;        /* device-writable pieces, after them */
    size_t out_len;
    size_t in_len;
    /*
     * BAD_CHAIN only: the last byte of the chain's last descriptor, if
     * the chain has one (no loop, indices in range) that is writable and
     * in RAM: where the device may put a status.  Otherwise NULL, and the
     * device cannot report the error in the chain (NEEDS_RESET).
     */
    uint8_t *tail;
    struct iovec sg[VIRTQUEUE_MAX_SG];
} VirtQueueElement;

typedef enum VirtQueuePop {
    VIRTQUEUE_EMPTY,        /* nothing available */
    VIRTQUEUE_OK,           /* elem holds a well-formed chain */
    VIRTQUEUE_BAD_CHAIN,    /* elem->index valid; return it with an error */
    VIRTQUEUE_BROKEN,       /* ring unusable until reset */
} VirtQueuePop;

/* Resets the device state (not the driver-programmed addresses). */
void virtqueue_reset_state(VirtQueue *vq);
/* The rings lie in RAM with the alignment the spec requires. */
bool virtqueue_rings_valid(const VirtQueue *vq, const GuestMemMap *map);
/* Number of available buffers not yet popped (0 if the ring is bad). */
bool virtqueue_empty(VirtQueue *vq, const GuestMemMap *map);
VirtQueuePop virtqueue_pop(VirtQueue *vq, const GuestMemMap *map,
                           VirtQueueElement *elem, const char **why);
/* Puts head index with len bytes written on the used ring. */
bool virtqueue_push(VirtQueue *vq, const GuestMemMap *map, uint16_t index,
                    uint32_t len);
/* After pushes: does the driver want an interrupt (event idx / flags)? */
bool virtqueue_should_notify(VirtQueue *vq, const GuestMemMap *map);
/*
 * With event idx: publishes how far we have looked (avail_event) and
 * returns true if more buffers arrived meanwhile.  Without: just checks.
 */
bool virtqueue_enable_notify(VirtQueue *vq, const GuestMemMap *map);

/*
 * What the rings say now, for diagnostics (x-query-virtio): the driver's
 * indices as they are in guest memory beside the device's own.  Read
 * without synchronisation with the queue's owner; -1 where a ring is
 * not in RAM.
 */
typedef struct VirtQueueSnapshot {
    int avail_idx;          /* the driver's avail->idx */
    int avail_flags;
    int used_event;         /* event idx: where the driver wants an irq */
    int used_idx;           /* used->idx in guest memory */
    int avail_event;        /* event idx: where we asked for a kick */
    uint16_t last_avail_idx;
    uint16_t device_used_idx;
    uint16_t signalled_used;
    bool signalled_used_valid;
    bool event_idx;
    bool broken;
} VirtQueueSnapshot;

void virtqueue_snapshot(const VirtQueue *vq, const GuestMemMap *map,
                        VirtQueueSnapshot *s);

/* Copies between an iovec array and a flat buffer; returns bytes copied. */
size_t iov_to_buf(const struct iovec *iov, unsigned n, size_t offset,
                  void *buf, size_t len);
size_t iov_from_buf(const struct iovec *iov, unsigned n, size_t offset,
                    const void *buf, size_t len);
size_t iov_size(const struct iovec *iov, unsigned n);

#endif
