/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tracing runtime: the registry of events, glob enabling and output.
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/trace.h"
#include "qapi/error.h"

static GPtrArray *trace_groups;
static FILE *trace_out;
static GMutex trace_lock;

void trace_event_register_group(TraceEvent **events)
{
    if (!trace_groups) {
        trace_groups = g_ptr_array_new();
    }
    g_ptr_array_add(trace_groups, events);
}

#define FOR_EACH_EVENT(ev)                                              \
    for (guint g_ = 0; trace_groups && g_ < trace_groups->len; g_++)    \
        for (TraceEvent **p_ = g_ptr_array_index(trace_groups, g_);     \
             (ev = *p_) != NULL; p_++)

int trace_enable_pattern(const char *pattern, bool enable)
{
    TraceEvent *ev;
    int count = 0;
    g_autoptr(GPatternSpec) spec = g_pattern_spec_new(pattern);

    FOR_EACH_EVENT(ev) {
        if (g_pattern_spec_match_string(spec, ev->name)) {
            *ev->dstate = enable;
            count++;
        }
    }
    return count;
}

bool trace_event_is_enabled(const char *name)
{
    TraceEvent *ev;

    FOR_EACH_EVENT(ev) {
        if (!strcmp(ev->name, name)) {
            return *ev->dstate;
        }
    }
    return false;
}

static int trace_names_cmp(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void trace_list_events(FILE *out)
{
    TraceEvent *ev;
    g_autoptr(GPtrArray) names = g_ptr_array_new();

    FOR_EACH_EVENT(ev) {
        g_ptr_array_add(names, (gpointer)ev->name);
    }
    g_ptr_array_sort(names, trace_names_cmp);
    for (guint i = 0; i < names->len; i++) {
        fprintf(out, "%s\n", (const char *)g_ptr_array_index(names, i));
    }
}

bool trace_set_logfile(const char *path, Error **errp)
{
    FILE *f = stderr;

    if (path) {
        f = fopen(path, "a");
        if (!f) {
            error_setg_errno(errp, errno, "could not open log file '%s'",
                             path);
            return false;
        }
        setvbuf(f, NULL, _IOLBF, 0);
    }
    if (trace_out && trace_out != stderr) {
        fclose(trace_out);
    }
    trace_out = f;
    return true;
}

FILE *trace_get_logfile(void)
{
    return trace_out ? trace_out : stderr;
}

/* Enables @pattern; a plain name that matches nothing is a typo, as in QEMU. */
static void trace_enable_user_pattern(const char *pattern)
{
    if (!trace_enable_pattern(pattern, true) &&
        !strpbrk(pattern, "*?[")) {
        warn_report("trace event '%s' does not exist", pattern);
    }
}

static bool trace_enable_from_file(const char *path, Error **errp)
{
    g_autofree char *text = NULL;
    g_autoptr(GError) gerr = NULL;
    g_auto(GStrv) lines = NULL;

    if (!g_file_get_contents(path, &text, NULL, &gerr)) {
        error_setg(errp, "could not read trace events file '%s': %s", path,
                   gerr->message);
        return false;
    }
    lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l; l++) {
        char *pat = g_strstrip(*l);
        if (*pat && *pat != '#') {
            if (*pat == '-') {
                trace_enable_pattern(pat + 1, false);
            } else {
                trace_enable_user_pattern(pat);
            }
        }
    }
    return true;
}

bool trace_opt_parse(const char *optarg, Error **errp)
{
    g_auto(GStrv) parts = g_strsplit(optarg, ",", -1);

    for (char **p = parts; *p; p++) {
        const char *item = *p;

        if (g_str_has_prefix(item, "enable=")) {
            trace_enable_user_pattern(item + 7);
        } else if (g_str_has_prefix(item, "events=")) {
            if (!trace_enable_from_file(item + 7, errp)) {
                return false;
            }
        } else if (g_str_has_prefix(item, "file=")) {
            if (!trace_set_logfile(item + 5, errp)) {
                return false;
            }
        } else if (strchr(item, '=')) {
            error_setg(errp, "Invalid parameter '%.*s'",
                       (int)(strchr(item, '=') - item), item);
            return false;
        } else if (*item) {
            trace_enable_user_pattern(item);
        }
    }
    return true;
}

void trace_emit(const char *name, const char *fmt, ...)
{
    va_list ap;
    gint64 now = g_get_real_time();
    FILE *out = trace_out ? trace_out : stderr;

    (void)name;
    g_mutex_lock(&trace_lock);
    fprintf(out, "%d@%" G_GINT64_FORMAT ".%06" G_GINT64_FORMAT ":",
            (int)getpid(), now / G_USEC_PER_SEC, now % G_USEC_PER_SEC);
    va_start(ap, fmt);
    fputs(name, out);
    fputc(' ', out);
    vfprintf(out, fmt, ap);
    va_end(ap);
    g_mutex_unlock(&trace_lock);
}
