/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Migration: the outgoing and incoming state machines and their QMP and
 * command-line face, shaped as QEMU's (status names, query-migrate,
 * capabilities, parameters, MIGRATION / MIGRATION_PASS events, run
 * states), since libvirt drives both.
 *
 * Outgoing (one thread, "mig-out"): setup -> active (pre-copy passes of
 * the live state while the guest runs, until what is left fits in
 * downtime-limit at the measured bandwidth) -> the VM stops
 * (finish-migrate) -> [pre-switchover, waiting for migrate-continue] ->
 * device (the rest of RAM and every device's state) -> completed, the VM
 * in postmigrate.  Any failure or migrate_cancel puts the VM back as it
 * was (running if it ran) and reports failed / cancelled.  With the
 * return-path capability the source waits for the destination's verdict
 * before it calls the migration completed.
 *
 * Incoming (thread "mig-in"): the VM is in inmigrate; the stream is
 * loaded (RAM without the BQL, since no vCPU runs; devices with it);
 * then the VM starts, or stays paused under -S.  A failed load exits the
 * process as QEMU does (exit-on-error, the default).
 *
 * Status changes, events and run-state changes happen with the BQL held.
 */
#include "qemu/osdep.h"
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "migration/migration.h"
#include "migration/channel.h"
#include "migration/savevm.h"
#include "migration/ram.h"
#include "migration/uri.h"
#include "migration/misc.h"
#include "monitor/monitor.h"
#include "block/block.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "qemu/error-report.h"
#include "qapi/error.h"
#include "system/runstate.h"
#include "system/system.h"
#include "trace.h"

typedef enum MigrationStatus {
    MIGRATION_STATUS_NONE,
    MIGRATION_STATUS_SETUP,
    MIGRATION_STATUS_CANCELLING,
    MIGRATION_STATUS_CANCELLED,
    MIGRATION_STATUS_ACTIVE,
    MIGRATION_STATUS_PRE_SWITCHOVER,
    MIGRATION_STATUS_DEVICE,
    MIGRATION_STATUS_COMPLETED,
    MIGRATION_STATUS_FAILED,
    MIGRATION_STATUS__MAX,
} MigrationStatus;

static const char *const status_names[MIGRATION_STATUS__MAX] = {
    [MIGRATION_STATUS_NONE] = "none",
    [MIGRATION_STATUS_SETUP] = "setup",
    [MIGRATION_STATUS_CANCELLING] = "cancelling",
    [MIGRATION_STATUS_CANCELLED] = "cancelled",
    [MIGRATION_STATUS_ACTIVE] = "active",
    [MIGRATION_STATUS_PRE_SWITCHOVER] = "pre-switchover",
    [MIGRATION_STATUS_DEVICE] = "device",
    [MIGRATION_STATUS_COMPLETED] = "completed",
    [MIGRATION_STATUS_FAILED] = "failed",
};

/* Capabilities Conduit implements; any other is refused by name. */
typedef enum MigrationCap {
    MIGRATION_CAP_EVENTS,
    MIGRATION_CAP_PAUSE_BEFORE_SWITCHOVER,
    MIGRATION_CAP_RETURN_PATH,
    MIGRATION_CAP__MAX,
} MigrationCap;

static const char *const cap_names[MIGRATION_CAP__MAX] = {
    [MIGRATION_CAP_EVENTS] = "events",
    [MIGRATION_CAP_PAUSE_BEFORE_SWITCHOVER] = "pause-before-switchover",
    [MIGRATION_CAP_RETURN_PATH] = "return-path",
};

typedef struct MigrationParams {
    uint64_t downtime_limit;        /* ms */
    uint64_t max_bandwidth;         /* bytes/s, 0: unlimited */
    uint64_t avail_switchover_bandwidth;    /* bytes/s, 0: measured */
    uint64_t announce_initial;      /* ms */
    uint64_t announce_max;
    uint64_t announce_rounds;
    uint64_t announce_step;
} MigrationParams;

/* One migration, either direction. */
typedef struct MigrationState {
    MigrationStatus status;
    bool incoming;
    GThread *thread;
    MigFile *file;
    pid_t child;
    char *error;                    /* error-desc once failed */
    bool cancel_requested;
    bool continue_requested;
    GCond continue_cond;
    bool was_running;               /* source: before the switchover */
    bool vm_stopped;                /* source: we stopped it */
    int64_t start_ms;
    int64_t setup_ms;
    int64_t total_ms;               /* once finished */
    int64_t downtime_ms;
    int64_t expected_downtime_ms;
    uint64_t bytes_at_switchover;
    double mbps;
    uint64_t dirty_pages_rate;
    uint64_t pages_per_second;
    bool exit_on_error;
    int listen_fd;                  /* incoming, while waiting */
    char *listen_desc;              /* "tcp:...": socket-address */
} MigrationState;

static MigrationState mig_out = { .listen_fd = -1, .child = -1 };
static MigrationState mig_in = { .listen_fd = -1, .child = -1 };
static bool caps[MIGRATION_CAP__MAX];
static MigrationParams params = {
    .downtime_limit = 300,
    .max_bandwidth = 128 * 1024 * 1024,
    .announce_initial = 50,
    .announce_max = 550,
    .announce_rounds = 5,
    .announce_step = 100,
};
static GPtrArray *blockers;         /* Error * */
static GSList *notifiers;           /* MigrationNotifier * */
static bool incoming_pending;       /* -incoming given, stream not loaded */
static QEMUBH *incoming_done_bh;

typedef struct MigrationNotifier {
    MigrationNotifyFunc *fn;
    void *opaque;
} MigrationNotifier;

static int64_t now_ms(void)
{
    return g_get_monotonic_time() / 1000;
}

/* ---- blockers and notifiers ---- */

bool migrate_add_blocker(Error *reason, Error **errp)
{
    if (migration_is_active()) {
        error_setg(errp, "disallowing migration blocker (migration in "
                   "progress) for: %s", error_get_pretty(reason));
        return false;
    }
    if (!blockers) {
        blockers = g_ptr_array_new();
    }
    g_ptr_array_add(blockers, reason);
    return true;
}

void migrate_del_blocker(Error *reason)
{
    if (blockers) {
        g_ptr_array_remove(blockers, reason);
    }
}

bool migration_is_blocked(Error **errp)
{
    if (blockers && blockers->len) {
        error_setg(errp, "%s",
                   error_get_pretty(g_ptr_array_index(blockers, 0)));
        return true;
    }
    return false;
}

void migration_add_notifier(MigrationNotifyFunc *fn, void *opaque)
{
    MigrationNotifier *n = g_new0(MigrationNotifier, 1);

    n->fn = fn;
    n->opaque = opaque;
    notifiers = g_slist_append(notifiers, n);
}

/*
 * A part of the VM that can no longer take part in the outgoing
 * migration (its dirty log failed): the migration fails with its reason
 * at the next step.  BQL.
 */
static Error *outgoing_part_error;

void migration_fail_outgoing(Error *err)
{
    if (outgoing_part_error || !migration_is_active()) {
        error_free(err);
        return;
    }
    outgoing_part_error = err;
}

static bool outgoing_part_failed(Error **errp)
{
    if (!outgoing_part_error) {
        return false;
    }
    error_propagate(errp, outgoing_part_error);
    outgoing_part_error = NULL;
    return true;
}

static void notify(MigrationEventType ev)
{
    for (GSList *l = notifiers; l; l = l->next) {
        MigrationNotifier *n = l->data;

        n->fn(n->opaque, ev);
    }
}

static bool status_is_active(MigrationStatus s)
{
    return s == MIGRATION_STATUS_SETUP || s == MIGRATION_STATUS_ACTIVE ||
           s == MIGRATION_STATUS_PRE_SWITCHOVER ||
           s == MIGRATION_STATUS_DEVICE || s == MIGRATION_STATUS_CANCELLING;
}

bool migration_is_active(void)
{
    return status_is_active(mig_out.status) ||
           status_is_active(mig_in.status);
}

bool migration_incoming_pending(void)
{
    return incoming_pending;
}

/* BQL held. */
static void set_status(MigrationState *s, MigrationStatus st)
{
    if (s->status == st) {
        return;
    }
    trace_migration_set_status(s->incoming ? "in" : "out",
                               status_names[s->status], status_names[st]);
    s->status = st;
    if (caps[MIGRATION_CAP_EVENTS]) {
        JsonObject *d = json_object_new();

        json_object_set_string_member(d, "status", status_names[st]);
        qapi_event_send("MIGRATION", d);
    }
}

/* ---- the virtual clock ---- */

typedef struct ClockState {
    int64_t vclock_ns;
} ClockState;

static ClockState clock_state;

static bool clock_pre_save(void *opaque, Error **errp)
{
    clock_state.vclock_ns = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    return true;
}

static bool clock_post_load(void *opaque, int version_id, Error **errp)
{
    if (clock_state.vclock_ns < 0) {
        error_setg(errp, "negative virtual clock");
        return false;
    }
    qemu_clock_virtual_set(clock_state.vclock_ns);
    return true;
}

static const VMStateDescription vmstate_clock = {
    .name = "timer",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = clock_pre_save,
    .post_load = clock_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_INT64(vclock_ns, ClockState),
        VMSTATE_END_OF_LIST()
    },
};

