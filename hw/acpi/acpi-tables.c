/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ACPI tables for the pc machine (layouts from ACPI 6.5 chapter 5 and the
 * PCI Firmware Specification 3.3 for MCFG and _OSC).  The platform is
 * "full" ACPI hardware with the smallest register set: PM1a event and
 * control blocks and a PM timer, no GPE block; the power button is the
 * fixed-feature one, so system_powerdown is one status bit and the SCI.
 */
#include "qemu/osdep.h"
#include "hw/acpi/acpi-tables.h"
#include "hw/acpi/aml-build.h"

#define ACPI_HEADER_SIZE 36
#define ACPI_RSDP_SIZE 36
#define ACPI_FACS_SIZE 64
#define ACPI_FADT_SIZE 276

/* FADT flags (5.2.9, table 5.10). */
#define FADT_F_WBINVD           (1u << 0)
#define FADT_F_PROC_C1          (1u << 2)
#define FADT_F_SLP_BUTTON       (1u << 5)   /* no fixed sleep button */
#define FADT_F_TMR_VAL_EXT      (1u << 8)
#define FADT_F_RESET_REG_SUP    (1u << 10)
/* IA-PC boot architecture flags (5.2.9.3). */
#define FADT_IAPC_LEGACY_DEVICES (1u << 0)
#define FADT_IAPC_8042 (1u << 1)
#define FADT_IAPC_VGA_NOT_PRESENT (1u << 2)
#define FADT_IAPC_ASPM_CONTROLS (1u << 4)

/* MADT structure types (5.2.12). */
#define MADT_LOCAL_APIC         0
#define MADT_IO_APIC            1
#define MADT_INT_SRC_OVERRIDE   2
#define MADT_LOCAL_APIC_NMI     4
#define MADT_PCAT_COMPAT        1
#define MADT_POLARITY_HIGH      0x1
#define MADT_TRIGGER_LEVEL      0xc

/* _OSC for PCI host bridges (PCI Firmware 3.3, 4.5). */
#define PCI_OSC_UUID "33DB4D5B-1FF7-401C-9657-7441C03DD766"
#define PCI_OSC_UNRECOGNIZED_UUID 0x4
#define PCI_OSC_UNRECOGNIZED_REV 0x8
#define PCI_OSC_CAPS_MASKED 0x10
/* Native PCIe hot-plug, PME and the PCIe capability structure. */
#define PCI_OSC_GRANTED 0x15

uint8_t acpi_checksum(const uint8_t *data, size_t len)
{
    uint8_t sum = 0;

    for (size_t i = 0; i < len; i++) {
        sum += data[i];
    }
    return sum;
}

static void put_le(GByteArray *b, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++) {
        uint8_t c = v >> (8 * i);

        g_byte_array_append(b, &c, 1);
    }
}

static void set_le(GByteArray *b, size_t off, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++) {
        b->data[off + i] = v >> (8 * i);
    }
}

static void put_bytes(GByteArray *b, const char *s, size_t len)
{
    g_byte_array_append(b, (const guint8 *)s, len);
}

/* The common header (5.2.6); length and checksum come in table_finish. */
static GByteArray *table_start(const char *sig, uint8_t rev)
{
    GByteArray *b = g_byte_array_new();

    put_bytes(b, sig, 4);
    put_le(b, 0, 4);
    put_le(b, rev, 1);
    put_le(b, 0, 1);
    put_bytes(b, ACPI_OEM_ID, 6);
    put_bytes(b, ACPI_OEM_TABLE_ID, 8);
    put_le(b, 1, 4);
    put_bytes(b, ACPI_CREATOR_ID, 4);
    put_le(b, 1, 4);
    return b;
}

static GByteArray *table_finish(GByteArray *b)
{
    set_le(b, 4, b->len, 4);
    b->data[9] = 0;
    b->data[9] = -acpi_checksum(b->data, b->len);
    return b;
}

/* Generic Address Structure (5.2.3.2) for a system I/O block. */
static void put_gas_io(GByteArray *b, uint16_t port, uint8_t bits)
{
    put_le(b, port ? 1 : 0, 1);     /* address space: system I/O */
    put_le(b, port ? bits : 0, 1);
    put_le(b, 0, 1);                /* bit offset */
    put_le(b, 0, 1);                /* access size: legacy */
    put_le(b, port, 8);
}

