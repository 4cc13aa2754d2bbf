/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-pci: the vfio-pci device model on the kernel's VFIO driver.
 *
 * A subclass of vfio-pci-base (pci.h) that owns what only the kernel
 * driver has: the host and sysfsdev properties that name the device, and
 * attaching it through its IOMMU group (device-kernel.c).  Everything
 * else is the base class's, reached through vfio_pci_realize_device();
 * hw/vfio-user/pci.c is the other driver, built the same way.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/qdev-properties.h"
#include "hw/vfio/vfio-kernel.h"
#include "pci.h"

#define TYPE_VFIO_PCI "vfio-pci"
#define VFIO_KERNEL_PCI(obj) \
    OBJECT_CHECK(VFIOKernelPCIDevice, (obj), TYPE_VFIO_PCI)

typedef struct VFIOKernelPCIDevice {
    VFIOPCIDevice parent_obj;

    /* Properties */
    PCIHostDeviceAddress host;  /* domain ~0: not set */
    char *sysfsdev;
} VFIOKernelPCIDevice;

static bool vfio_kernel_pci_realize(PCIDevice *pdev, Error **errp)
{
    VFIOKernelPCIDevice *kdev = VFIO_KERNEL_PCI(pdev);
    VFIOPCIDevice *vdev = &kdev->parent_obj;
    g_autofree char *sysfsdev = NULL;

    if (kdev->sysfsdev && kdev->sysfsdev[0]) {
        sysfsdev = g_strdup(kdev->sysfsdev);
    } else if (kdev->host.domain != ~0u) {
        g_autofree char *host = g_strdup_printf("%04x:%02x:%02x.%x",
                                                kdev->host.domain,
                                                kdev->host.bus,
                                                kdev->host.slot,
                                                kdev->host.function);

        sysfsdev = vfio_kernel_host_to_sysfsdev(host, errp);
        if (!sysfsdev) {
            return false;
        }
    } else {
        error_setg(errp, "vfio-pci: 'host' or 'sysfsdev' is required");
        return false;
    }
    if (!vfio_kernel_device_attach(&vdev->vbasedev, sysfsdev, errp)) {
        return false;
    }
    if (!vfio_pci_realize_device(vdev, errp)) {
        return false;
    }
    /*
     * The IOMMU pinned the guest's pages: a page discarded now (balloon)
     * would come back as a new page the device never sees.
     */
    ram_block_discard_disable(true);
    return true;
}

static void (*vfio_kernel_pci_parent_exit)(PCIDevice *pdev);

static void vfio_kernel_pci_exit(PCIDevice *pdev)
{
    vfio_kernel_pci_parent_exit(pdev);
    ram_block_discard_disable(false);
}

static void vfio_kernel_pci_instance_init(Object *obj)
{
    VFIO_KERNEL_PCI(obj)->host.domain = ~0u;
}

static const Property vfio_kernel_pci_props[] = {
    DEFINE_PROP_PCI_HOST_DEVADDR("host", VFIOKernelPCIDevice, host,
                                 .description = "host device DDDD:BB:DD.F"),
    DEFINE_PROP_STRING("sysfsdev", VFIOKernelPCIDevice, sysfsdev,
                       .description = "host device sysfs path"),
    DEFINE_PROP_END_OF_LIST(),
};

static void vfio_kernel_pci_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    dc->desc = "VFIO-based PCI device assignment";
    dc->user_creatable = true;
    dc->hotpluggable = true;
    device_class_set_props(dc, vfio_kernel_pci_props);
    pc->realize = vfio_kernel_pci_realize;
    vfio_kernel_pci_parent_exit = pc->exit;
    pc->exit = vfio_kernel_pci_exit;
}

static const TypeInfo vfio_kernel_pci_types[] = {
    {
        .name = TYPE_VFIO_PCI,
        .parent = TYPE_VFIO_PCI_BASE,
        .instance_size = sizeof(VFIOKernelPCIDevice),
        .instance_init = vfio_kernel_pci_instance_init,
        .class_init = vfio_kernel_pci_class_init,
    },
};

DEFINE_TYPES(vfio_kernel_pci_types)
