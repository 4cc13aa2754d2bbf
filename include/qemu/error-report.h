/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Human-readable reports on stderr (or the monitor), prefixed with the
 * program name and the location being processed, e.g.
 *   conduit-system-x86_64: -device foo: 'foo' is not a valid device model name
 */
#ifndef QEMU_ERROR_REPORT_H
#define QEMU_ERROR_REPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include "qemu/compiler.h"

/* Set once from main(); defaults to "conduit". */
void error_set_progname(const char *argv0);
const char *error_get_progname(void);

/*
 * Location stack: while a command-line option is processed, reports are
 * prefixed with "-opt arg: ".  loc_push_cmdline("-device", "foo,bar=1").
 */
void loc_push_cmdline(const char *opt, const char *arg);
void loc_pop(void);

void error_report(const char *fmt, ...) QEMU_PRINTF(1, 2);
void warn_report(const char *fmt, ...) QEMU_PRINTF(1, 2);
void info_report(const char *fmt, ...) QEMU_PRINTF(1, 2);

/* Reports only the first time the flag pointed to is false. */
bool warn_report_once_cond(bool *printed, const char *fmt, ...)
    QEMU_PRINTF(2, 3);
#define warn_report_once(fmt, ...)                              \
    ({                                                          \
        static bool print_once_;                                \
        warn_report_once_cond(&print_once_, fmt, ## __VA_ARGS__); \
    })

/*
 * Guest errors (bad register programming) are logged, never fatal.
 * Enabled with "-d guest_errors"; counted always.
 */
void qemu_log_guest_error(const char *fmt, ...) QEMU_PRINTF(1, 2);
void qemu_set_log_guest_errors(bool on);
unsigned long qemu_guest_error_count(void);

/* Redirect reports (e.g. to a string while a QMP command runs); NULL resets. */
typedef void (*ErrorReportSink)(const char *msg, void *opaque);
void error_report_set_sink(ErrorReportSink sink, void *opaque);

/* -msg timestamp=on: prefix each message with the UTC time (ISO 8601). */
void error_report_set_timestamps(bool on);

#endif
