/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tracing runtime: glob enabling, -trace option forms and output.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/trace.h"
#include "qemu/error-report.h"

static uint16_t dstate_vfio_a, dstate_vfio_b, dstate_msix;
static TraceEvent ev_vfio_a = { "test_vfio_region_read", &dstate_vfio_a };
static TraceEvent ev_vfio_b = { "test_vfio_region_write", &dstate_vfio_b };
static TraceEvent ev_msix = { "test_msix_notify", &dstate_msix };
static TraceEvent *test_group[] = { &ev_vfio_a, &ev_vfio_b, &ev_msix, NULL };

static void reset_all(void)
{
    trace_enable_pattern("test_*", false);
}

static void test_trace_glob(void)
{
    reset_all();
    g_assert_cmpint(trace_enable_pattern("test_vfio_*", true), ==, 2);
    g_assert_true(dstate_vfio_a && dstate_vfio_b);
    g_assert_false(dstate_msix);
    g_assert_true(trace_event_is_enabled("test_vfio_region_read"));
    g_assert_cmpint(trace_enable_pattern("no_such_event*", true), ==, 0);
}

static void test_trace_opt_forms(void)
{
    Error *err = NULL;

    reset_all();
    g_assert_true(trace_opt_parse("enable=test_msix_*", &error_abort));
    g_assert_true(dstate_msix);
    g_assert_false(dstate_vfio_a);

    g_assert_false(trace_opt_parse("bogus=1", &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "bogus"));
    error_free(err);
}

static void test_trace_events_file_and_log(void)
{
    g_autofree char *dir = g_dir_make_tmp("trace-test-XXXXXX", NULL);
    g_autofree char *events = g_build_filename(dir, "events", NULL);
    g_autofree char *log = g_build_filename(dir, "log", NULL);
    g_autofree char *opt = NULL;
    g_autofree char *text = NULL;

    reset_all();
    g_assert_true(g_file_set_contents(events,
                                      "# comment\ntest_vfio_*\n-test_vfio_region_write\n",
                                      -1, NULL));
    opt = g_strdup_printf("events=%s,file=%s", events, log);
    g_assert_true(trace_opt_parse(opt, &error_abort));
    g_assert_true(dstate_vfio_a);
    g_assert_false(dstate_vfio_b);

    trace_emit("test_vfio_region_read", "region %d off 0x%x\n", 4, 0x1000);
    g_assert_true(trace_set_logfile(NULL, &error_abort));
    g_assert_true(g_file_get_contents(log, &text, NULL, NULL));
    g_assert_nonnull(strstr(text, "test_vfio_region_read region 4 off 0x1000"));

    unlink(events);
    unlink(log);
    rmdir(dir);
}

/* -D sends -d guest_errors there too, one line per message. */
static void test_guest_errors_follow_logfile(void)
{
    g_autofree char *dir = g_dir_make_tmp("trace-test-XXXXXX", NULL);
    g_autofree char *log = g_build_filename(dir, "log", NULL);
    g_autofree char *text = NULL;

    g_assert_true(trace_set_logfile(log, &error_abort));
    qemu_set_log_guest_errors(true);
    qemu_log_guest_error("bad PBA write at 0x%x\n", 0x10);
    qemu_log_guest_error("bad table read");
    qemu_set_log_guest_errors(false);
    g_assert_true(trace_set_logfile(NULL, &error_abort));

    g_assert_true(g_file_get_contents(log, &text, NULL, NULL));
    g_assert_nonnull(strstr(text, "guest error: bad PBA write at 0x10\n"));
    g_assert_nonnull(strstr(text, "guest error: bad table read\n"));
    g_assert_null(strstr(text, "\n\n"));

    unlink(log);
    rmdir(dir);
}

/* A misspelt event name is reported; a glob matching nothing is not. */
static void test_unknown_name_warns(void)
{
    if (g_test_subprocess()) {
        g_assert_true(trace_opt_parse("no_such_event", &error_abort));
        fputs("[quiet from here]\n", stderr);
        g_assert_true(trace_opt_parse("enable=no_such_*", &error_abort));
        g_assert_true(trace_opt_parse("enable=test_msix_notify",
                                      &error_abort));
        return;
    }
    g_test_trap_subprocess(NULL, 0, 0);
    g_test_trap_assert_passed();
    g_test_trap_assert_stderr("*trace event 'no_such_event' does not exist"
                              "*[quiet from here]*");
    g_test_trap_assert_stderr_unmatched("*[quiet from here]*does not*");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    trace_event_register_group(test_group);
    g_test_add_func("/trace/glob", test_trace_glob);
    g_test_add_func("/trace/opt-forms", test_trace_opt_forms);
    g_test_add_func("/trace/events-file-and-log", test_trace_events_file_and_log);
    g_test_add_func("/trace/opt/unknown-name-warns",
                    test_unknown_name_warns);
    g_test_add_func("/trace/logfile/guest-errors-one-line-each",
                    test_guest_errors_follow_logfile);
    return g_test_run();
}
