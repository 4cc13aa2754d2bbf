/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie-pci-bridge: a PCI Express to conventional PCI bridge (type 1
 * header, PCIe capability of type "PCI Express to PCI/PCI-X bridge"),
 * the controller libvirt adds on q35 for devices that are not PCIe
 * (<controller type='pci' model='pcie-to-pci-bridge'/>).  Its secondary
 * bus has 32 slots; INTx is swizzled onto the bridge's pin as PCI
 * bridges do.  Devices are cold-plugged only: there is no SHPC, so
 * device_add onto the bridge's bus is refused (hot-plug through
 * pcie-root-port instead).
 *
 * Bus numbers route config cycles; the windows are registers only, as on
 * pcie-root-port (devices behind decode in the same address spaces).
 */
#include "qemu/osdep.h"
#include "hw/pci/pci.h"
#include "hw/pci/pci_bus.h"
#include "hw/qdev-properties.h"
#include "qapi/error.h"

#define TYPE_PCIE_PCI_BRIDGE "pcie-pci-bridge"
/* The Red Hat ID QEMU's bridge has (1b36:000e), which guests know. */
#define PCI_VENDOR_ID_REDHAT 0x1b36
#define PCI_DEVICE_ID_REDHAT_PCIE_BRIDGE 0x000e
#define PPB_EXP_OFFSET 0x40
#define PPB_EXP_SIZE 0x3c

typedef struct PCIEPCIBridge {
    PCIDevice parent_obj;

    PCIBus *sec_bus;
} PCIEPCIBridge;

#define PCIE_PCI_BRIDGE(obj) \
    OBJECT_CHECK(PCIEPCIBridge, (obj), TYPE_PCIE_PCI_BRIDGE)

static void ppb_reset(PCIDevice *d)
{
    pci_bridge_reset_config(d);
    pci_set_word(d->config + PCI_BRIDGE_CONTROL, 0);
    pci_set_word(d->config + PPB_EXP_OFFSET + PCI_EXP_DEVCTL, 0);
}

static bool ppb_realize(PCIDevice *d, Error **errp)
{
    PCIEPCIBridge *b = PCIE_PCI_BRIDGE(d);
    DeviceState *dev = DEVICE(d);
    uint8_t *exp;
    g_autofree char *bus_name = NULL;

    if (pci_add_capability(d, PCI_CAP_ID_EXP, PPB_EXP_OFFSET, PPB_EXP_SIZE,
                           errp) < 0) {
        return false;
    }
    exp = d->config + PPB_EXP_OFFSET;
    pci_bridge_init_config(d);
    /* PCI Express capability v2: a PCI Express to PCI bridge, no slot. */
    pci_set_word(exp + PCI_EXP_FLAGS, 2 | PCI_EXP_TYPE_PCI_BRIDGE << 4);
    pci_set_word(d->wmask + PPB_EXP_OFFSET + PCI_EXP_DEVCTL, 0x7fff);
    pci_set_word(d->w1cmask + PPB_EXP_OFFSET + PCI_EXP_DEVSTA, 0x000f);
    pci_set_long(exp + PCI_EXP_LNKCAP, 1 << 4 | PCI_EXP_LNKCAP_SLS_2_5GB);
    pci_set_word(exp + PCI_EXP_LNKSTA, 1 << 4 | PCI_EXP_LNKSTA_CLS_2_5GB);
    /* The bus takes the bridge's id, as in QEMU (bus=pci.2). */
    bus_name = dev->id ? g_strdup(dev->id)
                       : g_strdup_printf("%s.%02x", TYPE_PCIE_PCI_BRIDGE,
                                         d->devfn);
    b->sec_bus = pci_bridge_bus_new(d, bus_name);
    /* No SHPC: what is behind the bridge is there from the start. */
    b->sec_bus->qbus.hotplug_allowed = false;
    ppb_reset(d);
    return true;
}

static void ppb_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    dc->desc = "PCI Express to PCI bridge (cold-plugged devices)";
    dc->hotpluggable = false;
    pc->realize = ppb_realize;
    pc->reset = ppb_reset;
    pc->vendor_id = PCI_VENDOR_ID_REDHAT;
    pc->device_id = PCI_DEVICE_ID_REDHAT_PCIE_BRIDGE;
    pc->class_id = 0x0604;
    pc->is_express = true;
    pc->is_bridge = true;
}

static const TypeInfo ppb_type_info = {
    .name = TYPE_PCIE_PCI_BRIDGE,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(PCIEPCIBridge),
    .class_init = ppb_class_init,
};

static void ppb_register_types(void)
{
    type_register_static(&ppb_type_info);
}

type_init(ppb_register_types)
