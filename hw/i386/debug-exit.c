/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * isa-debug-exit: a write of V to its port makes Conduit exit with status
 * (V << 1) | 1, as QEMU's device does, so a test guest can report pass or
 * fail through the VMM's exit status.
 */
#include "qemu/osdep.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "system/runstate.h"
#include "system/system.h"
#include "monitor/monitor.h"
#include "qapi/error.h"
#include "trace.h"

#define TYPE_ISA_DEBUG_EXIT "isa-debug-exit"

typedef struct DebugExitState {
    DeviceState parent_obj;

    MemoryRegion io;
    uint32_t iobase;
    uint32_t iosize;
} DebugExitState;

#define ISA_DEBUG_EXIT(obj) \
    OBJECT_CHECK(DebugExitState, (obj), TYPE_ISA_DEBUG_EXIT)

static uint64_t debug_exit_read(void *opaque, hwaddr addr, unsigned size)
{
    return 0;
}

static void debug_exit_write(void *opaque, hwaddr addr, uint64_t val,
                             unsigned size)
{
    int status = (int)((val << 1) | 1);
    JsonObject *data;

    trace_debug_exit_write(addr, val);
    if (!no_shutdown) {
        qemu_system_shutdown_request(status);
        return;
    }
    /*
     * -no-shutdown: stop instead, so a monitor can still read the VM's
     * counters; the status the guest asked for travels in the event.
     */
    if (runstate_is_running()) {
        vm_stop(RUN_STATE_SHUTDOWN);
        data = json_object_new();
        json_object_set_boolean_member(data, "guest", true);
        json_object_set_string_member(data, "reason", "guest-shutdown");
        json_object_set_int_member(data, "x-exit-status", status);
        qapi_event_send("SHUTDOWN", data);
    }
}

static const MemoryRegionOps debug_exit_ops = {
    .read = debug_exit_read,
    .write = debug_exit_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4 },
};

static bool debug_exit_realize(DeviceState *dev, Error **errp)
{
    DebugExitState *s = ISA_DEBUG_EXIT(dev);

    if (s->iosize < 1 || s->iosize > 4 || s->iobase > 0xffff ||
        s->iobase + s->iosize > 0x10000) {
        error_setg(errp, "isa-debug-exit: iobase 0x%x iosize %u is outside "
                   "the 64 KiB I/O space or iosize is not 1..4", s->iobase,
                   s->iosize);
        return false;
    }
    memory_region_init_io(&s->io, OBJECT(dev), &debug_exit_ops, s,
                          "isa-debug-exit", s->iosize);
    memory_region_add_subregion(get_system_io(), s->iobase, &s->io);
    return true;
}

static void debug_exit_unrealize(DeviceState *dev)
{
    DebugExitState *s = ISA_DEBUG_EXIT(dev);

    memory_region_del_subregion(get_system_io(), &s->io);
    memory_region_finalize(&s->io);
}

static const Property debug_exit_props[] = {
    DEFINE_PROP_UINT32("iobase", DebugExitState, iobase, 0x501,
                       .description = "I/O port"),
    DEFINE_PROP_UINT32("iosize", DebugExitState, iosize, 2,
                       .description = "number of ports (1..4)"),
    DEFINE_PROP_END_OF_LIST(),
};

static void debug_exit_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->desc = "exit the VMM with status (value << 1) | 1";
    dc->user_creatable = true;
    dc->realize = debug_exit_realize;
    dc->unrealize = debug_exit_unrealize;
    device_class_set_props(dc, debug_exit_props);
}

static const TypeInfo debug_exit_types[] = {
    {
        .name = TYPE_ISA_DEBUG_EXIT,
        .parent = TYPE_DEVICE,
        .instance_size = sizeof(DebugExitState),
        .class_init = debug_exit_class_init,
    },
};

DEFINE_TYPES(debug_exit_types)
