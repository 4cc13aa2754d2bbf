/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Background jobs and their QMP commands (include/block/job.h).
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/main-loop.h"
#include "monitor/monitor.h"
#include "block/job.h"
#include "trace.h"

struct Job {
    char *id;
    const JobDriver *drv;
    void *opaque;
    JobStatus status;
    bool auto_finalize;
    bool auto_dismiss;
    bool cancelled;
    char *error;
    uint64_t progress_current;
    uint64_t progress_total;
    QEMUBH *bh;
};

static GList *jobs;

static const char *const job_status_names[JOB_STATUS__MAX] = {
    [JOB_STATUS_UNDEFINED] = "undefined",
    [JOB_STATUS_CREATED] = "created",
    [JOB_STATUS_RUNNING] = "running",
    [JOB_STATUS_PAUSED] = "paused",
    [JOB_STATUS_READY] = "ready",
    [JOB_STATUS_STANDBY] = "standby",
    [JOB_STATUS_WAITING] = "waiting",
    [JOB_STATUS_PENDING] = "pending",
    [JOB_STATUS_ABORTING] = "aborting",
    [JOB_STATUS_CONCLUDED] = "concluded",
    [JOB_STATUS_NULL] = "null",
};

const char *job_status_name(JobStatus status)
{
    return status < JOB_STATUS__MAX ? job_status_names[status] : "undefined";
}

const char *job_id(const Job *job)
{
    return job->id;
}

JobStatus job_status(const Job *job)
{
    return job->status;
}

Job *job_find(const char *id)
{
    for (GList *l = jobs; l; l = l->next) {
        Job *job = l->data;

        if (!strcmp(job->id, id)) {
            return job;
        }
    }
    return NULL;
}

void job_foreach(void (*fn)(Job *job, void *opaque), void *opaque)
{
    for (GList *l = jobs; l; ) {
        GList *next = l->next;

        fn(l->data, opaque);
        l = next;
    }
}

void job_set_status(Job *job, JobStatus status)
{
    JsonObject *ev;

    if (job->status == status) {
        return;
    }
    trace_job_status(job->id, job_status_name(job->status),
                     job_status_name(status));
    job->status = status;
    ev = json_object_new();
    json_object_set_string_member(ev, "id", job->id);
    json_object_set_string_member(ev, "status", job_status_name(status));
    qapi_event_send("JOB_STATUS_CHANGE", ev);
}

void job_set_progress(Job *job, uint64_t current, uint64_t total)
{
    job->progress_current = current;
    job->progress_total = total;
}

static void job_free(Job *job)
{
    jobs = g_list_remove(jobs, job);
    if (job->bh) {
        qemu_bh_delete(job->bh);
    }
    if (job->drv->free) {
        job->drv->free(job->opaque);
    }
    g_free(job->error);
    g_free(job->id);
    g_free(job);
}

static void job_dismiss_now(Job *job)
{
    job_set_status(job, JOB_STATUS_NULL);
    job_free(job);
}

static void job_conclude(Job *job)
{
    job_set_status(job, JOB_STATUS_CONCLUDED);
    if (job->auto_dismiss) {
        job_dismiss_now(job);
    }
}

static void job_finalize_now(Job *job)
{
    job_conclude(job);
}

static void job_run_bh(void *opaque)
{
    Job *job = opaque;
    Error *err = NULL;
    bool ok;

    if (job->cancelled) {
        job_set_status(job, JOB_STATUS_ABORTING);
        job->error = g_strdup("Job was cancelled");
        job_conclude(job);
        return;
    }
    job_set_status(job, JOB_STATUS_RUNNING);
    ok = job->drv->run(job, job->opaque, &err);
    if (!ok || job->cancelled) {
        job_set_status(job, JOB_STATUS_ABORTING);
        job->error = g_strdup(err ? error_get_pretty(err)
                                  : "Job was cancelled");
        error_free(err);
        job_conclude(job);
        return;
    }
    job->progress_current = job->progress_total =
        MAX(job->progress_total, 1);
    job_set_status(job, JOB_STATUS_WAITING);
    job_set_status(job, JOB_STATUS_PENDING);
    if (job->auto_finalize) {
        job_finalize_now(job);
    }
}

