/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The main loop: one glib GMainContext, run by the main thread, with the
 * big lock (BQL) held except while it sleeps in poll().
 *
 * Device models, the monitor and the qtest server run from this loop with
 * the BQL held.  Other threads (KVM vCPUs, helper threads) take the BQL
 * before touching device or machine state; bottom halves and
 * qemu_notify_event() are the way for them to wake the loop.
 */
#ifndef QEMU_MAIN_LOOP_H
#define QEMU_MAIN_LOOP_H

#include <stdbool.h>
#include <glib.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"
#include "system/runstate.h"

typedef void IOHandler(void *opaque);
typedef void QEMUBHFunc(void *opaque);
typedef struct QEMUBH QEMUBH;

/* Creates the main context, the timer source and the signal handlers. */
void qemu_init_main_loop(void);
/*
 * Runs until a shutdown is requested (qemu_system_shutdown_request*()),
 * handling reset requests on the way.  Returns the exit status passed
 * with the shutdown request.  Takes the BQL itself if not yet held.
 */
int qemu_main_loop(void);
/*
 * One iteration: dispatches whatever is ready (blocking until something
 * is, if @blocking).  For tests and for code that must wait for an event
 * without returning to the top of the loop.  Caller holds the BQL.
 */
void main_loop_wait(bool blocking);

/*
 * Watches @fd for readability/writability; the handlers run in the main
 * loop with the BQL held.  NULL for both removes the watch.  Calling it
 * again for the same fd replaces the handlers.
 */
void qemu_set_fd_handler(int fd, IOHandler *fd_read, IOHandler *fd_write,
                         void *opaque);

/*
 * Bottom halves: a callback run once by the main loop soon after
 * qemu_bh_schedule().  Scheduling is safe from any thread and wakes the
 * loop; scheduling an already-scheduled BH is a no-op.  qemu_bh_delete()
 * cancels a pending run and frees the BH (main-loop thread, or any thread
 * holding the BQL).
 */
QEMUBH *qemu_bh_new(QEMUBHFunc *cb, void *opaque);
void qemu_bh_schedule(QEMUBH *bh);
void qemu_bh_cancel(QEMUBH *bh);
void qemu_bh_delete(QEMUBH *bh);

/* Wakes the main loop from poll() (any thread). */
void qemu_notify_event(void);

/* The big lock.  Not recursive. */
void bql_lock(void);
void bql_unlock(void);
bool bql_locked(void);

#endif
