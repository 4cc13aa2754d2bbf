/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * error_report() and friends: one line on stderr with a location prefix.
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/trace.h"

static char *progname;
static GPtrArray *loc_stack;
static ErrorReportSink report_sink;
static void *report_sink_opaque;
static bool log_guest_errors;
static bool report_timestamps;
static unsigned long guest_error_count;

void error_set_progname(const char *argv0)
{
    g_free(progname);
    progname = g_path_get_basename(argv0);
}

const char *error_get_progname(void)
{
    return progname ? progname : "conduit";
}

void loc_push_cmdline(const char *opt, const char *arg)
{
    if (!loc_stack) {
        loc_stack = g_ptr_array_new_with_free_func(g_free);
    }
    g_ptr_array_add(loc_stack, arg ? g_strdup_printf("%s %s", opt, arg)
                                   : g_strdup(opt));
}

void loc_pop(void)
{
    g_assert(loc_stack && loc_stack->len);
    g_ptr_array_remove_index(loc_stack, loc_stack->len - 1);
}

static const char *loc_current(void)
{
    if (!loc_stack || !loc_stack->len) {
        return NULL;
    }
    return g_ptr_array_index(loc_stack, loc_stack->len - 1);
}

void error_report_set_timestamps(bool on)
{
    report_timestamps = on;
}

void error_report_set_sink(ErrorReportSink sink, void *opaque)
{
    report_sink = sink;
    report_sink_opaque = opaque;
}

static void vreport(const char *kind, const char *fmt, va_list ap)
{
    g_autoptr(GString) line = g_string_new(NULL);
    const char *loc = loc_current();

    if (!report_sink) {
        if (report_timestamps) {
            g_autoptr(GDateTime) now = g_date_time_new_now_utc();
            g_autofree char *ts = g_date_time_format(now, "%FT%T");

            g_string_append_printf(line, "%s.%06dZ ", ts,
                                   g_date_time_get_microsecond(now));
        }
        g_string_append_printf(line, "%s: ", error_get_progname());
        if (loc) {
            g_string_append_printf(line, "%s: ", loc);
        }
    }
    g_string_append(line, kind);
    g_string_append_vprintf(line, fmt, ap);

    if (report_sink) {
        report_sink(line->str, report_sink_opaque);
        return;
    }
    g_string_append_c(line, '\n');
    fputs(line->str, stderr);
    fflush(stderr);
}

void error_report(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vreport("", fmt, ap);
    va_end(ap);
}

void warn_report(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vreport("warning: ", fmt, ap);
    va_end(ap);
}

void info_report(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vreport("info: ", fmt, ap);
    va_end(ap);
}

bool warn_report_once_cond(bool *printed, const char *fmt, ...)
{
    va_list ap;

    if (*printed) {
        return false;
    }
    *printed = true;
    va_start(ap, fmt);
    vreport("warning: ", fmt, ap);
    va_end(ap);
    return true;
}

void qemu_set_log_guest_errors(bool on)
{
    log_guest_errors = on;
}

unsigned long qemu_guest_error_count(void)
{
    return guest_error_count;
}

void qemu_log_guest_error(const char *fmt, ...)
{
    va_list ap;

    guest_error_count++;
    if (!log_guest_errors) {
        return;
    }
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    /* Callers may end with a newline, as with QEMU's qemu_log_mask. */
    g_strchomp(msg);
    fprintf(trace_get_logfile(), "%s: guest error: %s\n",
            error_get_progname(), msg);
}
