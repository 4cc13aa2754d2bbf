/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Intel MultiProcessor Specification 1.4 table of the pc machine's
 * direct -kernel path, where Conduit plays the firmware: a kernel booted
 * with acpi=off (or one without ACPI) finds the processors, the I/O APIC
 * and the interrupt routing here, as it would in the table SeaBIOS
 * leaves under QEMU, instead of falling back to virtual-wire mode.
 */
#ifndef HW_I386_MPTABLE_H
#define HW_I386_MPTABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

/* What the builder needs to know of the machine: nothing else. */
typedef struct MpTablePlatform {
    unsigned nr_cpus;               /* present at boot; the first is the BSP */
    const uint32_t *apic_ids;       /* nr_cpus of them */
    uint32_t lapic_addr;
    uint32_t ioapic_addr;
    uint8_t ioapic_id;
    uint8_t ioapic_pins;
    /* ISA IRQ n is I/O APIC pin n; these ISA IRQs are level, active high. */
    uint16_t isa_level_irqs;
    /* Root-bus PCI INTx: pin p of slot s is I/O APIC pin base + (s+p)%4. */
    uint8_t pci_intx_pin_base;
} MpTablePlatform;

/*
 * Floating pointer (16 bytes) at @base, the configuration table right
 * after it: both with their checksums, the table's address absolute.
 * Processors with an APIC ID the format cannot hold (255 and up) are
 * left out; *skipped says how many (NULL: not wanted).
 */
GByteArray *mptable_build(const MpTablePlatform *p, uint32_t base,
                          unsigned *skipped);

/* Entry types and sizes of the configuration table (MP spec 4.3). */
#define MPTABLE_FLOATING_SIZE       16
#define MPTABLE_HEADER_SIZE         44
#define MPTABLE_ENTRY_PROCESSOR     0
#define MPTABLE_ENTRY_BUS           1
#define MPTABLE_ENTRY_IOAPIC        2
#define MPTABLE_ENTRY_IO_INTR       3
#define MPTABLE_ENTRY_LOCAL_INTR    4
#define MPTABLE_BUS_PCI             0
#define MPTABLE_BUS_ISA             1

#endif
