/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Accelerators: the engine that runs the guest ("kvm") or stands in for
 * one ("qtest").  Each registers a type "<name>-accel" derived from
 * TYPE_ACCEL; the command line picks one with -accel NAME.
 */
#ifndef SYSTEM_ACCEL_H
#define SYSTEM_ACCEL_H

#include <stdbool.h>
#include <stdio.h>
#include "qemu/typedefs.h"
#include "qom/object.h"

#define TYPE_ACCEL "accel"
#define ACCEL_CLASS_SUFFIX "-accel"
#define ACCEL_CLASS_NAME(a) (a ACCEL_CLASS_SUFFIX)

typedef struct AccelState {
    Object parent_obj;
} AccelState;

typedef struct AccelClass {
    ObjectClass parent_class;

    const char *name;           /* "kvm", "qtest" */
    /* Before the board is built: open devices, register listeners. */
    bool (*init_machine)(MachineState *ms, Error **errp);
    /* After the machine and its devices exist: create vCPUs (optional). */
    bool (*start_vcpus)(MachineState *ms, Error **errp);
    /* Host thread id of vCPU @index, -1 if none runs (optional). */
    int (*vcpu_thread_id)(unsigned index);
    /* Teardown at exit (optional). */
    void (*cleanup)(void);
    /* Are the -accel properties set on @accel coherent?  (optional) */
    bool (*check_props)(AccelState *accel, Error **errp);
} AccelClass;

#define ACCEL(obj) OBJECT_CHECK(AccelState, (obj), TYPE_ACCEL)
#define ACCEL_CLASS(klass) OBJECT_CLASS_CHECK(AccelClass, (klass), TYPE_ACCEL)
#define ACCEL_GET_CLASS(obj) OBJECT_GET_CLASS(AccelClass, (obj), TYPE_ACCEL)

/* "qtest" or "qtest-accel" -> class; NULL if unknown. */
AccelClass *accel_find(const char *name);
/* "-accel help". */
void accel_print_list(FILE *out);
/* True when the accelerator in use is KVM. */
bool accel_is_kvm(void);
/*
 * Creates the accelerator object, sets @props on it (NULL or "name",
 * "value" pairs from -accel NAME,name=value,...) and calls init_machine.
 */
bool accel_init_machine(AccelClass *ac, MachineState *ms,
                        const GPtrArray *props, Error **errp);
/*
 * Sets @props on a scratch instance of @ac and lets the class check
 * them, before anything is opened: an error here is the command line's.
 */
bool accel_check_props(AccelClass *ac, const GPtrArray *props, Error **errp);
/* The accelerator in use, NULL before accel_init_machine(). */
AccelState *current_accel(void);
bool accel_start_vcpus(MachineState *ms, Error **errp);
void accel_cleanup(void);
/* Host (Linux) thread id of vCPU @index, or -1 when it has no thread. */
int accel_vcpu_thread_id(unsigned index);

#endif
