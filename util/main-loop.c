/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Main loop: a GMainContext driven by the main thread.  The BQL is held
 * while sources dispatch and dropped around poll(), so vCPU and helper
 * threads can take it while the loop sleeps.
 */
#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include <pthread.h>

static GMainContext *main_ctx;
static GPollFunc default_poll;
static pthread_mutex_t bql = PTHREAD_MUTEX_INITIALIZER;
static __thread bool bql_held;

void bql_lock(void)
{
    g_assert(!bql_held);
    pthread_mutex_lock(&bql);
    bql_held = true;
}

void bql_unlock(void)
{
    g_assert(bql_held);
    bql_held = false;
    pthread_mutex_unlock(&bql);
}

bool bql_locked(void)
{
    return bql_held;
}

static gint main_loop_poll(GPollFD *fds, guint nfds, gint timeout)
{
    bool held = bql_held;
    gint ret;

    /* Only sleep without the lock; a zero timeout is just a peek. */
    if (held && timeout != 0) {
        bql_unlock();
    }
    ret = default_poll(fds, nfds, timeout);
    if (held && timeout != 0) {
        bql_lock();
    }
    return ret;
}

/* Timer source: wakes the loop at the earliest armed timer. */
static int64_t timers_deadline_ns(void)
{
    int64_t rt = qemu_clock_deadline_ns(QEMU_CLOCK_REALTIME);
    int64_t vt = qemu_clock_deadline_ns(QEMU_CLOCK_VIRTUAL);

    if (rt < 0) {
        return vt;
    }
    if (vt < 0) {
        return rt;
    }
    return MIN(rt, vt);
}

static gboolean timer_source_prepare(GSource *src, gint *timeout)
{
    int64_t ns = timers_deadline_ns();

    if (ns < 0) {
        *timeout = -1;
        return FALSE;
    }
    if (ns == 0) {
        *timeout = 0;
        return TRUE;
    }
    *timeout = MIN(DIV_ROUND_UP(ns, SCALE_MS), (int64_t)INT_MAX);
    return FALSE;
}

static gboolean timer_source_check(GSource *src)
{
    return timers_deadline_ns() == 0;
}

static gboolean timer_source_dispatch(GSource *src, GSourceFunc cb,
                                      gpointer data)
{
    qemu_clock_run_timers(QEMU_CLOCK_REALTIME);
    qemu_clock_run_timers(QEMU_CLOCK_VIRTUAL);
    return G_SOURCE_CONTINUE;
}

static GSourceFuncs timer_source_funcs = {
    .prepare = timer_source_prepare,
    .check = timer_source_check,
    .dispatch = timer_source_dispatch,
};

void qemu_init_main_loop(void)
{
    GSource *src;

    if (main_ctx) {
        return;
    }
    main_ctx = g_main_context_default();
    default_poll = g_main_context_get_poll_func(main_ctx);
    g_main_context_set_poll_func(main_ctx, main_loop_poll);

    src = g_source_new(&timer_source_funcs, sizeof(GSource));
    g_source_set_name(src, "conduit-timers");
    g_source_attach(src, main_ctx);
    g_source_unref(src);

    /* A peer closing its socket must give EPIPE, not kill us. */
    signal(SIGPIPE, SIG_IGN);
}

void main_loop_wait(bool blocking)
{
    qemu_init_main_loop();
    g_main_context_iteration(main_ctx, blocking);
}

void qemu_notify_event(void)
{
    if (main_ctx) {
        g_main_context_wakeup(main_ctx);
    }
}

/* fd handlers */

typedef struct FDSource {
    GSource source;
    gpointer tag;
    int fd;
    IOHandler *fd_read;
    IOHandler *fd_write;
    void *opaque;
} FDSource;

static GHashTable *fd_sources;  /* fd -> FDSource */

