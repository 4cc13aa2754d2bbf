/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job registry (see include/qemu/job.h) and its QMP commands.
 */
#include "qemu/osdep.h"
#include "qemu/job.h"
#include "qapi/error.h"
#include "monitor/monitor.h"
#include "trace.h"

struct Job {
    char *id;
    const JobDriver *drv;
    void *opaque;
    JobStatus status;
    bool auto_dismiss;
    uint64_t progress_current, progress_total;
    char *error;
};

static GPtrArray *jobs;         /* Job *, in creation order */

static const char *const job_type_names[JOB_TYPE__MAX] = {
    [JOB_TYPE_COMMIT] = "commit",
    [JOB_TYPE_STREAM] = "stream",
    [JOB_TYPE_MIRROR] = "mirror",
    [JOB_TYPE_BACKUP] = "backup",
    [JOB_TYPE_CREATE] = "create",
    [JOB_TYPE_AMEND] = "amend",
    [JOB_TYPE_SNAPSHOT_LOAD] = "snapshot-load",
    [JOB_TYPE_SNAPSHOT_SAVE] = "snapshot-save",
    [JOB_TYPE_SNAPSHOT_DELETE] = "snapshot-delete",
};

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

const char *job_type_name(JobType type)
{
    return type < JOB_TYPE__MAX ? job_type_names[type] : "undefined";
}

const char *job_status_name(JobStatus status)
{
    return status < JOB_STATUS__MAX ? job_status_names[status] : "undefined";
}

/* QEMU's id rule: a letter, then letters, digits, '-', '.' and '_'. */
static bool job_id_wellformed(const char *id)
{
    if (!g_ascii_isalpha(id[0])) {
        return false;
    }
    for (const char *p = id + 1; *p; p++) {
        if (!g_ascii_isalnum(*p) && !strchr("-._", *p)) {
            return false;
        }
    }
    return true;
}

Job *job_find(const char *id)
{
    for (guint i = 0; jobs && i < jobs->len; i++) {
        Job *job = g_ptr_array_index(jobs, i);

        if (!strcmp(job->id, id)) {
            return job;
        }
    }
    return NULL;
}

static void job_set_status(Job *job, JobStatus status)
{
    JsonObject *data;

    if (job->status == status) {
        return;
    }
    trace_job_status(job->id, job_status_name(job->status),
                     job_status_name(status));
    job->status = status;
    data = json_object_new();
    json_object_set_string_member(data, "id", job->id);
    json_object_set_string_member(data, "status", job_status_name(status));
    qapi_event_send("JOB_STATUS_CHANGE", data);
}

Job *job_create(const char *id, const JobDriver *drv, void *opaque,
                bool auto_dismiss, Error **errp)
{
    Job *job;

    if (!id || !job_id_wellformed(id)) {
        error_setg(errp, "Invalid job ID '%s'", id ? id : "");
        return NULL;
    }
    if (job_find(id)) {
        error_setg(errp, "Job ID '%s' already in use", id);
        return NULL;
    }
    if (!jobs) {
        jobs = g_ptr_array_new();
    }
    job = g_new0(Job, 1);
    job->id = g_strdup(id);
    job->drv = drv;
    job->opaque = opaque;
    job->auto_dismiss = auto_dismiss;
    job->status = JOB_STATUS_UNDEFINED;
    g_ptr_array_add(jobs, job);
    job_set_status(job, JOB_STATUS_CREATED);
    return job;
}

void job_start(Job *job)
{
    g_assert(job->status == JOB_STATUS_CREATED);
    job_set_status(job, JOB_STATUS_RUNNING);
}

void job_progress_set(Job *job, uint64_t current, uint64_t total)
{
    job->progress_current = current;
    job->progress_total = MAX(total, current);
}

static void job_free(Job *job)
{
    g_ptr_array_remove(jobs, job);
    if (job->drv && job->drv->free) {
        job->drv->free(job);
    }
    g_free(job->error);
    g_free(job->id);
    g_free(job);
}