/* ---- outgoing ---- */

static void out_fail(MigrationState *s, Error *err)
{
    g_free(s->error);
    s->error = g_strdup(error_get_pretty(err));
    error_report("migration failed: %s", s->error);
    error_free(err);
}

/*
 * The destination's verdict on the return path: 1 (loaded), or 0 and a
 * str8 message.  Read straight from the fd (the channel's buffer is the
 * outgoing one), waiting at most timeout_ms per read (-1: as long as the
 * destination takes, which a cancel still interrupts).
 */
static bool read_exact_fd(MigrationState *s, uint8_t *buf, size_t len,
                          int timeout_ms)
{
    int fd = mig_file_fd(s->file);

    while (len) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        ssize_t n;
        int r = poll(&p, 1, timeout_ms < 0 ? 200 : timeout_ms);

        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r == 0 && timeout_ms < 0 &&
            !__atomic_load_n(&s->cancel_requested, __ATOMIC_ACQUIRE)) {
            continue;
        }
        if (r <= 0) {
            return false;
        }
        n = read(fd, buf, len);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        buf += n;
        len -= n;
    }
    return true;
}

static bool out_wait_return_path(MigrationState *s, int timeout_ms,
                                 Error **errp)
{
    uint8_t ok, len;
    char msg[256];

    if (!read_exact_fd(s, &ok, 1, timeout_ms)) {
        error_setg(errp, "return path: the destination closed the "
                   "connection without a verdict");
        return false;
    }
    if (ok == 1) {
        return true;
    }
    if (!read_exact_fd(s, &len, 1, 5000) ||
        !read_exact_fd(s, (uint8_t *)msg, len, 5000)) {
        len = 0;
    }
    msg[len] = '\0';
    error_setg(errp, "the destination failed to load the state: %s",
               len ? msg : "(no reason given)");
    return false;
}

