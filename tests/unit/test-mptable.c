/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The MP table builder, read back the way a kernel's MP parser reads it:
 * the floating pointer found by its 16-byte-aligned signature, both
 * checksums, then every base entry walked by its type's size.
 */
#include "qemu/osdep.h"
#include "hw/i386/mptable.h"

#define BASE 0xfc000u

typedef struct Parsed {
    unsigned cpus, bsp_count, buses, ioapics, local;
    uint8_t cpu_apic[256];
    bool bsp_first;
    int isa_pin[16];            /* -1: no entry */
    unsigned isa_flags[16];
    int pci_pin[32][4];
    unsigned pci_entries;
    bool extint_lint0, nmi_lint1;
    char bus_type[2][7];
} Parsed;

static uint8_t sum(const uint8_t *p, size_t n)
{
    uint8_t s = 0;

    while (n--) {
        s += *p++;
    }
    return s;
}

static void parse(const GByteArray *b, uint32_t base, Parsed *out)
{
    const uint8_t *f = NULL, *t;
    unsigned len, count, last_type = 0;
    size_t off;

    memset(out, 0, sizeof(*out));
    memset(out->isa_pin, -1, sizeof(out->isa_pin));
    memset(out->pci_pin, -1, sizeof(out->pci_pin));
    for (off = 0; off + 16 <= b->len; off += 16) {
        if (!memcmp(b->data + off, "_MP_", 4)) {
            f = b->data + off;
            break;
        }
    }
    g_assert_nonnull(f);
    g_assert_cmpuint(f[8], ==, 1);                  /* 16 bytes */
    g_assert_cmpuint(f[9], ==, 4);                  /* spec 1.4 */
    g_assert_cmpuint(sum(f, 16), ==, 0);
    g_assert_cmpuint(f[11], ==, 0);                 /* a table, not a default */
    off = ldl_le_p(f + 4) - base;
    g_assert_cmpuint(off, <, b->len);
    t = b->data + off;
    g_assert_cmpmem(t, 4, "PCMP", 4);
    len = lduw_le_p(t + 4);
    g_assert_cmpuint(off + len, ==, b->len);
    g_assert_cmpuint(t[6], ==, 4);
    g_assert_cmpuint(sum(t, len), ==, 0);
    g_assert_cmphex(ldl_le_p(t + 36), ==, 0xfee00000u);
    g_assert_cmpuint(lduw_le_p(t + 40), ==, 0);     /* no extended table */
    count = lduw_le_p(t + 34);

    off = MPTABLE_HEADER_SIZE;
    for (unsigned i = 0; i < count; i++) {
        const uint8_t *e = t + off;
        unsigned size = e[0] == MPTABLE_ENTRY_PROCESSOR ? 20 : 8;

        g_assert_cmpuint(off + size, <=, len);
        g_assert_cmpuint(e[0], <=, MPTABLE_ENTRY_LOCAL_INTR);
        /* The specification's order: types never go back. */
        g_assert_cmpuint(e[0], >=, last_type);
        last_type = e[0];
        switch (e[0]) {
        case MPTABLE_ENTRY_PROCESSOR:
            g_assert_true(e[3] & 1);                /* enabled */
            if (e[3] & 2) {
                out->bsp_count++;
                out->bsp_first = out->cpus == 0;
            }
            out->cpu_apic[out->cpus++] = e[1];
            break;
        case MPTABLE_ENTRY_BUS:
            g_assert_cmpuint(e[1], <, 2);
            memcpy(out->bus_type[e[1]], e + 2, 6);
            out->buses++;
            break;
        case MPTABLE_ENTRY_IOAPIC:
            g_assert_cmpuint(e[3] & 1, ==, 1);
            g_assert_cmphex(ldl_le_p(e + 4), ==, 0xfec00000u);
            out->ioapics++;
            break;
        case MPTABLE_ENTRY_IO_INTR:
            g_assert_cmpuint(e[1], ==, 0);          /* vectored */
            g_assert_cmpuint(e[6], ==, 0);          /* I/O APIC 0 */
            if (e[4] == MPTABLE_BUS_ISA) {
                g_assert_cmpuint(e[5], <, 16);
                g_assert_cmpint(out->isa_pin[e[5]], ==, -1);
                out->isa_pin[e[5]] = e[7];
                out->isa_flags[e[5]] = lduw_le_p(e + 2);
            } else {
                g_assert_cmpuint(e[4], ==, MPTABLE_BUS_PCI);
                g_assert_cmpint(out->pci_pin[e[5] >> 2][e[5] & 3], ==, -1);
                out->pci_pin[e[5] >> 2][e[5] & 3] = e[7];
                g_assert_cmpuint(lduw_le_p(e + 2), ==, 0);
                out->pci_entries++;
            }
            break;
        case MPTABLE_ENTRY_LOCAL_INTR:
            g_assert_cmpuint(e[6], ==, 0xff);       /* every local APIC */
            if (e[1] == 3 && e[7] == 0) {
                out->extint_lint0 = true;
            } else if (e[1] == 1 && e[7] == 1) {
                out->nmi_lint1 = true;
            }
            out->local++;
            break;
        }
        off += size;
    }
    g_assert_cmpuint(off, ==, len);
}

