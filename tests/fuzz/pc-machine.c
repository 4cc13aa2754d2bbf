/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A pc machine for fuzz targets (pc-machine.h). */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/main-loop.h"
#include "qom/object.h"
#include "hw/qdev-core.h"
#include "system/accel.h"
#include "system/qtest.h"
#include "pc-machine.h"

MachineClass *fuzz_pc_machine_init(void)
{
    MachineClass *pc_class;
    MachineState *ms;

    qemu_init_main_loop();
    bql_lock();
    pc_class = machine_find_class("pc");
    g_assert(pc_class);
    ms = MACHINE(object_new_with_class(OBJECT_CLASS(pc_class)));
    object_property_add_child(object_get_root(), "machine", OBJECT(ms));
    object_unref(ms);
    current_machine = ms;
    qtest_set_enabled(true);
    g_assert(accel_init_machine(accel_find("qtest"), ms, NULL, &error_abort));
    g_assert(pc_class->init(ms, &error_abort));
    qdev_hotplug = true;
    qemu_run_machine_init_done();
    return pc_class;
}
