/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-blk-pci: a block node behind a virtio 1.x block device (5.2).
 *
 * One request queue, served by the transport's worker thread: requests
 * are parsed (virtio-blk-req.c), reads and writes go to libaio and
 * complete from its eventfd in the same thread; FLUSH runs fdatasync
 * there, after the writes completed before it, and so never holds the
 * BQL.  DISCARD and WRITE_ZEROES also run there, synchronously (hole
 * punching or zeroing: quick, and the guest orders them itself).
 * Requests the guest got wrong complete with IOERR or UNSUPP.
 */
#include "qemu/osdep.h"
#include "system/memory.h"
#include <linux/virtio_blk.h>
#include <linux/virtio_ids.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "block/block.h"
#include "hw/virtio/virtio-pci.h"
#include "hw/virtio/virtio-blk-req.h"
#include "trace.h"

#define TYPE_VIRTIO_BLK_PCI "virtio-blk-pci"
#define VIRTIO_BLK_PCI(obj) \
    OBJECT_CHECK(VirtIOBlkPCI, (obj), TYPE_VIRTIO_BLK_PCI)

typedef struct VirtIOBlkPCI {
    VirtIOPCIProxy parent_obj;

    BlockNode *bs;
    BlockAIO *aio;              /* worker thread only */

    char *drive;
    char *serial;
    uint16_t queue_size;
    uint16_t num_queues;
    bool discard;
    bool write_zeroes;
    uint32_t max_discard_sectors;
    uint32_t max_write_zeroes_sectors;
    OnOffAuto write_cache;      /* off: each write is durable on completion */
    int32_t bootindex;
    BlockErrorAction werror;
    BlockErrorAction rerror;
    uint32_t logical_block_size;
    uint32_t physical_block_size;
    uint32_t min_io_size;
    uint32_t opt_io_size;
    bool share_rw;
} VirtIOBlkPCI;

/* BlockErrorAction order; "auto" keeps what the drive says. */
static const char *const virtio_blk_error_names[] = {
    "report", "ignore", "enospc", "stop", "auto", NULL,
};

/* Request queues (num-queues): the transport's limit less one vector. */
#define VIRTIO_BLK_MAX_QUEUES 32
/* Default segment limit: just under 2 GiB, as QEMU's. */
#define VIRTIO_BLK_MAX_REQ_SECTORS ((INT32_MAX & ~4095) / 512)
/* Segments per DISCARD / WRITE_ZEROES request the device offers. */
#define VIRTIO_BLK_SEGS_OFFERED 16

typedef struct VirtIOBlkInflight {
    VirtIOBlkPCI *s;
    GuestMemMap *map;
    VirtIOBlkRequest req;
    uint16_t head;
    unsigned q;                 /* the queue it came from */
    VirtQueueElement elem;      /* keeps the iovec the aio points into */
} VirtIOBlkInflight;

static void virtio_blk_complete(VirtIOBlkPCI *s, GuestMemMap *map,
                                unsigned q, uint16_t head, uint8_t *status,
                                uint8_t val, uint32_t len)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(s);

    if (status) {
        *status = val;
        memory_ram_mark_dirty_hva(status, 1);
    }
    /* The request goes back on the queue it came from. */
    virtqueue_push(&proxy->vqs[q].vq, map, head, len);
    /*
     * Also while a VM stop drains the queue: an entry added without its
     * interrupt would wait for one after cont or on a migration's
     * destination that nothing ever sends.
     */
    if (!__atomic_load_n(&proxy->resetting, __ATOMIC_ACQUIRE)) {
        virtio_pci_notify_queue(proxy, q, map);
    }
}

