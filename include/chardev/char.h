/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Character devices: byte streams the monitor, the qtest server and
 * emulated UARTs talk through.
 *
 * Back-ends: "socket" (UNIX path; server=on|off, wait=on|off; or an
 * inherited fd=N that is either a listening or a connected socket),
 * "stdio", "file" (path=, output only), "null", "pty" (connected while a
 * process has the slave side open).  A listening socket
 * serves one client at a time and accepts the next after a disconnect.
 *
 * A front-end (CharBackend) attaches to one Chardev and gets its input
 * through can_read/read callbacks and connection changes through event.
 * Everything runs in the main loop with the BQL held.
 */
#ifndef CHARDEV_CHAR_H
#define CHARDEV_CHAR_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"

typedef enum QEMUChrEvent {
    CHR_EVENT_OPENED,   /* a peer connected (or the backend opened) */
    CHR_EVENT_CLOSED,   /* the peer went away */
} QEMUChrEvent;

/* How many bytes the front-end accepts right now (0: stop reading). */
typedef int IOCanReadHandler(void *opaque);
typedef void IOReadHandler(void *opaque, const uint8_t *buf, int size);
typedef void IOEventHandler(void *opaque, QEMUChrEvent event);

typedef struct CharBackend {
    Chardev *chr;
    IOCanReadHandler *chr_can_read;
    IOReadHandler *chr_read;
    IOEventHandler *chr_event;
    void *opaque;
    /* The guest side is closed (a virtio-serial port nobody opened). */
    bool fe_closed;
} CharBackend;

/*
 * Creates a chardev from "-chardev BACKEND,id=ID,..." options.  The
 * backend name is the option "backend" (the QemuOpts implied key).
 * Options: socket: path=, server=on|off, wait=on|off, fd=N;
 * file: path=, append=on|off; stdio; null; pty.
 */
Chardev *qemu_chr_new_from_opts(QemuOpts *opts, Error **errp);
/*
 * Creates a chardev from a legacy spec with the given id (@label):
 * "unix:PATH[,server=on|off][,wait=on|off]" (also bare "server" and
 * "nowait" flags), "stdio", "file:PATH", "null", "none" (returns NULL
 * without error: no device wanted), "pty", "fd:N", "chardev:ID" (an
 * existing chardev).
 */
Chardev *qemu_chr_new(const char *label, const char *spec, Error **errp);
Chardev *qemu_chr_find(const char *id);
const char *qemu_chr_get_label(const Chardev *chr);
/* "unix:PATH,server=on", "pty:/dev/pts/N", "stdio", ... (query-chardev) */
const char *qemu_chr_get_filename(const Chardev *chr);
bool qemu_chr_has_frontend(const Chardev *chr);
/* A front-end is attached and open (query-chardev's "frontend-open"). */
bool qemu_chr_frontend_open(const Chardev *chr);
/* Calls @fn for every chardev, sorted by label. */
void qemu_chr_foreach(void (*fn)(Chardev *chr, void *opaque), void *opaque);
/* Detaches from any front-end, closes the fds and frees. */
void qemu_chr_delete(Chardev *chr);
/* Deletes every chardev (at exit: removes socket files we created). */
void qemu_chr_cleanup_all(void);

/*
 * Front-end API.  A Chardev accepts one front-end at a time; init fails if
 * another one holds it.
 */
bool qemu_chr_fe_init(CharBackend *be, Chardev *chr, Error **errp);
/* Detaches; with @del also deletes the chardev. */
void qemu_chr_fe_deinit(CharBackend *be, bool del);
/*
 * Installs the callbacks (NULL to remove).  If a peer is already
 * connected, @fd_event gets CHR_EVENT_OPENED from the main loop soon after.
 */
void qemu_chr_fe_set_handlers(CharBackend *be,
                              IOCanReadHandler *fd_can_read,
                              IOReadHandler *fd_read,
                              IOEventHandler *fd_event,
                              void *opaque);
/*
 * Writes the whole buffer (blocking in short waits if the peer is slow).
 * Returns @len, or -1 if nobody is connected or the write failed (data for
 * a disconnected socket is dropped).
 */
int qemu_chr_fe_write_all(CharBackend *be, const uint8_t *buf, int len);
bool qemu_chr_fe_backend_connected(CharBackend *be);
/*
 * Whether the guest has the front-end open.  A front-end is open from
 * qemu_chr_fe_init() on unless it says otherwise (a virtio-serial port
 * opens when a guest program opens it).
 */
void qemu_chr_fe_set_open(CharBackend *be, bool open);
/* The front-end can take input again (after can_read returned 0). */
void qemu_chr_fe_accept_input(CharBackend *be);
/*
 * A file descriptor the socket peer sent (SCM_RIGHTS) with the data the
 * front-end is reading now, or -1; the caller owns it.  Fds nobody takes
 * are closed at the next read that brings fds, and at disconnect.
 */
int qemu_chr_fe_take_msgfd(CharBackend *be);

#endif