/*
 * One pre-copy pass: sends what is dirty now, in rounds of a few MiB so
 * a cancel is noticed soon.  Updates the bandwidth estimate.
 */
static bool out_pass(MigrationState *s, uint64_t pending, Error **errp)
{
    uint64_t start_bytes = mig_file_bytes(s->file);
    int64_t t0 = g_get_monotonic_time();
    uint64_t pages0 = ram_get_stats()->normal + ram_get_stats()->duplicate;
    int64_t dt;
    uint64_t sent;

    do {
        if (__atomic_load_n(&s->cancel_requested, __ATOMIC_ACQUIRE)) {
            error_setg(errp, "migration cancelled");
            return false;
        }
        if (!savevm_live_iterate(s->file, 4 * 1024 * 1024, errp)) {
            return false;
        }
    } while (mig_file_bytes(s->file) - start_bytes < pending &&
             savevm_live_pending());
    dt = MAX(g_get_monotonic_time() - t0, 1);
    sent = mig_file_bytes(s->file) - start_bytes;
    s->mbps = (double)sent * 8 / dt;
    s->pages_per_second = (ram_get_stats()->normal +
                           ram_get_stats()->duplicate - pages0) *
                          1000000 / dt;
    return true;
}

static uint64_t out_bandwidth(MigrationState *s)
{
    if (params.avail_switchover_bandwidth) {
        return params.avail_switchover_bandwidth;
    }
    /* bytes per second from the last pass; a floor keeps it sane. */
    return MAX((uint64_t)(s->mbps * 1000000 / 8), 1024 * 1024);
}

static void block_flush_one(BlockNode *bs, void *opaque)
{
    int *err = opaque;
    int r = block_flush(bs);

    if (r < 0 && !*err) {
        *err = r;
    }
}