static GByteArray *build(unsigned nr, const uint32_t *ids, uint16_t level,
                         unsigned *skipped)
{
    MpTablePlatform p = {
        .nr_cpus = nr, .apic_ids = ids,
        .lapic_addr = 0xfee00000u, .ioapic_addr = 0xfec00000u,
        .ioapic_id = 0, .ioapic_pins = 24,
        .isa_level_irqs = level, .pci_intx_pin_base = 16,
    };

    return mptable_build(&p, BASE, skipped);
}

static void test_one_cpu(void)
{
    uint32_t id = 0;
    unsigned skipped = 99;
    g_autoptr(GByteArray) b = build(1, &id, 1u << 9, &skipped);
    Parsed r;

    parse(b, BASE, &r);
    g_assert_cmpuint(skipped, ==, 0);
    g_assert_cmpuint(r.cpus, ==, 1);
    g_assert_cmpuint(r.bsp_count, ==, 1);
    g_assert_cmpuint(r.buses, ==, 2);
    g_assert_cmpstr(r.bus_type[MPTABLE_BUS_PCI], ==, "PCI   ");
    g_assert_cmpstr(r.bus_type[MPTABLE_BUS_ISA], ==, "ISA   ");
    g_assert_cmpuint(r.ioapics, ==, 1);
    g_assert_true(r.extint_lint0);
    g_assert_true(r.nmi_lint1);
    g_assert_cmpuint(r.local, ==, 2);
}

/* The routing the MADT and _PRT describe, entry for entry. */
static void test_routing(void)
{
    uint32_t id = 0;
    g_autoptr(GByteArray) b = build(1, &id, 1u << 9, NULL);
    Parsed r;

    parse(b, BASE, &r);
    for (unsigned irq = 0; irq < 16; irq++) {
        if (irq == 2) {
            g_assert_cmpint(r.isa_pin[irq], ==, -1);   /* the cascade */
            continue;
        }
        /* Identity, IRQ 0 included: no override, as in the MADT. */
        g_assert_cmpint(r.isa_pin[irq], ==, irq);
        g_assert_cmphex(r.isa_flags[irq], ==, irq == 9 ? 0xd : 0);
    }
    g_assert_cmpuint(r.pci_entries, ==, 128);
    for (unsigned slot = 0; slot < 32; slot++) {
        for (unsigned pin = 0; pin < 4; pin++) {
            g_assert_cmpint(r.pci_pin[slot][pin], ==,
                            16 + (slot + pin) % 4);
        }
    }
}

static void test_smp_and_x2apic_ids(void)
{
    uint32_t ids[6] = { 0, 1, 2, 4, 254, 255 };
    unsigned skipped;
    g_autoptr(GByteArray) b = build(6, ids, 0, &skipped);
    Parsed r;

    parse(b, BASE, &r);
    g_assert_cmpuint(skipped, ==, 1);
    g_assert_cmpuint(r.cpus, ==, 5);
    g_assert_cmpuint(r.bsp_count, ==, 1);
    g_assert_true(r.bsp_first);
    for (unsigned i = 0; i < 5; i++) {
        g_assert_cmpuint(r.cpu_apic[i], ==, ids[i]);
    }
    /* Without an ACPI SCI, IRQ 9 is an edge ISA interrupt like the rest. */
    g_assert_cmphex(r.isa_flags[9], ==, 0);
}

/* The largest machine's table fits the 16 KiB the pc machine gives it. */
static void test_size_bound(void)
{
    g_autofree uint32_t *ids = g_new(uint32_t, 255);
    g_autoptr(GByteArray) b = NULL;
    Parsed r;

    for (unsigned i = 0; i < 255; i++) {
        ids[i] = i;
    }
    b = build(255, ids, 0, NULL);
    parse(b, BASE, &r);
    g_assert_cmpuint(r.cpus, ==, 255);
    g_assert_cmpuint(b->len, <=, 0x4000);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/mptable/one-cpu", test_one_cpu);
    g_test_add_func("/mptable/routing", test_routing);
    g_test_add_func("/mptable/smp-and-x2apic-ids", test_smp_and_x2apic_ids);
    g_test_add_func("/mptable/size-bound", test_size_bound);
    return g_test_run();
}
