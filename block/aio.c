/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Asynchronous block I/O with libaio (block.h).  Completions signal an
 * eventfd the owning thread watches.  With O_DIRECT, a request whose
 * buffers or offset do not meet the alignment goes through a bounce
 * buffer.  Where the kernel has no Linux AIO (io_setup ENOSYS: qemu-user,
 * CONFIG_AIO=n, a seccomp filter) requests are served synchronously by
 * the submitting thread and still complete through the eventfd.
 */
#include "qemu/osdep.h"
#include <libaio.h>
#include <sys/eventfd.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "block/block.h"
#include "trace.h"

int block_node_fd(BlockNode *bs);

typedef struct BlockAIOReq {
    struct iocb iocb;
    BlockAIOCompletion *cb;
    void *opaque;
    bool write;
    /* bounce: the caller's iovec, copied back for reads */
    void *bounce;
    struct iovec bounce_iov;
    struct iovec *orig_iov;
    unsigned orig_niov;
    size_t len;
    ssize_t sync_ret;           /* synchronous mode: the result */
} BlockAIOReq;

struct BlockAIO {
    BlockNode *bs;
    io_context_t ctx;
    int efd;
    int fd;
    unsigned depth;
    unsigned inflight;
    unsigned align;
    bool sync;                  /* no Linux AIO: preadv/pwritev */
    GQueue done;                /* synchronous mode: completed requests */
};

BlockAIO *block_aio_new(BlockNode *bs, unsigned depth, Error **errp)
{
    BlockAIO *aio = g_new0(BlockAIO, 1);
    int r;

    aio->bs = bs;
    aio->depth = depth;
    aio->fd = block_node_fd(bs);
    aio->align = block_is_direct(bs) ? block_alignment(bs) : 1;
    aio->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (aio->efd < 0) {
        error_setg_errno(errp, errno, "block %s: cannot create an eventfd",
                         block_node_name(bs));
        g_free(aio);
        return NULL;
    }
    g_queue_init(&aio->done);
    r = io_setup(depth, &aio->ctx);
    if (r == -ENOSYS) {
        warn_report("block %s: Linux AIO is unavailable (io_setup: %s); "
                    "I/O is synchronous", block_node_name(bs), strerror(-r));
        aio->sync = true;
        return aio;
    }
    if (r < 0) {
        error_setg_errno(errp, -r, "block %s: io_setup(%u) failed",
                         block_node_name(bs), depth);
        error_append_hint(errp, "Raise /proc/sys/fs/aio-max-nr.\n");
        close(aio->efd);
        g_free(aio);
        return NULL;
    }
    return aio;
}

void block_aio_free(BlockAIO *aio)
{
    if (!aio) {
        return;
    }
    block_aio_drain(aio);
    if (!aio->sync) {
        io_destroy(aio->ctx);
    }
    close(aio->efd);
    g_free(aio);
}

int block_aio_fd(BlockAIO *aio)
{
    return aio->efd;
}

unsigned block_aio_inflight(BlockAIO *aio)
{
    return aio->inflight;
}

static bool block_aio_aligned(BlockAIO *aio, uint64_t offset,
                              const struct iovec *iov, unsigned niov)
{
    if (aio->align <= 1) {
        return true;
    }
    if (offset % 512) {
        return false;
    }
    for (unsigned i = 0; i < niov; i++) {
        if ((uintptr_t)iov[i].iov_base % aio->align ||
            iov[i].iov_len % 512) {
            return false;
        }
    }
    return true;
}

