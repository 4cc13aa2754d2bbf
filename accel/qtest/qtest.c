/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The qtest accelerator: no vCPUs.  The guest is driven from outside over
 * the qtest protocol, and the virtual clock only moves when the test says
 * so, which makes timer-driven device behaviour deterministic.
 */
#include "qemu/osdep.h"
#include "system/accel.h"
#include "system/qtest.h"
#include "qemu/timer.h"
#include "trace.h"

static bool qtest_accel_init_machine(MachineState *ms, Error **errp)
{
    trace_qtest_accel_init();
    qtest_set_enabled(true);
    qemu_clock_virtual_set_manual(true);
    return true;
}

static void qtest_accel_class_init(ObjectClass *oc, void *data)
{
    AccelClass *ac = ACCEL_CLASS(oc);

    ac->name = "qtest";
    ac->init_machine = qtest_accel_init_machine;
}

static const TypeInfo qtest_accel_types[] = {
    {
        .name = ACCEL_CLASS_NAME("qtest"),
        .parent = TYPE_ACCEL,
        .class_init = qtest_accel_class_init,
    },
};

DEFINE_TYPES(qtest_accel_types)
