/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user-nvme: the doorbell poller thread (see poller.c).
 */
#ifndef CONTRIB_VFIO_USER_NVME_POLLER_H
#define CONTRIB_VFIO_USER_NVME_POLLER_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include "qemu/typedefs.h"
#include "nvme.h"

typedef struct NvmePoller {
    NvmeCtrl *ctrl;
    GThread *thread;
    int kick_fd;
    bool stop;
    bool poll_doorbells;
    bool client;            /* a client is attached (atomic) */
    int64_t max_sleep_ns;
    /* Statistics for traces and the benchmark. */
    uint64_t sleeps;
    uint64_t passes_with_work;
} NvmePoller;

/*
 * @poll_doorbells: whether the client may map BAR0 (false with --no-mmap):
 * then registers and doorbells are watched in the shared memory.
 */
bool nvme_poller_start(NvmePoller *p, NvmeCtrl *ctrl, bool poll_doorbells,
                       unsigned max_sleep_us, Error **errp);
/* Wakes the poller now (controller enabled, client connected, ...). */
void nvme_poller_kick(void *opaque);
/*
 * Whether a client is attached: without one nothing can store into BAR0,
 * so a disabled controller need not be watched.
 */
void nvme_poller_set_client(NvmePoller *p, bool attached);
void nvme_poller_stop(NvmePoller *p);

#endif
