/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Error objects: creation, propagation and reporting.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"

struct Error {
    char *msg;
    ErrorClass err_class;
    const char *src;
    const char *func;
    int line;
    GString *hint;
};

Error *error_abort;
Error *error_fatal;

static const char *const error_class_names[] = {
    [ERROR_CLASS_GENERIC_ERROR] = "GenericError",
    [ERROR_CLASS_COMMAND_NOT_FOUND] = "CommandNotFound",
    [ERROR_CLASS_DEVICE_NOT_ACTIVE] = "DeviceNotActive",
    [ERROR_CLASS_DEVICE_NOT_FOUND] = "DeviceNotFound",
    [ERROR_CLASS_KVM_MISSING_CAP] = "KVMMissingCap",
};

const char *error_class_name(ErrorClass cls)
{
    if ((unsigned)cls >= ARRAY_SIZE(error_class_names)) {
        return "GenericError";
    }
    return error_class_names[cls];
}

static void error_handle_special(Error **errp, Error *err)
{
    if (errp == &error_abort) {
        fprintf(stderr, "Unexpected error in %s() at %s:%d:\n",
                err->func, err->src, err->line);
        error_report("%s", err->msg);
        abort();
    }
    if (errp == &error_fatal) {
        error_report_err(err);
        exit(1);
    }
}

static void error_setv(Error **errp, const char *src, int line,
                       const char *func, ErrorClass cls, int os_errno,
                       const char *fmt, va_list ap)
{
    Error *err;
    int saved_errno = errno;

    if (!errp) {
        errno = saved_errno;
        return;
    }
    /* Setting an error twice is a programming error: keep the first. */
    if (*errp && errp != &error_abort && errp != &error_fatal) {
        errno = saved_errno;
        return;
    }

    err = g_new0(Error, 1);
    err->msg = g_strdup_vprintf(fmt, ap);
    if (os_errno) {
        char *full = g_strdup_printf("%s: %s", err->msg,
                                     g_strerror(os_errno));
        g_free(err->msg);
        err->msg = full;
    }
    err->err_class = cls;
    err->src = src;
    err->line = line;
    err->func = func;

    error_handle_special(errp, err);
    *errp = err;
    errno = saved_errno;
}

void error_setg_internal(Error **errp, const char *src, int line,
                         const char *func, ErrorClass cls,
                         const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    error_setv(errp, src, line, func, cls, 0, fmt, ap);
    va_end(ap);
}

void error_setg_errno_internal(Error **errp, const char *src, int line,
                               const char *func, int os_errno,
                               const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    error_setv(errp, src, line, func, ERROR_CLASS_GENERIC_ERROR, os_errno,
               fmt, ap);
    va_end(ap);
}

void error_propagate(Error **dst_errp, Error *local_err)
{
    if (!local_err) {
        return;
    }
    error_handle_special(dst_errp, local_err);
    if (dst_errp && !*dst_errp) {
        *dst_errp = local_err;
    } else {
        error_free(local_err);
    }
}

static void error_vprepend(Error **errp, const char *fmt, va_list ap)
{
    char *prefix, *msg;

    if (!errp || !*errp) {
        return;
    }
    prefix = g_strdup_vprintf(fmt, ap);
    msg = g_strconcat(prefix, (*errp)->msg, NULL);
    g_free(prefix);
    g_free((*errp)->msg);
    (*errp)->msg = msg;
}

void error_prepend(Error **errp, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    error_vprepend(errp, fmt, ap);
    va_end(ap);
}

void error_propagate_prepend(Error **dst_errp, Error *local_err,
                             const char *fmt, ...)
{
    va_list ap;

    if (dst_errp && !*dst_errp) {
        va_start(ap, fmt);
        error_vprepend(&local_err, fmt, ap);
        va_end(ap);
    }
    error_propagate(dst_errp, local_err);
}

void error_append_hint(Error **errp, const char *fmt, ...)
{
    va_list ap;

    if (!errp || !*errp || errp == &error_abort || errp == &error_fatal) {
        return;
    }
    if (!(*errp)->hint) {
        (*errp)->hint = g_string_new(NULL);
    }
    va_start(ap, fmt);
    g_string_append_vprintf((*errp)->hint, fmt, ap);
    va_end(ap);
}

const char *error_get_pretty(const Error *err)
{
    return err->msg;
}

const char *error_get_hint(const Error *err)
{
    return err->hint ? err->hint->str : NULL;
}

ErrorClass error_get_class(const Error *err)
{
    return err->err_class;
}

void error_free(Error *err)
{
    if (err) {
        g_free(err->msg);
        if (err->hint) {
            g_string_free(err->hint, TRUE);
        }
        g_free(err);
    }
}

void error_free_or_abort(Error **errp)
{
    g_assert(errp && *errp);
    error_free(*errp);
    *errp = NULL;
}

static void error_report_hint(const Error *err)
{
    if (err->hint) {
        fputs(err->hint->str, stderr);
    }
}

void error_report_err(Error *err)
{
    error_report("%s", err->msg);
    error_report_hint(err);
    error_free(err);
}

void warn_report_err(Error *err)
{
    warn_report("%s", err->msg);
    error_report_hint(err);
    error_free(err);
}
