/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Timers on the realtime and virtual clocks.  Each clock keeps its armed
 * timers in a list sorted by expiry (ties in arming order); the main loop
 * sleeps until the head of either list is due.
 */
#include "qemu/osdep.h"
#include "qemu/timer.h"
#include "qemu/main-loop.h"

struct QEMUTimer {
    QEMUClockType type;
    int scale;
    QEMUTimerCB *cb;
    void *opaque;
    int64_t expire_ns;      /* -1 when not armed */
    QEMUTimer *next;
};

static QEMUTimer *active_timers[QEMU_CLOCK_MAX];

/* Virtual clock state. */
static bool vclock_running;
static bool vclock_manual;
static int64_t vclock_offset;   /* running: virtual = monotonic + offset */
static int64_t vclock_frozen;   /* stopped/manual: the current value */

static int64_t monotonic_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * NANOSECONDS_PER_SECOND + ts.tv_nsec;
}

int64_t qemu_clock_get_host_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec * NANOSECONDS_PER_SECOND + ts.tv_nsec;
}

int64_t qemu_clock_get_ns(QEMUClockType type)
{
    if (type == QEMU_CLOCK_REALTIME) {
        return monotonic_ns();
    }
    if (vclock_running && !vclock_manual) {
        return monotonic_ns() + vclock_offset;
    }
    return vclock_frozen;
}

void qemu_clock_virtual_start(void)
{
    if (vclock_running) {
        return;
    }
    vclock_offset = vclock_frozen - monotonic_ns();
    vclock_running = true;
    qemu_notify_event();
}

void qemu_clock_virtual_stop(void)
{
    if (!vclock_running) {
        return;
    }
    vclock_frozen = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    vclock_running = false;
}

void qemu_clock_virtual_set_manual(bool manual)
{
    if (manual && !vclock_manual) {
        vclock_frozen = 0;
    }
    vclock_manual = manual;
}

void qemu_clock_virtual_set(int64_t ns)
{
    if (vclock_running && !vclock_manual) {
        vclock_offset = ns - monotonic_ns();
    } else {
        vclock_frozen = ns;
    }
}

bool qemu_clock_virtual_is_manual(void)
{
    return vclock_manual;
}

static QEMUTimer *timer_new_scaled(QEMUClockType type, int scale,
                                   QEMUTimerCB *cb, void *opaque)
{
    QEMUTimer *t = g_new0(QEMUTimer, 1);

    g_assert(type < QEMU_CLOCK_MAX);
    t->type = type;
    t->scale = scale;
    t->cb = cb;
    t->opaque = opaque;
    t->expire_ns = -1;
    return t;
}

QEMUTimer *timer_new_ns(QEMUClockType type, QEMUTimerCB *cb, void *opaque)
{
    return timer_new_scaled(type, SCALE_NS, cb, opaque);
}

QEMUTimer *timer_new_ms(QEMUClockType type, QEMUTimerCB *cb, void *opaque)
{
    return timer_new_scaled(type, SCALE_MS, cb, opaque);
}

void timer_del(QEMUTimer *t)
{
    QEMUTimer **pt;

    if (!t || t->expire_ns < 0) {
        return;
    }
    for (pt = &active_timers[t->type]; *pt; pt = &(*pt)->next) {
        if (*pt == t) {
            *pt = t->next;
            break;
        }
    }
    t->next = NULL;
    t->expire_ns = -1;
}

void timer_mod_ns(QEMUTimer *t, int64_t expire_ns)
{
    QEMUTimer **pt;

    timer_del(t);
    if (expire_ns < 0) {
        expire_ns = 0;
    }
    t->expire_ns = expire_ns;
    for (pt = &active_timers[t->type]; *pt; pt = &(*pt)->next) {
        if ((*pt)->expire_ns > expire_ns) {
            break;
        }
    }
    t->next = *pt;
    *pt = t;
    if (pt == &active_timers[t->type]) {
        /* New earliest deadline: the loop may be sleeping past it. */
        qemu_notify_event();
    }
}

void timer_mod(QEMUTimer *t, int64_t expire)
{
    if (t->scale != SCALE_NS && expire > INT64_MAX / t->scale) {
        expire = INT64_MAX;
    } else {
        expire *= t->scale;
    }
    timer_mod_ns(t, expire);
}

void timer_free(QEMUTimer *t)
{
    if (!t) {
        return;
    }
    timer_del(t);
    g_free(t);
}

bool timer_pending(QEMUTimer *t)
{
    return t->expire_ns >= 0;
}

int64_t timer_expire_time_ns(QEMUTimer *t)
{
    return t->expire_ns;
}

int64_t qemu_clock_next_expire_ns(QEMUClockType type)
{
    return active_timers[type] ? active_timers[type]->expire_ns : -1;
}

int64_t qemu_clock_deadline_ns(QEMUClockType type)
{
    int64_t now;

    if (!active_timers[type]) {
        return -1;
    }
    if (type == QEMU_CLOCK_VIRTUAL && (vclock_manual || !vclock_running)) {
        /* Only qtest_clock_warp()/vm_start() move it. */
        return -1;
    }
    now = qemu_clock_get_ns(type);
    return MAX(active_timers[type]->expire_ns - now, 0);
}

static bool run_timers_until(QEMUClockType type, int64_t now)
{
    bool ran = false;
    QEMUTimer *t;

    /*
     * "now" is sampled once, so a callback that re-arms its timer at the
     * current time runs again on the next pass, not in a loop here.
     */
    while ((t = active_timers[type]) && t->expire_ns <= now) {
        active_timers[type] = t->next;
        t->next = NULL;
        t->expire_ns = -1;
        t->cb(t->opaque);
        ran = true;
    }
    return ran;
}

bool qemu_clock_run_timers(QEMUClockType type)
{
    if (type == QEMU_CLOCK_VIRTUAL && (vclock_manual || !vclock_running)) {
        return false;
    }
    return run_timers_until(type, qemu_clock_get_ns(type));
}

void qtest_clock_warp(int64_t dest)
{
    QEMUTimer *t;

    g_assert(vclock_manual);
    while ((t = active_timers[QEMU_CLOCK_VIRTUAL]) && t->expire_ns <= dest) {
        /* Each timer sees the clock at its own deadline. */
        if (t->expire_ns > vclock_frozen) {
            vclock_frozen = t->expire_ns;
        }
        run_timers_until(QEMU_CLOCK_VIRTUAL, vclock_frozen);
    }
    if (dest > vclock_frozen) {
        vclock_frozen = dest;
    }
}
