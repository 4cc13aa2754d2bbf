/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Asynchronous block I/O with libaio (block.h), in the device's I/O
 * thread.  A request on a raw or file node goes to the kernel as it is;
 * on a format node (qcow2) it is first mapped (block_int.h) into extents
 * of host files, each its own iocb, and completes when the last one
 * does.  With O_DIRECT, an extent whose buffers or offset do not meet the
 * alignment goes through a bounce buffer.  Where the kernel has no Linux
 * AIO (io_setup ENOSYS: qemu-user, CONFIG_AIO=n, a seccomp filter)
 * extents are served synchronously by the submitting thread and still
 * complete through the eventfd.
 *
 * The device-level policies live here too, so every device gets them:
 *  - throttling: a request over its throttle group's limits waits in a
 *    queue until a timerfd fires (throttle.h);
 *  - detect-zeroes: a write of zeroes becomes a write-zeroes request;
 *  - werror/rerror: a failed request the policy says to stop on is held;
 *    the main loop emits BLOCK_IO_ERROR and stops the VM, and when the VM
 *    runs again (cont) the held requests are submitted again.
 * block_aio_fd() is an epoll fd over the completion eventfd and the
 * timerfd, so the device watches one fd.
 */
#include "qemu/osdep.h"
#include <libaio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "monitor/monitor.h"
#include "system/runstate.h"
#include "block/block_int.h"
#include "trace.h"

typedef struct BlockAIOReq BlockAIOReq;

/* One iocb: an extent of a request (or a whole raw request). */
typedef struct BlockAIOSub {
    struct iocb iocb;
    BlockAIOReq *req;
    bool write;
    size_t len;
    GArray *iov;                /* struct iovec: the slice, or NULL */
    void *bounce;
    struct iovec bounce_iov;
    const struct iovec *user_iov;   /* where a bounced read goes */
    unsigned user_niov;
    ssize_t sync_ret;
} BlockAIOSub;

struct BlockAIOReq {
    BlockAIO *aio;
    BlockNode *bs;              /* the node it started on */
    BlockAIOCompletion *cb;
    void *opaque;
    bool write;
    uint64_t offset;
    const struct iovec *iov;
    unsigned niov;
    size_t len;
    unsigned pending;
    ssize_t err;
    bool started;
};

struct BlockAIO {
    BlockNode *bs;              /* the device's node (follows redirects) */
    io_context_t ctx;
    int efd;
    int tfd;
    int epfd;
    unsigned depth;
    unsigned inflight;          /* guest requests */
    bool sync;                  /* no Linux AIO: preadv/pwritev */
    GQueue done;                /* requests that completed without an iocb */
    GQueue throttled;
    bool timer_armed;
    /* werror/rerror=stop: held requests (I/O thread) */
    GQueue failed;
    bool retry;                 /* atomic: the VM runs again */
    VMChangeStateEntry *vmstate;
    QEMUBH *error_bh;
    GMutex error_lock;
    GQueue error_events;        /* JsonObject *, for the main loop */
    bool stop_requested;
};

static void block_aio_fail_held(BlockAIO *aio);

static BlockNode *block_aio_node(BlockAIO *aio)
{
    BlockNode *bs = aio->bs, *next;

    while ((next = qatomic_read(&bs->redirect))) {
        bs = next;
    }
    return bs;
}

static void block_aio_vm_state(void *opaque, bool running, RunState state)
{
    BlockAIO *aio = opaque;

    if (running) {
        qatomic_set(&aio->retry, true);
        eventfd_write(aio->efd, 1);
    }
}

/* Main loop: the I/O thread's error events, then stop the VM once. */
static void block_aio_error_bh(void *opaque)
{
    BlockAIO *aio = opaque;
    JsonObject *ev;
    bool stop;

    g_mutex_lock(&aio->error_lock);
    stop = aio->stop_requested;
    aio->stop_requested = false;
    while ((ev = g_queue_pop_head(&aio->error_events))) {
        g_mutex_unlock(&aio->error_lock);
        qapi_event_send("BLOCK_IO_ERROR", ev);
        g_mutex_lock(&aio->error_lock);
    }
    g_mutex_unlock(&aio->error_lock);
    if (stop && runstate_is_running()) {
        vm_stop(RUN_STATE_IO_ERROR);
    }
}