void job_completed(Job *job, const char *error)
{
    g_assert(job->status == JOB_STATUS_CREATED ||
             job->status == JOB_STATUS_RUNNING ||
             job->status == JOB_STATUS_PAUSED ||
             job->status == JOB_STATUS_READY ||
             job->status == JOB_STATUS_ABORTING);
    if (error) {
        if (!job->error) {
            job->error = g_strdup(error);
        }
        job_set_status(job, JOB_STATUS_ABORTING);
    } else if (job->status != JOB_STATUS_ABORTING) {
        job->progress_current = job->progress_total =
            MAX(job->progress_total, 1);
        job_set_status(job, JOB_STATUS_WAITING);
        job_set_status(job, JOB_STATUS_PENDING);
    }
    job_set_status(job, JOB_STATUS_CONCLUDED);
    if (job->auto_dismiss) {
        job_set_status(job, JOB_STATUS_NULL);
        job_free(job);
    }
}

const char *job_id(const Job *job)
{
    return job->id;
}

JobStatus job_status(const Job *job)
{
    return job->status;
}

void *job_opaque(const Job *job)
{
    return job->opaque;
}

const char *job_error(const Job *job)
{
    return job->error;
}

unsigned job_count(void)
{
    return jobs ? jobs->len : 0;
}

static Job *job_find_or_fail(const char *id, Error **errp)
{
    Job *job = job_find(id);

    if (!job) {
        error_setg(errp, "Job not found");
    }
    return job;
}

static void job_verb_refused(Job *job, const char *verb, Error **errp)
{
    error_setg(errp, "Job '%s' in state '%s' cannot accept command verb '%s'",
               job->id, job_status_name(job->status), verb);
}

bool job_dismiss(const char *id, Error **errp)
{
    Job *job = job_find_or_fail(id, errp);

    if (!job) {
        return false;
    }
    if (job->status != JOB_STATUS_CONCLUDED) {
        job_verb_refused(job, "dismiss", errp);
        return false;
    }
    job_set_status(job, JOB_STATUS_NULL);
    job_free(job);
    return true;
}

bool job_cancel(const char *id, bool force, Error **errp)
{
    Job *job = job_find_or_fail(id, errp);

    if (!job) {
        return false;
    }
    switch (job->status) {
    case JOB_STATUS_CREATED:
        job_completed(job, "Job was cancelled");
        return true;
    case JOB_STATUS_RUNNING:
    case JOB_STATUS_PAUSED:
    case JOB_STATUS_READY:
    case JOB_STATUS_STANDBY:
        if (!job->drv || !job->drv->cancel) {
            error_setg(errp, "Job '%s' (%s) cannot be cancelled while it "
                       "runs", job->id, job_type_name(job->drv ?
                                                      job->drv->type : 0));
            error_append_hint(errp, "Wait for it to conclude, then use "
                              "job-dismiss.\n");
            return false;
        }
        if (!job->error) {
            job->error = g_strdup("Job was cancelled");
        }
        job_set_status(job, JOB_STATUS_ABORTING);
        job->drv->cancel(job, force);
        return true;
    default:
        job_verb_refused(job, "cancel", errp);
        return false;
    }
}

/* ---- QMP ---- */

static void qmp_query_jobs(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonArray *list = json_array_new();

    for (guint i = 0; jobs && i < jobs->len; i++) {
        Job *job = g_ptr_array_index(jobs, i);
        JsonObject *o = json_object_new();

        json_object_set_string_member(o, "id", job->id);
        json_object_set_string_member(o, "type",
                                      job_type_name(job->drv ? job->drv->type
                                                             : 0));
        json_object_set_string_member(o, "status",
                                      job_status_name(job->status));
        json_object_set_int_member(o, "current-progress",
                                   job->progress_current);
        json_object_set_int_member(o, "total-progress",
                                   job->progress_total);
        if (job->error) {
            json_object_set_string_member(o, "error", job->error);
        }
        json_array_add_object_element(list, o);
    }
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, list);
}

static void qmp_job_dismiss(JsonObject *args, JsonNode **ret, Error **errp)
{
    job_dismiss(json_object_get_string_member(args, "id"), errp);
}

static void qmp_job_cancel(JsonObject *args, JsonNode **ret, Error **errp)
{
    job_cancel(json_object_get_string_member(args, "id"), false, errp);
}

static void __attribute__((constructor)) job_register_qmp(void)
{
    qmp_register_command_args("query-jobs", qmp_query_jobs, "", 0);
    qmp_register_command_args("job-dismiss", qmp_job_dismiss, "id:s", 0);
    qmp_register_command_args("job-cancel", qmp_job_cancel, "id:s", 0);
}