static void virtio_blk_rw_done(void *opaque, ssize_t ret)
{
    VirtIOBlkInflight *r = opaque;
    VirtIOBlkPCI *s = r->s;
    bool write = r->req.type == VIRTIO_BLK_T_OUT;
    bool ok = ret >= 0 && (size_t)ret == r->req.data_len;

    /* write-cache=off: the guest sees no cache, so nothing may be lost. */
    if (ok && write && s->write_cache == ON_OFF_AUTO_OFF) {
        ret = block_flush(s->bs);
        ok = ret >= 0;
    }

    trace_virtio_blk_rw_done(virtio_pci_name(VIRTIO_PCI(s)), r->head,
                             r->req.sector, r->req.data_len, write, ret);
    block_account(s->bs, write ? BLOCK_ACCT_WRITE : BLOCK_ACCT_READ,
                  r->req.data_len, !ok);
    if (!ok) {
        error_report("virtio-blk %s: %s at sector %" PRIu64 " failed: %s",
                     virtio_pci_name(VIRTIO_PCI(s)), write ? "write" : "read",
                     r->req.sector, ret < 0 ? g_strerror(-ret) : "short");
    }
    if (!write) {
        /* The read landed in guest RAM behind the memory API's back. */
        for (unsigned i = 0; i < r->req.data_niov; i++) {
            memory_ram_mark_dirty_hva(r->req.data[i].iov_base,
                                      r->req.data[i].iov_len);
        }
    }
    virtio_blk_complete(s, r->map, r->q, r->head, r->req.status,
                        ok ? VIRTIO_BLK_S_OK : VIRTIO_BLK_S_IOERR,
                        write ? 1 : (ok ? r->req.data_len + 1 : 1));
    guest_mem_map_unref(r->map);
    g_free(r);
}

static void virtio_blk_get_id(VirtIOBlkPCI *s, VirtIOBlkRequest *req)
{
    char id[VIRTIO_BLK_ID_BYTES] = { 0 };

    if (s->serial) {
        memcpy(id, s->serial, MIN(strlen(s->serial), sizeof(id)));
    }
    iov_from_buf(req->data, req->data_niov, 0, id,
                 MIN(req->data_len, sizeof(id)));
}

static bool virtio_blk_negotiated(VirtIOBlkPCI *s, unsigned bit)
{
    return VIRTIO_PCI(s)->guest_features & (1ull << bit);
}

static void virtio_blk_limits(VirtIOBlkPCI *s, VirtIOBlkLimits *lim)
{
    *lim = (VirtIOBlkLimits) {
        .capacity = block_size(s->bs) / VIRTIO_BLK_SECTOR_SIZE,
        .read_only = block_is_read_only(s->bs),
    };
    if (virtio_blk_negotiated(s, VIRTIO_BLK_F_DISCARD)) {
        lim->max_discard_sectors = s->max_discard_sectors;
        lim->max_discard_seg = VIRTIO_BLK_SEGS_OFFERED;
    }
    if (virtio_blk_negotiated(s, VIRTIO_BLK_F_WRITE_ZEROES)) {
        lim->max_write_zeroes_sectors = s->max_write_zeroes_sectors;
        lim->max_write_zeroes_seg = VIRTIO_BLK_SEGS_OFFERED;
    }
}

/* Every segment of a parsed DISCARD or WRITE_ZEROES; 0 or -errno. */
static int virtio_blk_segments(VirtIOBlkPCI *s, const VirtIOBlkRequest *req)
{
    for (unsigned i = 0; i < req->nsegs; i++) {
        uint64_t off = req->segs[i].sector * VIRTIO_BLK_SECTOR_SIZE;
        uint64_t len = (uint64_t)req->segs[i].num_sectors *
                       VIRTIO_BLK_SECTOR_SIZE;
        int ret;

        if (req->type == VIRTIO_BLK_T_DISCARD) {
            ret = block_discard(s->bs, off, len);
        } else {
            ret = block_write_zeroes(s->bs, off, len, req->segs[i].unmap);
        }
        block_account(s->bs, req->type == VIRTIO_BLK_T_DISCARD ?
                      BLOCK_ACCT_DISCARD : BLOCK_ACCT_WRITE,
                      ret < 0 ? 0 : len, ret < 0);
        if (ret < 0) {
            error_report("virtio-blk %s: %s of %" PRIu64 " sectors at "
                         "sector %" PRIu64 " failed: %s",
                         virtio_pci_name(VIRTIO_PCI(s)),
                         req->type == VIRTIO_BLK_T_DISCARD ? "discard"
                                                           : "write zeroes",
                         len / VIRTIO_BLK_SECTOR_SIZE, req->segs[i].sector,
                         g_strerror(-ret));
            return ret;
        }
    }
    /* Without a write cache the zeroes are durable on completion too. */
    if (req->type == VIRTIO_BLK_T_WRITE_ZEROES &&
        s->write_cache == ON_OFF_AUTO_OFF) {
        return block_flush(s->bs);
    }
    return 0;
}