BlockAIO *block_aio_new(BlockNode *bs, unsigned depth, Error **errp)
{
    BlockAIO *aio = g_new0(BlockAIO, 1);
    struct epoll_event ev = { .events = EPOLLIN };
    int r;

    aio->bs = bs;
    aio->depth = depth;
    aio->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    aio->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    aio->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (aio->efd < 0 || aio->tfd < 0 || aio->epfd < 0) {
        error_setg_errno(errp, errno, "block %s: cannot create the I/O "
                         "event fds", block_node_name(bs));
        goto fail;
    }
    ev.data.fd = aio->efd;
    epoll_ctl(aio->epfd, EPOLL_CTL_ADD, aio->efd, &ev);
    ev.data.fd = aio->tfd;
    epoll_ctl(aio->epfd, EPOLL_CTL_ADD, aio->tfd, &ev);
    g_queue_init(&aio->done);
    g_queue_init(&aio->throttled);
    g_queue_init(&aio->failed);
    g_queue_init(&aio->error_events);
    g_mutex_init(&aio->error_lock);
    aio->error_bh = qemu_bh_new(block_aio_error_bh, aio);
    aio->vmstate = qemu_add_vm_change_state_handler(block_aio_vm_state, aio);
    /* Extents of format nodes may need more iocbs than requests. */
    r = io_setup(depth * 4 + 16, &aio->ctx);
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
        qemu_del_vm_change_state_handler(aio->vmstate);
        qemu_bh_delete(aio->error_bh);
        g_mutex_clear(&aio->error_lock);
        goto fail;
    }
    return aio;
fail:
    if (aio->efd >= 0) {
        close(aio->efd);
    }
    if (aio->tfd >= 0) {
        close(aio->tfd);
    }
    if (aio->epfd >= 0) {
        close(aio->epfd);
    }
    g_free(aio);
    return NULL;
}

void block_aio_free(BlockAIO *aio)
{
    JsonObject *ev;

    if (!aio) {
        return;
    }
    block_aio_drain(aio);
    block_aio_fail_held(aio);
    if (!aio->sync) {
        io_destroy(aio->ctx);
    }
    qemu_del_vm_change_state_handler(aio->vmstate);
    qemu_bh_delete(aio->error_bh);
    while ((ev = g_queue_pop_head(&aio->error_events))) {
        json_object_unref(ev);
    }
    g_mutex_clear(&aio->error_lock);
    close(aio->efd);
    close(aio->tfd);
    close(aio->epfd);
    g_free(aio);
}

int block_aio_fd(BlockAIO *aio)
{
    return aio->epfd;
}

unsigned block_aio_inflight(BlockAIO *aio)
{
    return aio->inflight;
}

static bool block_aio_aligned(BlockNode *leaf, uint64_t offset,
                              const struct iovec *iov, unsigned niov)
{
    unsigned align = leaf->direct ? leaf->alignment : 1;

    if (align <= 1) {
        return true;
    }
    if (offset % 512) {
        return false;
    }
    for (unsigned i = 0; i < niov; i++) {
        if ((uintptr_t)iov[i].iov_base % align || iov[i].iov_len % 512) {
            return false;
        }
    }
    return true;
}

static void block_aio_req_finish(BlockAIOReq *req);

static void block_aio_sub_done(BlockAIOSub *sub, ssize_t ret)
{
    BlockAIOReq *req = sub->req;

    if (sub->bounce) {
        if (!sub->write && ret > 0) {
            block_iov_from_buf(sub->user_iov, sub->user_niov, 0, sub->bounce,
                               MIN((size_t)ret, sub->len));
        }
        free(sub->bounce);
    }
    if (ret >= 0 && (size_t)ret < sub->len) {
        if (sub->write || !req->bs->fmt) {
            ret = -EIO;         /* short: the caller's old contract */
        } else {
            /* A format node's cluster past the end of file: zeroes. */
            const struct iovec *v = sub->iov ? (struct iovec *)sub->iov->data
                                             : req->iov;
            unsigned n = sub->iov ? sub->iov->len : req->niov;

            block_iov_memset(v, n, ret, 0, sub->len - ret);
        }
    }
    if (ret < 0 && !req->err) {
        req->err = ret;
    }
    if (sub->iov) {
        g_array_free(sub->iov, true);
    }
    g_free(sub);
    if (--req->pending == 0 && req->started) {
        block_aio_req_finish(req);
    }
}

