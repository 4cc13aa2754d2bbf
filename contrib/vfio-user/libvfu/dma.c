/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvfu: the DMA table (DMA_MAP/DMA_UNMAP) and access to client memory.
 *
 * Ranges passed with an fd are mmapped and accessed directly; ranges
 * without one are reached with DMA_READ/DMA_WRITE requests to the client.
 * The table is guarded by a writer-preferring rwlock: device threads read,
 * only the dispatch thread writes (see the DMA rule in libvfu.h).
 *
 * The ranges never overlap, so they live in a balanced tree ordered by
 * address: lookups, the overlap check of DMA_MAP and the exact match of
 * DMA_UNMAP each cost O(log n), whatever a client maps (up to
 * max_dma_maps, 65535 by default).
 *
 * Nothing here waits for the client while holding something another of its
 * messages needs.  A device thread waiting for a DMA_READ/WRITE reply holds
 * no libvfu lock; DMA_UNMAP first fails the requests still waiting on the
 * range it removes (the client will not answer for memory it took back),
 * and only ranges with a mapping are announced to ops->dma_map/dma_unmap,
 * since a message-only range has no pointers for the device to drop.  A device
 * that must wait for its own threads in ops->dma_unmap can keep replies to
 * their DMA requests flowing with vfu_serve_replies().
 *
 * The client keeps its fds and could shrink one under our mapping, which
 * would SIGBUS the device on its next access.  A memfd is sealed against
 * shrinking before we look at its size; anything unsealable (a regular
 * file, a memfd without MFD_ALLOW_SEALING) is mapped under the SIGBUS
 * guard of qemu/peer-mem.h, and a client whose memory faulted is dropped.
 */
#include "qemu/osdep.h"
#include <poll.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/peer-mem.h"
#include "libvfu-internal.h"
#include "trace.h"

/* Commands a waiting dispatch thread may read ahead and keep. */
#define VFU_MAX_DEFERRED 64

/* How long a device thread waits for a DMA_READ/WRITE reply. */
#define VFU_DMA_REPLY_TIMEOUT_US (10 * G_TIME_SPAN_SECOND)

static gint dma_range_cmp(gconstpointer a, gconstpointer b, gpointer unused)
{
    const VfuDmaRange *ra = a, *rb = b;

    return ra->iova < rb->iova ? -1 : ra->iova > rb->iova;
}

void vfu_dma_init(VfuCtx *ctx)
{
    ctx->dma = g_tree_new_full(dma_range_cmp, NULL, NULL, g_free);
    /* Checked around every message: never a walk over every range. */
    ctx->dma_guarded = g_ptr_array_new();
    ctx->deferred = g_queue_new();
}

void vfu_msg_free(VfuMsg *msg)
{
    vfu_msg_free_fds(msg);
    if (msg->reply) {
        g_byte_array_free(msg->reply, true);
    }
    g_free(msg->payload);
    g_free(msg);
}

/*
 * A command that arrived while the dispatch thread waited inside a
 * handler: keep it for later (the client may post commands without
 * waiting, e.g. REGION_WRITE with NO_REPLY).  False if too many are kept.
 */
static bool vfu_defer(VfuCtx *ctx, VfuMsg *msg)
{
    if (g_queue_get_length(ctx->deferred) >= VFU_MAX_DEFERRED) {
        return false;
    }
    g_queue_push_tail(ctx->deferred, g_memdup2(msg, sizeof(*msg)));
    return true;
}

VfuMsg *vfu_deferred_pop(VfuCtx *ctx)
{
    return g_queue_pop_head(ctx->deferred);
}

void vfu_deferred_clear(VfuCtx *ctx)
{
    VfuMsg *msg;

    while ((msg = g_queue_pop_head(ctx->deferred))) {
        vfu_msg_free(msg);
    }
}

/* [first, last] (inclusive, so that a range may end at 2^64). */
typedef struct DmaSpan {
    uint64_t first;
    uint64_t last;
} DmaSpan;

/* g_tree_search: which side of a range the span lies on, 0 if they meet. */
static gint dma_span_search(gconstpointer key, gconstpointer data)
{
    const VfuDmaRange *r = key;
    const DmaSpan *q = data;

    if (q->last < r->iova) {
        return -1;
    }
    if (q->first > r->iova + (r->size - 1)) {
        return 1;
    }
    return 0;
}

/* A range overlapping [iova, iova + len), or NULL.  len >= 1, no wrap. */
static VfuDmaRange *dma_overlap(VfuCtx *ctx, uint64_t iova, uint64_t len)
{
    DmaSpan q = { iova, iova + (len - 1) };

    return g_tree_search(ctx->dma, dma_span_search, &q);
}

