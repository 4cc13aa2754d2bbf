/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie-root-port: a PCI Express root port (type 1 header, PCIe capability
 * version 2, MSI) whose one slot is hot-plug capable as PCIe Base 6.0
 * 7.5.3.9-7.5.3.11 and 6.7 describe: attention button, power controller,
 * attention and power indicators, presence detect, data link layer link
 * active reporting, and "no command completed support" so the guest never
 * waits for command completions.
 *
 * device_add onto the port's bus fills the slot (presence detect changed
 * and an attention button press, as an operator would do); the guest
 * powers it on (link up: data link layer state changed) and enumerates.  device_del presses the attention button; the guest powers
 * the slot off when it has released the device, and only then is the
 * device removed and DEVICE_DELETED sent.  A guest that never answers
 * leaves the device in place; a second device_del says the removal is
 * pending.  If the slot is powered off when device_del comes, the device
 * goes at once.
 *
 * Bus numbers route config cycles (pci_find_device); the memory and I/O
 * windows are kept as registers only: devices behind the port decode in
 * the same address spaces as the port itself.
 */
#include "qemu/osdep.h"
#include "hw/pci/pci.h"
#include "hw/pci/pci_bus.h"
#include "hw/pci/msi.h"
#include "hw/qdev-properties.h"
#include "qapi/error.h"
#include "qemu/main-loop.h"
#include "trace.h"

#define TYPE_PCIE_ROOT_PORT "pcie-root-port"
#define PCI_DEVICE_ID_CONDUIT_ROOT_PORT 0x0010
#define RP_CLASS_PCI_BRIDGE 0x0604

#define RP_EXP_OFFSET 0x40
#define RP_EXP_SIZE 0x3c
#define RP_MSI_OFFSET 0x80

/* Slot events that may interrupt (Slot Control enable = Status bit). */
#define RP_SLOT_EVENTS (PCI_EXP_SLTSTA_ABP | PCI_EXP_SLTSTA_PFD | \
                        PCI_EXP_SLTSTA_MRLSC | PCI_EXP_SLTSTA_PDC | \
                        PCI_EXP_SLTSTA_CC)

typedef struct PCIERootPort {
    PCIDevice parent_obj;

    uint8_t chassis;
    uint16_t slot;
    uint8_t port;
    PCIBus *sec_bus;
    DeviceState *unplug_pending;    /* device_del waiting for the guest */
    QEMUBH *remove_bh;              /* completes it outside config cycles */
    bool event_line;                /* an enabled event is pending */
} PCIERootPort;

#define PCIE_ROOT_PORT(obj) \
    OBJECT_CHECK(PCIERootPort, (obj), TYPE_PCIE_ROOT_PORT)

static uint8_t *rp_exp(PCIERootPort *rp)
{
    return PCI_DEVICE(rp)->config + RP_EXP_OFFSET;
}

static const char *rp_name(PCIERootPort *rp)
{
    return PCI_DEVICE(rp)->name;
}

static bool rp_slot_occupied(PCIERootPort *rp)
{
    for (int i = 0; i < PCI_DEVFN_MAX; i++) {
        if (rp->sec_bus->devices[i]) {
            return true;
        }
    }
    return false;
}

static bool rp_power_on(PCIERootPort *rp)
{
    return !(pci_get_word(rp_exp(rp) + PCI_EXP_SLTCTL) & PCI_EXP_SLTCTL_PCC);
}

/*
 * The hot-plug interrupt: the OR of the enabled slot events (and Data
 * Link Layer State Changed) while Hot-Plug Interrupt Enable is set.  MSI
 * sends one message per rising edge; INTx follows the level.
 */
static void rp_update_interrupt(PCIERootPort *rp)
{
    PCIDevice *d = PCI_DEVICE(rp);
    uint16_t ctl = pci_get_word(rp_exp(rp) + PCI_EXP_SLTCTL);
    uint16_t sta = pci_get_word(rp_exp(rp) + PCI_EXP_SLTSTA);
    bool level = false;

    if (ctl & PCI_EXP_SLTCTL_HPIE) {
        level = (sta & ctl & RP_SLOT_EVENTS) ||
                ((sta & PCI_EXP_SLTSTA_DLLSC) &&
                 (ctl & PCI_EXP_SLTCTL_DLLSCE));
    }
    if (level && !rp->event_line) {
        trace_pcie_root_port_interrupt(rp_name(rp), sta, msi_enabled(d));
        if (msi_enabled(d)) {
            msi_notify(d, 0);
        }
    }
    rp->event_line = level;
    pci_set_irq(d, level && !msi_enabled(d));
}

