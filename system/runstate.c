/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Run state, VM start/stop, reset and shutdown requests, and the top of
 * the main loop that acts on those requests.
 */
#include "qemu/osdep.h"
#include "system/runstate.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "qemu/error-report.h"
#include "monitor/monitor.h"
#include "hw/qdev-core.h"
#include "hw/boards.h"
#include "system/system.h"
#include <glib-unix.h>
#include "trace.h"

/* -no-shutdown and -no-reboot: vl.c sets them, the run state obeys. */
bool no_shutdown;
bool no_reboot;

static RunState current_run_state = RUN_STATE_PRELAUNCH;

static const char *const run_state_names[RUN_STATE__MAX] = {
    [RUN_STATE_PRELAUNCH] = "prelaunch",
    [RUN_STATE_RUNNING] = "running",
    [RUN_STATE_PAUSED] = "paused",
    [RUN_STATE_SHUTDOWN] = "shutdown",
    [RUN_STATE_INTERNAL_ERROR] = "internal-error",
    [RUN_STATE_GUEST_PANICKED] = "guest-panicked",
    [RUN_STATE_DEBUG] = "debug",
    [RUN_STATE_INMIGRATE] = "inmigrate",
    [RUN_STATE_POSTMIGRATE] = "postmigrate",
    [RUN_STATE_FINISH_MIGRATE] = "finish-migrate",
    [RUN_STATE_SAVE_VM] = "save-vm",
    [RUN_STATE_RESTORE_VM] = "restore-vm",
};

static const char *const shutdown_cause_names[SHUTDOWN_CAUSE__MAX] = {
    [SHUTDOWN_CAUSE_NONE] = "none",
    [SHUTDOWN_CAUSE_HOST_ERROR] = "host-error",
    [SHUTDOWN_CAUSE_HOST_QMP_QUIT] = "host-qmp-quit",
    [SHUTDOWN_CAUSE_HOST_QMP_SYSTEM_RESET] = "host-qmp-system-reset",
    [SHUTDOWN_CAUSE_HOST_SIGNAL] = "host-signal",
    [SHUTDOWN_CAUSE_HOST_UI] = "host-ui",
    [SHUTDOWN_CAUSE_GUEST_SHUTDOWN] = "guest-shutdown",
    [SHUTDOWN_CAUSE_GUEST_RESET] = "guest-reset",
    [SHUTDOWN_CAUSE_GUEST_PANIC] = "guest-panic",
    [SHUTDOWN_CAUSE_SUBSYSTEM_RESET] = "subsystem-reset",
};

const char *runstate_name(RunState state)
{
    return state < RUN_STATE__MAX ? run_state_names[state] : "unknown";
}

const char *shutdown_cause_name(ShutdownCause cause)
{
    return cause < SHUTDOWN_CAUSE__MAX ? shutdown_cause_names[cause] : "none";
}

RunState runstate_get(void)
{
    return current_run_state;
}

bool runstate_check(RunState state)
{
    return current_run_state == state;
}

void runstate_set(RunState state)
{
    g_assert(state < RUN_STATE__MAX);
    if (state != current_run_state) {
        trace_runstate_set(runstate_name(current_run_state),
                           runstate_name(state));
    }
    current_run_state = state;
}

bool runstate_is_running(void)
{
    return current_run_state == RUN_STATE_RUNNING;
}

/* VM change state handlers */

struct VMChangeStateEntry {
    VMChangeStateHandler *cb;
    void *opaque;
};

/* VMChangeStateEntry *, in registration order */
static GList *vm_change_handlers;

VMChangeStateEntry *qemu_add_vm_change_state_handler(VMChangeStateHandler *cb,
                                                     void *opaque)
{
    VMChangeStateEntry *e = g_new0(VMChangeStateEntry, 1);

    e->cb = cb;
    e->opaque = opaque;
    vm_change_handlers = g_list_append(vm_change_handlers, e);
    return e;
}

void qemu_del_vm_change_state_handler(VMChangeStateEntry *e)
{
    vm_change_handlers = g_list_remove(vm_change_handlers, e);
    g_free(e);
}

static void vm_state_notify(bool running, RunState state)
{
    GList *l, *next;

    if (running) {
        for (l = vm_change_handlers; l; l = next) {
            VMChangeStateEntry *e = l->data;
            next = l->next;
            e->cb(e->opaque, running, state);
        }
    } else {
        for (l = g_list_last(vm_change_handlers); l; l = next) {
            VMChangeStateEntry *e = l->data;
            next = l->prev;
            e->cb(e->opaque, running, state);
        }
    }
}

void vm_start(void)
{
    if (runstate_is_running()) {
        return;
    }
    if (!qemu_clock_virtual_is_manual()) {
        qemu_clock_virtual_start();
    }
    runstate_set(RUN_STATE_RUNNING);
    vm_state_notify(true, RUN_STATE_RUNNING);
    qapi_event_send("RESUME", NULL);
}

int vm_stop(RunState state)
{
    bool was_running = runstate_is_running();

    runstate_set(state);
    if (was_running) {
        qemu_clock_virtual_stop();
        vm_state_notify(false, state);
        qapi_event_send("STOP", NULL);
    }
    return 0;
}

/* Requests: may come from any thread, acted on by the main loop. */

static gint shutdown_cause_pending;     /* ShutdownCause, NONE if none */
static gint shutdown_status;
static gint reset_cause_pending;

void qemu_system_shutdown_request_cause(ShutdownCause cause, int status)
{
    if (cause == SHUTDOWN_CAUSE_NONE) {
        cause = SHUTDOWN_CAUSE_HOST_ERROR;
    }
    /* The first request decides the status. */
    if (g_atomic_int_compare_and_exchange(&shutdown_cause_pending,
                                          SHUTDOWN_CAUSE_NONE, cause)) {
        g_atomic_int_set(&shutdown_status, status);
    }
    qemu_notify_event();
}