/* Submits one extent; completes it synchronously if the ring is full. */
static void block_aio_submit(BlockAIOReq *req, BlockNode *leaf,
                             uint64_t offset, const struct iovec *iov,
                             unsigned niov, size_t len, GArray *owned)
{
    BlockAIO *aio = req->aio;
    BlockAIOSub *sub = g_new0(BlockAIOSub, 1);
    struct iocb *iocbs[1];

    sub->req = req;
    sub->write = req->write;
    sub->len = len;
    sub->iov = owned;
    req->pending++;
    if (!block_aio_aligned(leaf, offset, iov, niov)) {
        if (posix_memalign(&sub->bounce, MAX(leaf->alignment, 4096),
                           MAX(len, 1))) {
            sub->bounce = NULL;
            block_aio_sub_done(sub, -ENOMEM);
            return;
        }
        sub->user_iov = iov;
        sub->user_niov = niov;
        if (req->write) {
            block_iov_to_buf(iov, niov, 0, sub->bounce, len);
        }
        sub->bounce_iov = (struct iovec) { sub->bounce, len };
        iov = &sub->bounce_iov;
        niov = 1;
    }
    if (!aio->sync) {
        if (req->write) {
            io_prep_pwritev(&sub->iocb, leaf->fd, iov, niov, offset);
        } else {
            io_prep_preadv(&sub->iocb, leaf->fd, iov, niov, offset);
        }
        io_set_eventfd(&sub->iocb, aio->efd);
        sub->iocb.data = sub;
        iocbs[0] = &sub->iocb;
        if (io_submit(aio->ctx, 1, iocbs) == 1) {
            return;
        }
    }
    /* Synchronously: no Linux AIO, or the kernel refused the iocb. */
    {
        ssize_t n;

        do {
            n = req->write ? pwritev(leaf->fd, iov, niov, offset)
                           : preadv(leaf->fd, iov, niov, offset);
        } while (n < 0 && errno == EINTR);
        block_aio_sub_done(sub, n < 0 ? -errno : n);
    }
}

static void block_aio_defer(BlockAIOReq *req)
{
    g_queue_push_tail(&req->aio->done, req);
    eventfd_write(req->aio->efd, 1);
}

/* Maps and submits a request (throttling already passed). */
static void block_aio_start(BlockAIOReq *req)
{
    BlockAIO *aio = req->aio;
    BlockNode *bs = block_aio_node(aio);
    BlockMap m;
    int ret = 0;

    req->bs = bs;
    req->err = 0;
    req->started = false;
    qatomic_inc(&bs->inflight);
    if (req->write && bs->detect_zeroes != BLOCK_DETECT_ZEROES_OFF &&
        block_iov_is_zero(req->iov, req->niov)) {
        ret = block_write_zeroes(bs, req->offset, req->len,
                                 bs->detect_zeroes ==
                                 BLOCK_DETECT_ZEROES_UNMAP);
        req->err = ret < 0 ? ret : 0;
        req->started = true;
        block_aio_defer(req);
        return;
    }
    if (!bs->fmt) {
        /* raw / file: the request as it is, on the leaf's fd */
        block_aio_submit(req, block_leaf(bs), req->offset, req->iov,
                         req->niov, req->len, NULL);
        req->started = true;
        if (!req->pending) {
            block_aio_defer(req);
        }
        return;
    }
    block_map_init(&m, req->iov, req->niov);
    g_mutex_lock(&bs->lock);
    ret = block_map(bs, req->write, req->offset, req->len, &m, 0);
    g_mutex_unlock(&bs->lock);
    if (ret < 0) {
        req->err = ret;
    } else {
        for (guint i = 0; i < m.ext->len; i++) {
            BlockExtent *e = &g_array_index(m.ext, BlockExtent, i);
            GArray *slice = g_array_new(false, false, sizeof(struct iovec));

            block_iov_slice(req->iov, req->niov, e->qoff, e->len, slice);
            block_aio_submit(req, e->leaf, e->host_off,
                             (struct iovec *)slice->data, slice->len, e->len,
                             slice);
        }
    }
    block_map_destroy(&m);
    req->started = true;
    if (!req->pending) {
        block_aio_defer(req);
    }
}