static void rp_slot_event(PCIERootPort *rp, uint16_t sta_bits)
{
    uint8_t *exp = rp_exp(rp);

    pci_set_word(exp + PCI_EXP_SLTSTA,
                 pci_get_word(exp + PCI_EXP_SLTSTA) | sta_bits);
    rp_update_interrupt(rp);
}

static void rp_set_link(PCIERootPort *rp, bool up, bool notify)
{
    uint8_t *exp = rp_exp(rp);
    uint16_t lnksta = pci_get_word(exp + PCI_EXP_LNKSTA);
    bool was_up = lnksta & PCI_EXP_LNKSTA_DLLLA;

    if (up == was_up) {
        return;
    }
    pci_set_word(exp + PCI_EXP_LNKSTA, up ? lnksta | PCI_EXP_LNKSTA_DLLLA
                                          : lnksta & ~PCI_EXP_LNKSTA_DLLLA);
    if (notify) {
        rp_slot_event(rp, PCI_EXP_SLTSTA_DLLSC);
    }
}

static void rp_set_presence(PCIERootPort *rp, bool present)
{
    uint8_t *exp = rp_exp(rp);
    uint16_t sta = pci_get_word(exp + PCI_EXP_SLTSTA);

    pci_set_word(exp + PCI_EXP_SLTSTA, present ? sta | PCI_EXP_SLTSTA_PDS
                                               : sta & ~PCI_EXP_SLTSTA_PDS);
}

/* Removes whatever occupies the slot, the way device_del ends. */
static void rp_remove_devices(PCIERootPort *rp)
{
    for (int i = PCI_DEVFN_MAX - 1; i >= 0; i--) {
        PCIDevice *d = rp->sec_bus->devices[i];

        if (d) {
            qdev_unplug_complete(DEVICE(d));
        }
    }
    rp->unplug_pending = NULL;
    rp_set_presence(rp, false);
    rp_set_link(rp, false, false);
}

/*
 * The guest released the slot (or the machine was reset): the device
 * goes from the main loop, not from inside the config write or the reset
 * walk that noticed it.
 */
static void rp_remove_bh(void *opaque)
{
    PCIERootPort *rp = opaque;

    if (rp->unplug_pending) {
        rp_remove_devices(rp);
        rp_slot_event(rp, PCI_EXP_SLTSTA_PDC);
    }
}

/* ---- hot-plug: device_add / device_del ---- */

static void rp_plugged(PCIBus *bus, PCIDevice *dev, void *opaque)
{
    PCIERootPort *rp = opaque;

    trace_pcie_root_port_plug(rp_name(rp), dev->name, rp_power_on(rp));
    rp_set_presence(rp, true);
    /*
     * Presence changed, and the attention button is pressed for the
     * operator: a guest with a button-equipped slot (Linux's pciehp)
     * leaves presence events disabled and powers the slot on in answer
     * to the button.
     */
    rp_slot_event(rp, PCI_EXP_SLTSTA_PDC | PCI_EXP_SLTSTA_ABP);
    if (rp_power_on(rp)) {
        rp_set_link(rp, true, true);
    }
}

static bool rp_unplug_request(BusState *qbus, DeviceState *dev, Error **errp)
{
    PCIERootPort *rp = PCIE_ROOT_PORT(qbus->parent);

    if (rp->unplug_pending) {
        error_setg(errp, "Device '%s' is already in the process of unplug",
                   dev->id ? dev->id : rp_name(rp));
        error_append_hint(errp, "The guest has not powered off slot %u of "
                          "%s yet; it leaves the device in place if it "
                          "never does.\n", rp->slot, rp_name(rp));
        return false;
    }
    if (!rp_power_on(rp)) {
        /* Nothing uses a powered-off slot: take it out now. */
        trace_pcie_root_port_unplug(rp_name(rp), "slot off, removed");
        rp_remove_devices(rp);
        rp_slot_event(rp, PCI_EXP_SLTSTA_PDC);
        return true;
    }
    /* Press the attention button; the guest answers by powering off. */
    rp->unplug_pending = dev;
    trace_pcie_root_port_unplug(rp_name(rp), "attention button pressed");
    rp_slot_event(rp, PCI_EXP_SLTSTA_ABP);
    return true;
}