static gpointer migration_thread(gpointer opaque)
{
    MigrationState *s = opaque;
    Error *err = NULL;
    int64_t stop_ms = 0;
    uint64_t pending;
    unsigned pass = 0;

    bql_lock();
    s->was_running = runstate_is_running();
    notify(MIG_EVENT_PRECOPY_SETUP);
    if (!savevm_send_header(s->file, &err) || !savevm_live_setup(&err) ||
        outgoing_part_failed(&err)) {
        goto fail_locked;
    }
    s->setup_ms = now_ms() - s->start_ms;
    if (s->status == MIGRATION_STATUS_SETUP) {
        set_status(s, MIGRATION_STATUS_ACTIVE);
    }
    bql_unlock();

    for (;;) {
        bql_lock();
        ram_sync_dirty_log();
        pending = savevm_live_pending();
        s->expected_downtime_ms = (pending + savevm_live_switchover_pending())
                                  * 1000 / out_bandwidth(s);
        if (caps[MIGRATION_CAP_EVENTS]) {
            JsonObject *d = json_object_new();

            json_object_set_int_member(d, "pass",
                                       ram_get_stats()->dirty_sync_count);
            qapi_event_send("MIGRATION_PASS", d);
        }
        if (s->status != MIGRATION_STATUS_ACTIVE) {
            error_setg(&err, "migration cancelled");
            goto fail_locked;
        }
        if (outgoing_part_failed(&err)) {
            goto fail_locked;
        }
        trace_migration_pass(pass, pending, s->expected_downtime_ms);
        if (pass > 0 && (pending == 0 || !runstate_is_running() ||
                         (uint64_t)s->expected_downtime_ms <=
                         params.downtime_limit)) {
            break;
        }
        bql_unlock();
        if (!out_pass(s, pending, &err)) {
            goto fail;
        }
        pass++;
    }

    /* Switchover, BQL held. */
    stop_ms = now_ms();
    s->vm_stopped = true;
    vm_stop(RUN_STATE_FINISH_MIGRATE);
    {
        int ferr = 0;

        block_foreach(block_flush_one, &ferr);
        if (ferr < 0) {
            error_setg(&err, "flushing the disks before switchover: %s",
                       g_strerror(-ferr));
            goto fail_locked;
        }
    }
    if (caps[MIGRATION_CAP_PAUSE_BEFORE_SWITCHOVER]) {
        set_status(s, MIGRATION_STATUS_PRE_SWITCHOVER);
        while (!s->continue_requested && !s->cancel_requested) {
            bql_unlock();
            g_usleep(10 * 1000);
            bql_lock();
        }
        if (s->cancel_requested) {
            error_setg(&err, "migration cancelled");
            goto fail_locked;
        }
    }
    if (s->status == MIGRATION_STATUS_CANCELLING) {
        error_setg(&err, "migration cancelled");
        goto fail_locked;
    }
    set_status(s, MIGRATION_STATUS_DEVICE);
    if (outgoing_part_failed(&err) || !savevm_complete(s->file, &err) ||
        outgoing_part_failed(&err)) {
        goto fail_locked;
    }
    if (caps[MIGRATION_CAP_RETURN_PATH]) {
        bql_unlock();
        if (!out_wait_return_path(s, -1, &err)) {
            goto fail;
        }
        bql_lock();
    }
    s->downtime_ms = now_ms() - stop_ms;
    s->total_ms = now_ms() - s->start_ms;
    s->bytes_at_switchover = mig_file_bytes(s->file);
    mig_file_close(s->file);
    savevm_live_cleanup();
    runstate_set(RUN_STATE_POSTMIGRATE);
    set_status(s, MIGRATION_STATUS_COMPLETED);
    notify(MIG_EVENT_PRECOPY_DONE);
    trace_migration_completed(s->total_ms, s->downtime_ms,
                              mig_file_bytes(s->file));
    bql_unlock();
    return NULL;

fail:
    bql_lock();
fail_locked:
    if (s->file && caps[MIGRATION_CAP_RETURN_PATH] && !s->cancel_requested &&
        mig_file_fd(s->file) >= 0) {
        /*
         * The destination may have given up first (and closed, which is
         * why our write failed): its reason is the better one.
         */
        Error *verdict = NULL;

        bql_unlock();
        if (!out_wait_return_path(s, 5000, &verdict)) {
            error_free(err);
            err = verdict;
        } else {
            error_free(verdict);
        }
        bql_lock();
    }
    mig_file_close(s->file);
    savevm_live_cleanup();
    s->total_ms = now_ms() - s->start_ms;
    if (s->cancel_requested) {
        error_free(err);
        set_status(s, MIGRATION_STATUS_CANCELLED);
    } else {
        out_fail(s, err);
        set_status(s, MIGRATION_STATUS_FAILED);
    }
    if (s->vm_stopped) {
        if (s->was_running) {
            vm_start();
        } else {
            runstate_set(RUN_STATE_PAUSED);
        }
    }
    notify(MIG_EVENT_PRECOPY_FAILED);
    bql_unlock();
    return NULL;
}

/* Joins a finished thread and frees the channel (BQL held). */
static void migration_reap(MigrationState *s)
{
    if (s->thread && !status_is_active(s->status)) {
        bql_unlock();
        g_thread_join(s->thread);
        bql_lock();
        s->thread = NULL;
    }
    if (!s->thread && s->file) {
        mig_file_free(s->file);
        s->file = NULL;
    }
    if (s->child > 0) {
        waitpid(s->child, NULL, WNOHANG);
        s->child = -1;
    }
}

