/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The x86 PC boards: one core ("generic-pc", abstract) and two chipsets,
 * i440FX ("pc-i440fx-X.Y", alias "pc") and Q35 ("pc-q35-X.Y", alias
 * "q35").  RAM sits at 0; whatever does not fit below the PCI hole
 * continues at 4 GiB.  The chipset decides the hole (3.5 GiB on pc; on
 * q35 2 GiB once RAM reaches 2.75 GiB, else 2.75 GiB) and the functions
 * on the root bus.
 */
#ifndef HW_I386_PC_H
#define HW_I386_PC_H

#include <stdint.h>
#include "qemu/typedefs.h"
#include "hw/boards.h"
#include "system/memory.h"

#define TYPE_PC_MACHINE MACHINE_TYPE_NAME("generic-pc")
/* Slot 1 function 0 (hw/i386/piix3.c); -usb adds the UHCI at 1.2. */
#define TYPE_PIIX3_PCI_DEVICE "PIIX3"
#define PC_PIIX3_DEVFN 0x08

/* Top of low RAM on pc: [PC_LOWMEM_LIMIT, 4 GiB) is left for MMIO. */
#define PC_LOWMEM_LIMIT 0xe0000000ULL
#define PC_HIGHMEM_BASE 0x100000000ULL
/* q35: low RAM ends at the ECAM, or at 2 GiB for 2.75 GiB of RAM or more. */
#define Q35_LOWMEM_LIMIT 0xb0000000ULL
#define Q35_LOWMEM_LIMIT_LARGE 0x80000000ULL
#define Q35_PCI_MMIO32_BASE 0xc0000000ULL

/* The QEMU release whose machine names Conduit answers to. */
#define PC_MACHINE_LATEST "8.2"

typedef struct PCMachineState {
    MachineState parent_obj;

    uint64_t below_4g_mem_size;
    uint64_t above_4g_mem_size;
    MemoryRegion ram_below_4g;  /* alias of ms->ram at 0 */
    MemoryRegion ram_above_4g;  /* alias of the rest at 4 GiB, if any */
    PCIBus *pci_bus;
    PCIDevice *lpc;             /* q35's ICH9 LPC, NULL on pc */
    DeviceState *acpi_pm;
    FWCfgState *fw_cfg;         /* NULL without firmware */
    bool has_firmware;          /* SeaBIOS / OVMF runs at reset */
    char *pflash_node[2];       /* -machine pflash0=, pflash1= */
    uint64_t ecam_base, ecam_size;
} PCMachineState;

typedef struct PCMachineClass {
    MachineClass parent_class;
    bool q35;
} PCMachineClass;

#define PC_MACHINE(obj) OBJECT_CHECK(PCMachineState, (obj), TYPE_PC_MACHINE)
#define PC_MACHINE_GET_CLASS(obj) \
    OBJECT_GET_CLASS(PCMachineClass, (obj), TYPE_PC_MACHINE)
#define PC_MACHINE_CLASS(oc) \
    OBJECT_CLASS_CHECK(PCMachineClass, (oc), TYPE_PC_MACHINE)

/* Splits ram_size into the parts below and above 4 GiB (pc's hole). */
void pc_ram_split(uint64_t ram_size, uint64_t *below_4g, uint64_t *above_4g);
/* The same for q35. */
void pc_q35_ram_split(uint64_t ram_size, uint64_t *below_4g,
                      uint64_t *above_4g);

#endif