/* ---- config space ---- */

static void rp_write_config(PCIDevice *d, uint32_t addr, uint32_t val,
                            int len)
{
    PCIERootPort *rp = PCIE_ROOT_PORT(d);
    uint32_t sltctl = RP_EXP_OFFSET + PCI_EXP_SLTCTL;
    uint16_t old_ctl = pci_get_word(rp_exp(rp) + PCI_EXP_SLTCTL);
    uint16_t ctl;

    pci_default_write_config(d, addr, val, len);
    if (addr + len <= RP_EXP_OFFSET + PCI_EXP_SLTCTL ||
        addr >= RP_EXP_OFFSET + PCI_EXP_SLTSTA + 2) {
        return;
    }
    ctl = pci_get_word(rp_exp(rp) + PCI_EXP_SLTCTL);
    if (addr < sltctl + 2 && ctl != old_ctl) {
        trace_pcie_root_port_slot_control(rp_name(rp), old_ctl, ctl);
        if ((old_ctl & PCI_EXP_SLTCTL_PCC) && !(ctl & PCI_EXP_SLTCTL_PCC) &&
            rp_slot_occupied(rp)) {
            /* Powered on: the link trains. */
            rp_set_link(rp, true, true);
        } else if (!(old_ctl & PCI_EXP_SLTCTL_PCC) &&
                   (ctl & PCI_EXP_SLTCTL_PCC)) {
            /* Powered off: the guest let go of the device. */
            rp_set_link(rp, false, true);
            if (rp->unplug_pending) {
                trace_pcie_root_port_unplug(rp_name(rp),
                                            "guest powered the slot off");
                qemu_bh_schedule(rp->remove_bh);
            }
        }
    }
    rp_update_interrupt(rp);
}