static void block_aio_queue_error(BlockAIO *aio, BlockAIOReq *req,
                                  BlockErrorAction action, int err)
{
    JsonObject *ev = json_object_new();
    const char *name = action == BLOCK_ERROR_STOP ? "stop"
                       : action == BLOCK_ERROR_IGNORE ? "ignore" : "report";

    BlockNode *top = block_aio_node(aio);

    json_object_set_string_member(ev, "device",
                                  top->drive_id ? top->drive_id : "");
    json_object_set_string_member(ev, "node-name", req->bs->node_name);
    json_object_set_string_member(ev, "operation",
                                  req->write ? "write" : "read");
    json_object_set_string_member(ev, "action", name);
    json_object_set_boolean_member(ev, "nospace", err == -ENOSPC);
    json_object_set_string_member(ev, "reason", g_strerror(-err));
    g_mutex_lock(&aio->error_lock);
    g_queue_push_tail(&aio->error_events, ev);
    if (action == BLOCK_ERROR_STOP) {
        aio->stop_requested = true;
    }
    g_mutex_unlock(&aio->error_lock);
    qemu_bh_schedule(aio->error_bh);
}

static void block_aio_req_finish(BlockAIOReq *req)
{
    BlockAIO *aio = req->aio;
    BlockNode *top = block_aio_node(aio);
    ssize_t ret = req->err ? req->err : (ssize_t)req->len;

    qatomic_dec(&req->bs->inflight);
    if (!req->err && req->write) {
        uint64_t end = req->offset + req->len;

        for (BlockNode *n = req->bs; n; n = n->file) {
            uint64_t cur = qatomic_read(&n->wr_highest_offset);

            while (cur < end &&
                   !__atomic_compare_exchange_n(&n->wr_highest_offset, &cur,
                                                end, false, __ATOMIC_SEQ_CST,
                                                __ATOMIC_SEQ_CST)) {
            }
        }
    }
    if (req->err) {
        BlockErrorAction a = req->write ? top->werror : top->rerror;

        if (a == BLOCK_ERROR_AUTO) {
            a = req->write ? BLOCK_ERROR_ENOSPC : BLOCK_ERROR_REPORT;
        }
        if (a == BLOCK_ERROR_ENOSPC) {
            a = req->err == -ENOSPC ? BLOCK_ERROR_STOP : BLOCK_ERROR_REPORT;
        }
        trace_block_aio_error(top->node_name, req->write, req->offset,
                              req->len, (int)req->err,
                              block_error_action_name(a));
        if (a == BLOCK_ERROR_STOP) {
            /* Before the event: a client reacting to it sees the status. */
            qatomic_set(&top->io_status, req->err == -ENOSPC ?
                        BLOCK_IO_STATUS_NOSPACE : BLOCK_IO_STATUS_FAILED);
        }
        block_aio_queue_error(aio, req, a, req->err);
        if (a == BLOCK_ERROR_STOP) {
            /* Held until the VM runs again; then submitted again. */
            g_queue_push_tail(&aio->failed, req);
            return;
        }
        if (a == BLOCK_ERROR_IGNORE) {
            ret = req->len;
        }
    }
    aio->inflight--;
    req->cb(req->opaque, ret);
    g_free(req);
}

static int64_t block_aio_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void block_aio_arm(BlockAIO *aio, int64_t ns)
{
    struct itimerspec its = {
        .it_value = { ns / 1000000000, ns % 1000000000 },
    };

    if (!its.it_value.tv_sec && !its.it_value.tv_nsec) {
        its.it_value.tv_nsec = 1;
    }
    timerfd_settime(aio->tfd, 0, &its, NULL);
    aio->timer_armed = true;
}