static bool migration_fd_is_socket(int fd)
{
    struct stat st;

    return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

static bool migrate_start(MigrationAddr *addr, Error **errp)
{
    MigrationState *s = &mig_out;
    int fd;

    if (migration_is_active()) {
        error_setg(errp, "There's a migration process in progress");
        return false;
    }
    if (runstate_check(RUN_STATE_INMIGRATE) || incoming_pending) {
        error_setg(errp, "Guest is waiting for an incoming migration");
        return false;
    }
    if (migration_is_blocked(errp)) {
        return false;
    }
    if (caps[MIGRATION_CAP_RETURN_PATH] &&
        addr->transport != MIG_TRANSPORT_TCP &&
        addr->transport != MIG_TRANSPORT_UNIX &&
        addr->transport != MIG_TRANSPORT_FD) {
        error_setg(errp, "return-path needs a socket transport (tcp:, "
                   "unix:, or fd: naming a socket)");
        return false;
    }
    migration_reap(s);
    g_clear_pointer(&outgoing_part_error, error_free);
    fd = migration_addr_connect(addr, &s->child, errp);
    if (fd < 0) {
        return false;
    }
    /*
     * libvirt connects a unix: migration URI itself and passes the
     * socket with getfd: the return path runs over it as over unix:.
     */
    if (caps[MIGRATION_CAP_RETURN_PATH] && !migration_fd_is_socket(fd)) {
        error_setg(errp, "return-path needs a socket transport: the fd "
                   "given to migrate is not a socket (unset the "
                   "return-path capability to migrate to a file or pipe)");
        close(fd);
        migration_reap(s);
        return false;
    }
    g_free(s->error);
    s->error = NULL;
    s->cancel_requested = false;
    s->continue_requested = false;
    s->vm_stopped = false;
    s->start_ms = now_ms();
    s->setup_ms = s->total_ms = s->downtime_ms = 0;
    s->expected_downtime_ms = 0;
    s->mbps = 0;
    s->file = mig_file_new_fd(fd);
    mig_file_set_rate_limit(s->file, params.max_bandwidth);
    if (caps[MIGRATION_CAP_RETURN_PATH]) {
        mig_file_watch_peer(s->file);
    }
    set_status(s, MIGRATION_STATUS_SETUP);
    s->thread = g_thread_new("mig-out", migration_thread, s);
    return true;
}

/* ---- incoming ---- */

static void incoming_done(void *opaque)
{
    MigrationState *s = &mig_in;

    if (s->thread) {
        bql_unlock();
        g_thread_join(s->thread);
        bql_lock();
        s->thread = NULL;
    }
    if (s->status == MIGRATION_STATUS_FAILED) {
        if (s->exit_on_error) {
            error_report("load of migration failed: %s", s->error);
            qemu_system_shutdown_request_cause(SHUTDOWN_CAUSE_HOST_ERROR, 1);
        } else {
            /* The VM holds a partial state: it must not run. */
            runstate_set(RUN_STATE_PAUSED);
            incoming_pending = false;
        }
        mig_file_free(s->file);
        s->file = NULL;
        return;
    }
    mig_file_free(s->file);
    s->file = NULL;
    incoming_pending = false;
    runstate_set(RUN_STATE_PAUSED);
    set_status(s, MIGRATION_STATUS_COMPLETED);
    migration_incoming_announce();
    if (autostart) {
        vm_start();
    }
}

static gpointer incoming_thread(gpointer opaque)
{
    MigrationState *s = opaque;
    Error *err = NULL;
    bool ok;

    ram_reset_load_state();
    ok = loadvm_stream(s->file, true, &err);
    if (caps[MIGRATION_CAP_RETURN_PATH] || s->listen_desc) {
        /* A socket: tell the source (it waits only with return-path). */
        uint8_t v = ok;
        Error *ignored = NULL;

        /* A source that is still writing must not wedge us. */
        mig_file_set_write_timeout(s->file, 5000);
        if (mig_file_write(s->file, &v, 1, &ignored) && !ok) {
            const char *m = error_get_pretty(err);
            uint8_t len = MIN(strlen(m), 255);

            if (mig_file_write(s->file, &len, 1, &ignored)) {
                mig_file_write(s->file, m, len, &ignored);
            }
        }
        mig_file_flush(s->file, &ignored);
        error_free(ignored);
    }
    bql_lock();
    s->total_ms = now_ms() - s->start_ms;
    if (!ok) {
        g_free(s->error);
        s->error = g_strdup(error_get_pretty(err));
        error_free(err);
        set_status(s, MIGRATION_STATUS_FAILED);
    }
    qemu_bh_schedule(incoming_done_bh);
    bql_unlock();
    return NULL;
}

static void incoming_start_fd(MigrationState *s, int fd)
{
    s->file = mig_file_new_fd(fd);
    s->start_ms = now_ms();
    set_status(s, MIGRATION_STATUS_ACTIVE);
    s->thread = g_thread_new("mig-in", incoming_thread, s);
}

static void incoming_accept(void *opaque)
{
    MigrationState *s = &mig_in;
    int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);

    if (fd < 0) {
        return;
    }
    qemu_set_fd_handler(s->listen_fd, NULL, NULL, NULL);
    close(s->listen_fd);
    s->listen_fd = -1;
    incoming_start_fd(s, fd);
}

static bool incoming_start(MigrationAddr *addr, bool exit_on_error,
                           Error **errp)
{
    MigrationState *s = &mig_in;
    bool listening;
    int fd;

    if (!incoming_done_bh) {
        incoming_done_bh = qemu_bh_new(incoming_done, NULL);
    }
    fd = migration_addr_listen(addr, &listening, &s->child, errp);
    if (fd < 0) {
        return false;
    }
    s->incoming = true;
    s->exit_on_error = exit_on_error;
    g_free(s->error);
    s->error = NULL;
    g_free(s->listen_desc);
    s->listen_desc = NULL;
    set_status(s, MIGRATION_STATUS_SETUP);
    if (listening) {
        char *where = addr->transport == MIG_TRANSPORT_TCP ?
                      migration_socket_describe(fd) : g_strdup(addr->path);

        s->listen_desc = g_strdup_printf("%s:%s",
                                         addr->transport == MIG_TRANSPORT_TCP
                                         ? "tcp" : "unix",
                                         where ? where : "");
        g_free(where);
        s->listen_fd = fd;
        qemu_set_fd_handler(fd, incoming_accept, NULL, NULL);
    } else {
        incoming_start_fd(s, fd);
    }
    return true;
}

bool migration_incoming_init(const char *uri, Error **errp)
{
    MigrationAddr addr;
    bool ok = true;

    if (!migration_uri_parse(uri, true, &addr, errp)) {
        return false;
    }
    incoming_pending = true;
    mig_in.incoming = true;
    runstate_set(RUN_STATE_INMIGRATE);
    if (addr.transport != MIG_TRANSPORT_DEFER) {
        ok = incoming_start(&addr, true, errp);
    }
    migration_addr_clear(&addr);
    return ok;
}

