/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The QMP monitor: QEMU's JSON wire protocol over a chardev.
 *
 * Commands are registered by name with a handler; arguments arrive as a
 * json-glib object (never NULL: an empty object when the client sent
 * none).  A handler either stores its result in *ret (NULL means "{}") or
 * sets errp; the error class of the Error becomes the QMP "class".
 */
#ifndef MONITOR_MONITOR_H
#define MONITOR_MONITOR_H

#include <stdbool.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"

typedef void (*QmpCommandFunc)(JsonObject *args, JsonNode **ret,
                               Error **errp);

typedef enum QmpCommandOptions {
    QCO_NO_OPTIONS = 0,
    /* Accepted while the machine is not created yet (-preconfig). */
    QCO_ALLOW_PRECONFIG = 1 << 0,
} QmpCommandOptions;

/*
 * Registers (or replaces) a command.  Callable at any time, including from
 * constructors before main().  The dispatcher checks the arguments
 * against @args_spec before calling @fn: space-separated "name:type" with
 * type one of s (string), i (integer), b (bool), n (number), o (object),
 * a (array), any; a leading '*' marks an optional argument; a lone "**"
 * allows any further arguments.  Example: "path:s property:s".
 * Missing, mistyped and unexpected arguments get QEMU's error texts.
 */
void qmp_register_command_args(const char *name, QmpCommandFunc fn,
                               const char *args_spec, unsigned flags);

/*
 * What a command declares about itself, for introspection
 * (query-qmp-schema): its arguments as registered, in order.  @type is
 * the QAPI builtin name ("str", "int", "bool", "number", "any") or
 * "object"/"array" for structured arguments.  @args_known is false for
 * commands registered without an argument spec.
 */
typedef struct QmpArgInfo {
    const char *name;
    const char *type;
    bool optional;
} QmpArgInfo;

typedef void (*QmpCommandInfoFunc)(const char *name, const QmpArgInfo *args,
                                   size_t nr_args, bool args_known,
                                   bool extra_args, void *opaque);
/* Calls @fn for each registered command, sorted by name. */
void qmp_foreach_command(QmpCommandInfoFunc fn, void *opaque);

/*
 * An fd argument (netdev_add fd=, vhostfd=): a number naming an fd
 * Conduit has, or the name given to one with getfd (which is then the
 * caller's).  -1 with errp set otherwise.
 */
int monitor_fd_param(const char *str, Error **errp);

/* Starts a QMP monitor on @chr (greeting sent on each client connect). */
bool monitor_init_qmp(Chardev *chr, Error **errp);
/* "-mon chardev=ID[,mode=control][,pretty=on]" */
bool monitor_init_opts(QemuOpts *opts, Error **errp);
/* Closes every monitor (at exit). */
void monitor_cleanup(void);

/*
 * Broadcasts an event to every QMP monitor that has finished capabilities
 * negotiation.  Takes ownership of @data (may be NULL: no "data" member).
 */
void qapi_event_send(const char *event, JsonObject *data);

/* Helpers for command handlers. */
JsonNode *qmp_node_new_object(JsonObject *obj);   /* takes ownership */
JsonNode *qmp_node_new_string(const char *s);

#endif