/* ---- DSDT ---- */

static Aml *dsdt_pci_crs(const AcpiPlatform *p)
{
    Aml *crs = aml_resource_template();

    aml_append(crs, aml_word_bus_number(0, p->ecam_last_bus));
    aml_append(crs, aml_io(0xcf8, 0xcf8, 1, 8));
    aml_append(crs, aml_word_io(0x0000, 0x0cf7));
    aml_append(crs, aml_word_io(0x0d00, 0xffff));
    aml_append(crs, aml_dword_memory(p->mmio32_base, p->mmio32_end - 1));
    if (p->mmio64_end > p->mmio64_base) {
        aml_append(crs, aml_qword_memory(p->mmio64_base, p->mmio64_end - 1));
    }
    return crs;
}

/*
 * INTx routing on the root bus: the host bridge swizzles pin p of slot s
 * onto line (s + p) % 4, and line n is GSI 16 + n.
 */
static Aml *dsdt_pci_prt(void)
{
    Aml *prt = aml_package();

    for (unsigned slot = 0; slot < 32; slot++) {
        for (unsigned pin = 0; pin < 4; pin++) {
            Aml *e = aml_package();

            aml_append(e, aml_int((uint64_t)slot << 16 | 0xffff));
            aml_append(e, aml_int(pin));
            aml_append(e, aml_int(0));
            aml_append(e, aml_int(ACPI_PCI_INTX_GSI_BASE + (slot + pin) % 4));
            aml_append(prt, e);
        }
    }
    return prt;
}

/*
 * Method (_OSC, 4): for the PCI UUID, grant the OS native control of
 * PCIe hot-plug, PME and the capability structure and nothing else: if
 * it asked for more, say the capabilities were masked; flag a revision
 * other than 1 as unrecognized.  Other UUIDs are refused.
 */
static Aml *dsdt_pci_osc(void)
{
    Aml *osc = aml_method("_OSC", 4, false);
    Aml *ifuuid, *ifrev, *ifmask, *els;

    aml_append(osc, aml_create_dword_field(aml_arg(3), aml_int(0), "CDW1"));
    ifuuid = aml_if(aml_lequal(aml_arg(0), aml_touuid(PCI_OSC_UUID)));
    aml_append(ifuuid, aml_create_dword_field(aml_arg(3), aml_int(8),
                                              "CDW3"));
    aml_append(ifuuid, aml_and(aml_name("CDW3"), aml_int(PCI_OSC_GRANTED),
                               aml_local(0)));
    ifrev = aml_if(aml_lnot(aml_lequal(aml_arg(1), aml_int(1))));
    aml_append(ifrev, aml_or(aml_name("CDW1"),
                             aml_int(PCI_OSC_UNRECOGNIZED_REV),
                             aml_name("CDW1")));
    aml_append(ifuuid, ifrev);
    ifmask = aml_if(aml_lnot(aml_lequal(aml_name("CDW3"), aml_local(0))));
    aml_append(ifmask, aml_or(aml_name("CDW1"), aml_int(PCI_OSC_CAPS_MASKED),
                              aml_name("CDW1")));
    aml_append(ifuuid, ifmask);
    aml_append(ifuuid, aml_store(aml_local(0), aml_name("CDW3")));
    aml_append(osc, ifuuid);
    els = aml_else();
    aml_append(els, aml_or(aml_name("CDW1"),
                           aml_int(PCI_OSC_UNRECOGNIZED_UUID),
                           aml_name("CDW1")));
    aml_append(osc, els);
    aml_append(osc, aml_return(aml_arg(3)));
    return osc;
}

static Aml *dsdt_pci0(const AcpiPlatform *p)
{
    Aml *dev = aml_device("PCI0");

    aml_append(dev, aml_name_decl("_HID", aml_eisaid("PNP0A08")));
    aml_append(dev, aml_name_decl("_CID", aml_eisaid("PNP0A03")));
    aml_append(dev, aml_name_decl("_SEG", aml_int(0)));
    aml_append(dev, aml_name_decl("_BBN", aml_int(0)));
    aml_append(dev, aml_name_decl("_UID", aml_int(0)));
    aml_append(dev, aml_name_decl("_CRS", dsdt_pci_crs(p)));
    aml_append(dev, aml_name_decl("_PRT", dsdt_pci_prt()));
    aml_append(dev, dsdt_pci_osc());
    return dev;
}

