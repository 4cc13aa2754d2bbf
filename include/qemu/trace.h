/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tracing runtime.  Events are declared in each directory's trace-events
 * file; scripts/tracetool turns them into trace_NAME() inline functions.
 * "-trace PATTERN" enables events by glob, "-D FILE" directs the output.
 */
#ifndef QEMU_TRACE_H
#define QEMU_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"

typedef struct TraceEvent {
    const char *name;
    uint16_t *dstate;
} TraceEvent;

void trace_event_register_group(TraceEvent **events);

/* Enables (or disables) every event matching a glob; returns the count. */
int trace_enable_pattern(const char *pattern, bool enable);
/*
 * Handles one "-trace" argument: "PATTERN", "enable=PATTERN",
 * "events=FILE" (one pattern a line) or "file=LOG".  "help" lists events.
 */
bool trace_opt_parse(const char *optarg, Error **errp);
/* Lists every event name on the given stream, one per line. */
void trace_list_events(FILE *out);
/* Sends trace output (and -d logs) to FILE; NULL means stderr. */
bool trace_set_logfile(const char *path, Error **errp);
/* Where trace output and -d logs go: the -D file, else stderr. */
FILE *trace_get_logfile(void);
bool trace_event_is_enabled(const char *name);

void trace_emit(const char *name, const char *fmt, ...) QEMU_PRINTF(2, 3);

#endif