static void virtio_blk_handle_one(VirtIOBlkPCI *s, GuestMemMap *map,
                                  VirtIOBlkInflight *r)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(s);
    VirtIOBlkRequest *req = &r->req;
    VirtIOBlkLimits lim;
    const char *why;
    VirtIOBlkParse p;
    int ret;

    virtio_blk_limits(s, &lim);
    p = virtio_blk_parse(&r->elem, &lim, req, &why);
    trace_virtio_blk_request(virtio_pci_name(proxy), r->head, req->type,
                             req->sector, req->data_len, p);
    switch (p) {
    case VIRTIO_BLK_PARSE_NO_STATUS:
        /* Nowhere to put a status: as a chain without an end. */
        qemu_log_guest_error("virtio-blk %s: request %u: %s\n",
                             virtio_pci_name(proxy), r->head, why);
        g_free(r);
        proxy->vqs[0].vq.broken = true;
        virtio_pci_set_needs_reset(proxy, "request without a status byte");
        return;
    case VIRTIO_BLK_PARSE_IOERR:
    case VIRTIO_BLK_PARSE_UNSUPP:
        qemu_log_guest_error("virtio-blk %s: request %u: %s\n",
                             virtio_pci_name(proxy), r->head, why);
        virtio_blk_complete(s, map, r->q, r->head, req->status,
                            p == VIRTIO_BLK_PARSE_UNSUPP ? VIRTIO_BLK_S_UNSUPP
                                                         : VIRTIO_BLK_S_IOERR,
                            req->status ? 1 : 0);
        g_free(r);
        return;
    case VIRTIO_BLK_PARSE_OK:
        break;
    }
    switch (req->type) {
    case VIRTIO_BLK_T_FLUSH:
        /* Completed writes are on the medium before the status. */
        ret = block_flush(s->bs);
        block_account(s->bs, BLOCK_ACCT_FLUSH, 0, ret < 0);
        virtio_blk_complete(s, map, r->q, r->head, req->status,
                            ret < 0 ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK, 1);
        g_free(r);
        return;
    case VIRTIO_BLK_T_DISCARD:
    case VIRTIO_BLK_T_WRITE_ZEROES:
        ret = virtio_blk_segments(s, req);
        virtio_blk_complete(s, map, r->q, r->head, req->status,
                            ret < 0 ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK, 1);
        g_free(r);
        return;
    case VIRTIO_BLK_T_GET_ID:
        virtio_blk_get_id(s, req);
        virtio_blk_complete(s, map, r->q, r->head, req->status,
                            VIRTIO_BLK_S_OK,
                            MIN(req->data_len, VIRTIO_BLK_ID_BYTES) + 1);
        g_free(r);
        return;
    default:
        break;
    }
    if (!req->data_len) {
        virtio_blk_complete(s, map, r->q, r->head, req->status,
                            VIRTIO_BLK_S_OK, 1);
        g_free(r);
        return;
    }
    r->s = s;
    r->map = guest_mem_map_ref(map);
    if (!block_aio_rw(s->aio, req->type == VIRTIO_BLK_T_OUT,
                      req->sector * VIRTIO_BLK_SECTOR_SIZE, req->data,
                      req->data_niov, virtio_blk_rw_done, r)) {
        guest_mem_map_unref(r->map);
        error_report("virtio-blk %s: cannot submit I/O at sector %" PRIu64,
                     virtio_pci_name(proxy), req->sector);
        virtio_blk_complete(s, map, r->q, r->head, req->status,
                            VIRTIO_BLK_S_IOERR, 1);
        g_free(r);
    }
}

