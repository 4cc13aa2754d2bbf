/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job registry: QEMU's state machine, ids, dismiss and cancel rules.
 */
#include "qemu/osdep.h"
#include "qemu/job.h"
#include "qapi/error.h"

static int freed, cancelled;

static void test_cancel_cb(Job *job, bool force)
{
    cancelled++;
    job_completed(job, NULL);   /* the owner reports at once */
}

static void test_free_cb(Job *job)
{
    freed++;
}

static const JobDriver create_drv = {
    .type = JOB_TYPE_CREATE, .free = test_free_cb,
};
static const JobDriver cancellable_drv = {
    .type = JOB_TYPE_BACKUP, .cancel = test_cancel_cb, .free = test_free_cb,
};

static void test_names(void)
{
    g_assert_cmpstr(job_type_name(JOB_TYPE_CREATE), ==, "create");
    g_assert_cmpstr(job_type_name(JOB_TYPE_SNAPSHOT_DELETE), ==,
                    "snapshot-delete");
    g_assert_cmpstr(job_status_name(JOB_STATUS_CONCLUDED), ==, "concluded");
    g_assert_cmpstr(job_status_name(JOB_STATUS_NULL), ==, "null");
    g_assert_cmpstr(job_status_name(JOB_STATUS__MAX), ==, "undefined");
}

static void test_ids(void)
{
    Error *err = NULL;
    Job *a;

    g_assert_null(job_create("1abc", &create_drv, NULL, false, &err));
    g_assert_cmpstr(error_get_pretty(err), ==, "Invalid job ID '1abc'");
    error_free(err);
    err = NULL;
    g_assert_null(job_create("a b", &create_drv, NULL, false, &err));
    error_free(err);
    err = NULL;
    a = job_create("create-vda.1_x", &create_drv, NULL, false, &error_abort);
    g_assert_null(job_create("create-vda.1_x", &create_drv, NULL, false,
                             &err));
    g_assert_cmpstr(error_get_pretty(err), ==,
                    "Job ID 'create-vda.1_x' already in use");
    error_free(err);
    job_completed(a, NULL);
    g_assert_true(job_dismiss("create-vda.1_x", &error_abort));
    g_assert_cmpuint(job_count(), ==, 0);
}

static void test_success_stays_until_dismissed(void)
{
    Error *err = NULL;
    Job *j;

    freed = 0;
    j = job_create("c0", &create_drv, NULL, false, &error_abort);
    g_assert_cmpint(job_status(j), ==, JOB_STATUS_CREATED);
    g_assert_true(job_find("c0") == j);
    /* Only a concluded job can be dismissed. */
    g_assert_false(job_dismiss("c0", &err));
    g_assert_cmpstr(error_get_pretty(err), ==,
                    "Job 'c0' in state 'created' cannot accept command "
                    "verb 'dismiss'");
    error_free(err);
    err = NULL;
    job_start(j);
    g_assert_cmpint(job_status(j), ==, JOB_STATUS_RUNNING);
    job_progress_set(j, 10, 40);
    /* Running without a cancel callback: refused with a reason. */
    g_assert_false(job_cancel("c0", false, &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "cannot be cancelled"));
    error_free(err);
    err = NULL;
    job_completed(j, NULL);
    g_assert_cmpint(job_status(j), ==, JOB_STATUS_CONCLUDED);
    g_assert_null(job_error(j));
    g_assert_cmpint(freed, ==, 0);
    g_assert_cmpuint(job_count(), ==, 1);
    g_assert_false(job_cancel("c0", false, &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "'concluded'"));
    error_free(err);
    err = NULL;
    g_assert_true(job_dismiss("c0", &error_abort));
    g_assert_cmpint(freed, ==, 1);
    g_assert_null(job_find("c0"));
    g_assert_false(job_dismiss("c0", &err));
    g_assert_cmpstr(error_get_pretty(err), ==, "Job not found");
    error_free(err);
}

static void test_failure_and_auto_dismiss(void)
{
    Job *j;

    freed = 0;
    j = job_create("f0", &create_drv, NULL, false, &error_abort);
    job_start(j);
    job_completed(j, "Could not create image: No space left on device");
    g_assert_cmpint(job_status(j), ==, JOB_STATUS_CONCLUDED);
    g_assert_cmpstr(job_error(j), ==,
                    "Could not create image: No space left on device");
    g_assert_true(job_dismiss("f0", &error_abort));

    j = job_create("auto", &create_drv, NULL, true, &error_abort);
    job_start(j);
    job_completed(j, NULL);
    g_assert_null(job_find("auto"));
    g_assert_cmpint(freed, ==, 2);
}

static void test_cancel(void)
{
    Job *j;

    cancelled = 0;
    j = job_create("b0", &cancellable_drv, NULL, false, &error_abort);
    job_start(j);
    g_assert_true(job_cancel("b0", false, &error_abort));
    g_assert_cmpint(cancelled, ==, 1);
    /* A cancelled job concludes with the cancel as its error. */
    g_assert_cmpint(job_status(j), ==, JOB_STATUS_CONCLUDED);
    g_assert_cmpstr(job_error(j), ==, "Job was cancelled");
    g_assert_true(job_dismiss("b0", &error_abort));

    /* Cancelled before it started: no callback needed. */
    j = job_create("c1", &create_drv, NULL, false, &error_abort);
    g_assert_true(job_cancel("c1", false, &error_abort));
    g_assert_cmpint(job_status(j), ==, JOB_STATUS_CONCLUDED);
    g_assert_true(job_dismiss("c1", &error_abort));
    g_assert_cmpuint(job_count(), ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/job/names", test_names);
    g_test_add_func("/job/ids", test_ids);
    g_test_add_func("/job/success", test_success_stays_until_dismissed);
    g_test_add_func("/job/failure-auto-dismiss",
                    test_failure_and_auto_dismiss);
    g_test_add_func("/job/cancel", test_cancel);
    return g_test_run();
}
