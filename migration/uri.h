/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a migration stream goes or comes from: QEMU's URI forms
 * (tcp:HOST:PORT, unix:PATH, fd:N|NAME, exec:CMD, file:PATH[,offset=N],
 * and "defer" for -incoming) and the "channels" argument's addresses,
 * parsed into one MigrationAddr (pure, unit-tested), plus opening them.
 * Private to migration/.
 */
#ifndef MIGRATION_URI_H
#define MIGRATION_URI_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include "qemu/typedefs.h"

typedef enum MigrationTransport {
    MIG_TRANSPORT_TCP,
    MIG_TRANSPORT_UNIX,
    MIG_TRANSPORT_FD,
    MIG_TRANSPORT_EXEC,
    MIG_TRANSPORT_FILE,
    MIG_TRANSPORT_DEFER,
} MigrationTransport;

typedef struct MigrationAddr {
    MigrationTransport transport;
    char *host;                 /* tcp: without brackets */
    char *port;                 /* tcp */
    char *path;                 /* unix, file */
    char *fd;                   /* fd: a number or a getfd name */
    char **argv;                /* exec: argv (sh -c CMD for a URI) */
    uint64_t offset;            /* file */
} MigrationAddr;

void migration_addr_clear(MigrationAddr *a);
/* allow_defer: "defer" is valid (incoming only). */
bool migration_uri_parse(const char *uri, bool allow_defer, MigrationAddr *a,
                         Error **errp);
/* The "channels" argument: exactly one "main" channel. */
bool migration_channels_parse(JsonArray *channels, MigrationAddr *a,
                              Error **errp);

/* A connected (outgoing) fd; *child is the exec helper's pid or -1. */
int migration_addr_connect(const MigrationAddr *a, pid_t *child,
                           Error **errp);
/*
 * Incoming: a listening socket for tcp/unix (*listening true), else the
 * stream's fd itself (fd, exec, file).
 */
int migration_addr_listen(const MigrationAddr *a, bool *listening,
                          pid_t *child, Error **errp);
/* "tcp:HOST:PORT" of a listening inet socket (for query-migrate). */
char *migration_socket_describe(int fd);

#endif