static void virtio_blk_handle_queue(VirtIOPCIProxy *proxy, unsigned q,
                                    GuestMemMap *map)
{
    VirtIOBlkPCI *s = VIRTIO_BLK_PCI(proxy);
    VirtQueue *vq = &proxy->vqs[q].vq;

    for (;;) {
        VirtIOBlkInflight *r = g_new(VirtIOBlkInflight, 1);
        const char *why;
        VirtQueuePop res = virtqueue_pop(vq, map, &r->elem, &why);

        switch (res) {
        case VIRTQUEUE_EMPTY:
            g_free(r);
            if (virtqueue_enable_notify(vq, map)) {
                continue;
            }
            return;
        case VIRTQUEUE_BROKEN:
            g_free(r);
            virtio_pci_set_needs_reset(proxy, why);
            return;
        case VIRTQUEUE_BAD_CHAIN:
            qemu_log_guest_error("virtio-blk %s: request %u: %s\n",
                                 virtio_pci_name(proxy), r->elem.index, why);
            /*
             * The status byte is the last byte of the chain (5.2.6).  A
             * chain without a usable end cannot get one, and no other
             * byte may stand in for it: the device needs a reset.
             */
            if (!r->elem.tail) {
                g_free(r);
                vq->broken = true;
                virtio_pci_set_needs_reset(proxy, "request without a "
                                           "status byte");
                return;
            }
            virtio_blk_complete(s, map, q, r->elem.index, r->elem.tail,
                                VIRTIO_BLK_S_IOERR, 1);
            g_free(r);
            continue;
        case VIRTQUEUE_OK:
            r->head = r->elem.index;
            r->q = q;
            virtio_blk_handle_one(s, map, r);
            continue;
        }
    }
}

static gboolean virtio_blk_aio_ready(gint fd, GIOCondition cond,
                                     gpointer opaque)
{
    VirtIOBlkPCI *s = opaque;

    block_aio_poll(s->aio);
    return G_SOURCE_CONTINUE;
}

static bool virtio_blk_start(VirtIOPCIProxy *proxy, Error **errp)
{
    VirtIOBlkPCI *s = VIRTIO_BLK_PCI(proxy);

    unsigned depth = 0;

    if (s->aio) {
        /*
         * Restarted after a VM stop: the context is drained but may hold
         * requests an error policy stopped on, which cont submits again.
         */
        virtio_pci_worker_watch(proxy, block_aio_fd(s->aio), G_IO_IN,
                                virtio_blk_aio_ready, s);
        return true;
    }

    /* Room for every request of every queue in flight at once. */
    for (unsigned q = 0; q < proxy->nvqs; q++) {
        depth += proxy->vqs[q].enabled ? proxy->vqs[q].vq.num : 0;
    }
    s->aio = block_aio_new(s->bs, MAX(depth, 1), errp);
    if (!s->aio) {
        return false;
    }
    virtio_pci_worker_watch(proxy, block_aio_fd(s->aio), G_IO_IN,
                            virtio_blk_aio_ready, s);
    return true;
}

static void virtio_blk_drain(VirtIOPCIProxy *proxy)
{
    VirtIOBlkPCI *s = VIRTIO_BLK_PCI(proxy);

    block_aio_drain(s->aio);
}

static void virtio_blk_reset(VirtIOPCIProxy *proxy)
{
    VirtIOBlkPCI *s = VIRTIO_BLK_PCI(proxy);

    /* The worker has drained and exited: nothing uses the ring now. */
    block_aio_free(s->aio);
    s->aio = NULL;
}

