/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Errors as values, in the QEMU style: a function that can fail takes
 * "Error **errp" last, sets it with error_setg() and returns false (or
 * NULL / -1).  The caller decides whether to propagate, report or abort.
 *
 * Special destinations: &error_abort (abort on error, for "cannot fail"),
 * &error_fatal (report and exit(1), for start-up), NULL (ignore).
 */
#ifndef QAPI_ERROR_H
#define QAPI_ERROR_H

#include <stdarg.h>
#include <stdbool.h>
#include <glib.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"

/* Error classes as QMP reports them in "class". */
typedef enum ErrorClass {
    ERROR_CLASS_GENERIC_ERROR,
    ERROR_CLASS_COMMAND_NOT_FOUND,
    ERROR_CLASS_DEVICE_NOT_ACTIVE,
    ERROR_CLASS_DEVICE_NOT_FOUND,
    ERROR_CLASS_KVM_MISSING_CAP,
} ErrorClass;

/* "GenericError", "CommandNotFound", ... */
const char *error_class_name(ErrorClass cls);

extern Error *error_abort;
extern Error *error_fatal;

#define error_setg(errp, fmt, ...) \
    error_setg_internal((errp), __FILE__, __LINE__, __func__, \
                        ERROR_CLASS_GENERIC_ERROR, (fmt), ## __VA_ARGS__)
#define error_set(errp, cls, fmt, ...) \
    error_setg_internal((errp), __FILE__, __LINE__, __func__, \
                        (cls), (fmt), ## __VA_ARGS__)
/* Appends ": strerror(os_errno)". */
#define error_setg_errno(errp, os_errno, fmt, ...) \
    error_setg_errno_internal((errp), __FILE__, __LINE__, __func__, \
                              (os_errno), (fmt), ## __VA_ARGS__)

void error_setg_internal(Error **errp, const char *src, int line,
                         const char *func, ErrorClass cls,
                         const char *fmt, ...) QEMU_PRINTF(6, 7);
void error_setg_errno_internal(Error **errp, const char *src, int line,
                               const char *func, int os_errno,
                               const char *fmt, ...) QEMU_PRINTF(6, 7);

/* Moves local_err into *dst_errp (or frees it if dst_errp is NULL). */
void error_propagate(Error **dst_errp, Error *local_err);
/* Like error_propagate, then prepends a formatted prefix. */
void error_propagate_prepend(Error **dst_errp, Error *local_err,
                             const char *fmt, ...) QEMU_PRINTF(3, 4);
/* Prepends "prefix" to the message of *errp, if set. */
void error_prepend(Error **errp, const char *fmt, ...) QEMU_PRINTF(2, 3);
/* Adds a how-to-fix line; shown by error_report_err, not in QMP. */
void error_append_hint(Error **errp, const char *fmt, ...) QEMU_PRINTF(2, 3);

const char *error_get_pretty(const Error *err);
const char *error_get_hint(const Error *err);
ErrorClass error_get_class(const Error *err);
void error_free(Error *err);
void error_free_or_abort(Error **errp);
/* error_report()s the message (and hint), then frees it. */
void error_report_err(Error *err);
void warn_report_err(Error *err);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Error, error_free)

/*
 * ERRP_GUARD(): lets a function dereference errp (to test *errp) even when
 * the caller passed NULL or &error_fatal.
 */
typedef struct ErrorPropagator {
    Error *local_err;
    Error **errp;
} ErrorPropagator;

static inline void error_propagator_cleanup(ErrorPropagator *prop)
{
    error_propagate(prop->errp, prop->local_err);
}

#define ERRP_GUARD()                                                    \
    g_auto(ErrorPropagator) _auto_errp_prop = {.errp = errp};           \
    do {                                                                \
        if (!errp || errp == &error_fatal) {                            \
            errp = &_auto_errp_prop.local_err;                          \
        }                                                               \
    } while (0)

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(ErrorPropagator, error_propagator_cleanup)

#endif