bool block_aio_rw(BlockAIO *aio, bool write, uint64_t offset,
                  const struct iovec *iov, unsigned niov,
                  BlockAIOCompletion *cb, void *opaque)
{
    BlockAIOReq *req;
    struct iocb *iocbs[1];
    int r;

    if (aio->inflight >= aio->depth) {
        return false;
    }
    req = g_new0(BlockAIOReq, 1);
    req->cb = cb;
    req->opaque = opaque;
    req->write = write;
    if (!block_aio_aligned(aio, offset, iov, niov)) {
        size_t len = 0;

        for (unsigned i = 0; i < niov; i++) {
            len += iov[i].iov_len;
        }
        if (posix_memalign(&req->bounce, MAX(aio->align, 4096),
                           MAX(len, 1))) {
            g_free(req);
            return false;
        }
        req->len = len;
        req->orig_iov = g_memdup2(iov, niov * sizeof(*iov));
        req->orig_niov = niov;
        if (write) {
            size_t off = 0;

            for (unsigned i = 0; i < niov; i++) {
                memcpy((uint8_t *)req->bounce + off, iov[i].iov_base,
                       iov[i].iov_len);
                off += iov[i].iov_len;
            }
        }
        req->bounce_iov.iov_base = req->bounce;
        req->bounce_iov.iov_len = len;
        iov = &req->bounce_iov;
        niov = 1;
    }
    if (aio->sync) {
        ssize_t n;

        do {
            n = write ? pwritev(aio->fd, iov, niov, offset)
                      : preadv(aio->fd, iov, niov, offset);
        } while (n < 0 && errno == EINTR);
        req->sync_ret = n < 0 ? -errno : n;
        g_queue_push_tail(&aio->done, req);
        aio->inflight++;
        eventfd_write(aio->efd, 1);
        return true;
    }
    if (write) {
        io_prep_pwritev(&req->iocb, aio->fd, iov, niov, offset);
    } else {
        io_prep_preadv(&req->iocb, aio->fd, iov, niov, offset);
    }
    io_set_eventfd(&req->iocb, aio->efd);
    req->iocb.data = req;
    iocbs[0] = &req->iocb;
    r = io_submit(aio->ctx, 1, iocbs);
    if (r != 1) {
        free(req->bounce);
        g_free(req->orig_iov);
        g_free(req);
        return false;
    }
    aio->inflight++;
    return true;
}

static void block_aio_finish(BlockAIO *aio, BlockAIOReq *req, ssize_t ret)
{
    aio->inflight--;
    if (req->bounce) {
        if (!req->write && ret > 0) {
            size_t off = 0, left = ret;

            for (unsigned i = 0; i < req->orig_niov && left; i++) {
                size_t l = MIN(left, req->orig_iov[i].iov_len);

                memcpy(req->orig_iov[i].iov_base, (uint8_t *)req->bounce + off,
                       l);
                off += l;
                left -= l;
            }
        }
        free(req->bounce);
        g_free(req->orig_iov);
    }
    req->cb(req->opaque, ret);
    g_free(req);
}

static void block_aio_complete(BlockAIO *aio, struct io_event *ev)
{
    block_aio_finish(aio, ev->data, (ssize_t)(long)ev->res);
}

/* Synchronous mode: complete what the submitters already did. */
static void block_aio_complete_sync(BlockAIO *aio)
{
    BlockAIOReq *req;

    while ((req = g_queue_pop_head(&aio->done))) {
        block_aio_finish(aio, req, req->sync_ret);
    }
}

static void block_aio_reap(BlockAIO *aio, long min)
{
    struct io_event events[64];
    struct timespec zero = { 0, 0 };
    int n;

    do {
        n = io_getevents(aio->ctx, min ? 1 : 0, G_N_ELEMENTS(events), events,
                         min ? NULL : &zero);
        if (n == -EINTR) {
            continue;
        }
        for (int i = 0; i < n; i++) {
            block_aio_complete(aio, &events[i]);
        }
        if (min) {
            min = aio->inflight ? min : 0;
        }
    } while (n == G_N_ELEMENTS(events) || (min && aio->inflight));
}

void block_aio_poll(BlockAIO *aio)
{
    uint64_t cnt;

    if (read(aio->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN) {
        return;
    }
    if (aio->sync) {
        block_aio_complete_sync(aio);
        return;
    }
    block_aio_reap(aio, 0);
}

void block_aio_drain(BlockAIO *aio)
{
    if (aio->sync) {
        block_aio_complete_sync(aio);
        return;
    }
    if (aio->inflight) {
        block_aio_reap(aio, 1);
    }
}
