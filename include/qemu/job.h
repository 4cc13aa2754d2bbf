/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Background jobs as QMP shows them (query-jobs, job-dismiss, job-cancel,
 * JOB_STATUS_CHANGE): one registry for the whole process.  A job's owner
 * (blockdev-create, a snapshot, ...) creates it, moves it through its
 * states and reports the outcome; the registry checks every transition
 * against QEMU's job state machine, emits the events and answers the
 * monitor.  Management software (libvirt at every reconnect) lists the
 * jobs to learn what ran while it was away, so a job stays listed until
 * it is dismissed (or, with auto-dismiss, until it concludes).
 */
#ifndef QEMU_JOB_H
#define QEMU_JOB_H

#include <stdbool.h>
#include <stdint.h>
#include "qemu/typedefs.h"

/* QAPI's JobType, in its order. */
typedef enum JobType {
    JOB_TYPE_COMMIT,
    JOB_TYPE_STREAM,
    JOB_TYPE_MIRROR,
    JOB_TYPE_BACKUP,
    JOB_TYPE_CREATE,
    JOB_TYPE_AMEND,
    JOB_TYPE_SNAPSHOT_LOAD,
    JOB_TYPE_SNAPSHOT_SAVE,
    JOB_TYPE_SNAPSHOT_DELETE,
    JOB_TYPE__MAX,
} JobType;

/* QAPI's JobStatus, in its order. */
typedef enum JobStatus {
    JOB_STATUS_UNDEFINED,
    JOB_STATUS_CREATED,
    JOB_STATUS_RUNNING,
    JOB_STATUS_PAUSED,
    JOB_STATUS_READY,
    JOB_STATUS_STANDBY,
    JOB_STATUS_WAITING,
    JOB_STATUS_PENDING,
    JOB_STATUS_ABORTING,
    JOB_STATUS_CONCLUDED,
    JOB_STATUS_NULL,
    JOB_STATUS__MAX,
} JobStatus;

typedef struct Job Job;

typedef struct JobDriver {
    JobType type;
    /*
     * job-cancel: stop the work; the owner then calls job_completed()
     * with an error (or at once from here).  NULL: the job cannot be
     * cancelled once running (job-cancel is refused with a reason).
     */
    void (*cancel)(Job *job, bool force);
    /* The job leaves the registry: release the owner's state. */
    void (*free)(Job *job);
} JobDriver;

const char *job_type_name(JobType type);
const char *job_status_name(JobStatus status);

/*
 * A new job in state "created".  @id must be a valid, unused job id.
 * @auto_dismiss: the job disappears when it concludes (QMP's
 * auto-dismiss=true); otherwise it stays "concluded" until job-dismiss.
 */
Job *job_create(const char *id, const JobDriver *drv, void *opaque,
                bool auto_dismiss, Error **errp);
/* created -> running */
void job_start(Job *job);
/* Progress in arbitrary units (total may grow as the job learns more). */
void job_progress_set(Job *job, uint64_t current, uint64_t total);
/*
 * The work is over: success when @error is NULL, else the message that
 * query-jobs reports.  Runs waiting -> pending -> concluded (aborting on
 * failure), emitting each change; with auto-dismiss the job is freed.
 */
void job_completed(Job *job, const char *error);

Job *job_find(const char *id);
const char *job_id(const Job *job);
JobStatus job_status(const Job *job);
void *job_opaque(const Job *job);
/* The error message of a job that failed, else NULL. */
const char *job_error(const Job *job);

/* job-dismiss and job-cancel as QMP does them. */
bool job_dismiss(const char *id, Error **errp);
bool job_cancel(const char *id, bool force, Error **errp);

/* Number of jobs listed (for tests). */
unsigned job_count(void);

#endif