static Aml *dsdt_isa_device(const char *name, const char *hid, int uid,
                            uint16_t port, uint8_t len, unsigned irq)
{
    Aml *dev = aml_device(name);
    Aml *crs = aml_resource_template();

    aml_append(dev, aml_name_decl("_HID", aml_eisaid(hid)));
    if (uid >= 0) {
        aml_append(dev, aml_name_decl("_UID", aml_int(uid)));
    }
    aml_append(crs, aml_io(port, port, 1, len));
    aml_append(crs, aml_irq_no_flags(irq));
    aml_append(dev, aml_name_decl("_CRS", crs));
    return dev;
}

/*
 * The i8042 as two devices, as PC firmware describes it: the keyboard
 * (its data and status ports, IRQ 1) and the PS/2 mouse (IRQ 12 only).
 */
static void dsdt_i8042(Aml *scope)
{
    Aml *kbd = aml_device("KBD");
    Aml *mou = aml_device("MOU");
    Aml *crs = aml_resource_template();

    aml_append(kbd, aml_name_decl("_HID", aml_eisaid("PNP0303")));
    aml_append(crs, aml_io(0x60, 0x60, 1, 1));
    aml_append(crs, aml_io(0x64, 0x64, 1, 1));
    aml_append(crs, aml_irq_no_flags(1));
    aml_append(kbd, aml_name_decl("_CRS", crs));
    aml_append(scope, kbd);

    crs = aml_resource_template();
    aml_append(mou, aml_name_decl("_HID", aml_eisaid("PNP0F13")));
    aml_append(crs, aml_irq_no_flags(12));
    aml_append(mou, aml_name_decl("_CRS", crs));
    aml_append(scope, mou);
}

/*
 * The ECAM window is not part of PCI0's _CRS: a motherboard resource
 * device reserves it, so the OS keeps it out of its address allocation
 * (PCI Firmware 3.3, 4.1.2).
 */
static Aml *dsdt_ecam_reservation(const AcpiPlatform *p)
{
    Aml *dev = aml_device("PCMR");
    Aml *crs = aml_resource_template();

    aml_append(dev, aml_name_decl("_HID", aml_eisaid("PNP0C02")));
    aml_append(dev, aml_name_decl("_UID", aml_int(1)));
    aml_append(crs, aml_memory32_fixed(p->ecam_base, p->ecam_size, false));
    aml_append(dev, aml_name_decl("_CRS", crs));
    return dev;
}

/*
 * A processor device (ACPI0007) per possible CPU, its _UID the MADT's
 * ACPI processor UID; those not plugged in read as absent.
 */
static void dsdt_processors(Aml *sb, const AcpiPlatform *p)
{
    for (unsigned i = 0; i < p->max_cpus && i < 0x1000; i++) {
        g_autofree char *name = g_strdup_printf("C%03X", i);
        Aml *dev = aml_device(name);

        aml_append(dev, aml_name_decl("_HID", aml_string("ACPI0007")));
        aml_append(dev, aml_name_decl("_UID", aml_int(i)));
        aml_append(dev, aml_name_decl("_STA",
                                      aml_int(i < p->nr_cpus ? 0xf : 0)));
        aml_append(sb, dev);
    }
}

GByteArray *acpi_build_dsdt(const AcpiPlatform *p)
{
    GByteArray *b = table_start("DSDT", 2);
    Aml *body = aml_list();
    Aml *sb = aml_scope("\\_SB");
    Aml *s5 = aml_package();
    GByteArray *aml;

    aml_append(s5, aml_int(ACPI_S5_SLP_TYP));
    aml_append(s5, aml_int(ACPI_S5_SLP_TYP));
    aml_append(s5, aml_int(0));
    aml_append(s5, aml_int(0));
    aml_append(body, aml_name_decl("\\_S5", s5));
    if (p->s4) {
        Aml *s4 = aml_package();

        aml_append(s4, aml_int(ACPI_S4_SLP_TYP));
        aml_append(s4, aml_int(ACPI_S4_SLP_TYP));
        aml_append(s4, aml_int(0));
        aml_append(s4, aml_int(0));
        aml_append(body, aml_name_decl("\\_S4", s4));
    }

    aml_append(sb, dsdt_pci0(p));
    for (int i = 0; i < 4; i++) {
        if (p->serial[i]) {
            g_autofree char *name = g_strdup_printf("COM%d", i + 1);

            aml_append(sb, dsdt_isa_device(name, "PNP0501", i + 1,
                                           p->serial_iobase[i], 8,
                                           p->serial_irq[i]));
        }
    }
    if (p->rtc) {
        aml_append(sb, dsdt_isa_device("RTC", "PNP0B00", -1, 0x70, 8, 8));
    }
    if (p->i8042) {
        dsdt_i8042(sb);
    }
    if (p->ecam_size) {
        aml_append(sb, dsdt_ecam_reservation(p));
    }
    dsdt_processors(sb, p);
    aml_append(body, sb);

    aml = aml_serialize(body);
    g_byte_array_append(b, aml->data, aml->len);
    g_byte_array_unref(aml);
    return table_finish(b);
}

