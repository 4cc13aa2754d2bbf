/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The PC boards' core: guest RAM laid out like QEMU's pc and q35 (low
 * RAM below the chipset's PCI hole, the rest above 4 GiB), the PCI host
 * bridge with the chipset's functions, the legacy ISA devices, ACPI and
 * firmware.  "pc-i440fx-X.Y" (alias "pc", the default) and "pc-q35-X.Y"
 * (alias "q35") differ only in the chipset: i440FX with a fixed ECAM,
 * or the Q35 MCH (ECAM at PCIEXBAR) with the ICH9 LPC at 1f.0.  Every
 * version name is the same board: Conduit has one of each, and answers
 * to the names libvirt and QEMU users write.
 */
#include "qemu/osdep.h"
#include "hw/i386/pc.h"
#include "hw/boards.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "qapi/error.h"
#include "hw/pci/pci_host.h"
#include "hw/pci/pci_bus.h"
#include "hw/qdev-properties.h"
#include "hw/pci-host/pc-chipset.h"
#include "hw/i386/x86-boot.h"
#include "hw/i386/x86-fw.h"
#include "hw/i386/pc-isa.h"
#include "hw/i386/x86-cpu.h"
#include "hw/i386/acpi-pc.h"
#include "hw/i386/smbios-pc.h"
#include "hw/i386/mptable.h"
#include "hw/i386/topology.h"
#include "hw/acpi/acpi-tables.h"
#include "hw/acpi/pm.h"
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

void pc_q35_ram_split(uint64_t ram_size, uint64_t *below_4g,
                      uint64_t *above_4g)
{
    uint64_t limit = ram_size >= Q35_LOWMEM_LIMIT ? Q35_LOWMEM_LIMIT_LARGE
                                                  : Q35_LOWMEM_LIMIT;

    *below_4g = MIN(ram_size, limit);
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

/* Without firmware, Conduit leaves the chipset as firmware would. */
static void pc_firmware_role_reset(void *opaque)
{
    PCMachineState *pcms = opaque;

    if (!pcms->has_firmware) {
        pc_chipset_firmware_setup(pc_pci_host_func(pcms->pci_bus),
                                  pcms->lpc);
    }
}

/* The chipset's PMBASE / PMBA moves the ACPI PM block. */
static void pc_move_pm_block(void *opaque, bool enabled, uint16_t base)
{
    acpi_pm_set_base(DEVICE(opaque), enabled, base);
}

/* Firmware on pc finds the PM block through 01.3, as on QEMU's pc. */
static bool pc_create_piix4_pm(PCMachineState *pcms, Error **errp)
{
    DeviceState *dev = qdev_new(TYPE_PIIX4_PM_FUNCTION);

    qdev_prop_set_int32(dev, "addr", PIIX4_PM_DEVFN);
    if (!qdev_realize_and_unref(dev, &pcms->pci_bus->qbus, errp)) {
        return false;
    }
    piix4_pm_func_set_pm(PCI_DEVICE(dev), pc_move_pm_block, pcms->acpi_pm);
    return true;
}

static bool pc_create_lpc(PCMachineState *pcms, Error **errp)
{
    DeviceState *lpc = qdev_new(TYPE_ICH9_LPC_DEVICE);

    qdev_prop_set_int32(lpc, "addr", PCI_DEVFN(0x1f, 0));
    object_property_set_bool(OBJECT(lpc), "multifunction", true, NULL);
    if (!qdev_realize_and_unref(lpc, &pcms->pci_bus->qbus, errp)) {
        return false;
    }
    pcms->lpc = PCI_DEVICE(lpc);
    return true;
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

/*
 * The vCPUs as QOM objects of the -cpu model's type, made first so they
 * are /machine/unattached/device[0..cpus-1] as on QEMU's pc; management
 * tools match query-cpus-fast and query-hotpluggable-cpus by that path.
 */
static void pc_create_cpu_objects(MachineState *ms)
{
    const char *model = x86_cpu_cmdline_config()->model;
    g_autofree char *type = g_strdup_printf("%s-x86_64-cpu",
                                            model ? model : "qemu64");

    ms->cpu_objs = g_new0(Object *, ms->smp.cpus);
    for (unsigned i = 0; i < ms->smp.cpus; i++) {
        ms->cpu_objs[i] = object_new(type);
        qdev_add_unattached(ms->cpu_objs[i]);
        object_unref(ms->cpu_objs[i]);
    }
}

/* The direct -kernel path's MP table, copied at every reset. */
static GByteArray *pc_mptable;

static void pc_mptable_reset(void *opaque)
{
    address_space_write(&address_space_memory, X86_MPTABLE_ADDR,
                        pc_mptable->data, pc_mptable->len);
}

static bool pc_mptable_init(MachineState *ms, Error **errp)
{
    PCMachineState *pcms = PC_MACHINE(ms);
    g_autofree uint32_t *apic_ids = g_new(uint32_t, ms->smp.cpus);
    MpTablePlatform p = {
        .nr_cpus = ms->smp.cpus,
        .apic_ids = apic_ids,
        .lapic_addr = ACPI_LAPIC_ADDR,
        .ioapic_addr = ACPI_IOAPIC_ADDR,
        .ioapic_id = 0,
        .ioapic_pins = 24,
        .isa_level_irqs = pcms->acpi_pm ? 1u << ACPI_SCI_IRQ : 0,
        .pci_intx_pin_base = ACPI_PCI_INTX_GSI_BASE,
    };
    unsigned skipped;
    GByteArray *b;

    for (unsigned i = 0; i < ms->smp.cpus; i++) {
        apic_ids[i] = x86_apic_id_from_index(&ms->smp, i);
    }
    b = mptable_build(&p, X86_MPTABLE_ADDR, &skipped);
    if (b->len > X86_MPTABLE_AREA_SIZE) {
        error_setg(errp, "the MP table of %u bytes for %u vCPUs does not fit "
                   "its %u KiB area", b->len, ms->smp.cpus,
                   X86_MPTABLE_AREA_SIZE >> 10);
        g_byte_array_free(b, TRUE);
        return false;
    }
    trace_pc_mptable(X86_MPTABLE_ADDR, b->len, ms->smp.cpus - skipped,
                     skipped);
    if (pc_mptable) {
        g_byte_array_free(pc_mptable, TRUE);
    } else {
        qemu_register_reset(pc_mptable_reset, NULL);
    }
    pc_mptable = b;
    return true;
}

static bool pc_init(MachineState *ms, Error **errp)
{
    PCMachineState *pcms = PC_MACHINE(ms);
    bool q35 = PC_MACHINE_GET_CLASS(ms)->q35;
    MemoryRegion *sysmem = get_system_memory();
    PCIHostConfig host = { 0 };

    pc_create_cpu_objects(ms);

    if (q35) {
        pc_q35_ram_split(ms->ram_size, &pcms->below_4g_mem_size,
                         &pcms->above_4g_mem_size);
    } else {
        pc_ram_split(ms->ram_size, &pcms->below_4g_mem_size,
                     &pcms->above_4g_mem_size);
    }
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

    if (q35) {
        host.func_type = TYPE_MCH_PCI_DEVICE;
        host.bus_name = "pcie.0";   /* QEMU's name, which libvirt uses */
        host.ecam_base = MCH_PCIEXBAR_DEFAULT;
        host.ecam_size = 0;     /* until PCIEXBAR enables it */
        host.mmio32 = (PCIHostWindow){ Q35_PCI_MMIO32_BASE,
                                       PC_PCI_MMIO32_END };
        pcms->ecam_base = MCH_PCIEXBAR_DEFAULT;
        pcms->ecam_size = MCH_PCIEXBAR_SIZE;
    } else {
        host.func_type = TYPE_I440FX_PCI_DEVICE;
        host.ecam_base = PC_PCI_ECAM_BASE;
        host.ecam_size = PC_PCI_ECAM_SIZE;
        pcms->ecam_base = PC_PCI_ECAM_BASE;
        pcms->ecam_size = PC_PCI_ECAM_SIZE;
    }
    x86_set_ecam(pcms->ecam_base, pcms->ecam_size);
    /* Decided before the bridge exists: firmware places BARs itself. */
    host.assign_bars = true;
    pcms->pci_bus = pc_pci_host_init(ms, pcms->above_4g_mem_size
                                         ? PC_HIGHMEM_BASE +
                                           pcms->above_4g_mem_size
                                         : 0, &host, errp);
    if (!pcms->pci_bus) {
        return false;
    }
    pc_pci_connect_intx();
    if (q35 ? !pc_create_lpc(pcms, errp) : !pc_slot1_init(ms, errp)) {
        return false;
    }
    if (!pc_isa_init(ms, errp)) {
        return false;
    }
    if (!pc_acpi_init(ms, errp)) {
        return false;
    }
    if (pcms->lpc && pcms->acpi_pm) {
        uint8_t s3, s4;

        ich9_lpc_sleep_states(pcms->lpc, &s3, &s4);
        acpi_pm_set_sleep_states(pcms->acpi_pm, s3, s4);
        ich9_lpc_set_pm(pcms->lpc, pc_move_pm_block, pcms->acpi_pm);
    }
    if (!x86_firmware_init(ms, pc_pci_host_func(pcms->pci_bus), errp)) {
        return false;
    }
    if (pcms->has_firmware) {
        pc_pci_host_set_assign_bars(pcms->pci_bus, false);
        if (!q35 && pcms->acpi_pm && !pc_create_piix4_pm(pcms, errp)) {
            return false;
        }
    }
    qemu_register_reset(pc_firmware_role_reset, pcms);
    /* With firmware, the firmware places the tables (fw_cfg). */
    if (pcms->has_firmware ? !pc_smbios_fw_cfg(ms, pcms->fw_cfg, errp)
                           : !pc_smbios_init(ms, errp)) {
        return false;
    }
    /* ... and its own MP table: SeaBIOS writes one, OVMF none. */
    if (!pcms->has_firmware && !pc_mptable_init(ms, errp)) {
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
    g_free(pcms->pflash_node[0]);
    g_free(pcms->pflash_node[1]);
}

#define PC_PFLASH_PROP(n)                                                  \
    static char *pc_get_pflash##n(Object *obj, Error **errp)              \
    {                                                                     \
        return g_strdup(PC_MACHINE(obj)->pflash_node[n]);                 \
    }                                                                     \
    static bool pc_set_pflash##n(Object *obj, const char *v, Error **errp) \
    {                                                                     \
        PCMachineState *pcms = PC_MACHINE(obj);                           \
        g_free(pcms->pflash_node[n]);                                     \
        pcms->pflash_node[n] = *v ? g_strdup(v) : NULL;                   \
        return true;                                                      \
    }
PC_PFLASH_PROP(0)
PC_PFLASH_PROP(1)

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

    mc->init = pc_init;
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
    object_class_property_add_str(oc, "pflash0", pc_get_pflash0,
                                  pc_set_pflash0);
    object_class_property_add_str(oc, "pflash1", pc_get_pflash1,
                                  pc_set_pflash1);
    object_class_property_add_bool(oc, "hpet", pc_machine_get_hpet,
                                   pc_machine_set_hpet);
    object_class_property_add_str(oc, "vmport", pc_machine_get_vmport,
                                  pc_machine_set_vmport);
}

/* ---- the versioned machine names ---- */

typedef struct PCVersion {
    const char *family;         /* "i440fx" or "q35" */
    const char *version;
} PCVersion;

static void pc_version_class_init(ObjectClass *oc, void *data)
{
    const PCVersion *v = data;
    MachineClass *mc = MACHINE_CLASS(oc);
    PCMachineClass *pcmc = PC_MACHINE_CLASS(oc);
    bool latest = !strcmp(v->version, PC_MACHINE_LATEST);

    pcmc->q35 = !strcmp(v->family, "q35");
    if (pcmc->q35) {
        mc->desc = "Standard PC (Q35 + ICH9, 2009)";
        mc->alias = latest ? "q35" : NULL;
        mc->max_cpus = 288;
    } else {
        mc->desc = "Standard PC (i440FX + PIIX, 1996)";
        mc->alias = latest ? "pc" : NULL;
        mc->is_default = latest;
    }
}

/* QEMU 8.2's list: i440fx from 2.0, q35 from 2.4. */
static const char *const pc_versions[] = {
    "2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8", "2.9",
    "2.10", "2.11", "2.12", "3.0", "3.1", "4.0", "4.1", "4.2", "5.0", "5.1",
    "5.2", "6.0", "6.1", "6.2", "7.0", "7.1", "7.2", "8.0", "8.1", "8.2",
};

static void pc_machine_register_types(void)
{
    static const TypeInfo base = {
        .name = TYPE_PC_MACHINE,
        .parent = TYPE_MACHINE,
        .instance_size = sizeof(PCMachineState),
        .class_size = sizeof(PCMachineClass),
        .class_init = pc_machine_class_init,
        .instance_finalize = pc_machine_finalize,
        .abstract = true,
    };

    type_register_static(&base);
    for (int f = 0; f < 2; f++) {
        const char *family = f ? "q35" : "i440fx";

        for (size_t i = 0; i < G_N_ELEMENTS(pc_versions); i++) {
            g_autofree char *name = NULL;
            PCVersion *v;

            if (f && strcmp(pc_versions[i], "2.4") < 0 &&
                strlen(pc_versions[i]) == 3) {
                continue;       /* no pc-q35 before 2.4 */
            }
            /* The type table keeps v (its class data) for good. */
            v = g_new(PCVersion, 1);
            v->family = family;
            v->version = pc_versions[i];
            name = g_strdup_printf("pc-%s-%s" TYPE_MACHINE_SUFFIX, family,
                                   pc_versions[i]);
            /* type_register_static() copies what it keeps of the info. */
            type_register_static(&(TypeInfo) {
                .name = name,
                .parent = TYPE_PC_MACHINE,
                .class_init = pc_version_class_init,
                .class_data = v,
            });
        }
    }
}

type_init(pc_machine_register_types)