/* Starts the throttled requests whose time came. */
static void block_aio_run_throttled(BlockAIO *aio, bool force)
{
    BlockAIOReq *req;

    while ((req = g_queue_peek_head(&aio->throttled))) {
        ThrottleGroupState *tg = qatomic_read(&block_aio_node(aio)->throttle);
        int64_t wait = (!tg || force) ? 0 :
            throttle_group_schedule(tg, req->write, req->len,
                                    block_aio_now());

        if (wait > 0) {
            if (!aio->timer_armed) {
                block_aio_arm(aio, wait);
            }
            return;
        }
        g_queue_pop_head(&aio->throttled);
        block_aio_start(req);
    }
}

bool block_aio_rw(BlockAIO *aio, bool write, uint64_t offset,
                  const struct iovec *iov, unsigned niov,
                  BlockAIOCompletion *cb, void *opaque)
{
    BlockAIOReq *req;
    ThrottleGroupState *tg = qatomic_read(&block_aio_node(aio)->throttle);

    if (aio->inflight >= aio->depth) {
        return false;
    }
    req = g_new0(BlockAIOReq, 1);
    req->aio = aio;
    req->cb = cb;
    req->opaque = opaque;
    req->write = write;
    req->offset = offset;
    req->iov = iov;
    req->niov = niov;
    for (unsigned i = 0; i < niov; i++) {
        req->len += iov[i].iov_len;
    }
    aio->inflight++;
    if (tg && (!g_queue_is_empty(&aio->throttled) ||
               throttle_group_schedule(tg, write, req->len,
                                       block_aio_now()) > 0)) {
        g_queue_push_tail(&aio->throttled, req);
        block_aio_run_throttled(aio, false);
        return true;
    }
    block_aio_start(req);
    return true;
}

static void block_aio_complete_done(BlockAIO *aio)
{
    BlockAIOReq *req;

    while ((req = g_queue_pop_head(&aio->done))) {
        block_aio_req_finish(req);
    }
}

static void block_aio_reap(BlockAIO *aio, bool wait)
{
    struct io_event events[64];
    struct timespec zero = { 0, 0 };
    int n;

    if (aio->sync) {
        return;
    }
    do {
        n = io_getevents(aio->ctx, wait ? 1 : 0, G_N_ELEMENTS(events),
                         events, wait ? NULL : &zero);
        if (n == -EINTR) {
            continue;
        }
        for (int i = 0; i < n; i++) {
            block_aio_sub_done(events[i].data,
                               (ssize_t)(long)events[i].res);
        }
    } while (n == G_N_ELEMENTS(events));
}

static void block_aio_retry_failed(BlockAIO *aio)
{
    GQueue again = G_QUEUE_INIT;
    BlockAIOReq *req;

    if (!qatomic_xchg(&aio->retry, false)) {
        return;
    }
    qatomic_set(&block_aio_node(aio)->io_status, BLOCK_IO_STATUS_OK);
    while ((req = g_queue_pop_head(&aio->failed))) {
        g_queue_push_tail(&again, req);
    }
    while ((req = g_queue_pop_head(&again))) {
        block_aio_start(req);
    }
}

void block_aio_poll(BlockAIO *aio)
{
    uint64_t cnt;

    if (read(aio->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN) {
        return;
    }
    if (read(aio->tfd, &cnt, sizeof(cnt)) == sizeof(cnt)) {
        aio->timer_armed = false;
    }
    block_aio_reap(aio, false);
    block_aio_complete_done(aio);
    block_aio_retry_failed(aio);
    block_aio_run_throttled(aio, false);
}

/* Completes the requests an error policy holds, as errors (reset). */
static void block_aio_fail_held(BlockAIO *aio)
{
    BlockAIOReq *req;

    while ((req = g_queue_pop_head(&aio->failed))) {
        aio->inflight--;
        req->cb(req->opaque, req->err);
        g_free(req);
    }
}

/*
 * Waits for everything in flight.  Requests held by werror/rerror=stop
 * stay held: a VM stop drains, and cont submits them again.
 */
void block_aio_drain(BlockAIO *aio)
{
    /* Throttled requests start now. */
    block_aio_run_throttled(aio, true);
    block_aio_complete_done(aio);
    while (aio->inflight > g_queue_get_length(&aio->failed)) {
        if (g_queue_is_empty(&aio->done)) {
            block_aio_reap(aio, true);
        }
        block_aio_complete_done(aio);
        if (aio->sync && g_queue_is_empty(&aio->done)) {
            break;
        }
    }
}