/* ---- QMP ---- */

static const char *str_member(JsonObject *args, const char *name)
{
    return json_object_has_member(args, name)
           ? json_object_get_string_member(args, name) : NULL;
}

static bool get_addr(JsonObject *args, bool allow_defer, MigrationAddr *addr,
                     Error **errp)
{
    const char *uri = str_member(args, "uri");
    bool has_channels = json_object_has_member(args, "channels");

    if (!!uri == has_channels) {
        error_setg(errp, uri ? "need either 'uri' or 'channels' argument, "
                   "not both" : "need either 'uri' or 'channels' argument");
        return false;
    }
    if (uri) {
        return migration_uri_parse(uri, allow_defer, addr, errp);
    }
    return migration_channels_parse(
        json_object_get_array_member(args, "channels"), addr, errp);
}

static void qmp_migrate(JsonObject *args, JsonNode **ret, Error **errp)
{
    MigrationAddr addr;

    if ((json_object_has_member(args, "blk") &&
         json_object_get_boolean_member(args, "blk")) ||
        (json_object_has_member(args, "inc") &&
         json_object_get_boolean_member(args, "inc"))) {
        error_setg(errp, "Block migration (blk/inc) is not supported");
        error_append_hint(errp, "Use blockdev-mirror with NBD instead.\n");
        return;
    }
    if (json_object_has_member(args, "resume") &&
        json_object_get_boolean_member(args, "resume")) {
        error_setg(errp, "Cannot resume if there is no paused migration");
        return;
    }
    if (!get_addr(args, false, &addr, errp)) {
        return;
    }
    migrate_start(&addr, errp);
    migration_addr_clear(&addr);
}

static void qmp_migrate_incoming(JsonObject *args, JsonNode **ret,
                                 Error **errp)
{
    MigrationAddr addr;
    bool exit_on_error = json_object_get_boolean_member_with_default(
        args, "exit-on-error", true);

    if (!incoming_pending) {
        error_setg(errp, "'-incoming' was not specified on the command line");
        return;
    }
    if (mig_in.status != MIGRATION_STATUS_NONE) {
        error_setg(errp, "The incoming migration has already been started");
        return;
    }
    if (!get_addr(args, false, &addr, errp)) {
        return;
    }
    incoming_start(&addr, exit_on_error, errp);
    migration_addr_clear(&addr);
}

static void qmp_migrate_cancel(JsonObject *args, JsonNode **ret, Error **errp)
{
    MigrationState *s = &mig_out;

    if (!status_is_active(s->status)) {
        return;
    }
    s->cancel_requested = true;
    set_status(s, MIGRATION_STATUS_CANCELLING);
    if (s->file) {
        mig_file_cancel(s->file);
    }
}

static void qmp_migrate_continue(JsonObject *args, JsonNode **ret,
                                 Error **errp)
{
    const char *state = json_object_get_string_member(args, "state");

    if (mig_out.status != MIGRATION_STATUS_PRE_SWITCHOVER ||
        strcmp(state, "pre-switchover")) {
        error_setg(errp, "Migration not in expected state: %s",
                   status_names[mig_out.status]);
        return;
    }
    mig_out.continue_requested = true;
}

static JsonObject *ram_info(MigrationState *s, bool incoming)
{
    const MigrationRamStats *st = ram_get_stats();
    JsonObject *r = json_object_new();
    uint64_t transferred = s->file ? mig_file_bytes(s->file)
                                   : s->bytes_at_switchover;

    if (!s->file && s->bytes_at_switchover == 0) {
        transferred = st->normal_bytes;
    }
    json_object_set_int_member(r, "transferred", transferred);
    json_object_set_int_member(r, "remaining", incoming ? 0 : st->remaining);
    json_object_set_int_member(r, "total", st->total);
    json_object_set_int_member(r, "duplicate", st->duplicate);
    json_object_set_int_member(r, "skipped", 0);
    json_object_set_int_member(r, "normal", st->normal);
    json_object_set_int_member(r, "normal-bytes", st->normal_bytes);
    json_object_set_int_member(r, "dirty-pages-rate", s->dirty_pages_rate);
    json_object_set_double_member(r, "mbps", s->mbps);
    json_object_set_int_member(r, "dirty-sync-count", st->dirty_sync_count);
    json_object_set_int_member(r, "postcopy-requests", 0);
    json_object_set_int_member(r, "page-size", st->page_size ? st->page_size
                                                             : getpagesize());
    json_object_set_int_member(r, "multifd-bytes", 0);
    json_object_set_int_member(r, "pages-per-second", s->pages_per_second);
    json_object_set_int_member(r, "precopy-bytes", transferred);
    json_object_set_int_member(r, "downtime-bytes", 0);
    json_object_set_int_member(r, "postcopy-bytes", 0);
    json_object_set_int_member(r, "dirty-sync-missed-zero-copy", 0);
    return r;
}

