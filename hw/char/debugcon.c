/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * isa-debugcon: a write-only console port, as QEMU's.  Bytes written to
 * iobase go to the chardev; a read returns readback (0xe9), which is how
 * SeaBIOS and OVMF detect the port before sending their debug log there.
 * -device isa-debugcon,iobase=0x402,chardev=ID (the firmware's port).
 */
#include "qemu/osdep.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "chardev/char.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "qapi/error.h"

#define TYPE_ISA_DEBUGCON "isa-debugcon"

typedef struct DebugconState {
    DeviceState parent_obj;

    MemoryRegion io;
    CharBackend chr;
    char *chardev_id;
    uint32_t iobase;
    uint32_t readback;
} DebugconState;

#define ISA_DEBUGCON(obj) OBJECT_CHECK(DebugconState, (obj), TYPE_ISA_DEBUGCON)

static uint64_t debugcon_read(void *opaque, hwaddr addr, unsigned size)
{
    DebugconState *s = opaque;

    return s->readback;
}

static void debugcon_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    DebugconState *s = opaque;
    uint8_t c = val;

    qemu_chr_fe_write_all(&s->chr, &c, 1);
}

static const MemoryRegionOps debugcon_ops = {
    .read = debugcon_read,
    .write = debugcon_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 1 },
};

static bool debugcon_realize(DeviceState *dev, Error **errp)
{
    DebugconState *s = ISA_DEBUGCON(dev);
    Chardev *chr = s->chardev_id ? qemu_chr_find(s->chardev_id) : NULL;

    if (!chr) {
        error_setg(errp, "Property 'isa-debugcon.chardev' can't find value "
                   "'%s'", s->chardev_id ? s->chardev_id : "");
        return false;
    }
    if (s->iobase > 0xffff) {
        error_setg(errp, "isa-debugcon: iobase 0x%x is outside the I/O "
                   "space", s->iobase);
        return false;
    }
    if (!qemu_chr_fe_init(&s->chr, chr, errp)) {
        return false;
    }
    memory_region_init_io(&s->io, OBJECT(dev), &debugcon_ops, s,
                          "isa-debugcon", 1);
    memory_region_add_subregion(get_system_io(), s->iobase, &s->io);
    return true;
}

static void debugcon_unrealize(DeviceState *dev)
{
    DebugconState *s = ISA_DEBUGCON(dev);

    memory_region_del_subregion(get_system_io(), &s->io);
    memory_region_finalize(&s->io);
    qemu_chr_fe_deinit(&s->chr, false);
}

static const Property debugcon_props[] = {
    DEFINE_PROP_UINT32("iobase", DebugconState, iobase, 0xe9,
                       .description = "I/O port"),
    DEFINE_PROP_STRING("chardev", DebugconState, chardev_id,
                       .description = "ID of the chardev the bytes go to"),
    DEFINE_PROP_UINT32("readback", DebugconState, readback, 0xe9,
                       .description = "value a read returns"),
    DEFINE_PROP_END_OF_LIST(),
};

static void debugcon_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->desc = "ISA debug console (firmware logs)";
    dc->user_creatable = true;
    dc->realize = debugcon_realize;
    dc->unrealize = debugcon_unrealize;
    device_class_set_props(dc, debugcon_props);
}

static const TypeInfo debugcon_type = {
    .name = TYPE_ISA_DEBUGCON,
    .parent = TYPE_DEVICE,
    .instance_size = sizeof(DebugconState),
    .class_init = debugcon_class_init,
};

static void debugcon_register_types(void)
{
    type_register_static(&debugcon_type);
}

type_init(debugcon_register_types)
