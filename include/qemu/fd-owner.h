/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Who owns a file descriptor that management named by number.
 *
 * libvirt passes fds across exec and names them on the command line or
 * in QMP by number (netdev fd=N, vhostfd=N, chardev fd=N, add-fd fd=N).
 * A number is only a claim on an fd if the fd was passed to us: it must
 * have been open when the process started, must not be standard
 * input/output/error, and must not already belong to another backend.
 * Numbers of fds Conduit opened itself (eventfds, AIO contexts, the
 * monitor's sockets, fds taken with getfd) are refused, so that no fd
 * ever has two owners and no backend closes another's fd.
 */
#ifndef QEMU_FD_OWNER_H
#define QEMU_FD_OWNER_H

#include <stdbool.h>
#include "qemu/typedefs.h"

/*
 * Records the fds open now as the ones passed to the process; call it
 * first thing in main().  Without it (unit tests, fuzzers) only the
 * ownership rule applies.
 */
void qemu_fd_note_inherited(void);

/*
 * May a backend take fd by number?  Errors read "expects ..." and are
 * meant to follow "Parameter 'KEY' ".
 */
bool qemu_fd_check_number(int fd, Error **errp);

/* Records @owner ("netdev 'n0'") as the fd's one owner. */
bool qemu_fd_claim(int fd, const char *owner, Error **errp);
/* The owner is done with the fd (it closes it, or hands it back). */
void qemu_fd_release(int fd);
/* The owner of fd, or NULL. */
const char *qemu_fd_owner(int fd);

#endif