static gboolean fd_source_dispatch(GSource *src, GSourceFunc cb,
                                   gpointer data)
{
    FDSource *fs = (FDSource *)src;
    GIOCondition rev = g_source_query_unix_fd(src, fs->tag);
    void *opaque = fs->opaque;

    if (fs->fd_read && (rev & (G_IO_IN | G_IO_HUP | G_IO_ERR))) {
        fs->fd_read(opaque);
    }
    /* The read handler may have removed or replaced this watch. */
    if (!g_source_is_destroyed(src) && fs->fd_write &&
        (rev & (G_IO_OUT | G_IO_ERR))) {
        fs->fd_write(fs->opaque);
    }
    return G_SOURCE_CONTINUE;
}

static GSourceFuncs fd_source_funcs = {
    .dispatch = fd_source_dispatch,
};

static GIOCondition fd_source_events(IOHandler *fd_read, IOHandler *fd_write)
{
    return (fd_read ? G_IO_IN | G_IO_HUP | G_IO_ERR : 0) |
           (fd_write ? G_IO_OUT | G_IO_ERR : 0);
}

void qemu_set_fd_handler(int fd, IOHandler *fd_read, IOHandler *fd_write,
                         void *opaque)
{
    FDSource *fs;

    qemu_init_main_loop();
    if (!fd_sources) {
        fd_sources = g_hash_table_new(g_direct_hash, g_direct_equal);
    }
    fs = g_hash_table_lookup(fd_sources, GINT_TO_POINTER(fd));
    if (!fd_read && !fd_write) {
        if (fs) {
            g_hash_table_remove(fd_sources, GINT_TO_POINTER(fd));
            g_source_destroy(&fs->source);
            g_source_unref(&fs->source);
        }
        return;
    }
    if (fs) {
        fs->fd_read = fd_read;
        fs->fd_write = fd_write;
        fs->opaque = opaque;
        g_source_modify_unix_fd(&fs->source, fs->tag,
                                fd_source_events(fd_read, fd_write));
        return;
    }
    fs = (FDSource *)g_source_new(&fd_source_funcs, sizeof(FDSource));
    fs->fd = fd;
    fs->fd_read = fd_read;
    fs->fd_write = fd_write;
    fs->opaque = opaque;
    fs->tag = g_source_add_unix_fd(&fs->source, fd,
                                   fd_source_events(fd_read, fd_write));
    g_source_attach(&fs->source, main_ctx);
    g_hash_table_insert(fd_sources, GINT_TO_POINTER(fd), fs);
}

/* Bottom halves: a GSource whose ready time is "now" while scheduled. */

struct QEMUBH {
    GSource source;
    QEMUBHFunc *cb;
    void *opaque;
};

static gboolean bh_dispatch(GSource *src, GSourceFunc cb, gpointer data)
{
    QEMUBH *bh = (QEMUBH *)src;

    g_source_set_ready_time(src, -1);
    bh->cb(bh->opaque);
    return G_SOURCE_CONTINUE;
}

static GSourceFuncs bh_source_funcs = {
    .dispatch = bh_dispatch,
};

QEMUBH *qemu_bh_new(QEMUBHFunc *cb, void *opaque)
{
    QEMUBH *bh;

    qemu_init_main_loop();
    bh = (QEMUBH *)g_source_new(&bh_source_funcs, sizeof(QEMUBH));
    bh->cb = cb;
    bh->opaque = opaque;
    g_source_set_ready_time(&bh->source, -1);
    g_source_attach(&bh->source, main_ctx);
    return bh;
}

void qemu_bh_schedule(QEMUBH *bh)
{
    /* Thread-safe in glib; wakes the context. */
    g_source_set_ready_time(&bh->source, 0);
}

void qemu_bh_cancel(QEMUBH *bh)
{
    g_source_set_ready_time(&bh->source, -1);
}

void qemu_bh_delete(QEMUBH *bh)
{
    if (!bh) {
        return;
    }
    g_source_destroy(&bh->source);
    g_source_unref(&bh->source);
}