static void virtio_blk_set_config(VirtIOPCIProxy *proxy)
{
    VirtIOBlkPCI *s = VIRTIO_BLK_PCI(proxy);
    struct virtio_blk_config cfg = { 0 };

    cfg.capacity = GUINT64_TO_LE(block_size(s->bs) / 512);
    cfg.seg_max = GUINT32_TO_LE(MIN(s->queue_size, VIRTQUEUE_MAX_SG) - 2);
    cfg.blk_size = GUINT32_TO_LE(s->logical_block_size);
    cfg.physical_block_exp = __builtin_ctz(s->physical_block_size /
                                           s->logical_block_size);
    cfg.alignment_offset = 0;
    cfg.min_io_size = GUINT16_TO_LE(s->min_io_size / s->logical_block_size);
    cfg.opt_io_size = GUINT32_TO_LE(s->opt_io_size / s->logical_block_size);
    cfg.num_queues = GUINT16_TO_LE(s->num_queues);
    if (s->discard) {
        cfg.max_discard_sectors = GUINT32_TO_LE(s->max_discard_sectors);
        cfg.max_discard_seg = GUINT32_TO_LE(VIRTIO_BLK_SEGS_OFFERED);
        /* Linux's discard granularity: a host file system block. */
        cfg.discard_sector_alignment =
            GUINT32_TO_LE(MAX(block_alignment(s->bs), 4096) / 512);
    }
    if (s->write_zeroes) {
        cfg.max_write_zeroes_sectors =
            GUINT32_TO_LE(s->max_write_zeroes_sectors);
        cfg.max_write_zeroes_seg = GUINT32_TO_LE(VIRTIO_BLK_SEGS_OFFERED);
        cfg.write_zeroes_may_unmap = block_may_unmap(s->bs);
    }
    memcpy(proxy->config, &cfg, sizeof(cfg));
}

/* block_resize: the new capacity and a configuration interrupt. */
static void virtio_blk_resized(void *opaque, uint64_t new_size)
{
    VirtIOPCIProxy *proxy = opaque;

    virtio_blk_set_config(proxy);
    virtio_pci_notify_config(proxy);
}

static bool virtio_blk_check_block_sizes(VirtIOBlkPCI *s, const char *name,
                                         Error **errp)
{
    uint32_t l = s->logical_block_size, p;

    if (l < 512 || l > 32768 || (l & (l - 1))) {
        error_setg(errp, "virtio-blk-pci %s: logical_block_size=%u must be "
                   "a power of 2 between 512 and 32768", name, l);
        return false;
    }
    if (!s->physical_block_size) {
        s->physical_block_size = l;
    }
    p = s->physical_block_size;
    if (p < l || p > 32768 * 64 || (p & (p - 1))) {
        error_setg(errp, "virtio-blk-pci %s: physical_block_size=%u must be "
                   "a power of 2 and at least logical_block_size (%u)", name,
                   p, l);
        return false;
    }
    if ((s->min_io_size % l) || (s->opt_io_size % l) ||
        s->min_io_size / l > UINT16_MAX) {
        error_setg(errp, "virtio-blk-pci %s: min_io_size and opt_io_size "
                   "must be multiples of logical_block_size", name);
        return false;
    }
    if (block_size(s->bs) % l) {
        error_setg(errp, "virtio-blk-pci %s: the disk size is not a "
                   "multiple of logical_block_size=%u", name, l);
        return false;
    }
    return true;
}

