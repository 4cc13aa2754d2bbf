/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * VM run state, start/stop, reset and shutdown requests.
 *
 * Requests (shutdown, reset) are safe from any thread and from device
 * callbacks: they only record the request and wake the main loop, which
 * acts on them between dispatches.
 */
#ifndef SYSTEM_RUNSTATE_H
#define SYSTEM_RUNSTATE_H

#include <stdbool.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"

typedef enum RunState {
    RUN_STATE_PRELAUNCH,        /* machine built, not started yet (-S) */
    RUN_STATE_RUNNING,
    RUN_STATE_PAUSED,           /* "stop" */
    RUN_STATE_SHUTDOWN,
    RUN_STATE_INTERNAL_ERROR,
    RUN_STATE_GUEST_PANICKED,
    RUN_STATE_DEBUG,
    RUN_STATE_INMIGRATE,        /* waiting for / loading -incoming state */
    RUN_STATE_POSTMIGRATE,      /* the state has moved to the destination */
    RUN_STATE_FINISH_MIGRATE,   /* stopped for the migration's switchover */
    RUN_STATE_SAVE_VM,
    RUN_STATE_RESTORE_VM,
    RUN_STATE__MAX,
} RunState;

/* QMP spellings: "prelaunch", "running", "paused", "shutdown", ... */
const char *runstate_name(RunState state);
RunState runstate_get(void);
bool runstate_check(RunState state);
void runstate_set(RunState state);
bool runstate_is_running(void);

/* QMP "reason" of SHUTDOWN and RESET events. */
typedef enum ShutdownCause {
    SHUTDOWN_CAUSE_NONE,
    SHUTDOWN_CAUSE_HOST_ERROR,          /* "host-error" */
    SHUTDOWN_CAUSE_HOST_QMP_QUIT,       /* "host-qmp-quit" */
    SHUTDOWN_CAUSE_HOST_QMP_SYSTEM_RESET, /* "host-qmp-system-reset" */
    SHUTDOWN_CAUSE_HOST_SIGNAL,         /* "host-signal" */
    SHUTDOWN_CAUSE_HOST_UI,             /* "host-ui" */
    SHUTDOWN_CAUSE_GUEST_SHUTDOWN,      /* "guest-shutdown" */
    SHUTDOWN_CAUSE_GUEST_RESET,         /* "guest-reset" */
    SHUTDOWN_CAUSE_GUEST_PANIC,         /* "guest-panic" */
    SHUTDOWN_CAUSE_SUBSYSTEM_RESET,     /* "subsystem-reset" */
    SHUTDOWN_CAUSE__MAX,
} ShutdownCause;

const char *shutdown_cause_name(ShutdownCause cause);
/* Guest-initiated causes are reported with "guest": true. */
static inline bool shutdown_caused_by_guest(ShutdownCause cause)
{
    return cause >= SHUTDOWN_CAUSE_GUEST_SHUTDOWN;
}

/*
 * Starts the VM (vCPUs run, virtual clock moves): notifies the change
 * state handlers and emits RESUME.  No-op if already running.
 */
void vm_start(void);
/*
 * Stops the VM into @state (normally RUN_STATE_PAUSED): notifies the
 * handlers and emits STOP if it was running.  Returns 0.
 */
int vm_stop(RunState state);

typedef void VMChangeStateHandler(void *opaque, bool running,
                                  RunState state);
typedef struct VMChangeStateEntry VMChangeStateEntry;
/*
 * Handlers are called in registration order when the VM starts and in
 * reverse order when it stops (devices stop after the vCPUs).
 */
VMChangeStateEntry *qemu_add_vm_change_state_handler(VMChangeStateHandler *cb,
                                                     void *opaque);
void qemu_del_vm_change_state_handler(VMChangeStateEntry *e);

/*
 * Asks the main loop to exit with @status (guest-shutdown cause, as from a
 * debug-exit device).  The first request wins.
 */
void qemu_system_shutdown_request(int status);
void qemu_system_shutdown_request_cause(ShutdownCause cause, int status);
/*
 * system_powerdown: emits POWERDOWN and runs the powerdown handlers (the
 * ACPI power button), which ask the guest to shut itself down.  Nothing
 * else happens if no handler is registered (a machine without ACPI).
 */
void qemu_system_powerdown_request(void);
typedef void QemuPowerdownHandler(void *opaque);
void qemu_register_powerdown_handler(QemuPowerdownHandler *fn, void *opaque);
void qemu_unregister_powerdown_handler(QemuPowerdownHandler *fn,
                                       void *opaque);
/* Asks the main loop to reset the machine (guest-reset cause). */
void qemu_system_reset_request(void);
void qemu_system_reset_request_cause(ShutdownCause cause);

/*
 * Resets the whole machine now: the machine's reset hook, or
 * qemu_devices_reset() (devices plus the qemu_register_reset() handlers,
 * see hw/qdev-core.h) if it has none.  Emits RESET unless @cause is NONE
 * (the cold reset before the VM first starts).  Caller holds the BQL.
 */
void qemu_system_reset(ShutdownCause cause);

/*
 * Main-loop side: true (and the cause/status filled in) once a shutdown
 * was requested.  Consumes nothing; qemu_main_loop() uses these.
 */
bool qemu_shutdown_requested(ShutdownCause *cause, int *status);
/* Returns and clears a pending reset request (NONE if none). */
ShutdownCause qemu_reset_requested(void);

#endif
