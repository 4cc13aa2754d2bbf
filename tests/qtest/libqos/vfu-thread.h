/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small vfio-user device served by libvfu from a thread of the test,
 * for device shapes vfio-user-nvme does not offer (MSI only, a ROM).
 */
#ifndef LIBQOS_VFU_THREAD_H
#define LIBQOS_VFU_THREAD_H

#include <glib.h>
#include "../../contrib/vfio-user/libvfu/libvfu.h"

typedef struct QVfuThread {
    VfuCtx *ctx;
    GThread *thread;
    char *dir;
    char *sock;                 /* the socket path to give vfio-user-pci */
} QVfuThread;

/*
 * Creates a PCI device context listening in a fresh temporary directory;
 * the caller adds capabilities, IRQs and regions to vt->ctx, then starts.
 */
void qvfu_thread_init(QVfuThread *vt, const char *name,
                      const VfuPciIds *ids, void *opaque);
/* Serves clients from a thread until qvfu_thread_stop(). */
void qvfu_thread_start(QVfuThread *vt);
/* Stops the thread and removes the context, the socket and its directory. */
void qvfu_thread_stop(QVfuThread *vt);

#endif