void vfu_dma_lock(VfuCtx *ctx)
{
    pthread_rwlock_rdlock(&ctx->dma_lock);
}

void vfu_dma_unlock(VfuCtx *ctx)
{
    pthread_rwlock_unlock(&ctx->dma_lock);
}

unsigned vfu_dma_count(VfuCtx *ctx)
{
    unsigned n;

    vfu_dma_lock(ctx);
    n = g_tree_nnodes(ctx->dma);
    vfu_dma_unlock(ctx);
    return n;
}

/* Range fully containing [iova, iova+len), or NULL.  Lock held. */
static VfuDmaRange *dma_find(VfuCtx *ctx, uint64_t iova, uint64_t len)
{
    VfuDmaRange *r;

    if (!len || len - 1 > UINT64_MAX - iova) {
        return NULL;
    }
    /* Ranges are disjoint: the one holding iova is the only candidate. */
    r = dma_overlap(ctx, iova, 1);
    if (r && len <= r->size - (iova - r->iova)) {
        return r;
    }
    return NULL;
}

void *vfu_dma_ptr(VfuCtx *ctx, uint64_t iova, uint64_t len, bool write)
{
    VfuDmaRange *r = dma_find(ctx, iova, len);

    if (!r || !r->ptr ||
        !(r->flags & (write ? VFIO_USER_DMA_MAP_FLAG_WRITE
                            : VFIO_USER_DMA_MAP_FLAG_READ))) {
        return NULL;
    }
    return r->ptr + (iova - r->iova);
}

int vfu_handle_dma_map(VfuCtx *ctx, VfuMsg *msg)
{
    g_autofree VfuDmaRange *range = g_new0(VfuDmaRange, 1);
    VFIOUserDMAMap m;
    Error *err = NULL;
    int err_no = EINVAL;
    int fd = -1;

    if (!vfio_user_dma_map_decode(msg->payload, msg->len, msg->nfds, &m,
                                  &err_no, &err)) {
        trace_vfu_msg_error(msg->hdr.id, "DMA_MAP", error_get_pretty(err));
        error_free(err);
        return -err_no;
    }
    if (msg->nfds) {
        fd = msg->fds[0];
    }
    trace_vfu_dma_map(m.address, m.size, m.offset, m.flags, fd);
    if ((uint64_t)g_tree_nnodes(ctx->dma) >= ctx->max_dma_maps) {
        return -ENOSPC;
    }
    /* The decoder refused empty and wrapping ranges. */
    if (dma_overlap(ctx, m.address, m.size)) {
        return -EEXIST;
    }
    range->iova = m.address;
    range->size = m.size;
    range->flags = m.flags;
    range->guard = -1;
    if (fd >= 0) {
        long page = sysconf(_SC_PAGESIZE);
        uint64_t start = QEMU_ALIGN_DOWN(m.offset, page);
        uint64_t len = m.offset - start + m.size;
        struct stat st;
        bool sealed;
        int prot = 0;
        void *p;

        if (len > SIZE_MAX) {
            return -ENOMEM;
        }
        /* Seal first: a size checked before sealing proves nothing. */
        sealed = qemu_peer_fd_seal_shrink(fd);
        /*
         * A mapping past the end of a file maps fine, but the device's
         * first access there would kill us with SIGBUS.
         */
        if (fstat(fd, &st) < 0) {
            return -errno;
        }
        if (S_ISREG(st.st_mode) &&
            (m.offset > (uint64_t)st.st_size ||
             m.size > (uint64_t)st.st_size - m.offset)) {
            trace_vfu_msg_error(msg->hdr.id, "DMA_MAP",
                                "range ends past the end of its fd");
            return -EINVAL;
        }
        if (m.flags & VFIO_USER_DMA_MAP_FLAG_READ) {
            prot |= PROT_READ;
        }
        if (m.flags & VFIO_USER_DMA_MAP_FLAG_WRITE) {
            prot |= PROT_WRITE;
        }
        p = mmap(NULL, len, prot, MAP_SHARED, fd, start);
        if (p == MAP_FAILED) {
            return -errno;
        }
        if (!sealed) {
            range->guard = qemu_peer_mem_guard(p, len);
            if (range->guard < 0) {
                int ret = range->guard;

                munmap(p, len);
                trace_vfu_msg_error(msg->hdr.id, "DMA_MAP",
                                    "no SIGBUS guard slot for an unsealed fd");
                return ret;
            }
        }
        trace_vfu_dma_map_fd(sealed, range->guard);
        range->map_base = p;
        range->map_len = len;
        range->ptr = (uint8_t *)p + (m.offset - start);
    }
    pthread_rwlock_wrlock(&ctx->dma_lock);
    g_tree_insert(ctx->dma, range, range);
    if (range->guard >= 0) {
        g_ptr_array_add(ctx->dma_guarded, range);
    }
    g_steal_pointer(&range);
    pthread_rwlock_unlock(&ctx->dma_lock);
    /* As dma_unmap: only ranges a device can hold pointers into. */
    if (fd >= 0 && ctx->ops->dma_map) {
        ctx->ops->dma_map(ctx, ctx->opaque, m.address, m.size);
    }
    return 0;
}