/* ---- FADT, FACS ---- */

GByteArray *acpi_build_fadt(const AcpiPlatform *p, uint64_t facs,
                            uint64_t dsdt)
{
    GByteArray *b = table_start("FACP", 6);
    const uint16_t pm = p->pm_base ? p->pm_base : ACPI_PM_BASE;
    const uint16_t evt = pm + ACPI_PM1_EVT_OFFSET;
    const uint16_t cnt = pm + ACPI_PM1_CNT_OFFSET;
    const uint16_t tmr = pm + ACPI_PM_TMR_OFFSET;
    /* The FACS lies below 4 GiB: FIRMWARE_CTRL only (ACPI 6.5 5.2.9). */
    const bool facs32 = facs < 0x100000000ULL;

    put_le(b, facs32 ? facs : 0, 4);    /* 36 FIRMWARE_CTRL */
    put_le(b, dsdt, 4);             /* 40 DSDT */
    put_le(b, 0, 1);                /* 44 reserved */
    put_le(b, 0, 1);                /* 45 preferred PM profile: unspecified */
    put_le(b, ACPI_SCI_IRQ, 2);     /* 46 SCI_INT */
    put_le(b, 0, 4);                /* 48 SMI_CMD: always in ACPI mode */
    put_le(b, 0, 4);                /* 52 ACPI_ENABLE .. PSTATE_CNT */
    put_le(b, evt, 4);              /* 56 PM1a_EVT_BLK */
    put_le(b, 0, 4);                /* 60 PM1b_EVT_BLK */
    put_le(b, cnt, 4);              /* 64 PM1a_CNT_BLK */
    put_le(b, 0, 4);                /* 68 PM1b_CNT_BLK */
    put_le(b, 0, 4);                /* 72 PM2_CNT_BLK */
    put_le(b, tmr, 4);              /* 76 PM_TMR_BLK */
    put_le(b, p->gpe0_base, 4);     /* 80 GPE0_BLK */
    put_le(b, 0, 4);                /* 84 GPE1_BLK */
    put_le(b, 4, 1);                /* 88 PM1_EVT_LEN */
    put_le(b, 2, 1);                /* 89 PM1_CNT_LEN */
    put_le(b, 0, 1);                /* 90 PM2_CNT_LEN */
    put_le(b, 4, 1);                /* 91 PM_TMR_LEN */
    put_le(b, p->gpe0_base ? p->gpe0_len : 0, 1);  /* 92 GPE0_BLK_LEN */
    put_le(b, 0, 3);                /* 93 GPE1_BLK_LEN, GPE1_BASE, CST_CNT */
    put_le(b, 0x0fff, 2);           /* 96 P_LVL2_LAT: no C2 */
    put_le(b, 0x0fff, 2);           /* 98 P_LVL3_LAT: no C3 */
    put_le(b, 0, 4);                /* 100 FLUSH_SIZE, FLUSH_STRIDE */
    put_le(b, 0, 2);                /* 104 DUTY_OFFSET, DUTY_WIDTH */
    put_le(b, 0, 2);                /* 106 DAY_ALRM, MON_ALRM */
    put_le(b, 0x32, 1);             /* 108 CENTURY: the CMOS byte */
    /*
     * 109: ISA devices, the 8042 where the board has one (Linux does not
     * probe it otherwise), no VGA, OS must not touch ASPM.
     */
    put_le(b, FADT_IAPC_LEGACY_DEVICES | (p->i8042 ? FADT_IAPC_8042 : 0) |
           FADT_IAPC_VGA_NOT_PRESENT | FADT_IAPC_ASPM_CONTROLS, 2);
    put_le(b, 0, 1);                /* 111 reserved */
    put_le(b, FADT_F_WBINVD | FADT_F_PROC_C1 | FADT_F_SLP_BUTTON |
           FADT_F_TMR_VAL_EXT | FADT_F_RESET_REG_SUP, 4);  /* 112 flags */
    put_gas_io(b, ACPI_RESET_PORT, 8);  /* 116 RESET_REG: the chipset's */
    put_le(b, ACPI_RESET_VALUE, 1); /* 128 RESET_VALUE: hard reset */
    put_le(b, 0, 2);                /* 129 ARM_BOOT_ARCH */
    put_le(b, 5, 1);                /* 131 FADT minor version (6.5) */
    put_le(b, facs32 ? 0 : facs, 8);    /* 132 X_FIRMWARE_CTRL */
    put_le(b, dsdt, 8);             /* 140 X_DSDT */
    put_gas_io(b, evt, 32);         /* 148 X_PM1a_EVT_BLK */
    put_gas_io(b, 0, 0);            /* 160 X_PM1b_EVT_BLK */
    put_gas_io(b, cnt, 16);         /* 172 X_PM1a_CNT_BLK */
    put_gas_io(b, 0, 0);            /* 184 X_PM1b_CNT_BLK */
    put_gas_io(b, 0, 0);            /* 196 X_PM2_CNT_BLK */
    put_gas_io(b, tmr, 32);         /* 208 X_PM_TMR_BLK */
    put_gas_io(b, p->gpe0_base, p->gpe0_base ? p->gpe0_len * 8 : 0);
                                    /* 220 X_GPE0_BLK */
    put_gas_io(b, 0, 0);            /* 232 X_GPE1_BLK */
    put_gas_io(b, 0, 0);            /* 244 SLEEP_CONTROL_REG */
    put_gas_io(b, 0, 0);            /* 256 SLEEP_STATUS_REG */
    put_bytes(b, "CONDUIT", 8);     /* 268 hypervisor vendor identity */
    g_assert(b->len == ACPI_FADT_SIZE);
    return table_finish(b);
}