static void rp_init_config(PCIERootPort *rp)
{
    PCIDevice *d = PCI_DEVICE(rp);
    uint8_t *exp = rp_exp(rp);
    uint8_t *wm = d->wmask + RP_EXP_OFFSET;
    uint8_t *w1c = d->w1cmask + RP_EXP_OFFSET;

    /* Type 1 header: bus numbers and windows are the guest's to set. */
    d->config[PCI_CLASS_PROG] = 0;
    pci_set_byte(d->config + PCI_INTERRUPT_PIN, 1);
    memset(d->wmask + PCI_PRIMARY_BUS, 0xff, 3);
    pci_set_byte(d->wmask + PCI_SEC_LATENCY_TIMER, 0xff);
    pci_set_byte(d->config + PCI_IO_BASE, PCI_IO_RANGE_TYPE_16);
    pci_set_byte(d->config + PCI_IO_LIMIT, PCI_IO_RANGE_TYPE_16);
    pci_set_byte(d->wmask + PCI_IO_BASE, PCI_IO_RANGE_MASK & 0xff);
    pci_set_byte(d->wmask + PCI_IO_LIMIT, PCI_IO_RANGE_MASK & 0xff);
    pci_set_word(d->w1cmask + PCI_SEC_STATUS, 0xf900);  /* error bits */
    pci_set_word(d->wmask + PCI_MEMORY_BASE, PCI_MEMORY_RANGE_MASK & 0xffff);
    pci_set_word(d->wmask + PCI_MEMORY_LIMIT, PCI_MEMORY_RANGE_MASK & 0xffff);
    pci_set_word(d->config + PCI_PREF_MEMORY_BASE, PCI_PREF_RANGE_TYPE_64);
    pci_set_word(d->config + PCI_PREF_MEMORY_LIMIT, PCI_PREF_RANGE_TYPE_64);
    pci_set_word(d->wmask + PCI_PREF_MEMORY_BASE,
                 PCI_PREF_RANGE_MASK & 0xffff);
    pci_set_word(d->wmask + PCI_PREF_MEMORY_LIMIT,
                 PCI_PREF_RANGE_MASK & 0xffff);
    memset(d->wmask + PCI_PREF_BASE_UPPER32, 0xff, 8);
    pci_set_word(d->wmask + PCI_BRIDGE_CONTROL,
                 PCI_BRIDGE_CTL_PARITY | PCI_BRIDGE_CTL_SERR |
                 PCI_BRIDGE_CTL_ISA | PCI_BRIDGE_CTL_VGA |
                 PCI_BRIDGE_CTL_BUS_RESET);

    /* PCI Express capability, version 2, root port with a slot. */
    pci_set_word(exp + PCI_EXP_FLAGS, 2 | PCI_EXP_TYPE_ROOT_PORT << 4 |
                 PCI_EXP_FLAGS_SLOT);
    pci_set_long(exp + PCI_EXP_DEVCAP, PCI_EXP_DEVCAP_RBER);
    pci_set_word(wm + PCI_EXP_DEVCTL, 0x7fff);
    pci_set_word(w1c + PCI_EXP_DEVSTA, 0x000f);
    pci_set_long(exp + PCI_EXP_LNKCAP, (uint32_t)rp->port << 24 |
                 PCI_EXP_LNKCAP_DLLLARC | 1 << 4 | PCI_EXP_LNKCAP_SLS_2_5GB);
    pci_set_word(wm + PCI_EXP_LNKCTL, 0x0fff);
    pci_set_word(exp + PCI_EXP_LNKSTA, 1 << 4 | PCI_EXP_LNKSTA_CLS_2_5GB);
    pci_set_long(exp + PCI_EXP_SLTCAP, (uint32_t)rp->slot << 19 |
                 PCI_EXP_SLTCAP_ABP | PCI_EXP_SLTCAP_PCP |
                 PCI_EXP_SLTCAP_AIP | PCI_EXP_SLTCAP_PIP |
                 PCI_EXP_SLTCAP_HPC | PCI_EXP_SLTCAP_NCCS);
    pci_set_word(wm + PCI_EXP_SLTCTL, 0x1fff);
    pci_set_word(w1c + PCI_EXP_SLTSTA, RP_SLOT_EVENTS | PCI_EXP_SLTSTA_DLLSC);
    pci_set_word(wm + PCI_EXP_RTCTL, 0x001f);
    pci_set_long(w1c + PCI_EXP_RTSTA, PCI_EXP_RTSTA_PME);
    pci_set_word(wm + PCI_EXP_DEVCTL2, 0x07ff);
    pci_set_long(exp + PCI_EXP_LNKCAP2, PCI_EXP_LNKCAP2_SLS_2_5GB);
    pci_set_word(wm + PCI_EXP_LNKCTL2, 0x000f);
    pci_set_word(exp + PCI_EXP_LNKCTL2, 1);
}

