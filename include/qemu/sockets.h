/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * UNIX domain socket helpers with SCM_RIGHTS fd passing.
 *
 * All fds created here are close-on-exec; all calls retry on EINTR.
 */
#ifndef QEMU_SOCKETS_H
#define QEMU_SOCKETS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"

/* Most fds one message may carry (the kernel's SCM_MAX_FD). */
#define QEMU_SOCKET_MAX_FDS 253

/*
 * Binds and listens on a UNIX stream socket at path, replacing a stale
 * socket file there (not any other kind of file).  Returns the fd or -1.
 */
int unix_listen_path(const char *path, Error **errp);
/* Connects to the UNIX stream socket at path.  Returns the fd or -1. */
int unix_connect_path(const char *path, Error **errp);

/*
 * Sends all len bytes (len > 0), attaching nfds fds (may be 0) to the
 * first chunk.  Returns len, or -1 with errp set.  Never raises SIGPIPE.
 */
ssize_t qemu_send_with_fds(int sock, const void *buf, size_t len,
                           const int *fds, size_t nfds, Error **errp);

/*
 * Receives exactly len bytes (len > 0).  fds arriving with them are stored
 * in fds[] up to the capacity *nfds_inout; *nfds_inout becomes the number
 * stored.  Returns len; 0 on end-of-file before the first byte (nothing
 * stored); -1 with errp set on error, on end-of-file in the middle, or when
 * more fds arrived than fit (then every received fd is closed and
 * *nfds_inout is 0).  fds are received close-on-exec.
 */
ssize_t qemu_recv_with_fds(int sock, void *buf, size_t len, int *fds,
                           size_t *nfds_inout, Error **errp);

#endif
