/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the rest of Conduit sees of migration: registering state that is
 * not a qdev device's (a device's own table is DeviceClass.vmsd), live
 * (iterative) state such as RAM and a vfio device's data, blockers, and
 * notifiers on the migration's progress.
 */
#ifndef MIGRATION_MIGRATION_H
#define MIGRATION_MIGRATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>
#include "qemu/typedefs.h"
#include "migration/vmstate.h"

/*
 * State of something that is not a device (the virtual clock, a vCPU,
 * the in-kernel irqchip): saved as section idstr, after the devices, in
 * registration order.  idstr must be unique and the same on both sides.
 */
void vmstate_register(const char *idstr, const VMStateDescription *vmsd,
                      void *opaque);
void vmstate_unregister(const char *idstr);

/*
 * Live state: sent while the guest runs, then finished while it is
 * stopped.  Each handler owns its part of the stream (length-prefixed
 * chunks under its idstr); load() parses one chunk from a bounded buffer.
 */
typedef struct SaveLiveOps {
    /* Before the first pass (dirty logging on). */
    bool (*setup)(void *opaque, Error **errp);
    /* Bytes still to send; the downtime estimate uses it. */
    uint64_t (*pending)(void *opaque);
    /*
     * Optional: bytes that can only go once the guest is stopped (a
     * device's STOP_COPY data); counted in the downtime estimate, never
     * iterated on.
     */
    uint64_t (*switchover_pending)(void *opaque);
    /*
     * Appends up to about max bytes of chunks to out; returns false with
     * errp on failure.  Called repeatedly while the guest runs.
     */
    bool (*iterate)(void *opaque, GByteArray *out, size_t max, Error **errp);
    /* The guest is stopped: everything that is left, as chunks. */
    bool (*complete)(void *opaque, GByteArray *out, Error **errp);
    /* Destination: one chunk. */
    bool (*load)(void *opaque, MigBuf *chunk, Error **errp);
    /* Destination: the stream ended well (all chunks loaded). */
    bool (*load_done)(void *opaque, Error **errp);
    /* Either side: the migration ended (well or not); logging off. */
    void (*cleanup)(void *opaque);
} SaveLiveOps;

void register_savevm_live(const char *idstr, const SaveLiveOps *ops,
                          void *opaque);
void unregister_savevm_live(const char *idstr);

/*
 * A reason migration cannot happen now (a device without migration
 * support).  migrate and savevm fail with the blocker's text until it is
 * removed.  The Error stays the caller's.
 */
bool migrate_add_blocker(Error *reason, Error **errp);
void migrate_del_blocker(Error *reason);
/* True (errp set to the first blocker) if migration is blocked. */
bool migration_is_blocked(Error **errp);

/* A migration (either direction) is under way. */
bool migration_is_active(void);
/*
 * BQL: something the outgoing migration relies on failed (a device's
 * dirty log): the migration fails with @err (taken) at its next step,
 * and the VM runs on.  Ignored when no migration is under way.
 */
void migration_fail_outgoing(Error *err);
/* This process was started with -incoming (and has not loaded yet). */
bool migration_incoming_pending(void);

/*
 * Notifications on the outgoing side, in the migration thread or the
 * main loop, always with the BQL held.
 */
typedef enum MigrationEventType {
    MIG_EVENT_PRECOPY_SETUP,    /* about to send the first pass */
    MIG_EVENT_PRECOPY_DONE,     /* completed: the source is now stale */
    MIG_EVENT_PRECOPY_FAILED,   /* failed or cancelled: we own the VM */
} MigrationEventType;
typedef void MigrationNotifyFunc(void *opaque, MigrationEventType ev);
void migration_add_notifier(MigrationNotifyFunc *fn, void *opaque);

#endif
