/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * "-M none": no devices, and no RAM unless -m asks for some (then it is
 * mapped at address 0).
 */
#include "qemu/osdep.h"
#include "hw/boards.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "qapi/error.h"

static bool machine_none_init(MachineState *ms, Error **errp)
{
    if (!ms->ram_size_set || !ms->ram_size) {
        return true;
    }
    if (!machine_alloc_ram(ms, "ram", errp)) {
        return false;
    }
    memory_region_add_subregion(get_system_memory(), 0, ms->ram);
    return true;
}

static void machine_none_class_init(ObjectClass *oc, void *data)
{
    MachineClass *mc = MACHINE_CLASS(oc);

    mc->desc = "empty machine";
    mc->init = machine_none_init;
    mc->default_ram_size = 0;
    mc->default_accel = "qtest";
}

static const TypeInfo machine_none_types[] = {
    {
        .name = MACHINE_TYPE_NAME("none"),
        .parent = TYPE_MACHINE,
        .class_init = machine_none_class_init,
    },
};

DEFINE_TYPES(machine_none_types)