void qemu_system_shutdown_request(int status)
{
    qemu_system_shutdown_request_cause(SHUTDOWN_CAUSE_GUEST_SHUTDOWN, status);
}

/* Powerdown: called with the BQL (QMP), so a plain list is enough. */

typedef struct PowerdownHandler {
    QemuPowerdownHandler *fn;
    void *opaque;
} PowerdownHandler;

static GSList *powerdown_handlers;

void qemu_register_powerdown_handler(QemuPowerdownHandler *fn, void *opaque)
{
    PowerdownHandler *h = g_new(PowerdownHandler, 1);

    h->fn = fn;
    h->opaque = opaque;
    powerdown_handlers = g_slist_append(powerdown_handlers, h);
}

void qemu_unregister_powerdown_handler(QemuPowerdownHandler *fn,
                                       void *opaque)
{
    for (GSList *l = powerdown_handlers; l; l = l->next) {
        PowerdownHandler *h = l->data;

        if (h->fn == fn && h->opaque == opaque) {
            powerdown_handlers = g_slist_delete_link(powerdown_handlers, l);
            g_free(h);
            return;
        }
    }
}

void qemu_system_powerdown_request(void)
{
    qapi_event_send("POWERDOWN", NULL);
    for (GSList *l = powerdown_handlers; l; l = l->next) {
        PowerdownHandler *h = l->data;

        h->fn(h->opaque);
    }
}

void qemu_system_reset_request_cause(ShutdownCause cause)
{
    if (cause == SHUTDOWN_CAUSE_NONE) {
        cause = SHUTDOWN_CAUSE_GUEST_RESET;
    }
    g_atomic_int_set(&reset_cause_pending, cause);
    qemu_notify_event();
}

void qemu_system_reset_request(void)
{
    qemu_system_reset_request_cause(SHUTDOWN_CAUSE_GUEST_RESET);
}

bool qemu_shutdown_requested(ShutdownCause *cause, int *status)
{
    ShutdownCause c = g_atomic_int_get(&shutdown_cause_pending);

    if (c == SHUTDOWN_CAUSE_NONE) {
        return false;
    }
    if (cause) {
        *cause = c;
    }
    if (status) {
        *status = g_atomic_int_get(&shutdown_status);
    }
    return true;
}

ShutdownCause qemu_reset_requested(void)
{
    gint c;

    do {
        c = g_atomic_int_get(&reset_cause_pending);
    } while (c != SHUTDOWN_CAUSE_NONE &&
             !g_atomic_int_compare_and_exchange(&reset_cause_pending, c,
                                                SHUTDOWN_CAUSE_NONE));
    return c;
}

static JsonObject *cause_event_data(ShutdownCause cause)
{
    JsonObject *data = json_object_new();

    json_object_set_boolean_member(data, "guest",
                                   shutdown_caused_by_guest(cause));
    json_object_set_string_member(data, "reason", shutdown_cause_name(cause));
    return data;
}

void qemu_system_reset(ShutdownCause cause)
{
    MachineClass *mc = current_machine ?
        MACHINE_GET_CLASS(current_machine) : NULL;

    trace_qemu_system_reset(shutdown_cause_name(cause));
    if (mc && mc->reset) {
        mc->reset(current_machine);
    } else {
        qemu_devices_reset();
    }
    if (cause != SHUTDOWN_CAUSE_NONE) {
        qapi_event_send("RESET", cause_event_data(cause));
    }
}

static gboolean runstate_signal(gpointer opaque)
{
    qemu_system_shutdown_request_cause(SHUTDOWN_CAUSE_HOST_SIGNAL, 0);
    return G_SOURCE_CONTINUE;
}

int qemu_main_loop(void)
{
    ShutdownCause cause = SHUTDOWN_CAUSE_NONE;
    ShutdownCause reset;
    bool took_lock = false;
    int status = 0;

    qemu_init_main_loop();
    if (!bql_locked()) {
        bql_lock();
        took_lock = true;
    }
    g_unix_signal_add(SIGINT, runstate_signal, NULL);
    g_unix_signal_add(SIGTERM, runstate_signal, NULL);
    g_unix_signal_add(SIGHUP, runstate_signal, NULL);

    for (;;) {
        if (qemu_shutdown_requested(&cause, &status)) {
            /*
             * -no-shutdown: a guest's shutdown stops the VM for inspection;
             * the host (quit, signals) still ends it.
             */
            if (!no_shutdown || !shutdown_caused_by_guest(cause)) {
                break;
            }
            g_atomic_int_set(&shutdown_cause_pending, SHUTDOWN_CAUSE_NONE);
            trace_runstate_no_shutdown(shutdown_cause_name(cause), status);
            qapi_event_send("SHUTDOWN", cause_event_data(cause));
            vm_stop(RUN_STATE_SHUTDOWN);
            continue;
        }
        reset = qemu_reset_requested();
        if (reset != SHUTDOWN_CAUSE_NONE) {
            qemu_system_reset(reset);
            /* As in QEMU: a VM not running after a reset may be started. */
            if (!runstate_is_running()) {
                runstate_set(RUN_STATE_PRELAUNCH);
            }
            continue;
        }
        main_loop_wait(true);
    }

    if (cause == SHUTDOWN_CAUSE_HOST_SIGNAL) {
        info_report("terminating on signal");
    }
    qapi_event_send("SHUTDOWN", cause_event_data(cause));
    vm_stop(RUN_STATE_SHUTDOWN);
    if (took_lock) {
        bql_unlock();
    }
    return status;
}