/*
 * Device requests still waiting for a DMA_READ/WRITE reply inside
 * [iova, iova + size) fail now with -EFAULT: the client took that memory
 * back and need not answer for it, and the device thread must not wait.
 */
static void dma_fail_pending_in(VfuCtx *ctx, uint64_t iova, uint64_t size)
{
    g_mutex_lock(&ctx->req_lock);
    for (guint i = 0; i < ctx->pending->len; i++) {
        VfuPending *p = g_ptr_array_index(ctx->pending, i);

        if (!p->done && p->count &&
            vfio_user_ranges_overlap(iova, size, p->address, p->count)) {
            trace_vfu_dma_msg_cancelled(p->id, p->address, p->count);
            p->done = true;
            p->err = -EFAULT;
        }
    }
    g_cond_broadcast(&ctx->req_cond);
    g_mutex_unlock(&ctx->req_lock);
}

/* Removes r: tells the device first, then unmaps under the lock. */
static void dma_remove(VfuCtx *ctx, VfuDmaRange *range)
{
    VfuDmaRange r = *range;

    dma_fail_pending_in(ctx, r.iova, r.size);
    /* A message-only range has no pointers a device could hold. */
    if (r.map_base && ctx->ops->dma_unmap) {
        ctx->ops->dma_unmap(ctx, ctx->opaque, r.iova, r.size);
    }
    pthread_rwlock_wrlock(&ctx->dma_lock);
    if (r.guard >= 0) {
        g_ptr_array_remove_fast(ctx->dma_guarded, range);
    }
    g_tree_remove(ctx->dma, range);
    pthread_rwlock_unlock(&ctx->dma_lock);
    if (r.map_base) {
        qemu_peer_mem_unguard(r.guard);
        munmap(r.map_base, r.map_len);
    }
}

static gboolean dma_first_cb(gpointer key, gpointer value, gpointer data)
{
    *(VfuDmaRange **)data = value;
    return TRUE;
}



/*
 * Whether the client shrank an fd under one of our mappings (the guard
 * repaired the access with zeroes).  Dispatch thread: the table is ours.
 */
bool vfu_dma_peer_faulted(VfuCtx *ctx)
{
    /* Only guarded ranges can fault (at most QEMU_PEER_MEM_GUARD_SLOTS). */
    for (guint i = 0; i < ctx->dma_guarded->len; i++) {
        VfuDmaRange *r = g_ptr_array_index(ctx->dma_guarded, i);

        if (qemu_peer_mem_faulted(r->guard)) {
            error_report("libvfu: the client shrank the memory behind DMA "
                         "range 0x%" PRIx64 "+0x%" PRIx64 "; dropping it",
                         r->iova, r->size);
            return true;
        }
    }
    return false;
}

void vfu_dma_unmap_all(VfuCtx *ctx)
{
    for (;;) {
        VfuDmaRange *r = NULL;

        g_tree_foreach(ctx->dma, dma_first_cb, &r);
        if (!r) {
            break;
        }
        dma_remove(ctx, r);
    }
}

int vfu_handle_dma_unmap(VfuCtx *ctx, VfuMsg *msg)
{
    VFIOUserDMAUnmap u;
    Error *err = NULL;
    int err_no = EINVAL;

    if (!vfio_user_dma_unmap_decode(msg->payload, msg->len, msg->nfds, &u,
                                    &err_no, &err)) {
        trace_vfu_msg_error(msg->hdr.id, "DMA_UNMAP", error_get_pretty(err));
        error_free(err);
        return -err_no;
    }
    trace_vfu_dma_unmap(u.address, u.size, u.flags);
    if (u.flags & VFIO_DMA_UNMAP_FLAG_ALL) {
        vfu_dma_unmap_all(ctx);
    } else {
        /* The spec requires an exact match with an earlier DMA_MAP. */
        VfuDmaRange key = { .iova = u.address };
        VfuDmaRange *r = g_tree_lookup(ctx->dma, &key);

        if (!r || r->size != u.size) {
            return -ENOENT;
        }
        dma_remove(ctx, r);
    }
    g_byte_array_append(msg->reply, (const guint8 *)&u, sizeof(u));
    return 0;
}

