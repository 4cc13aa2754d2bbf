/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Option lists as the command line and QMP give them: an ordered list of
 * (key, string value) pairs plus an optional id.
 *
 *   "vfio-pci,host=0000:01:00.0,id=nic0"  with implied key "driver" ->
 *   id "nic0", driver=vfio-pci, host=0000:01:00.0
 *
 * ",," is an escaped comma inside a value.  A bare "help" or "?" item asks
 * for help.  A bare "key" after the first item means key=on.  JSON objects
 * are flattened to dotted keys ({"a":{"b":1}} -> a.b=1).
 */
#ifndef QEMU_OPTION_H
#define QEMU_OPTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include "qemu/typedefs.h"

/* ---- number parsers (errors say what the string should look like) ---- */

/* on/off, yes/no, true/false (any case). */
bool qemu_strtobool(const char *str, bool *result, Error **errp);
/* Decimal, 0x hex or 0 octal; the whole string must be a number. */
bool qemu_strtou64(const char *str, uint64_t *result, Error **errp);
bool qemu_strtoi64(const char *str, int64_t *result, Error **errp);
/* Bytes with an optional B/k/K/M/G/T/P/E suffix (1024-based): "64M". */
bool qemu_strtosz(const char *str, uint64_t *result, Error **errp);
/* As qemu_strtosz, but a bare number means MiB (for -m). */
bool qemu_strtosz_MiB(const char *str, uint64_t *result, Error **errp);

/* ---- option lists ---- */

QemuOpts *qemu_opts_new(const char *id);
/* implied_key may be NULL (then a bare first item is key=on). */
QemuOpts *qemu_opts_parse(const char *params, const char *implied_key,
                          Error **errp);
/* The input must be a JSON object. */
QemuOpts *qemu_opts_from_json(const char *json, Error **errp);
QemuOpts *qemu_opts_from_json_object(JsonObject *obj, Error **errp);
void qemu_opts_free(QemuOpts *opts);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QemuOpts, qemu_opts_free)

const char *qemu_opts_id(const QemuOpts *opts);
void qemu_opts_set_id(QemuOpts *opts, const char *id);
bool qemu_opts_has_help(const QemuOpts *opts);
/* Number of key=value pairs (the id is not one). */
size_t qemu_opts_count(const QemuOpts *opts);
const char *qemu_opts_key(const QemuOpts *opts, size_t i);
const char *qemu_opts_value(const QemuOpts *opts, size_t i);
/* "key=val,key=val" with commas in values doubled; g_free the result. */
char *qemu_opts_to_string(const QemuOpts *opts);

/* The last value given for key, or NULL. */
const char *qemu_opt_get(const QemuOpts *opts, const char *key);
bool qemu_opt_has(const QemuOpts *opts, const char *key);
/* Missing key: defval.  Bad value: error "Parameter 'key' expects ...". */
bool qemu_opt_get_bool(const QemuOpts *opts, const char *key, bool defval,
                       Error **errp);
uint64_t qemu_opt_get_number(const QemuOpts *opts, const char *key,
                             uint64_t defval, Error **errp);
uint64_t qemu_opt_get_size(const QemuOpts *opts, const char *key,
                           uint64_t defval, Error **errp);
/* Appends (a repeated key keeps every value; qemu_opt_get sees the last). */
void qemu_opt_set(QemuOpts *opts, const char *key, const char *value);
/* Removes every value for key; returns how many were removed. */
int qemu_opt_del(QemuOpts *opts, const char *key);
/* Returns the last value for key (owned by caller) and removes them all. */
char *qemu_opt_steal(QemuOpts *opts, const char *key);

/*
 * Where a value came from.  Text (the command line, key=value strings)
 * may spell any type; a JSON value (QMP, -device '{...}') has a type of
 * its own that must be the declared one, as the help output (-device
 * X,help) declares it.  {} is kept as a value of kind JSON_OBJECT.
 */
typedef enum QemuOptKind {
    QEMU_OPT_TEXT,
    QEMU_OPT_JSON_STRING,
    QEMU_OPT_JSON_INT,
    QEMU_OPT_JSON_NUMBER,
    QEMU_OPT_JSON_BOOL,
    QEMU_OPT_JSON_OBJECT,
} QemuOptKind;

QemuOptKind qemu_opts_kind(const QemuOpts *opts, size_t i);
/*
 * Does a value of @kind fit the declared @type ("bool", "str", "uint16",
 * "int32", "size", "number", "str-or-int"; anything else is a string)?
 * Error: "Parameter 'KEY' expects a boolean (bool)", ...
 */
bool qemu_opt_kind_check(const char *key, QemuOptKind kind, const char *type,
                         Error **errp);

typedef struct QemuOptType {
    const char *key;
    const char *type;           /* as above, or "object" for a {} allowed */
} QemuOptType;
/*
 * Checks each value whose key, after any number of leading @prefix
 * ("file."), is in @types (ended by a NULL key); {} is refused for
 * everything else.
 */
bool qemu_opts_check_types(const QemuOpts *opts, const QemuOptType *types,
                           const char *prefix, Error **errp);

typedef bool (*QemuOptsLoopFunc)(void *opaque, const char *key,
                                 const char *value, Error **errp);
/* Calls fn for each pair in order; stops and returns false when fn fails. */
bool qemu_opt_foreach(const QemuOpts *opts, QemuOptsLoopFunc fn,
                      void *opaque, Error **errp);

#endif
