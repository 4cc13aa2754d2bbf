/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ACPI on the pc machine: describes the board to hw/acpi/acpi-tables.c
 * and copies the tables into guest RAM at X86_ACPI_RSDP_ADDR at every
 * reset (the -kernel loaders point the guest there), and creates the
 * fixed-hardware PM device whose SCI is ISA IRQ 9.
 */
#include "qemu/osdep.h"
#include "hw/i386/acpi-pc.h"
#include "hw/i386/pc.h"
#include "hw/i386/topology.h"
#include "hw/i386/x86-boot.h"
#include "hw/acpi/acpi-tables.h"
#include "hw/acpi/pm.h"
#include "hw/acpi/table-loader.h"
#include "hw/pci-host/pc-chipset.h"
#include "hw/boards.h"
#include "hw/char/serial.h"
#include "hw/irq.h"
#include "hw/pci/pci_host.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "qapi/error.h"
#include "system/system.h"
#include "system/kvm.h"
#include "system/numa.h"
#include "trace.h"

static void pc_acpi_sci_handler(void *opaque, int n, int level)
{
    kvm_set_irq_line(ACPI_SCI_IRQ, level);
}

/* The machine as the table builder sees it; apic_ids has max_cpus. */
static void pc_acpi_platform(MachineState *ms, AcpiPlatform *p,
                             uint32_t *apic_ids)
{
    PCMachineState *pcms = PC_MACHINE(ms);
    bool q35 = PC_MACHINE_GET_CLASS(ms)->q35;
    unsigned max_cpus = MAX(ms->smp.max_cpus, ms->smp.cpus);
    PCIHostWindow mmio64 = pc_pci_mmio64_window(pcms->above_4g_mem_size
                                                ? PC_HIGHMEM_BASE +
                                                  pcms->above_4g_mem_size
                                                : 0);

    *p = (AcpiPlatform) {
        .nr_cpus = ms->smp.cpus,
        .max_cpus = max_cpus,
        .apic_ids = apic_ids,
        .ecam_base = pcms->ecam_base,
        .ecam_last_bus = pcms->ecam_size / (1 << 20) - 1,
        .ecam_size = pcms->ecam_size,
        .mmio32_base = q35 ? Q35_PCI_MMIO32_BASE : PC_PCI_MMIO32_BASE,
        .mmio32_end = PC_PCI_MMIO32_END,
        .mmio64_base = mmio64.base,
        .mmio64_end = mmio64.end,
        .serial_iobase = serial_isa_iobase,
        .serial_irq = serial_isa_irq,
        .rtc = true,
        .i8042 = true,
        .pm_base = ACPI_PM_BASE,
        .gpe0_base = q35 ? ACPI_PM_BASE + ICH9_PMIO_GPE0 : 0,
        .gpe0_len = q35 ? ICH9_PMIO_GPE0_LEN : 0,
    };
    /*
     * With firmware the tables are built when it asks for them, after it
     * placed the BARs: the 64-bit window must span what it chose.
     */
    if (pcms->has_firmware) {
        uint64_t lo, hi;

        if (pc_pci_host_mmio64_extent(pcms->pci_bus, &lo, &hi)) {
            p->mmio64_base = MIN(p->mmio64_base, lo);
            p->mmio64_end = MAX(p->mmio64_end, hi);
        }
    }
    for (unsigned i = 0; i < max_cpus; i++) {
        apic_ids[i] = x86_apic_id_from_index(&ms->smp, i);
    }
    for (int i = 0; i < 4; i++) {
        p->serial[i] = serial_hd(i) != NULL;
    }
    uint32_t *cpu_node = NULL;
    uint8_t *distance = NULL;
    AcpiNumaMem *numa_mem = NULL;
    const NumaState *ns = numa_state();

    if (ns) {
        unsigned n = ns->num_nodes;
        uint64_t off = 0;

        cpu_node = g_new0(uint32_t, max_cpus);
        for (unsigned i = 0; i < max_cpus && i < ns->nr_cpus; i++) {
            cpu_node[i] = ns->cpu_node[i];
        }
        distance = g_new(uint8_t, n * n);
        for (unsigned a = 0; a < n; a++) {
            for (unsigned b = 0; b < n; b++) {
                distance[a * n + b] = numa_distance(ns, a, b);
            }
        }
        /* Each node's RAM offset range, split around the PCI hole. */
        numa_mem = g_new0(AcpiNumaMem, 2 * n);
        for (unsigned i = 0; i < n; i++) {
            uint64_t start = off, end = off + ns->nodes[i].size;
            uint64_t low = pcms->below_4g_mem_size;

            if (end == start) {
                continue;
            }
            if (start < low) {
                numa_mem[p->nr_numa_mem++] = (AcpiNumaMem) {
                    start, MIN(end, low) - start, i };
            }
            if (end > low) {
                uint64_t s = MAX(start, low);

                numa_mem[p->nr_numa_mem++] = (AcpiNumaMem) {
                    PC_HIGHMEM_BASE + (s - low), end - s, i };
            }
            off = end;
        }
        p->numa_nodes = n;
        p->cpu_node = cpu_node;
        p->numa_distance = distance;
        p->numa_mem = numa_mem;
    }
    if (PC_MACHINE(ms)->acpi_pm) {
        bool s3;

        acpi_pm_sleep_states(PC_MACHINE(ms)->acpi_pm, &s3, &p->s4);
    }
}