/* Reset: indicators off, power on when occupied, off when empty. */
static void rp_reset(PCIDevice *d)
{
    PCIERootPort *rp = PCIE_ROOT_PORT(d);
    uint8_t *exp = rp_exp(rp);
    bool occupied = rp_slot_occupied(rp);
    uint16_t ctl = PCI_EXP_SLTCTL_ATTN_IND_OFF;

    ctl |= occupied ? PCI_EXP_SLTCTL_PWR_IND_ON
                    : PCI_EXP_SLTCTL_PWR_IND_OFF | PCI_EXP_SLTCTL_PCC;
    pci_set_word(exp + PCI_EXP_SLTCTL, ctl);
    pci_set_word(exp + PCI_EXP_SLTSTA, 0);
    rp_set_presence(rp, occupied);
    pci_set_word(exp + PCI_EXP_LNKSTA,
                 (pci_get_word(exp + PCI_EXP_LNKSTA) &
                  ~PCI_EXP_LNKSTA_DLLLA) |
                 (occupied ? PCI_EXP_LNKSTA_DLLLA : 0));
    pci_set_word(exp + PCI_EXP_DEVCTL, 0);
    pci_set_word(exp + PCI_EXP_LNKCTL, 0);
    pci_set_word(exp + PCI_EXP_RTCTL, 0);
    /* Bus numbers unassigned, windows closed (base above limit). */
    memset(d->config + PCI_PRIMARY_BUS, 0, 3);
    pci_set_byte(d->config + PCI_IO_BASE, 0xf0 | PCI_IO_RANGE_TYPE_16);
    pci_set_byte(d->config + PCI_IO_LIMIT, PCI_IO_RANGE_TYPE_16);
    pci_set_word(d->config + PCI_MEMORY_BASE, 0xfff0);
    pci_set_word(d->config + PCI_MEMORY_LIMIT, 0);
    pci_set_word(d->config + PCI_PREF_MEMORY_BASE,
                 0xfff0 | PCI_PREF_RANGE_TYPE_64);
    pci_set_word(d->config + PCI_PREF_MEMORY_LIMIT, PCI_PREF_RANGE_TYPE_64);
    memset(d->config + PCI_PREF_BASE_UPPER32, 0, 8);
    rp->event_line = false;
    /* A reset ends a pending removal: the guest starts from scratch. */
    if (rp->unplug_pending) {
        qemu_bh_schedule(rp->remove_bh);
    }
}

static bool rp_realize(PCIDevice *d, Error **errp)
{
    PCIERootPort *rp = PCIE_ROOT_PORT(d);
    DeviceState *dev = DEVICE(d);
    g_autofree char *bus_name = NULL;

    if (pci_add_capability(d, PCI_CAP_ID_EXP, RP_EXP_OFFSET, RP_EXP_SIZE,
                           errp) < 0) {
        return false;
    }
    if (msi_init(d, RP_MSI_OFFSET, 1, true, false, errp) < 0) {
        return false;
    }
    rp_init_config(rp);
    /* The bus takes the port's id, as QEMU names it (bus=rp1). */
    bus_name = dev->id ? g_strdup(dev->id)
                       : g_strdup_printf("%s.%02x", TYPE_PCIE_ROOT_PORT,
                                         d->devfn);
    rp->sec_bus = pci_bridge_bus_new(d, bus_name);
    pci_bus_set_hotplug_hook(rp->sec_bus, rp_plugged, rp);
    rp->sec_bus->qbus.unplug_request = rp_unplug_request;
    rp->sec_bus->single_slot = true;
    rp->remove_bh = qemu_bh_new(rp_remove_bh, rp);
    rp_reset(d);
    return true;
}

static void rp_exit(PCIDevice *d)
{
    PCIERootPort *rp = PCIE_ROOT_PORT(d);

    g_clear_pointer(&rp->remove_bh, qemu_bh_delete);
    msi_uninit(d);
}

static const Property rp_props[] = {
    DEFINE_PROP_UINT8("chassis", PCIERootPort, chassis, 0,
                      .description = "chassis number (with slot: the "
                                     "physical slot name)"),
    DEFINE_PROP_UINT16("slot", PCIERootPort, slot, 0,
                       .description = "physical slot number (13 bits)"),
    DEFINE_PROP_UINT8("port", PCIERootPort, port, 0,
                      .description = "port number in Link Capabilities"),
    DEFINE_PROP_END_OF_LIST(),
};

static void rp_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    dc->desc = "PCI Express root port with a hot-plug slot";
    dc->hotpluggable = false;
    device_class_set_props(dc, rp_props);
    pc->realize = rp_realize;
    pc->exit = rp_exit;
    pc->reset = rp_reset;
    pc->config_write = rp_write_config;
    pc->vendor_id = PCI_VENDOR_ID_CONDUIT;
    pc->device_id = PCI_DEVICE_ID_CONDUIT_ROOT_PORT;
    pc->class_id = RP_CLASS_PCI_BRIDGE;
    pc->is_express = true;
    pc->is_bridge = true;
}

static const TypeInfo rp_types[] = {
    {
        .name = TYPE_PCIE_ROOT_PORT,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(PCIERootPort),
        .class_init = rp_class_init,
    },
};

DEFINE_TYPES(rp_types)