static bool virtio_blk_realize(VirtIOPCIProxy *proxy, Error **errp)
{
    VirtIOBlkPCI *s = VIRTIO_BLK_PCI(proxy);
    const char *name = virtio_pci_name(proxy);

    if (!s->drive) {
        error_setg(errp, "virtio-blk-pci %s: drive property not set", name);
        error_append_hint(errp, "Add drive=NODE naming a -blockdev "
                          "node-name or a -drive id.\n");
        return false;
    }
    s->bs = block_find(s->drive);
    if (!s->bs) {
        error_setg(errp, "virtio-blk-pci %s: drive '%s' not found", name,
                   s->drive);
        error_append_hint(errp, "Define it with -blockdev ...,node-name=%s "
                          "or -drive ...,if=none,id=%s.\n", s->drive,
                          s->drive);
        return false;
    }
    if (s->num_queues < 1 || s->num_queues > VIRTIO_BLK_MAX_QUEUES) {
        error_setg(errp, "virtio-blk-pci %s: num-queues=%u is not between 1 "
                   "and %u", name, s->num_queues, VIRTIO_BLK_MAX_QUEUES);
        return false;
    }
    if (s->queue_size < 4 || s->queue_size > VIRTQUEUE_MAX_SIZE ||
        (s->queue_size & (s->queue_size - 1))) {
        error_setg(errp, "virtio-blk-pci %s: queue-size=%u must be a power "
                   "of 2 between 4 and %u", name, s->queue_size,
                   VIRTQUEUE_MAX_SIZE);
        return false;
    }
    if (s->serial && strlen(s->serial) > VIRTIO_BLK_ID_BYTES) {
        warn_report("virtio-blk-pci %s: serial is truncated to %d bytes",
                    name, VIRTIO_BLK_ID_BYTES);
    }
    if (block_size(s->bs) % 512) {
        warn_report("virtio-blk-pci %s: the image size is not a multiple "
                    "of 512; the last %u bytes are not visible", name,
                    (unsigned)(block_size(s->bs) % 512));
    }
    if ((s->discard && !s->max_discard_sectors) ||
        (s->write_zeroes && !s->max_write_zeroes_sectors)) {
        error_setg(errp, "virtio-blk-pci %s: max-discard-sectors and "
                   "max-write-zeroes-sectors must not be 0", name);
        error_append_hint(errp, "Turn the request off with discard=off or "
                          "write-zeroes=off instead.\n");
        return false;
    }
    /* A read-only disk offers neither: both would fail. */
    if (block_is_read_only(s->bs)) {
        s->discard = false;
        s->write_zeroes = false;
    }
    if (!virtio_blk_check_block_sizes(s, name, errp)) {
        return false;
    }
    if (s->rerror == BLOCK_ERROR_ENOSPC) {
        error_setg(errp, "virtio-blk-pci %s: rerror=enospc is not supported",
                   name);
        error_append_hint(errp, "Use report, ignore or stop.\n");
        return false;
    }
    if (!block_attach_shared(s->bs, DEVICE(s), virtio_pci_backend(proxy),
                             s->share_rw, errp)) {
        return false;
    }
    block_set_error_policy(s->bs, s->werror, s->rerror);
    block_add_resize_notifier(s->bs, virtio_blk_resized, proxy);
    /* num-queues: one request queue each, all served by the worker. */
    proxy->nvqs = s->num_queues;
    for (unsigned q = 0; q < s->num_queues; q++) {
        proxy->vqs[q].max_size = s->queue_size;
    }
    if (s->num_queues > 1) {
        proxy->host_features |= 1ull << VIRTIO_BLK_F_MQ;
    }
    proxy->host_features |= (1ull << VIRTIO_BLK_F_SEG_MAX) |
                            (1ull << VIRTIO_BLK_F_BLK_SIZE) |
                            (1ull << VIRTIO_BLK_F_TOPOLOGY);
    /* A volatile write cache the guest must flush, unless write-cache=off. */
    if (s->write_cache != ON_OFF_AUTO_OFF) {
        proxy->host_features |= 1ull << VIRTIO_BLK_F_FLUSH;
    }
    if (block_is_read_only(s->bs)) {
        proxy->host_features |= 1ull << VIRTIO_BLK_F_RO;
    }
    if (s->discard) {
        proxy->host_features |= 1ull << VIRTIO_BLK_F_DISCARD;
    }
    if (s->write_zeroes) {
        proxy->host_features |= 1ull << VIRTIO_BLK_F_WRITE_ZEROES;
    }
    proxy->config_len = sizeof(struct virtio_blk_config);
    proxy->config = g_malloc0(proxy->config_len);
    virtio_blk_set_config(proxy);
    return true;
}

static void virtio_blk_unrealize(VirtIOPCIProxy *proxy)
{
    VirtIOBlkPCI *s = VIRTIO_BLK_PCI(proxy);

    if (s->bs) {
        block_remove_resize_notifier(s->bs, virtio_blk_resized, proxy);
        block_detach_dev(s->bs, DEVICE(s));
        s->bs = NULL;
    }
}