/*
 * Grows b to len bytes of which the new ones are zero.  The blob goes to
 * guest RAM as a whole: g_byte_array_set_size() alone would hand the
 * guest whatever the heap held there (pointers: an ASLR leak).
 */
static void blob_pad(GByteArray *b, size_t len)
{
    size_t old = b->len;

    g_assert(len >= old);
    g_byte_array_set_size(b, len);
    memset(b->data + old, 0, len - old);
}

static GByteArray *acpi_build_facs(void)
{
    GByteArray *b = g_byte_array_new();

    put_bytes(b, "FACS", 4);
    put_le(b, ACPI_FACS_SIZE, 4);
    put_le(b, 0, 4);                /* hardware signature */
    put_le(b, 0, 4);                /* firmware waking vector */
    put_le(b, 0, 4);                /* global lock */
    put_le(b, 0, 4);                /* flags */
    put_le(b, 0, 8);                /* X firmware waking vector */
    put_le(b, 2, 1);                /* version */
    blob_pad(b, ACPI_FACS_SIZE);
    return b;
}

/* ---- MADT ---- */

GByteArray *acpi_build_madt(const AcpiPlatform *p)
{
    GByteArray *b = table_start("APIC", 3);

    put_le(b, ACPI_LAPIC_ADDR, 4);
    put_le(b, MADT_PCAT_COMPAT, 4);
    for (unsigned i = 0; i < p->max_cpus; i++) {
        put_le(b, MADT_LOCAL_APIC, 1);
        put_le(b, 8, 1);
        put_le(b, i, 1);                    /* ACPI processor UID */
        put_le(b, p->apic_ids[i], 1);
        put_le(b, i < p->nr_cpus ? 1 : 0, 4);   /* enabled */
    }
    put_le(b, MADT_IO_APIC, 1);
    put_le(b, 12, 1);
    put_le(b, 0, 1);                        /* I/O APIC ID */
    put_le(b, 0, 1);
    put_le(b, ACPI_IOAPIC_ADDR, 4);
    put_le(b, 0, 4);                        /* GSI base */
    /* The SCI is level-triggered, active high, on its ISA number. */
    put_le(b, MADT_INT_SRC_OVERRIDE, 1);
    put_le(b, 10, 1);
    put_le(b, 0, 1);                        /* bus: ISA */
    put_le(b, ACPI_SCI_IRQ, 1);
    put_le(b, ACPI_SCI_IRQ, 4);
    put_le(b, MADT_POLARITY_HIGH | MADT_TRIGGER_LEVEL, 2);
    /* NMI on LINT1 of every processor. */
    put_le(b, MADT_LOCAL_APIC_NMI, 1);
    put_le(b, 6, 1);
    put_le(b, 0xff, 1);
    put_le(b, 0, 2);
    put_le(b, 1, 1);
    return table_finish(b);
}

