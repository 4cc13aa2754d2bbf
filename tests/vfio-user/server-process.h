/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The vfio-user-nvme server as a child of a test program: it listens on
 * a socket in a fresh temporary directory and is stopped with SIGTERM.
 * A test that aborts takes the server with it (PR_SET_PDEATHSIG).
 */
#ifndef TESTS_VFIO_USER_SERVER_PROCESS_H
#define TESTS_VFIO_USER_SERVER_PROCESS_H

#include <glib.h>

typedef struct VuServer {
    GPid pid;
    char *dir;
    char *sock;                 /* the socket path, in dir */
} VuServer;

/*
 * Runs "@bin --socket PATH @args" (through the test's exe wrapper, see
 * tests/exe-wrapper.h) and waits up to @wait_us for the socket to
 * appear; the server must not exit meanwhile.
 */
void vu_server_start(VuServer *s, const char *bin, const char *args,
                     gint64 wait_us);
/* SIGTERM: the server must exit 0 and remove its socket. */
void vu_server_stop(VuServer *s);

#endif
