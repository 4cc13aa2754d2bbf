/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Timers on two clocks.
 *
 * QEMU_CLOCK_REALTIME follows the host monotonic clock always.
 * QEMU_CLOCK_VIRTUAL is guest time: it follows the host monotonic clock
 * while the VM runs and stands still while it is stopped.  Under the qtest
 * accelerator it is manual: it only moves with qtest_clock_warp() (the
 * "clock_step"/"clock_set" qtest commands).
 *
 * Timers run in the main loop with the BQL held.  All functions here are
 * for the main-loop thread (or a thread holding the BQL).
 */
#ifndef QEMU_TIMER_H
#define QEMU_TIMER_H

#include <stdbool.h>
#include <stdint.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"

#define NANOSECONDS_PER_SECOND 1000000000LL
#define SCALE_MS 1000000
#define SCALE_US 1000
#define SCALE_NS 1

typedef enum QEMUClockType {
    QEMU_CLOCK_REALTIME,
    QEMU_CLOCK_VIRTUAL,
    QEMU_CLOCK_MAX,
} QEMUClockType;

typedef void QEMUTimerCB(void *opaque);

int64_t qemu_clock_get_ns(QEMUClockType type);
static inline int64_t qemu_clock_get_us(QEMUClockType type)
{
    return qemu_clock_get_ns(type) / SCALE_US;
}
static inline int64_t qemu_clock_get_ms(QEMUClockType type)
{
    return qemu_clock_get_ns(type) / SCALE_MS;
}

/* Host wall-clock time (for event timestamps). */
int64_t qemu_clock_get_host_ns(void);

/* Timers are created idle; expire times are in the clock's nanoseconds. */
QEMUTimer *timer_new_ns(QEMUClockType type, QEMUTimerCB *cb, void *opaque);
QEMUTimer *timer_new_ms(QEMUClockType type, QEMUTimerCB *cb, void *opaque);
/* Arms (or re-arms) the timer; for timer_new_ms timers @expire is in ms. */
void timer_mod(QEMUTimer *t, int64_t expire);
void timer_mod_ns(QEMUTimer *t, int64_t expire_ns);
void timer_del(QEMUTimer *t);
/* Disarms and frees; NULL is accepted. */
void timer_free(QEMUTimer *t);
bool timer_pending(QEMUTimer *t);
/* Expire time in ns, or -1 if not pending. */
int64_t timer_expire_time_ns(QEMUTimer *t);

/*
 * Nanoseconds until the earliest timer on @type fires: 0 if one is due,
 * -1 if none is armed (or the clock is stopped).
 */
int64_t qemu_clock_deadline_ns(QEMUClockType type);
/* Absolute expire time of the earliest armed timer on @type, or -1. */
int64_t qemu_clock_next_expire_ns(QEMUClockType type);
/* Runs every expired timer of @type in expiry order; true if any ran. */
bool qemu_clock_run_timers(QEMUClockType type);

/*
 * Virtual clock control (runstate and the qtest accelerator use these).
 * Stopping freezes the virtual clock at its current value; starting
 * resumes it from there.
 */
void qemu_clock_virtual_start(void);
void qemu_clock_virtual_stop(void);
/* Puts QEMU_CLOCK_VIRTUAL under manual (qtest) control, starting at 0. */
void qemu_clock_virtual_set_manual(bool manual);
/* Sets the stopped virtual clock (an incoming migration's value). */
void qemu_clock_virtual_set(int64_t ns);
bool qemu_clock_virtual_is_manual(void);
/*
 * Manual mode: moves the virtual clock forward to @dest, firing due timers
 * in expiry order with the clock set to each timer's deadline while it
 * runs.  A @dest in the past leaves the clock where it is.
 */
void qtest_clock_warp(int64_t dest);

#endif
