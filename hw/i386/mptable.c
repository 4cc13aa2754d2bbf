/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MP table builder (Intel MultiProcessor Specification 1.4): pure, from
 * an MpTablePlatform to bytes; hw/i386/pc.c places them.
 *
 * Layout: the 16-byte floating pointer "_MP_", then the "PCMP" header
 * and its base entries in the order the specification asks for:
 * processors, buses, the I/O APIC, I/O interrupt assignments, local
 * interrupt assignments.  Bus 0 is PCI (the root bus, so PCI source IRQs
 * carry the slot), bus 1 is ISA.
 */
#include "qemu/osdep.h"
#include "hw/i386/mptable.h"

#define MP_SPEC_REV             4       /* 1.4 */
#define MP_LAPIC_VERSION        0x14
#define MP_IOAPIC_VERSION       0x11
#define MP_CPU_ENABLED          0x01
#define MP_CPU_BSP              0x02
/* A P6-family signature with FPU and APIC; kernels read the APIC fields. */
#define MP_CPU_SIGNATURE        0x00000600u
#define MP_CPU_FEATURES         ((1u << 0) | (1u << 9))
#define MP_INTR_INT             0
#define MP_INTR_NMI             1
#define MP_INTR_EXTINT          3
/* I/O interrupt flags: polarity bits 1:0, trigger mode bits 3:2. */
#define MP_FLAGS_CONFORMS       0x0
#define MP_FLAGS_HIGH_LEVEL     (0x1 | 0xc)
#define MP_ISA_IRQS             16
#define MP_PCI_SLOTS            32

static void put(GByteArray *b, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        uint8_t c = v >> (8 * i);

        g_byte_array_append(b, &c, 1);
    }
}

static void put_str(GByteArray *b, const char *s, unsigned n)
{
    size_t len = strlen(s);

    for (unsigned i = 0; i < n; i++) {
        uint8_t c = i < len ? s[i] : ' ';

        g_byte_array_append(b, &c, 1);
    }
}

static uint8_t checksum(const uint8_t *p, size_t n)
{
    uint8_t sum = 0;

    while (n--) {
        sum += *p++;
    }
    return -sum;
}

static void put_io_intr(GByteArray *b, unsigned type, unsigned flags,
                        unsigned bus, unsigned bus_irq, unsigned ioapic,
                        unsigned pin)
{
    put(b, MPTABLE_ENTRY_IO_INTR, 1);
    put(b, type, 1);
    put(b, flags, 2);
    put(b, bus, 1);
    put(b, bus_irq, 1);
    put(b, ioapic, 1);
    put(b, pin, 1);
}

/* A local interrupt assignment to pin @lint of every local APIC. */
static void put_local_intr(GByteArray *b, unsigned type, unsigned lint)
{
    put(b, MPTABLE_ENTRY_LOCAL_INTR, 1);
    put(b, type, 1);
    put(b, MP_FLAGS_CONFORMS, 2);
    put(b, MPTABLE_BUS_ISA, 1);
    put(b, 0, 1);
    put(b, 0xff, 1);
    put(b, lint, 1);
}

GByteArray *mptable_build(const MpTablePlatform *p, uint32_t base,
                          unsigned *skipped)
{
    GByteArray *b = g_byte_array_new();
    unsigned entries = 0, left_out = 0;
    size_t table;

    /* Floating pointer: the table follows it, no default configuration. */
    put_str(b, "_MP_", 4);
    put(b, base + MPTABLE_FLOATING_SIZE, 4);
    put(b, 1, 1);                       /* length in 16-byte units */
    put(b, MP_SPEC_REV, 1);
    put(b, 0, 1);                       /* checksum, below */
    put(b, 0, 5);                       /* features: table present, no IMCR */
    b->data[10] = checksum(b->data, MPTABLE_FLOATING_SIZE);

    table = b->len;
    put_str(b, "PCMP", 4);
    put(b, 0, 2);                       /* base table length, below */
    put(b, MP_SPEC_REV, 1);
    put(b, 0, 1);                       /* checksum, below */
    put_str(b, "CONDUIT", 8);
    put_str(b, "pc", 12);
    put(b, 0, 4);                       /* no OEM table */
    put(b, 0, 2);
    put(b, 0, 2);                       /* entry count, below */
    put(b, p->lapic_addr, 4);
    put(b, 0, 2);                       /* no extended table */
    put(b, 0, 1);
    put(b, 0, 1);

    for (unsigned i = 0; i < p->nr_cpus; i++) {
        if (p->apic_ids[i] >= 0xff) {
            left_out++;
            continue;
        }
        put(b, MPTABLE_ENTRY_PROCESSOR, 1);
        put(b, p->apic_ids[i], 1);
        put(b, MP_LAPIC_VERSION, 1);
        put(b, MP_CPU_ENABLED | (i == 0 ? MP_CPU_BSP : 0), 1);
        put(b, MP_CPU_SIGNATURE, 4);
        put(b, MP_CPU_FEATURES, 4);
        put(b, 0, 8);
        entries++;
    }

    put(b, MPTABLE_ENTRY_BUS, 1);
    put(b, MPTABLE_BUS_PCI, 1);
    put_str(b, "PCI", 6);
    put(b, MPTABLE_ENTRY_BUS, 1);
    put(b, MPTABLE_BUS_ISA, 1);
    put_str(b, "ISA", 6);
    entries += 2;

    put(b, MPTABLE_ENTRY_IOAPIC, 1);
    put(b, p->ioapic_id, 1);
    put(b, MP_IOAPIC_VERSION, 1);
    put(b, 1, 1);                       /* usable */
    put(b, p->ioapic_addr, 4);
    entries++;

    /* ISA IRQ n on pin n, as the MADT has it (no override for IRQ 0). */
    for (unsigned irq = 0; irq < MP_ISA_IRQS && irq < p->ioapic_pins;
         irq++) {
        if (irq == 2) {
            continue;                   /* the cascade: never an interrupt */
        }
        put_io_intr(b, MP_INTR_INT,
                    p->isa_level_irqs & (1u << irq) ? MP_FLAGS_HIGH_LEVEL
                                                    : MP_FLAGS_CONFORMS,
                    MPTABLE_BUS_ISA, irq, p->ioapic_id, irq);
        entries++;
    }
    /* Root-bus INTx (level, active low: what PCI conforms to). */
    for (unsigned slot = 0; slot < MP_PCI_SLOTS; slot++) {
        for (unsigned pin = 0; pin < 4; pin++) {
            unsigned gsi = p->pci_intx_pin_base + (slot + pin) % 4;

            if (gsi >= p->ioapic_pins) {
                continue;
            }
            put_io_intr(b, MP_INTR_INT, MP_FLAGS_CONFORMS, MPTABLE_BUS_PCI,
                        slot << 2 | pin, p->ioapic_id, gsi);
            entries++;
        }
    }

    /* The 8259 on LINT0 of every local APIC, NMI on LINT1. */
    put_local_intr(b, MP_INTR_EXTINT, 0);
    put_local_intr(b, MP_INTR_NMI, 1);
    entries += 2;

    b->data[table + 4] = (b->len - table) & 0xff;
    b->data[table + 5] = (b->len - table) >> 8;
    b->data[table + 34] = entries & 0xff;
    b->data[table + 35] = entries >> 8;
    b->data[table + 7] = checksum(b->data + table, b->len - table);
    if (skipped) {
        *skipped = left_out;
    }
    return b;
}
