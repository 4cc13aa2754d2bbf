/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The minimal "pc" machine: guest RAM laid out like QEMU's pc (low RAM up
 * to 3.5 GiB, the rest above 4 GiB).  PCI, firmware loading and serial
 * ports are added by their own code.
 */
#include "qemu/osdep.h"
#include "hw/i386/pc.h"
#include "hw/boards.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "qapi/error.h"
#include "hw/pci/pci_host.h"
#include "hw/i386/x86-boot.h"
#include "hw/i386/pc-isa.h"
#include "hw/i386/acpi-pc.h"
#include "hw/i386/smbios-pc.h"
#include "hw/acpi/acpi-tables.h"
#include "hw/irq.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "system/kvm.h"
#include "trace.h"

void pc_ram_split(uint64_t ram_size, uint64_t *below_4g, uint64_t *above_4g)
{
    *below_4g = MIN(ram_size, PC_LOWMEM_LIMIT);
    *above_4g = ram_size - *below_4g;
}

static void pc_pci_intx_handler(void *opaque, int n, int level)
{
    kvm_set_irq_line(n, level);
}

/*
 * PCI INTA..D of the root bus are GSIs 16..19 of the in-kernel IOAPIC,
 * as the DSDT's _PRT says.  Under qtest the lines stay unconnected.
 */
static void pc_pci_connect_intx(void)
{
    DeviceState *host = DEVICE(object_resolve_path("/machine/pci-host",
                                                   NULL));

    if (!kvm_enabled() || !host) {
        return;
    }
    for (int i = 0; i < 4; i++) {
        qdev_connect_gpio_out(host, i,
                              qemu_allocate_irq(pc_pci_intx_handler, NULL,
                                                ACPI_PCI_INTX_GSI_BASE + i));
    }
}

/*
 * Slot 1 as on QEMU's pc: the PIIX3 function 0, and with -usb (machine
 * usb=on) the UHCI at 1.2, where libvirt puts it too.
 */
static bool pc_slot1_init(MachineState *ms, Error **errp)
{
    BusState *bus = qbus_find("pci.0", errp);
    DeviceState *dev;

    if (!bus) {
        return false;
    }
    dev = qdev_new(TYPE_PIIX3_PCI_DEVICE);
    qdev_prop_set_int32(dev, "addr", PC_PIIX3_DEVFN);
    qdev_prop_set_bool(dev, "multifunction", true);
    if (!qdev_realize_and_unref(dev, bus, errp)) {
        return false;
    }
    if (!ms->usb) {
        return true;
    }
    dev = qdev_new("piix3-usb-uhci");
    qdev_prop_set_int32(dev, "addr", PC_PIIX3_DEVFN + 2);
    return qdev_realize_and_unref(dev, bus, errp);
}

static bool pc_init(MachineState *ms, Error **errp)
{
    PCMachineState *pcms = PC_MACHINE(ms);
    MemoryRegion *sysmem = get_system_memory();

    pc_ram_split(ms->ram_size, &pcms->below_4g_mem_size,
                 &pcms->above_4g_mem_size);
    if (!machine_alloc_ram(ms, "pc.ram", errp)) {
        return false;
    }
    /* Aliases, so the RAM block stays one memfd while the map has a hole. */
    memory_region_init_alias(&pcms->ram_below_4g, OBJECT(ms), "ram-below-4g",
                             ms->ram, 0, pcms->below_4g_mem_size);
    memory_region_add_subregion(sysmem, 0, &pcms->ram_below_4g);
    if (pcms->above_4g_mem_size) {
        memory_region_init_alias(&pcms->ram_above_4g, OBJECT(ms),
                                 "ram-above-4g", ms->ram,
                                 pcms->below_4g_mem_size,
                                 pcms->above_4g_mem_size);
        memory_region_add_subregion(sysmem, PC_HIGHMEM_BASE,
                                    &pcms->ram_above_4g);
    }
    if (!pc_pci_host_init(ms, pcms->above_4g_mem_size
                                  ? PC_HIGHMEM_BASE + pcms->above_4g_mem_size
                                  : 0, errp)) {
        return false;
    }
    pc_pci_connect_intx();
    if (!pc_slot1_init(ms, errp)) {
        return false;
    }
    if (!pc_isa_init(ms, errp)) {
        return false;
    }
    if (!pc_acpi_init(ms, errp)) {
        return false;
    }
    /* With firmware, the firmware places the tables (fw_cfg). */
    if (ms->kernel_filename && !pc_smbios_init(ms, errp)) {
        return false;
    }
    if (ms->kernel_filename &&
        !x86_load_kernel(ms, pcms->below_4g_mem_size,
                         pcms->above_4g_mem_size, errp)) {
        return false;
    }
    trace_pc_init(ms->ram_size, pcms->below_4g_mem_size,
                  pcms->above_4g_mem_size);
    return true;
}

