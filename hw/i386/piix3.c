/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * "PIIX3": function 0 of the pc machine's slot 1, the PCI-to-ISA bridge
 * of the Intel 82371SB (8086:7000), as on QEMU's pc.  It claims no
 * resources (Conduit's ISA devices decode on their own); it is there so
 * that the slot is a multifunction device whose other functions a guest
 * finds: 00:01.2 is the USB controller libvirt puts there
 * (piix3-usb-uhci), and a guest scans the functions of a slot only when
 * function 0 exists.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/i386/pc.h"

static bool piix3_realize(PCIDevice *dev, Error **errp)
{
    /* Header type: multifunction, whatever the addr= property said. */
    dev->multifunction = true;
    dev->config[PCI_HEADER_TYPE] |= 0x80;
    return true;
}

static void piix3_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    dc->desc = "PIIX3 PCI-to-ISA bridge (pc slot 1, function 0)";
    dc->user_creatable = false;
    pc->realize = piix3_realize;
    pc->vendor_id = 0x8086;
    pc->device_id = 0x7000;
    pc->class_id = 0x0601;
    pc->subsystem_vendor_id = 0x1af4;
    pc->subsystem_id = 0x1100;
}

static const TypeInfo piix3_types[] = {
    {
        .name = TYPE_PIIX3_PCI_DEVICE,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(PCIDevice),
        .class_init = piix3_class_init,
    },
};

DEFINE_TYPES(piix3_types)