Job *job_create(const char *id, const JobDriver *drv, void *opaque,
                bool auto_finalize, bool auto_dismiss, Error **errp)
{
    Job *job;

    if (!id || !*id) {
        error_setg(errp, "Invalid job ID '%s'", id ? id : "");
        return NULL;
    }
    if (!g_ascii_isalpha(id[0])) {
        error_setg(errp, "Invalid job ID '%s'", id);
        return NULL;
    }
    if (job_find(id)) {
        error_setg(errp, "Job ID '%s' already in use", id);
        return NULL;
    }
    job = g_new0(Job, 1);
    job->id = g_strdup(id);
    job->drv = drv;
    job->opaque = opaque;
    job->auto_finalize = auto_finalize;
    job->auto_dismiss = auto_dismiss;
    jobs = g_list_append(jobs, job);
    job_set_status(job, JOB_STATUS_CREATED);
    job->bh = qemu_bh_new(job_run_bh, job);
    qemu_bh_schedule(job->bh);
    return job;
}

/* ---- QMP ---- */

static void qmp_query_jobs_one(Job *job, void *opaque)
{
    JsonObject *o = json_object_new();

    json_object_set_string_member(o, "id", job->id);
    json_object_set_string_member(o, "type", job->drv->type);
    json_object_set_string_member(o, "status", job_status_name(job->status));
    json_object_set_int_member(o, "current-progress", job->progress_current);
    json_object_set_int_member(o, "total-progress", job->progress_total);
    if (job->error) {
        json_object_set_string_member(o, "error", job->error);
    }
    json_array_add_object_element(opaque, o);
}

static void qmp_query_jobs(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonArray *list = json_array_new();

    job_foreach(qmp_query_jobs_one, list);
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, list);
}

static Job *job_get(JsonObject *args, Error **errp)
{
    const char *id = json_object_get_string_member(args, "id");
    Job *job = job_find(id);

    if (!job) {
        error_setg(errp, "Job not found");
    }
    return job;
}

static bool job_verb_allowed(Job *job, const char *verb, bool ok,
                             Error **errp)
{
    if (!ok) {
        error_setg(errp, "Job '%s' in state '%s' cannot accept command verb "
                   "'%s'", job->id, job_status_name(job->status), verb);
    }
    return ok;
}

static void qmp_job_dismiss(JsonObject *args, JsonNode **ret, Error **errp)
{
    Job *job = job_get(args, errp);

    if (job && job_verb_allowed(job, "dismiss",
                                job->status == JOB_STATUS_CONCLUDED, errp)) {
        job_dismiss_now(job);
    }
}

static void qmp_job_cancel(JsonObject *args, JsonNode **ret, Error **errp)
{
    Job *job = job_get(args, errp);

    if (!job || !job_verb_allowed(job, "cancel",
                                  job->status != JOB_STATUS_CONCLUDED &&
                                  job->status != JOB_STATUS_NULL &&
                                  job->status != JOB_STATUS_ABORTING, errp)) {
        return;
    }
    job->cancelled = true;
    if (job->status == JOB_STATUS_PENDING) {
        job_set_status(job, JOB_STATUS_ABORTING);
        job->error = g_strdup("Job was cancelled");
        job_conclude(job);
    }
}

static void qmp_job_finalize(JsonObject *args, JsonNode **ret, Error **errp)
{
    Job *job = job_get(args, errp);

    if (job && job_verb_allowed(job, "finalize",
                                job->status == JOB_STATUS_PENDING, errp)) {
        job_finalize_now(job);
    }
}

static void qmp_job_complete(JsonObject *args, JsonNode **ret, Error **errp)
{
    Job *job = job_get(args, errp);

    if (job) {
        job_verb_allowed(job, "complete", false, errp);
    }
}

static void qmp_job_pause_resume(JsonObject *args, JsonNode **ret,
                                 Error **errp)
{
    Job *job = job_get(args, errp);

    /* Jobs here run to completion in one step: nothing to pause. */
    if (job) {
        job_verb_allowed(job, "pause", false, errp);
    }
}

void job_qmp_init(void)
{
    qmp_register_command_args("query-jobs", qmp_query_jobs, "", 0);
    qmp_register_command_args("job-dismiss", qmp_job_dismiss, "id:s", 0);
    qmp_register_command_args("job-cancel", qmp_job_cancel, "id:s", 0);
    qmp_register_command_args("job-finalize", qmp_job_finalize, "id:s", 0);
    qmp_register_command_args("job-complete", qmp_job_complete, "id:s", 0);
    qmp_register_command_args("job-pause", qmp_job_pause_resume, "id:s", 0);
    qmp_register_command_args("job-resume", qmp_job_pause_resume, "id:s", 0);
}