/* ---- DMA_READ / DMA_WRITE to the client ---- */

static uint16_t next_request_id(VfuCtx *ctx)
{
    uint16_t id;

    g_mutex_lock(&ctx->req_lock);
    id = ctx->next_id++;
    g_mutex_unlock(&ctx->req_lock);
    return id;
}

static int check_reply(VfuMsg *msg, VfuPending *p)
{
    Error *err = NULL;

    if (msg->hdr.flags & VFIO_USER_F_ERROR) {
        return msg->hdr.error_reply ? -(int)msg->hdr.error_reply : -EIO;
    }
    if (msg->nfds ||
        !vfio_user_dma_rw_reply_check(msg->payload, msg->len, p->is_write,
                                      p->address, p->count, &err)) {
        if (err) {
            trace_vfu_msg_error(msg->hdr.id, "DMA reply",
                                error_get_pretty(err));
            error_free(err);
        }
        return -EIO;
    }
    if (!p->is_write) {
        memcpy(p->buf, msg->payload + sizeof(VFIOUserDMARW), p->count);
    }
    return 0;
}

void vfu_dma_handle_reply(VfuCtx *ctx, VfuMsg *msg)
{
    g_mutex_lock(&ctx->req_lock);
    for (guint i = 0; i < ctx->pending->len; i++) {
        VfuPending *p = g_ptr_array_index(ctx->pending, i);

        if (p->id == msg->hdr.id && p->command == msg->hdr.command &&
            !p->done) {
            p->err = check_reply(msg, p);
            p->done = true;
            g_cond_broadcast(&ctx->req_cond);
            break;
        }
    }
    /* A reply nobody waits for (late, or bogus) is dropped. */
    g_mutex_unlock(&ctx->req_lock);
}

void vfu_dma_fail_pending(VfuCtx *ctx)
{
    g_mutex_lock(&ctx->req_lock);
    for (guint i = 0; i < ctx->pending->len; i++) {
        VfuPending *p = g_ptr_array_index(ctx->pending, i);

        if (!p->done) {
            p->done = true;
            p->err = -ENOTCONN;
        }
    }
    g_cond_broadcast(&ctx->req_cond);
    g_mutex_unlock(&ctx->req_lock);
}

/*
 * On the dispatch thread nobody else reads the socket, so read until our
 * reply arrives.  Commands the client posted meanwhile are kept for after
 * the current handler; any other reply, or too many commands, is a
 * protocol error.
 */
static int wait_reply_inline(VfuCtx *ctx, VfuPending *p)
{
    for (;;) {
        Error *err = NULL;
        VfuMsg msg;
        int ret = vfu_recv(ctx, &msg, &err);

        if (ret <= 0) {
            error_free(err);
            ctx->conn_broken = true;
            return -ENOTCONN;
        }
        if ((msg.hdr.flags & VFIO_USER_F_TYPE_MASK) ==
                VFIO_USER_F_TYPE_COMMAND && vfu_defer(ctx, &msg)) {
            continue;
        }
        if ((msg.hdr.flags & VFIO_USER_F_TYPE_MASK) ==
                VFIO_USER_F_TYPE_REPLY &&
            msg.hdr.id == p->id && msg.hdr.command == p->command) {
            ret = check_reply(&msg, p);
        } else {
            ctx->conn_broken = true;
            ret = -EPROTO;
        }
        vfu_msg_free_fds(&msg);
        g_free(msg.payload);
        return ret;
    }
}