/* ---- MCFG ---- */

GByteArray *acpi_build_mcfg(const AcpiPlatform *p)
{
    GByteArray *b = table_start("MCFG", 1);

    put_le(b, 0, 8);                /* reserved */
    put_le(b, p->ecam_base, 8);
    put_le(b, 0, 2);                /* segment */
    put_le(b, 0, 1);                /* first bus */
    put_le(b, p->ecam_last_bus, 1);
    put_le(b, 0, 4);
    return table_finish(b);
}

/* ---- SRAT and SLIT ---- */

#define SRAT_CPU_APIC           0
#define SRAT_MEMORY             1
#define SRAT_CPU_X2APIC         2
#define SRAT_ENABLED            (1u << 0)

GByteArray *acpi_build_srat(const AcpiPlatform *p)
{
    GByteArray *b = table_start("SRAT", 3);

    put_le(b, 1, 4);                /* reserved, 1 for compatibility */
    put_le(b, 0, 8);
    for (unsigned i = 0; i < p->max_cpus; i++) {
        uint32_t node = p->cpu_node[i];
        /* Absent ones too: a CPU plugged later has its node. */
        uint32_t flags = SRAT_ENABLED;
        if (p->apic_ids[i] < 0xff) {
            put_le(b, SRAT_CPU_APIC, 1);
            put_le(b, 16, 1);
            put_le(b, node & 0xff, 1);
            put_le(b, p->apic_ids[i], 1);
            put_le(b, flags, 4);
            put_le(b, 0, 1);        /* local SAPIC EID */
            put_le(b, node >> 8, 3);
            put_le(b, 0, 4);        /* clock domain */
        } else {
            put_le(b, SRAT_CPU_X2APIC, 1);
            put_le(b, 24, 1);
            put_le(b, 0, 2);
            put_le(b, node, 4);
            put_le(b, p->apic_ids[i], 4);
            put_le(b, flags, 4);
            put_le(b, 0, 4);
            put_le(b, 0, 4);
        }
    }
    for (unsigned i = 0; i < p->nr_numa_mem; i++) {
        put_le(b, SRAT_MEMORY, 1);
        put_le(b, 40, 1);
        put_le(b, p->numa_mem[i].node, 4);
        put_le(b, 0, 2);
        put_le(b, p->numa_mem[i].base, 8);
        put_le(b, p->numa_mem[i].size, 8);
        put_le(b, 0, 4);
        put_le(b, SRAT_ENABLED, 4);
        put_le(b, 0, 8);
    }
    return table_finish(b);
}

GByteArray *acpi_build_slit(const AcpiPlatform *p)
{
    GByteArray *b = table_start("SLIT", 1);

    put_le(b, p->numa_nodes, 8);
    for (unsigned i = 0; i < p->numa_nodes * p->numa_nodes; i++) {
        put_le(b, p->numa_distance[i], 1);
    }
    return table_finish(b);
}

/* ---- layout ---- */

static size_t blob_add(AcpiTables *t, GByteArray *table, size_t align,
                       bool checksummed)
{
    GByteArray *blob = t->blob;
    size_t off = QEMU_ALIGN_UP(blob->len, align);

    blob_pad(blob, off);
    g_byte_array_append(blob, table->data, table->len);
    if (checksummed) {
        AcpiChecksum c = { off, table->len, off + 9 };

        g_array_append_val(t->checksums, c);
    }
    g_byte_array_unref(table);
    return off;
}

