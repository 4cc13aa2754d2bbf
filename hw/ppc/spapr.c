/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pseries machine of conduit-system-ppc64, driven by qtest (no POWER
 * vCPU is emulated): RAM at 0, the interrupt source controller at
 * /machine/ics, the PHB at /machine/pci-host, RTAS for config space and
 * MSI programming, and the device tree rebuilt at every reset.
 *
 * Properties: dumpdtb=FILE writes the tree after the first reset and
 * exits; vfio-no-msix-emulation (read-only, true) tells vfio-pci that the
 * guest never writes MSI-X tables here, so the table overlay can go and
 * the whole BAR can be mapped.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "hw/boards.h"
#include "hw/qdev-core.h"
#include "hw/ppc/spapr.h"
#include "system/qtest.h"
#include <libfdt.h>
#include "trace.h"

static bool spapr_init(MachineState *ms, Error **errp)
{
    SpaprMachineState *sms = SPAPR_MACHINE(ms);

    if (ms->ram_size > SPAPR_RAM_LIMIT) {
        error_setg(errp, "pseries: at most 0x%llx bytes of RAM are "
                   "supported (asked for 0x%" PRIx64 ")",
                   SPAPR_RAM_LIMIT, ms->ram_size);
        return false;
    }
    /* POWER guests under PAPR are big-endian; qtest accesses follow. */
    memory_set_target_big_endian(true);
    if (!machine_alloc_ram(ms, "spapr.ram", errp)) {
        return false;
    }
    memory_region_add_subregion(get_system_memory(), 0, ms->ram);

    sms->ics = spapr_ics_create(ms, errp);
    if (!sms->ics) {
        return false;
    }
    sms->phb = spapr_phb_create(ms, sms->ics, errp);
    if (!sms->phb) {
        return false;
    }
    spapr_rtas_register_qtest();
    trace_spapr_machine_init(ms->ram_size);
    return true;
}

static void spapr_dump_fdt_and_exit(SpaprMachineState *sms)
{
    GError *gerr = NULL;

    if (!g_file_set_contents(sms->dumpdtb, sms->fdt,
                             fdt_totalsize(sms->fdt), &gerr)) {
        error_report("dumpdtb: cannot write '%s': %s", sms->dumpdtb,
                     gerr->message);
        g_error_free(gerr);
        exit(1);
    }
    exit(0);
}

static void spapr_machine_reset(MachineState *ms)
{
    SpaprMachineState *sms = SPAPR_MACHINE(ms);
    Error *err = NULL;
    void *fdt;

    /* Devices first, then the PHB's handler assigns BARs; the tree last. */
    qemu_devices_reset();
    fdt = spapr_build_fdt(sms, &err);
    if (!fdt) {
        /* Keep the previous tree: a reset must not bring the VMM down. */
        error_report_err(err);
        if (sms->dumpdtb) {
            exit(1);
        }
        return;
    }
    g_free(sms->fdt);
    sms->fdt = fdt;
    if (sms->dumpdtb) {
        spapr_dump_fdt_and_exit(sms);
    }
}

static char *spapr_get_dumpdtb(Object *obj, Error **errp)
{
    return g_strdup(SPAPR_MACHINE(obj)->dumpdtb);
}

static bool spapr_set_dumpdtb(Object *obj, const char *value, Error **errp)
{
    SpaprMachineState *sms = SPAPR_MACHINE(obj);

    if (!*value) {
        error_setg(errp, "dumpdtb needs a file name");
        return false;
    }
    g_free(sms->dumpdtb);
    sms->dumpdtb = g_strdup(value);
    return true;
}

static bool spapr_get_vfio_no_msix_emulation(Object *obj, Error **errp)
{
    return true;
}

static void spapr_machine_finalize(Object *obj)
{
    SpaprMachineState *sms = SPAPR_MACHINE(obj);

    g_free(sms->fdt);
    g_free(sms->dumpdtb);
}

static void spapr_machine_class_init(ObjectClass *oc, void *data)
{
    MachineClass *mc = MACHINE_CLASS(oc);
    ObjectProperty *p;

    mc->desc = "pSeries Logical Partition (PAPR compliant), qtest only";
    mc->init = spapr_init;
    mc->reset = spapr_machine_reset;
    mc->is_default = true;
    mc->default_ram_size = 256 * 1024 * 1024;
    mc->max_cpus = 1;
    mc->default_accel = "qtest";
    p = object_class_property_add_str(oc, "dumpdtb", spapr_get_dumpdtb,
                                      spapr_set_dumpdtb);
    object_property_set_description(p, "write the device tree to this file "
                                    "at start-up and exit");
    p = object_class_property_add_bool(oc, "vfio-no-msix-emulation",
                                       spapr_get_vfio_no_msix_emulation,
                                       NULL);
    object_property_set_description(p, "guests program MSI-X through RTAS: "
                                    "vfio-pci need not trap the table");
}

static const TypeInfo spapr_machine_types[] = {
    {
        .name = TYPE_SPAPR_MACHINE,
        .parent = TYPE_MACHINE,
        .instance_size = sizeof(SpaprMachineState),
        .class_size = sizeof(MachineClass),
        .class_init = spapr_machine_class_init,
        .instance_finalize = spapr_machine_finalize,
    },
};

DEFINE_TYPES(spapr_machine_types)
