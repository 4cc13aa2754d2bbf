/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The qtest protocol server: a line protocol (QEMU-compatible) on a
 * chardev through which test programs read and write guest memory and I/O
 * ports, intercept interrupt lines and drive the virtual clock.  It is
 * meant for the qtest accelerator, which runs no vCPUs.
 *
 * Requests are one line each, words separated by spaces; every request
 * gets exactly one reply line, "OK[ value]" or "FAIL reason".  Interrupt
 * changes on intercepted lines are sent unprompted as "IRQ raise N" /
 * "IRQ lower N".
 */
#ifndef SYSTEM_QTEST_H
#define SYSTEM_QTEST_H

#include <stdbool.h>
#include <glib.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"

/* Called by the qtest accelerator's init. */
void qtest_set_enabled(bool enabled);

/*
 * Starts the server on the chardev @spec, as for qemu_chr_new():
 * "unix:PATH" connects to a test program listening there, "stdio", ...
 * @logfile (may be NULL; "-" is stderr) receives the traffic, one line
 * per message with a timestamp and direction.
 */
bool qtest_server_init(const char *spec, const char *logfile, Error **errp);

/*
 * Sends an unprompted line to the client (a newline is appended).  No-op
 * without a connected client.
 */
void qtest_sendf(const char *fmt, ...) QEMU_PRINTF(1, 2);

/*
 * Extra commands (e.g. "rtas" from the pseries machine).  @argv[0] is the
 * command name; @argc >= 1.  On success the handler returns true and may
 * append a reply value to @reply (sent as "OK value", or "OK" if empty);
 * on failure it returns false with errp set (sent as "FAIL message").
 */
typedef bool (*QTestCommandFunc)(int argc, char **argv, GString *reply,
                                 Error **errp);
void qtest_register_command(const char *name, QTestCommandFunc fn);

#endif