/* What pc_acpi_platform() allocated. */
static void pc_acpi_platform_free(AcpiPlatform *p)
{
    g_free((void *)p->cpu_node);
    g_free((void *)p->numa_distance);
    g_free((void *)p->numa_mem);
}

static void pc_acpi_reset(void *opaque)
{
    MachineState *ms = opaque;
    unsigned max_cpus = MAX(ms->smp.max_cpus, ms->smp.cpus);
    g_autofree uint32_t *apic_ids = g_new(uint32_t, max_cpus);
    AcpiPlatform p;
    AcpiTables t;

    /* With firmware, the firmware installs the tables (table-loader). */
    if (PC_MACHINE(ms)->has_firmware) {
        return;
    }
    pc_acpi_platform(ms, &p, apic_ids);
    acpi_build_tables(&p, X86_ACPI_RSDP_ADDR, &t);
    g_assert(t.blob->len <= X86_ACPI_AREA_SIZE);
    address_space_write(&address_space_memory, X86_ACPI_RSDP_ADDR,
                        t.blob->data, t.blob->len);
    trace_pc_acpi_tables(X86_ACPI_RSDP_ADDR, t.blob->len, p.nr_cpus);
    acpi_tables_free(&t);
    pc_acpi_platform_free(&p);
}

void pc_acpi_build_loader(MachineState *ms, AcpiLoaderFiles *f)
{
    unsigned max_cpus = MAX(ms->smp.max_cpus, ms->smp.cpus);
    g_autofree uint32_t *apic_ids = g_new(uint32_t, max_cpus);
    AcpiPlatform p;
    AcpiTables t;

    pc_acpi_platform(ms, &p, apic_ids);
    acpi_build_tables(&p, 0, &t);
    acpi_build_loader_files(&t, f);
    acpi_tables_free(&t);
    pc_acpi_platform_free(&p);
}

bool pc_acpi_init(MachineState *ms, Error **errp)
{
    PCMachineState *pcms = PC_MACHINE(ms);
    qemu_irq sci = NULL;

    if (!ms->acpi) {
        return true;
    }
    if (pcms->below_4g_mem_size < X86_ACPI_RSDP_ADDR + X86_ACPI_AREA_SIZE) {
        error_setg(errp, "-machine acpi=on needs at least 1 MiB of RAM for "
                   "the ACPI tables");
        error_append_hint(errp, "Use -m 2 or more, or -machine acpi=off.\n");
        return false;
    }
    if (kvm_enabled()) {
        sci = qemu_allocate_irq(pc_acpi_sci_handler, NULL, 0);
    }
    pcms->acpi_pm = acpi_pm_create(ms, sci, PC_MACHINE_GET_CLASS(ms)->q35,
                                   errp);
    if (!pcms->acpi_pm) {
        return false;
    }
    qemu_register_reset(pc_acpi_reset, ms);
    return true;
}