static void qmp_query_migrate(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonObject *o = json_object_new();
    MigrationState *s = mig_out.status != MIGRATION_STATUS_NONE ? &mig_out
                                                                : &mig_in;

    if (blockers && blockers->len) {
        /* As QEMU: why a migration would be refused, whatever the state. */
        JsonArray *why = json_array_new();

        for (guint i = 0; i < blockers->len; i++) {
            json_array_add_string_element(
                why, error_get_pretty(g_ptr_array_index(blockers, i)));
        }
        json_object_set_array_member(o, "blocked-reasons", why);
    }
    if (s->status == MIGRATION_STATUS_NONE) {
        *ret = qmp_node_new_object(o);
        return;
    }
    json_object_set_string_member(o, "status", status_names[s->status]);
    if (s->incoming && s->listen_desc &&
        s->status == MIGRATION_STATUS_SETUP) {
        JsonArray *a = json_array_new();
        JsonObject *sa = json_object_new();
        const char *d = s->listen_desc;

        if (g_str_has_prefix(d, "tcp:")) {
            const char *colon = strrchr(d + 4, ':');
            g_autofree char *host = g_strndup(d + 4, colon - d - 4);

            json_object_set_string_member(sa, "type", "inet");
            json_object_set_string_member(sa, "host", host);
            json_object_set_string_member(sa, "port", colon + 1);
        } else {
            json_object_set_string_member(sa, "type", "unix");
            json_object_set_string_member(sa, "path", d + 5);
        }
        json_array_add_object_element(a, sa);
        json_object_set_array_member(o, "socket-address", a);
    }
    if (s->status != MIGRATION_STATUS_SETUP) {
        bool done = !status_is_active(s->status);

        json_object_set_object_member(o, "ram", ram_info(s, s->incoming));
        json_object_set_int_member(o, "total-time",
                                   done ? s->total_ms
                                        : now_ms() - s->start_ms);
        if (!s->incoming) {
            json_object_set_int_member(o, "setup-time", s->setup_ms);
        }
        if (s->status == MIGRATION_STATUS_COMPLETED && !s->incoming) {
            json_object_set_int_member(o, "downtime", s->downtime_ms);
        } else if (!done && !s->incoming) {
            json_object_set_int_member(o, "expected-downtime",
                                       s->expected_downtime_ms);
        }
    }
    if (s->status == MIGRATION_STATUS_FAILED && s->error) {
        json_object_set_string_member(o, "error-desc", s->error);
    }
    *ret = qmp_node_new_object(o);
}

static void qmp_query_migrate_capabilities(JsonObject *args, JsonNode **ret,
                                           Error **errp)
{
    JsonArray *list = json_array_new();

    for (int i = 0; i < MIGRATION_CAP__MAX; i++) {
        JsonObject *o = json_object_new();

        json_object_set_string_member(o, "capability", cap_names[i]);
        json_object_set_boolean_member(o, "state", caps[i]);
        json_array_add_object_element(list, o);
    }
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, list);
}

/* Checks the whole list first, so a refused request changes nothing. */
static void qmp_migrate_set_capabilities(JsonObject *args, JsonNode **ret,
                                         Error **errp)
{
    JsonArray *list = json_object_get_array_member(args, "capabilities");
    guint n = json_array_get_length(list);
    int want[MIGRATION_CAP__MAX];

    /* A destination sets its capabilities while it waits, as in QEMU. */
    if (status_is_active(mig_out.status)) {
        error_setg(errp, "There's a migration process in progress");
        return;
    }
    for (int i = 0; i < MIGRATION_CAP__MAX; i++) {
        want[i] = -1;
    }
    for (guint i = 0; i < n; i++) {
        JsonNode *node = json_array_get_element(list, i);
        JsonObject *c = JSON_NODE_HOLDS_OBJECT(node)
                        ? json_node_get_object(node) : NULL;
        JsonNode *name = c ? json_object_get_member(c, "capability") : NULL;
        JsonNode *state = c ? json_object_get_member(c, "state") : NULL;
        const char *cap;
        int k;

        if (!name || !state || !JSON_NODE_HOLDS_VALUE(name) ||
            json_node_get_value_type(name) != G_TYPE_STRING ||
            !JSON_NODE_HOLDS_VALUE(state) ||
            json_node_get_value_type(state) != G_TYPE_BOOLEAN) {
            error_setg(errp, "capabilities[%u]: expected an object "
                       "{\"capability\": string, \"state\": bool}", i);
            return;
        }
        cap = json_node_get_string(name);
        for (k = 0; k < MIGRATION_CAP__MAX; k++) {
            if (!strcmp(cap, cap_names[k])) {
                break;
            }
        }
        if (k == MIGRATION_CAP__MAX) {
            if (!json_node_get_boolean(state)) {
                continue;       /* off is what it is */
            }
            error_setg(errp, "Parameter 'capability' does not accept value "
                       "'%s'", cap);
            error_append_hint(errp, "Conduit implements the capabilities "
                              "events, pause-before-switchover and "
                              "return-path.\n");
            return;
        }
        want[k] = json_node_get_boolean(state);
    }
    for (int i = 0; i < MIGRATION_CAP__MAX; i++) {
        if (want[i] >= 0) {
            caps[i] = want[i];
        }
    }
}

