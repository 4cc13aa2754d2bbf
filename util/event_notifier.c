/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Event notifiers on eventfd. */
#include "qemu/osdep.h"
#include "qemu/event_notifier.h"
#include "qemu/main-loop.h"
#include <sys/eventfd.h>

int event_notifier_init(EventNotifier *e, int active)
{
    int fd = eventfd(active ? 1 : 0, EFD_NONBLOCK | EFD_CLOEXEC);

    if (fd < 0) {
        return -errno;
    }
    event_notifier_init_fd(e, fd);
    return 0;
}

void event_notifier_init_fd(EventNotifier *e, int fd)
{
    e->rfd = fd;
    e->wfd = fd;
    e->initialized = true;
    e->handler = NULL;
}

void event_notifier_cleanup(EventNotifier *e)
{
    if (!e->initialized) {
        return;
    }
    if (e->handler) {
        qemu_set_fd_handler(e->rfd, NULL, NULL, NULL);
        e->handler = NULL;
    }
    if (e->rfd != e->wfd) {
        close(e->wfd);
    }
    close(e->rfd);
    e->rfd = -1;
    e->wfd = -1;
    e->initialized = false;
}

int event_notifier_get_fd(const EventNotifier *e)
{
    return e->rfd;
}

int event_notifier_set(EventNotifier *e)
{
    uint64_t one = 1;
    ssize_t r;

    do {
        r = write(e->wfd, &one, sizeof(one));
    } while (r < 0 && errno == EINTR);
    /* EAGAIN: the counter is saturated, which still reads as signalled. */
    if (r < 0 && errno != EAGAIN) {
        return -errno;
    }
    return 0;
}

int event_notifier_test_and_clear(EventNotifier *e)
{
    uint64_t value = 0;
    ssize_t r;

    do {
        r = read(e->rfd, &value, sizeof(value));
    } while (r < 0 && errno == EINTR);
    return r == sizeof(value) && value != 0;
}

static void event_notifier_fd_read(void *opaque)
{
    EventNotifier *e = opaque;

    if (e->handler) {
        e->handler(e);
    }
}

void event_notifier_set_handler(EventNotifier *e,
                                EventNotifierHandler *handler)
{
    e->handler = handler;
    qemu_set_fd_handler(e->rfd, handler ? event_notifier_fd_read : NULL,
                        NULL, e);
}