static void pc_machine_finalize(Object *obj)
{
    PCMachineState *pcms = PC_MACHINE(obj);

    /* The aliases go before the machine frees the RAM they point at. */
    memory_region_finalize(&pcms->ram_above_4g);
    memory_region_finalize(&pcms->ram_below_4g);
}

/*
 * hpet=off (and -no-hpet) describe this machine as it is: it has no
 * HPET, so guests use the PIT, the local APIC timer and kvm-clock.
 */
static bool pc_machine_get_hpet(Object *obj, Error **errp)
{
    return false;
}

static bool pc_machine_set_hpet(Object *obj, bool value, Error **errp)
{
    if (value) {
        error_setg(errp, "hpet=on is not supported: Conduit's pc machine "
                   "has no HPET");
        error_append_hint(errp, "Leave it out or use hpet=off (libvirt: "
                          "<timer name='hpet' present='no'/>).\n");
        return false;
    }
    return true;
}

/*
 * vmport=off (virt-install's <vmport state='off'/>) is what this machine
 * is: it has no VMware backdoor port.  on/auto are refused.
 */
static char *pc_machine_get_vmport(Object *obj, Error **errp)
{
    return g_strdup("off");
}

static bool pc_machine_set_vmport(Object *obj, const char *value,
                                  Error **errp)
{
    if (strcmp(value, "off")) {
        error_setg(errp, "vmport=%s is not supported: Conduit's pc machine "
                   "has no VMware I/O port", value);
        error_append_hint(errp, "Use vmport=off (libvirt: <vmport "
                          "state='off'/>).\n");
        return false;
    }
    return true;
}

static void pc_machine_class_init(ObjectClass *oc, void *data)
{
    MachineClass *mc = MACHINE_CLASS(oc);

    mc->desc = "Standard PC (Conduit minimal, i440FX-style memory map)";
    mc->init = pc_init;
    mc->is_default = true;
    mc->default_ram_size = 128 * 1024 * 1024;
    mc->default_ram_id = "pc.ram";
    mc->max_cpus = 255;
    mc->smp_dies_supported = true;
    object_class_property_add_uint(oc, "below-4g-mem-size",
                                   offsetof(PCMachineState,
                                            below_4g_mem_size), 8, false);
    object_class_property_add_uint(oc, "above-4g-mem-size",
                                   offsetof(PCMachineState,
                                            above_4g_mem_size), 8, false);
    object_class_property_add_bool(oc, "hpet", pc_machine_get_hpet,
                                   pc_machine_set_hpet);
    object_class_property_add_str(oc, "vmport", pc_machine_get_vmport,
                                  pc_machine_set_vmport);
}

static const TypeInfo pc_machine_types[] = {
    {
        .name = TYPE_PC_MACHINE,
        .parent = TYPE_MACHINE,
        .instance_size = sizeof(PCMachineState),
        .class_size = sizeof(PCMachineClass),
        .class_init = pc_machine_class_init,
        .instance_finalize = pc_machine_finalize,
    },
};

DEFINE_TYPES(pc_machine_types)