typedef struct ParamDef {
    const char *name;
    size_t offset;
    uint64_t max;
} ParamDef;

static const ParamDef param_defs[] = {
    { "announce-initial", offsetof(MigrationParams, announce_initial),
      100000 },
    { "announce-max", offsetof(MigrationParams, announce_max), 100000 },
    { "announce-rounds", offsetof(MigrationParams, announce_rounds), 1000 },
    { "announce-step", offsetof(MigrationParams, announce_step), 10000 },
    { "downtime-limit", offsetof(MigrationParams, downtime_limit), 2000000 },
    { "max-bandwidth", offsetof(MigrationParams, max_bandwidth),
      SIZE_MAX },
    { "avail-switchover-bandwidth",
      offsetof(MigrationParams, avail_switchover_bandwidth), SIZE_MAX },
};

static void qmp_query_migrate_parameters(JsonObject *args, JsonNode **ret,
                                         Error **errp)
{
    JsonObject *o = json_object_new();

    for (size_t i = 0; i < G_N_ELEMENTS(param_defs); i++) {
        json_object_set_int_member(o, param_defs[i].name,
                                   *(uint64_t *)((uint8_t *)&params +
                                                 param_defs[i].offset));
    }
    json_object_set_string_member(o, "tls-creds", "");
    json_object_set_string_member(o, "tls-hostname", "");
    *ret = qmp_node_new_object(o);
}

static void qmp_migrate_set_parameters(JsonObject *args, JsonNode **ret,
                                       Error **errp)
{
    g_autoptr(GList) members = json_object_get_members(args);
    MigrationParams next = params;

    for (GList *l = members; l; l = l->next) {
        const char *name = l->data;
        JsonNode *v = json_object_get_member(args, name);
        size_t i;

        if (!strcmp(name, "tls-creds") || !strcmp(name, "tls-hostname") ||
            !strcmp(name, "tls-authz")) {
            if (!JSON_NODE_HOLDS_NULL(v) &&
                (!JSON_NODE_HOLDS_VALUE(v) ||
                 json_node_get_value_type(v) != G_TYPE_STRING ||
                 json_node_get_string(v)[0])) {
                error_setg(errp, "Parameter '%s': TLS migration is not "
                           "supported by Conduit", name);
                return;
            }
            continue;
        }
        for (i = 0; i < G_N_ELEMENTS(param_defs); i++) {
            if (!strcmp(name, param_defs[i].name)) {
                break;
            }
        }
        if (i == G_N_ELEMENTS(param_defs)) {
            error_setg(errp, "Parameter '%s' is unexpected", name);
            return;
        }
        if (!JSON_NODE_HOLDS_VALUE(v) ||
            json_node_get_value_type(v) != G_TYPE_INT64 ||
            json_node_get_int(v) < 0 ||
            (uint64_t)json_node_get_int(v) > param_defs[i].max) {
            error_setg(errp, "Parameter '%s' expects a value between 0 and %"
                       PRIu64, name, param_defs[i].max);
            return;
        }
        *(uint64_t *)((uint8_t *)&next + param_defs[i].offset) =
            json_node_get_int(v);
    }
    params = next;
    if (mig_out.file && status_is_active(mig_out.status)) {
        mig_file_set_rate_limit(mig_out.file, params.max_bandwidth);
    }
}

void migration_get_announce_params(unsigned *initial, unsigned *max,
                                   unsigned *rounds, unsigned *step)
{
    *initial = params.announce_initial;
    *max = params.announce_max;
    *rounds = params.announce_rounds;
    *step = params.announce_step;
}

static void __attribute__((constructor)) migration_register_qmp(void)
{
    qmp_register_command_args("migrate", qmp_migrate,
                              "*uri:s *channels:a *detach:b *resume:b "
                              "*blk:b *inc:b", 0);
    qmp_register_command_args("migrate-incoming", qmp_migrate_incoming,
                              "*uri:s *channels:a *exit-on-error:b", 0);
    qmp_register_command_args("migrate_cancel", qmp_migrate_cancel, "", 0);
    qmp_register_command_args("migrate-cancel", qmp_migrate_cancel, "", 0);
    qmp_register_command_args("migrate-continue", qmp_migrate_continue,
                              "state:s", 0);
    qmp_register_command_args("query-migrate", qmp_query_migrate, "",
                              QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("query-migrate-capabilities",
                              qmp_query_migrate_capabilities, "",
                              QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("migrate-set-capabilities",
                              qmp_migrate_set_capabilities,
                              "capabilities:a", QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("query-migrate-parameters",
                              qmp_query_migrate_parameters, "",
                              QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("migrate-set-parameters",
                              qmp_migrate_set_parameters,
                              "*announce-initial:i *announce-max:i "
                              "*announce-rounds:i *announce-step:i "
                              "*downtime-limit:i *max-bandwidth:i "
                              "*avail-switchover-bandwidth:i "
                              "*tls-creds:any *tls-hostname:any "
                              "*tls-authz:any", QCO_ALLOW_PRECONFIG);
}

void migration_init(void)
{
    ram_register();
    vmstate_register("timer", &vmstate_clock, &clock_state);
}
