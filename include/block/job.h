/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Background jobs, as QEMU's job API: each has an id, a type ("create",
 * ...) and a status that moves created -> running -> waiting -> pending
 * -> concluded -> null (or through aborting when it fails or is
 * cancelled), announced by JOB_STATUS_CHANGE events.  query-jobs lists
 * them; job-dismiss removes a concluded one; job-cancel and
 * job-finalize act as QEMU's.  The list is the one thing libvirt's
 * reconnect asks for (query-jobs), so every kind of job registers here.
 *
 * Everything runs in the main loop under the BQL.  A job's work runs
 * from a bottom half after the command that created it has returned.
 */
#ifndef BLOCK_JOB_H
#define BLOCK_JOB_H

#include <stdbool.h>
#include <stdint.h>
#include "qemu/typedefs.h"

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
    const char *type;           /* query-jobs "type": "create", ... */
    /* The work (BQL); false with errp set on failure. */
    bool (*run)(Job *job, void *opaque, Error **errp);
    /* Frees @opaque when the job goes away. */
    void (*free)(void *opaque);
} JobDriver;

/*
 * A new job in status created; it starts (running, from a bottom half)
 * by itself.  @auto_finalize / @auto_dismiss as QEMU's job options.
 */
Job *job_create(const char *id, const JobDriver *drv, void *opaque,
                bool auto_finalize, bool auto_dismiss, Error **errp);
Job *job_find(const char *id);
const char *job_id(const Job *job);
JobStatus job_status(const Job *job);
const char *job_status_name(JobStatus status);
/* For the job's run(): progress as query-jobs reports it. */
void job_set_progress(Job *job, uint64_t current, uint64_t total);
/* For an external job kind that drives its own states (migration...). */
void job_set_status(Job *job, JobStatus status);
void job_foreach(void (*fn)(Job *job, void *opaque), void *opaque);

/* Registers query-jobs, job-dismiss, job-cancel, job-finalize,
 * job-complete, job-pause, job-resume (main(), via block_qmp_init). */
void job_qmp_init(void);

#endif
