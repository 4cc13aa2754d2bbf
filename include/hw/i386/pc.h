/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The minimal x86 "pc" machine.  RAM sits at 0; whatever does not fit
 * below the 3.5 GiB PCI hole continues at 4 GiB.
 */
#ifndef HW_I386_PC_H
#define HW_I386_PC_H

#include <stdint.h>
#include "qemu/typedefs.h"
#include "hw/boards.h"
#include "system/memory.h"

#define TYPE_PC_MACHINE MACHINE_TYPE_NAME("pc")
/* Slot 1 function 0 (hw/i386/piix3.c); -usb adds the UHCI at 1.2. */
#define TYPE_PIIX3_PCI_DEVICE "PIIX3"
#define PC_PIIX3_DEVFN 0x08

/* Top of low RAM: [PC_LOWMEM_LIMIT, 4 GiB) is left for MMIO. */
#define PC_LOWMEM_LIMIT 0xe0000000ULL
#define PC_HIGHMEM_BASE 0x100000000ULL

typedef struct PCMachineState {
    MachineState parent_obj;

    uint64_t below_4g_mem_size;
    uint64_t above_4g_mem_size;
    MemoryRegion ram_below_4g;  /* alias of ms->ram at 0 */
    MemoryRegion ram_above_4g;  /* alias of the rest at 4 GiB, if any */
} PCMachineState;

typedef struct PCMachineClass {
    MachineClass parent_class;
} PCMachineClass;

#define PC_MACHINE(obj) OBJECT_CHECK(PCMachineState, (obj), TYPE_PC_MACHINE)

/* Splits ram_size into the parts below and above 4 GiB. */
void pc_ram_split(uint64_t ram_size, uint64_t *below_4g, uint64_t *above_4g);

#endif
