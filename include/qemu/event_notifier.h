/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Event notifiers: an eventfd (rfd == wfd) that one side signals and the
 * other polls; used for KVM irqfds, VFIO interrupts and cross-thread
 * wake-ups.
 */
#ifndef QEMU_EVENT_NOTIFIER_H
#define QEMU_EVENT_NOTIFIER_H

#include <stdbool.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"

typedef void EventNotifierHandler(EventNotifier *e);

struct EventNotifier {
    int rfd;
    int wfd;
    bool initialized;
    EventNotifierHandler *handler;  /* main-loop handler, if any */
};

/* Returns 0 or -errno.  @active: start signalled. */
int event_notifier_init(EventNotifier *e, int active);
/* Adopts an existing eventfd (e.g. one received from a peer). */
void event_notifier_init_fd(EventNotifier *e, int fd);
/* Removes any main-loop handler and closes the fd; safe to call twice. */
void event_notifier_cleanup(EventNotifier *e);
int event_notifier_get_fd(const EventNotifier *e);
/* Returns 0 or -errno. */
int event_notifier_set(EventNotifier *e);
/* Clears the notifier; returns nonzero if it was signalled. */
int event_notifier_test_and_clear(EventNotifier *e);
/* Runs @handler in the main loop when signalled; NULL removes it. */
void event_notifier_set_handler(EventNotifier *e,
                                EventNotifierHandler *handler);

#endif