static const Property virtio_blk_props[] = {
    DEFINE_PROP_STRING("drive", VirtIOBlkPCI, drive,
                       .description = "block node-name or -drive id"),
    DEFINE_PROP_STRING("serial", VirtIOBlkPCI, serial,
                       .description = "disk serial number (20 bytes)"),
    DEFINE_PROP_UINT16("queue-size", VirtIOBlkPCI, queue_size, 256,
                       .description = "descriptors per queue (power of 2)"),
    DEFINE_PROP_UINT16("num-queues", VirtIOBlkPCI, num_queues, 1,
                       .description = "request queues (1)"),
    DEFINE_PROP_BOOL("discard", VirtIOBlkPCI, discard, true,
                     .description = "offer DISCARD (frees blocks only "
                                    "with the node's discard=unmap)"),
    DEFINE_PROP_BOOL("write-zeroes", VirtIOBlkPCI, write_zeroes, true,
                     .description = "offer WRITE_ZEROES"),
    DEFINE_PROP_UINT32("max-discard-sectors", VirtIOBlkPCI,
                       max_discard_sectors, VIRTIO_BLK_MAX_REQ_SECTORS,
                       .description = "largest DISCARD segment, sectors"),
    DEFINE_PROP_UINT32("max-write-zeroes-sectors", VirtIOBlkPCI,
                       max_write_zeroes_sectors, VIRTIO_BLK_MAX_REQ_SECTORS,
                       .description = "largest WRITE_ZEROES segment, "
                                      "sectors"),
    DEFINE_PROP_ON_OFF_AUTO("write-cache", VirtIOBlkPCI, write_cache,
                            ON_OFF_AUTO_AUTO,
                            .description = "on/auto: a write cache the "
                                           "guest flushes (FLUSH offered); "
                                           "off: every write is durable "
                                           "when it completes"),
    DEFINE_PROP_ENUM("werror", VirtIOBlkPCI, werror, BLOCK_ERROR_AUTO,
                     virtio_blk_error_names,
                     .description = "on write errors: report, ignore, "
                                    "enospc (stop on ENOSPC), stop, auto"),
    DEFINE_PROP_ENUM("rerror", VirtIOBlkPCI, rerror, BLOCK_ERROR_AUTO,
                     virtio_blk_error_names,
                     .description = "on read errors: report, ignore, stop, "
                                    "auto"),
    DEFINE_PROP_UINT32("logical_block_size", VirtIOBlkPCI,
                       logical_block_size, 512,
                       .description = "logical block size (bytes)"),
    DEFINE_PROP_UINT32("physical_block_size", VirtIOBlkPCI,
                       physical_block_size, 0,
                       .description = "physical block size (bytes; 0: the "
                                      "logical size)"),
    DEFINE_PROP_UINT32("min_io_size", VirtIOBlkPCI, min_io_size, 0,
                       .description = "minimum I/O size (bytes)"),
    DEFINE_PROP_UINT32("opt_io_size", VirtIOBlkPCI, opt_io_size, 0,
                       .description = "optimal I/O size (bytes)"),
    DEFINE_PROP_BOOL("share-rw", VirtIOBlkPCI, share_rw, false,
                     .description = "let other users write the disk too "
                                    "(other devices, other processes)"),
    DEFINE_PROP_INT32("bootindex", VirtIOBlkPCI, bootindex, -1,
                      .description = "boot order (accepted for "
                                     "compatibility: no firmware)"),
    DEFINE_PROP_END_OF_LIST(),
};

static void virtio_blk_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    VirtIOPCIClass *vc = VIRTIO_PCI_CLASS(klass);

    dc->desc = "virtio block device (virtio 1.x, PCI)";
    device_class_set_props(dc, virtio_blk_props);
    /* Class: mass storage, SCSI (as QEMU reports). */
    virtio_pci_class_set_device(klass, VIRTIO_ID_BLOCK, 0x0100);
    vc->realize = virtio_blk_realize;
    vc->unrealize = virtio_blk_unrealize;
    vc->start = virtio_blk_start;
    vc->handle_queue = virtio_blk_handle_queue;
    vc->drain = virtio_blk_drain;
    vc->reset = virtio_blk_reset;
}

static const TypeInfo virtio_blk_types[] = {
    {
        .name = TYPE_VIRTIO_BLK_PCI,
        .parent = TYPE_VIRTIO_PCI,
        .instance_size = sizeof(VirtIOBlkPCI),
        .class_init = virtio_blk_class_init,
    },
};

DEFINE_TYPES(virtio_blk_types)