static int dma_msg_chunk(VfuCtx *ctx, bool is_write, uint64_t iova,
                         void *buf, uint64_t len)
{
    uint16_t cmd = is_write ? VFIO_USER_DMA_WRITE : VFIO_USER_DMA_READ;
    size_t plen = sizeof(VFIOUserDMARW) + (is_write ? len : 0);
    g_autofree VFIOUserDMARW *req = g_malloc(plen);
    VfuPending p = {
        .id = next_request_id(ctx), .command = cmd, .is_write = is_write,
        .address = iova, .count = len, .buf = buf,
    };
    bool inline_wait = vfu_on_dispatch_thread(ctx);
    gint64 deadline;
    int ret;

    req->address = iova;
    req->count = len;
    if (is_write) {
        memcpy(req->data, buf, len);
    }
    trace_vfu_dma_msg(vfio_user_command_name(cmd), p.id, iova, len);
    if (!inline_wait) {
        g_mutex_lock(&ctx->req_lock);
        g_ptr_array_add(ctx->pending, &p);
        g_mutex_unlock(&ctx->req_lock);
    }
    if (!vfu_send(ctx, p.id, cmd, VFIO_USER_F_TYPE_COMMAND, 0, req, plen,
                  -1)) {
        ret = -ENOTCONN;
        goto out;
    }
    if (inline_wait) {
        return wait_reply_inline(ctx, &p);
    }
    deadline = g_get_monotonic_time() + VFU_DMA_REPLY_TIMEOUT_US;
    g_mutex_lock(&ctx->req_lock);
    while (!p.done) {
        if (!g_cond_wait_until(&ctx->req_cond, &ctx->req_lock, deadline)) {
            break;
        }
    }
    ret = p.done ? p.err : -ETIMEDOUT;
    /* Mark done so a late reply cannot write into our stack. */
    p.done = true;
    g_mutex_unlock(&ctx->req_lock);
out:
    if (!inline_wait) {
        g_mutex_lock(&ctx->req_lock);
        g_ptr_array_remove_fast(ctx->pending, &p);
        g_mutex_unlock(&ctx->req_lock);
    }
    return ret;
}

static int dma_rw(VfuCtx *ctx, uint64_t iova, void *buf, uint64_t len,
                  bool is_write)
{
    VfuDmaRange *r;
    uint64_t chunk;

    if (!len) {
        return 0;
    }
    vfu_dma_lock(ctx);
    r = dma_find(ctx, iova, len);
    if (!r || !(r->flags & (is_write ? VFIO_USER_DMA_MAP_FLAG_WRITE
                                     : VFIO_USER_DMA_MAP_FLAG_READ))) {
        vfu_dma_unlock(ctx);
        return -EFAULT;
    }
    if (r->ptr) {
        uint8_t *p = r->ptr + (iova - r->iova);
        int ret;

        if (is_write) {
            memcpy(p, buf, len);
            vfu_dma_mark_dirty(ctx, iova, len);
        } else {
            memcpy(buf, p, len);
        }
        /* The copy went through zero pages, not the client's memory. */
        ret = qemu_peer_mem_faulted(r->guard) ? -EFAULT : 0;
        vfu_dma_unlock(ctx);
        return ret;
    }
    vfu_dma_unlock(ctx);

    /* Replies must also fit what we accept ourselves. */
    chunk = MAX(MIN(ctx->peer.max_data_xfer_size,
                    ctx->ours.max_data_xfer_size), 1);
    while (len) {
        uint64_t n = MIN(len, chunk);
        int ret = dma_msg_chunk(ctx, is_write, iova, buf, n);

        if (ret < 0) {
            return ret;
        }
        iova += n;
        buf = (uint8_t *)buf + n;
        len -= n;
    }
    return 0;
}

int vfu_dma_read(VfuCtx *ctx, uint64_t iova, void *buf, uint64_t len)
{
    return dma_rw(ctx, iova, buf, len, false);
}

int vfu_dma_write(VfuCtx *ctx, uint64_t iova, const void *buf, uint64_t len)
{
    return dma_rw(ctx, iova, (void *)buf, len, true);
}

void vfu_serve_replies(VfuCtx *ctx, unsigned timeout_ms)
{
    struct pollfd pfd = { .fd = ctx->conn_fd, .events = POLLIN };
    Error *err = NULL;
    VfuMsg msg;
    int ret;

    if (!vfu_on_dispatch_thread(ctx) || ctx->conn_fd < 0 ||
        ctx->conn_broken ||
        g_queue_get_length(ctx->deferred) >= VFU_MAX_DEFERRED) {
        g_usleep(100);
        return;
    }
    if (poll(&pfd, 1, timeout_ms) <= 0) {
        return;
    }
    ret = vfu_recv(ctx, &msg, &err);
    if (ret <= 0) {
        error_free(err);
        ctx->conn_broken = true;
        vfu_dma_fail_pending(ctx);
        return;
    }
    if ((msg.hdr.flags & VFIO_USER_F_TYPE_MASK) == VFIO_USER_F_TYPE_REPLY) {
        vfu_dma_handle_reply(ctx, &msg);
    } else if (vfu_defer(ctx, &msg)) {
        /* A posted command: served after the current handler. */
        return;
    }
    vfu_msg_free_fds(&msg);
    g_free(msg.payload);
}

void vfu_dma_free(VfuCtx *ctx)
{
    vfu_dma_unmap_all(ctx);
    g_tree_destroy(ctx->dma);
    g_ptr_array_free(ctx->dma_guarded, true);
    vfu_deferred_clear(ctx);
    g_queue_free(ctx->deferred);
}