/* Records that the size-byte field at off holds base + a blob offset. */
static void blob_pointer(AcpiTables *t, size_t off, uint8_t size)
{
    AcpiPointer ptr = { off, size };

    g_array_append_val(t->pointers, ptr);
}

void acpi_build_tables(const AcpiPlatform *p, uint64_t base, AcpiTables *t)
{
    GByteArray *xsdt, *rsdt;
    size_t entries[5];
    size_t nr_entries = 3;
    uint8_t *r;
    size_t fadt_x_facs;

    g_assert(base % 16 == 0 && base < 0x100000000ULL);
    memset(t, 0, sizeof(*t));
    t->base = base;
    t->blob = g_byte_array_new();
    t->pointers = g_array_new(false, false, sizeof(AcpiPointer));
    t->checksums = g_array_new(false, false, sizeof(AcpiChecksum));
    t->rsdp = 0;
    blob_pad(t->blob, ACPI_RSDP_SIZE);
    t->facs = blob_add(t, acpi_build_facs(), 64, false);
    t->tables_start = t->facs;
    t->dsdt = blob_add(t, acpi_build_dsdt(p), 16, true);
    t->fadt = blob_add(t, acpi_build_fadt(p, base + t->facs,
                                          base + t->dsdt), 16, true);
    fadt_x_facs = ldq_le_p(t->blob->data + t->fadt +
                           ACPI_FADT_X_FIRMWARE_CTRL);
    blob_pointer(t, t->fadt + (fadt_x_facs ? ACPI_FADT_X_FIRMWARE_CTRL
                                           : ACPI_FADT_FIRMWARE_CTRL),
                 fadt_x_facs ? 8 : 4);
    blob_pointer(t, t->fadt + ACPI_FADT_DSDT, 4);
    blob_pointer(t, t->fadt + ACPI_FADT_X_DSDT, 8);
    t->madt = blob_add(t, acpi_build_madt(p), 16, true);
    t->mcfg = blob_add(t, acpi_build_mcfg(p), 16, true);
    entries[0] = t->fadt;
    entries[1] = t->madt;
    entries[2] = t->mcfg;
    if (p->numa_nodes) {
        t->srat = blob_add(t, acpi_build_srat(p), 16, true);
        t->slit = blob_add(t, acpi_build_slit(p), 16, true);
        entries[nr_entries++] = t->srat;
        entries[nr_entries++] = t->slit;
    }

    xsdt = table_start("XSDT", 1);
    rsdt = table_start("RSDT", 1);
    for (size_t i = 0; i < nr_entries; i++) {
        put_le(xsdt, base + entries[i], 8);
        put_le(rsdt, base + entries[i], 4);
    }
    t->xsdt = blob_add(t, table_finish(xsdt), 16, true);
    t->rsdt = blob_add(t, table_finish(rsdt), 16, true);
    for (size_t i = 0; i < nr_entries; i++) {
        blob_pointer(t, t->xsdt + ACPI_HEADER_SIZE + 8 * i, 8);
        blob_pointer(t, t->rsdt + ACPI_HEADER_SIZE + 4 * i, 4);
    }

    /* RSDP (5.2.5.3), revision 2. */
    r = t->blob->data;
    memcpy(r, "RSD PTR ", 8);
    memcpy(r + 9, ACPI_OEM_ID, 6);
    r[15] = 2;
    stl_le_p(r + 16, base + t->rsdt);
    stl_le_p(r + 20, ACPI_RSDP_SIZE);
    stq_le_p(r + 24, base + t->xsdt);
    r[8] = -acpi_checksum(r, 20);
    r[32] = -acpi_checksum(r, ACPI_RSDP_SIZE);
    blob_pointer(t, 16, 4);
    blob_pointer(t, 24, 8);
    g_array_append_val(t->checksums, ((AcpiChecksum){ 0, 20, 8 }));
    g_array_append_val(t->checksums,
                       ((AcpiChecksum){ 0, ACPI_RSDP_SIZE, 32 }));
}

void acpi_tables_free(AcpiTables *t)
{
    if (t->blob) {
        g_byte_array_unref(t->blob);
        t->blob = NULL;
    }
    if (t->pointers) {
        g_array_free(t->pointers, true);
        t->pointers = NULL;
    }
    if (t->checksums) {
        g_array_free(t->checksums, true);
        t->checksums = NULL;
    }
}
