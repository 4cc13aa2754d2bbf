/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvfu: the DMA table (DMA_MAP/DMA_UNMAP) and access to client memory.
 *
 * Ranges passed with an fd are mmapped and accessed directly; ranges
 * without one are reached with DMA_READ/DMA_WRITE requests to the client.
 * The table is guarded by a writer-preferring rwlock: device threads read,
 * only the dispatch thread writes (see the DMA rule in libvfu.h).
 *
 * The client keeps its fds and could shrink one under our mapping, which
 * would SIGBUS the device on its next access.  A memfd is sealed against
 * shrinking before we look at its size; anything unsealable (a regular
 * file, a memfd without MFD_ALLOW_SEALING) is mapped under the SIGBUS
 * guard of qemu/peer-mem.h, and a client whose memory faulted is dropped.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/peer-mem.h"
#include "libvfu-internal.h"
#include "trace.h"

/* How long a device thread waits for a DMA_READ/WRITE reply. */
#define VFU_DMA_REPLY_TIMEOUT_US (10 * G_TIME_SPAN_SECOND)

void vfu_dma_init(VfuCtx *ctx)
{
    ctx->dma = g_array_new(false, true, sizeof(VfuDmaRange));
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
    n = ctx->dma->len;
    vfu_dma_unlock(ctx);
    return n;
}

/* Range fully containing [iova, iova+len), or NULL.  Lock held. */
static VfuDmaRange *dma_find(VfuCtx *ctx, uint64_t iova, uint64_t len)
{
    if (!len || len - 1 > UINT64_MAX - iova) {
        return NULL;
    }
    for (guint i = 0; i < ctx->dma->len; i++) {
        VfuDmaRange *r = &g_array_index(ctx->dma, VfuDmaRange, i);

        if (iova >= r->iova && iova - r->iova <= r->size - 1 &&
            len <= r->size - (iova - r->iova)) {
            return r;
        }
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
    VfuDmaRange range = { 0 };
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
    if (ctx->dma->len >= ctx->max_dma_maps) {
        return -ENOSPC;
    }
    for (guint i = 0; i < ctx->dma->len; i++) {
        VfuDmaRange *r = &g_array_index(ctx->dma, VfuDmaRange, i);

        if (vfio_user_ranges_overlap(r->iova, r->size, m.address, m.size)) {
            return -EEXIST;
        }
    }
    range.iova = m.address;
    range.size = m.size;
    range.flags = m.flags;
    range.guard = -1;
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
            range.guard = qemu_peer_mem_guard(p, len);
            if (range.guard < 0) {
                int ret = range.guard;

                munmap(p, len);
                trace_vfu_msg_error(msg->hdr.id, "DMA_MAP",
                                    "no SIGBUS guard slot for an unsealed fd");
                return ret;
            }
        }
        trace_vfu_dma_map_fd(sealed, range.guard);
        range.map_base = p;
        range.map_len = len;
        range.ptr = (uint8_t *)p + (m.offset - start);
    }
    pthread_rwlock_wrlock(&ctx->dma_lock);
    g_array_append_val(ctx->dma, range);
    pthread_rwlock_unlock(&ctx->dma_lock);
    if (ctx->ops->dma_map) {
        ctx->ops->dma_map(ctx, ctx->opaque, m.address, m.size);
    }
    return 0;
}

/* Removes entry i: tells the device first, then unmaps under the lock. */
static void dma_remove(VfuCtx *ctx, guint i)
{
    VfuDmaRange r = g_array_index(ctx->dma, VfuDmaRange, i);

    if (ctx->ops->dma_unmap) {
        ctx->ops->dma_unmap(ctx, ctx->opaque, r.iova, r.size);
    }
    pthread_rwlock_wrlock(&ctx->dma_lock);
    g_array_remove_index_fast(ctx->dma, i);
    pthread_rwlock_unlock(&ctx->dma_lock);
    if (r.map_base) {
        qemu_peer_mem_unguard(r.guard);
        munmap(r.map_base, r.map_len);
    }
}

/*
 * Whether the client shrank an fd under one of our mappings (the guard
 * repaired the access with zeroes).  Dispatch thread: the table is ours.
 */
bool vfu_dma_peer_faulted(VfuCtx *ctx)
{
    for (guint i = 0; i < ctx->dma->len; i++) {
        VfuDmaRange *r = &g_array_index(ctx->dma, VfuDmaRange, i);

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
    while (ctx->dma->len) {
        dma_remove(ctx, ctx->dma->len - 1);
    }
}

int vfu_handle_dma_unmap(VfuCtx *ctx, VfuMsg *msg)
{
    VFIOUserDMAUnmap u;
    Error *err = NULL;
    int err_no = EINVAL;
    guint i;

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
        for (i = 0; i < ctx->dma->len; i++) {
            VfuDmaRange *r = &g_array_index(ctx->dma, VfuDmaRange, i);

            if (r->iova == u.address && r->size == u.size) {
                break;
            }
        }
        if (i == ctx->dma->len) {
            return -ENOENT;
        }
        dma_remove(ctx, i);
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
 * reply arrives.  The client is waiting on us, so anything but our reply
 * is a protocol error.
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

void vfu_dma_free(VfuCtx *ctx)
{
    vfu_dma_unmap_all(ctx);
    g_array_free(ctx->dma, true);
}
