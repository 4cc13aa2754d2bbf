/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The AML builder, byte for byte against encodings worked out by hand
 * from ACPI 6.5 chapter 20 (and 6.4 for resource descriptors); the pc
 * tables (checksums, pointers, field values, MADT for 1..N CPUs, MCFG);
 * the PM1 register logic; and, when acpica-tools is installed, iasl
 * disassembling every table and recompiling the DSDT without errors.
 */
#include "qemu/osdep.h"
#include "hw/acpi/aml-build.h"
#include "hw/acpi/acpi-tables.h"
#include "hw/acpi/pm.h"

/* Serializes aml and compares with the expected bytes. */
static void check_aml(Aml *aml, const uint8_t *want, size_t len)
{
    g_autoptr(GByteArray) got = aml_serialize(aml);

    if (got->len != len || memcmp(got->data, want, len)) {
        g_autofree char *g = g_strnfill(0, 0);

        for (size_t i = 0; i < got->len; i++) {
            char *n = g_strdup_printf("%s %02x", g, got->data[i]);

            g_free(g);
            g = n;
        }
        g_test_message("got:%s", g);
    }
    g_assert_cmpuint(got->len, ==, len);
    g_assert_cmpmem(got->data, got->len, want, len);
}

#define CHECK_AML(aml, ...) do {                                        \
        static const uint8_t want_[] = { __VA_ARGS__ };                 \
        check_aml((aml), want_, sizeof(want_));                          \
    } while (0)

/* ---- AML builder ---- */

static void test_pkg_length(void)
{
    uint8_t b[4];

    /* One byte up to 63 including itself. */
    g_assert_cmpuint(aml_pkg_length(b, 0), ==, 1);
    g_assert_cmphex(b[0], ==, 0x01);
    g_assert_cmpuint(aml_pkg_length(b, 0x3e), ==, 1);
    g_assert_cmphex(b[0], ==, 0x3f);
    /* 0x3f + 2 = 0x41: low nibble in the lead byte, the rest after. */
    g_assert_cmpuint(aml_pkg_length(b, 0x3f), ==, 2);
    g_assert_cmphex(b[0], ==, 0x41);
    g_assert_cmphex(b[1], ==, 0x04);
    g_assert_cmpuint(aml_pkg_length(b, 0xffd), ==, 2);
    g_assert_cmphex(b[0], ==, 0x4f);
    g_assert_cmphex(b[1], ==, 0xff);
    /* 0xffe + 3 = 0x1001 needs three bytes. */
    g_assert_cmpuint(aml_pkg_length(b, 0xffe), ==, 3);
    g_assert_cmphex(b[0], ==, 0x81);
    g_assert_cmphex(b[1], ==, 0x00);
    g_assert_cmphex(b[2], ==, 0x01);
    g_assert_cmpuint(aml_pkg_length(b, 0xffffc), ==, 3);
    /* 0xffffd + 4 = 0x100001 needs four. */
    g_assert_cmpuint(aml_pkg_length(b, 0xffffd), ==, 4);
    g_assert_cmphex(b[0], ==, 0xc1);
    g_assert_cmphex(b[1], ==, 0x00);
    g_assert_cmphex(b[2], ==, 0x00);
    g_assert_cmphex(b[3], ==, 0x01);
}

static void test_integers(void)
{
    CHECK_AML(aml_int(0), 0x00);
    CHECK_AML(aml_int(1), 0x01);
    CHECK_AML(aml_int(UINT64_MAX), 0xff);
    CHECK_AML(aml_int(2), 0x0a, 0x02);
    CHECK_AML(aml_int(0xff), 0x0a, 0xff);
    CHECK_AML(aml_int(0x100), 0x0b, 0x00, 0x01);
    CHECK_AML(aml_int(0x10000), 0x0c, 0x00, 0x00, 0x01, 0x00);
    CHECK_AML(aml_int(0x100000000ULL), 0x0e, 0x00, 0x00, 0x00, 0x00,
              0x01, 0x00, 0x00, 0x00);
}

static void test_strings_and_ids(void)
{
    CHECK_AML(aml_string("ab"), 0x0d, 0x61, 0x62, 0x00);
    /* EisaId("PNP0A03") == 0x030AD041 */
    CHECK_AML(aml_eisaid("PNP0A03"), 0x0c, 0x41, 0xd0, 0x0a, 0x03);
    CHECK_AML(aml_eisaid("PNP0501"), 0x0c, 0x41, 0xd0, 0x05, 0x01);
    CHECK_AML(aml_touuid("33DB4D5B-1FF7-401C-9657-7441C03DD766"),
              0x11, 0x13, 0x0a, 0x10,
              0x5b, 0x4d, 0xdb, 0x33, 0xf7, 0x1f, 0x1c, 0x40,
              0x96, 0x57, 0x74, 0x41, 0xc0, 0x3d, 0xd7, 0x66);
}

static void test_namestrings(void)
{
    static const struct {
        const char *name;
        uint8_t enc[16];
        size_t len;
    } good[] = {
        { "PCI0", { 'P', 'C', 'I', '0' }, 4 },
        { "_S5", { '_', 'S', '5', '_' }, 4 },
        { "\\_SB", { 0x5c, '_', 'S', 'B', '_' }, 5 },
        { "\\_SB.PCI0", { 0x5c, 0x2e, '_', 'S', 'B', '_', 'P', 'C', 'I',
                          '0' }, 10 },
        { "A.B.C", { 0x2f, 0x03, 'A', '_', '_', '_', 'B', '_', '_', '_',
                     'C', '_', '_', '_' }, 14 },
        { "^^FOO", { 0x5e, 0x5e, 'F', 'O', 'O', '_' }, 6 },
        { "\\", { 0x5c, 0x00 }, 2 },
    };
    static const char *const bad[] = {
        "TOOLONG", "1ABC", "a", "A..B", "PCI0.", "AB-C",
    };

    for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
        g_autoptr(GByteArray) b = g_byte_array_new();

        g_assert_true(aml_encode_namestring(b, good[i].name));
        g_assert_cmpmem(b->data, b->len, good[i].enc, good[i].len);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GByteArray) b = g_byte_array_new();

        g_assert_false(aml_encode_namestring(b, bad[i]));
        g_assert_cmpuint(b->len, ==, 0);
    }
}

static void test_named_objects(void)
{
    Aml *dev, *m, *pkg;

    CHECK_AML(aml_name_decl("_HID", aml_eisaid("PNP0A03")),
              0x08, '_', 'H', 'I', 'D', 0x0c, 0x41, 0xd0, 0x0a, 0x03);
    CHECK_AML(aml_scope("\\_SB"), 0x10, 0x06, 0x5c, '_', 'S', 'B', '_');
    CHECK_AML(aml_device("PCI0"), 0x5b, 0x82, 0x05, 'P', 'C', 'I', '0');

    /* Device (COM1) { Name (_UID, One) } */
    dev = aml_device("COM1");
    aml_append(dev, aml_name_decl("_UID", aml_int(1)));
    CHECK_AML(dev, 0x5b, 0x82, 0x0b, 'C', 'O', 'M', '1',
              0x08, '_', 'U', 'I', 'D', 0x01);

    /* Method (_OSC, 4, NotSerialized) { Return (Arg3) } */
    m = aml_method("_OSC", 4, false);
    aml_append(m, aml_return(aml_arg(3)));
    CHECK_AML(m, 0x14, 0x08, '_', 'O', 'S', 'C', 0x04, 0xa4, 0x6b);
    /* Serialized, no arguments: flags 0x08. */
    CHECK_AML(aml_method("FOO", 0, true), 0x14, 0x06, 'F', 'O', 'O', '_',
              0x08);

    /* Package () { One, "a" } */
    pkg = aml_package();
    aml_append(pkg, aml_int(1));
    aml_append(pkg, aml_string("a"));
    CHECK_AML(pkg, 0x12, 0x06, 0x02, 0x01, 0x0d, 'a', 0x00);

    CHECK_AML(aml_buffer((const uint8_t[]){ 1, 2, 3 }, 3),
              0x11, 0x06, 0x0a, 0x03, 0x01, 0x02, 0x03);
}

static void test_long_package(void)
{
    Aml *pkg = aml_package();
    g_autoptr(GByteArray) b = NULL;

    /* 40 x WordConst (3 bytes) + NumElements = 121 bytes: 2-byte length. */
    for (int i = 0; i < 40; i++) {
        aml_append(pkg, aml_int(0x1234));
    }
    b = aml_serialize(pkg);
    g_assert_cmpuint(b->len, ==, 1 + 2 + 1 + 120);
    g_assert_cmphex(b->data[0], ==, 0x12);
    /* 123 = 0x7b: lead 0x4b, then 0x07. */
    g_assert_cmphex(b->data[1], ==, 0x4b);
    g_assert_cmphex(b->data[2], ==, 0x07);
    g_assert_cmpuint(b->data[3], ==, 40);
    g_assert_cmphex(b->data[4], ==, 0x0b);
}

static void test_statements(void)
{
    Aml *ifs, *els;

    /* If (LEqual (Arg0, One)) { Return (Zero) } */
    ifs = aml_if(aml_lequal(aml_arg(0), aml_int(1)));
    aml_append(ifs, aml_return(aml_int(0)));
    CHECK_AML(ifs, 0xa0, 0x06, 0x93, 0x68, 0x01, 0xa4, 0x00);
    els = aml_else();
    aml_append(els, aml_return(aml_int(1)));
    CHECK_AML(els, 0xa1, 0x03, 0xa4, 0x01);
    CHECK_AML(aml_and(aml_local(0), aml_int(0x15), aml_local(1)),
              0x7b, 0x60, 0x0a, 0x15, 0x61);
    CHECK_AML(aml_or(aml_arg(0), aml_int(4), NULL),
              0x7d, 0x68, 0x0a, 0x04, 0x00);
    CHECK_AML(aml_store(aml_int(1), aml_local(7)), 0x70, 0x01, 0x67);
    CHECK_AML(aml_create_dword_field(aml_arg(3), aml_int(8), "CDW3"),
              0x8a, 0x6b, 0x0a, 0x08, 'C', 'D', 'W', '3');
    CHECK_AML(aml_notify(aml_name("PWRB"), aml_int(0x80)),
              0x86, 'P', 'W', 'R', 'B', 0x0a, 0x80);
}

static void test_resources(void)
{
    Aml *rt;

    /* ResourceTemplate () { IO (Decode16, 0x3F8, 0x3F8, 1, 8) IRQNoFlags () {4} } */
    rt = aml_resource_template();
    aml_append(rt, aml_io(0x3f8, 0x3f8, 1, 8));
    aml_append(rt, aml_irq_no_flags(4));
    CHECK_AML(rt, 0x11, 0x10, 0x0a, 0x0d,
              0x47, 0x01, 0xf8, 0x03, 0xf8, 0x03, 0x01, 0x08,
              0x22, 0x10, 0x00,
              0x79, 0x00);

    CHECK_AML(aml_word_bus_number(0, 0xff),
              0x88, 0x0d, 0x00, 0x02, 0x0c, 0x00,
              0x00, 0x00, 0x00, 0x00, 0xff, 0x00, 0x00, 0x00, 0x00, 0x01);
    CHECK_AML(aml_word_io(0x0d00, 0xffff),
              0x88, 0x0d, 0x00, 0x01, 0x0c, 0x03,
              0x00, 0x00, 0x00, 0x0d, 0xff, 0xff, 0x00, 0x00, 0x00, 0xf3);
    CHECK_AML(aml_dword_memory(0xe1000000, 0xfebfffff),
              0x87, 0x17, 0x00, 0x00, 0x0c, 0x01,
              0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe1,
              0xff, 0xff, 0xbf, 0xfe, 0x00, 0x00, 0x00, 0x00,
              0x00, 0x00, 0xc0, 0x1d);
    CHECK_AML(aml_qword_memory(0x100000000ULL, 0x8ffffffffULL),
              0x8a, 0x2b, 0x00, 0x00, 0x0c, 0x01,
              0, 0, 0, 0, 0, 0, 0, 0,
              0, 0, 0, 0, 1, 0, 0, 0,
              0xff, 0xff, 0xff, 0xff, 8, 0, 0, 0,
              0, 0, 0, 0, 0, 0, 0, 0,
              0, 0, 0, 0, 8, 0, 0, 0);
    CHECK_AML(aml_memory32_fixed(0xfec00000, 0x1000, true),
              0x86, 0x09, 0x00, 0x01, 0x00, 0x00, 0xc0, 0xfe,
              0x00, 0x10, 0x00, 0x00);
}

/* ---- tables ---- */

static const uint16_t com_base[4] = { 0x3f8, 0x2f8, 0x3e8, 0x2e8 };
static const uint8_t com_irq[4] = { 4, 3, 4, 3 };

static AcpiPlatform test_platform(unsigned cpus, unsigned max_cpus,
                                  uint32_t *ids)
{
    for (unsigned i = 0; i < max_cpus; i++) {
        ids[i] = i;
    }
    return (AcpiPlatform) {
        .nr_cpus = cpus,
        .max_cpus = max_cpus,
        .apic_ids = ids,
        .ecam_base = 0xe0000000,
        .ecam_last_bus = 15,
        .mmio32_base = 0xe1000000,
        .mmio32_end = 0xfec00000,
        .mmio64_base = 0x100000000ULL,
        .mmio64_end = 0x900000000ULL,
        .serial = { true, false, false, false },
        .serial_iobase = com_base,
        .serial_irq = com_irq,
        .rtc = true,
    };
}

static const uint8_t *table_at(const AcpiTables *t, uint64_t addr)
{
    g_assert_cmphex(addr, >=, t->base);
    g_assert_cmphex(addr - t->base, <, t->blob->len);
    return t->blob->data + (addr - t->base);
}

static void check_table(const uint8_t *tab, const char *sig)
{
    g_assert_cmpmem(tab, 4, sig, 4);
    g_assert_cmpuint(acpi_checksum(tab, ldl_le_p(tab + 4)), ==, 0);
    g_assert_cmpmem(tab + 10, 6, ACPI_OEM_ID, 6);
}

static void test_tables_layout(void)
{
    uint32_t ids[2];
    AcpiPlatform p = test_platform(2, 2, ids);
    AcpiTables t;
    const uint8_t *rsdp, *xsdt, *rsdt, *fadt;
    static const char *const sigs[] = { "FACP", "APIC", "MCFG" };

    acpi_build_tables(&p, 0xe0000, &t);
    g_assert_cmpuint(t.blob->len, <=, 0x20000);
    rsdp = t.blob->data;
    g_assert_cmpmem(rsdp, 8, "RSD PTR ", 8);
    g_assert_cmpuint(acpi_checksum(rsdp, 20), ==, 0);
    g_assert_cmpuint(acpi_checksum(rsdp, 36), ==, 0);
    g_assert_cmpuint(rsdp[15], ==, 2);
    g_assert_cmpuint(ldl_le_p(rsdp + 20), ==, 36);

    xsdt = table_at(&t, ldq_le_p(rsdp + 24));
    rsdt = table_at(&t, ldl_le_p(rsdp + 16));
    check_table(xsdt, "XSDT");
    check_table(rsdt, "RSDT");
    g_assert_cmpuint(ldl_le_p(xsdt + 4), ==, 36 + 3 * 8);
    g_assert_cmpuint(ldl_le_p(rsdt + 4), ==, 36 + 3 * 4);
    for (int i = 0; i < 3; i++) {
        uint64_t x = ldq_le_p(xsdt + 36 + 8 * i);

        g_assert_cmphex(x, ==, ldl_le_p(rsdt + 36 + 4 * i));
        check_table(table_at(&t, x), sigs[i]);
    }

    fadt = table_at(&t, ldq_le_p(xsdt + 36));
    g_assert_cmpuint(ldl_le_p(fadt + 4), ==, 276);
    g_assert_cmpuint(fadt[8], ==, 6);
    /* 32- and 64-bit pointers agree. */
    g_assert_cmphex(ldl_le_p(fadt + 40), ==, ldq_le_p(fadt + 140));
    g_assert_cmphex(ldl_le_p(fadt + 36), ==, ldq_le_p(fadt + 132));
    check_table(table_at(&t, ldq_le_p(fadt + 140)), "DSDT");
    g_assert_cmpmem(table_at(&t, ldq_le_p(fadt + 132)), 4, "FACS", 4);
    g_assert_cmphex(ldq_le_p(fadt + 132) % 64, ==, 0);
    g_assert_cmpuint(ldl_le_p(table_at(&t, ldq_le_p(fadt + 132)) + 4), ==,
                     64);
    g_assert_cmpuint(lduw_le_p(fadt + 46), ==, ACPI_SCI_IRQ);
    g_assert_cmpuint(ldl_le_p(fadt + 48), ==, 0);       /* SMI_CMD */
    g_assert_cmphex(ldl_le_p(fadt + 56), ==, 0x600);    /* PM1a_EVT */
    g_assert_cmphex(ldl_le_p(fadt + 64), ==, 0x604);    /* PM1a_CNT */
    g_assert_cmphex(ldl_le_p(fadt + 76), ==, 0x608);    /* PM_TMR */
    g_assert_cmpuint(fadt[88], ==, 4);
    g_assert_cmpuint(fadt[89], ==, 2);
    g_assert_cmpuint(fadt[91], ==, 4);
    /* Fixed power button (PWR_BUTTON clear), 32-bit timer, no 8042. */
    g_assert_cmphex(ldl_le_p(fadt + 112) & (1 << 4), ==, 0);
    g_assert_cmphex(ldl_le_p(fadt + 112) & (1 << 8), ==, 1 << 8);
    g_assert_cmphex(lduw_le_p(fadt + 109) & 2, ==, 0);
    /* X_PM1a_EVT_BLK: system I/O, 32 bits, port 0x600. */
    g_assert_cmpuint(fadt[148], ==, 1);
    g_assert_cmpuint(fadt[149], ==, 32);
    g_assert_cmphex(ldq_le_p(fadt + 152), ==, 0x600);
    g_assert_cmpuint(fadt[173], ==, 16);
    g_assert_cmphex(ldq_le_p(fadt + 176), ==, 0x604);
    acpi_tables_free(&t);
}

static void test_madt(void)
{
    for (unsigned cpus = 1; cpus <= 8; cpus++) {
        for (unsigned max = cpus; max <= cpus + 2; max += 2) {
            uint32_t ids[16];
            AcpiPlatform p = test_platform(cpus, max, ids);
            g_autoptr(GByteArray) madt = NULL;
            const uint8_t *e, *end;
            unsigned lapics = 0, enabled = 0, ioapics = 0, isos = 0;

            ids[0] = 0;
            for (unsigned i = 1; i < max; i++) {
                ids[i] = i * 2;     /* sparse IDs are taken as given */
            }
            madt = acpi_build_madt(&p);
            check_table(madt->data, "APIC");
            g_assert_cmpuint(madt->len, ==, 44 + 8 * max + 12 + 10 + 6);
            g_assert_cmphex(ldl_le_p(madt->data + 36), ==, 0xfee00000);
            g_assert_cmpuint(ldl_le_p(madt->data + 40), ==, 1);
            e = madt->data + 44;
            end = madt->data + madt->len;
            while (e < end) {
                g_assert_cmpuint(e[1], >=, 2);
                g_assert_true(e + e[1] <= end);
                switch (e[0]) {
                case 0:
                    g_assert_cmpuint(e[1], ==, 8);
                    g_assert_cmpuint(e[2], ==, lapics);
                    g_assert_cmpuint(e[3], ==, ids[lapics]);
                    g_assert_cmpuint(ldl_le_p(e + 4), ==,
                                     lapics < cpus ? 1 : 0);
                    enabled += ldl_le_p(e + 4) & 1;
                    lapics++;
                    break;
                case 1:
                    g_assert_cmpuint(e[1], ==, 12);
                    g_assert_cmphex(ldl_le_p(e + 4), ==, 0xfec00000);
                    g_assert_cmpuint(ldl_le_p(e + 8), ==, 0);
                    ioapics++;
                    break;
                case 2:
                    g_assert_cmpuint(e[1], ==, 10);
                    g_assert_cmpuint(e[3], ==, 9);
                    g_assert_cmpuint(ldl_le_p(e + 4), ==, 9);
                    g_assert_cmphex(lduw_le_p(e + 8), ==, 0xd);
                    isos++;
                    break;
                case 4:
                    g_assert_cmpuint(e[1], ==, 6);
                    g_assert_cmpuint(e[5], ==, 1);
                    break;
                default:
                    g_assert_not_reached();
                }
                e += e[1];
            }
            g_assert_cmpuint(lapics, ==, max);
            g_assert_cmpuint(enabled, ==, cpus);
            g_assert_cmpuint(ioapics, ==, 1);
            g_assert_cmpuint(isos, ==, 1);
        }
    }
}

static void test_mcfg(void)
{
    uint32_t ids[1];
    AcpiPlatform p = test_platform(1, 1, ids);
    g_autoptr(GByteArray) mcfg = acpi_build_mcfg(&p);

    check_table(mcfg->data, "MCFG");
    g_assert_cmpuint(mcfg->len, ==, 60);
    g_assert_cmphex(ldq_le_p(mcfg->data + 44), ==, 0xe0000000);
    g_assert_cmpuint(lduw_le_p(mcfg->data + 52), ==, 0);
    g_assert_cmpuint(mcfg->data[54], ==, 0);
    g_assert_cmpuint(mcfg->data[55], ==, 15);
}

static bool mem_contains(const GByteArray *b, const uint8_t *needle,
                         size_t len)
{
    for (size_t i = 0; i + len <= b->len; i++) {
        if (!memcmp(b->data + i, needle, len)) {
            return true;
        }
    }
    return false;
}

static void test_dsdt(void)
{
    uint32_t ids[1];
    AcpiPlatform p = test_platform(1, 1, ids);
    g_autoptr(GByteArray) dsdt = acpi_build_dsdt(&p);
    static const uint8_t s5[] = {
        0x08, 0x5c, '_', 'S', '5', '_', 0x12, 0x08, 0x04,
        0x0a, 0x05, 0x0a, 0x05, 0x00, 0x00,
    };
    static const uint8_t hid_pcie[] = {
        0x08, '_', 'H', 'I', 'D', 0x0c, 0x41, 0xd0, 0x0a, 0x08,
    };
    static const uint8_t com1_io[] = {
        0x47, 0x01, 0xf8, 0x03, 0xf8, 0x03, 0x01, 0x08, 0x22, 0x10, 0x00,
    };
    static const uint8_t com2_io[] = { 0x47, 0x01, 0xf8, 0x02 };
    /* The last _PRT entry: slot 31, pin D -> GSI 16 + (31 + 3) % 4. */
    static const uint8_t prt_last[] = {
        0x12, 0x0c, 0x04, 0x0c, 0xff, 0xff, 0x1f, 0x00, 0x0a, 0x03, 0x00,
        0x0a, 0x12,
    };
    static const uint8_t ecam_bus[] = {
        0x88, 0x0d, 0x00, 0x02, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x0f, 0x00,
    };

    check_table(dsdt->data, "DSDT");
    g_assert_cmpuint(dsdt->data[8], ==, 2);     /* 64-bit integers */
    g_assert_true(mem_contains(dsdt, s5, sizeof(s5)));
    g_assert_true(mem_contains(dsdt, hid_pcie, sizeof(hid_pcie)));
    g_assert_true(mem_contains(dsdt, com1_io, sizeof(com1_io)));
    g_assert_false(mem_contains(dsdt, com2_io, sizeof(com2_io)));
    g_assert_true(mem_contains(dsdt, prt_last, sizeof(prt_last)));
    g_assert_true(mem_contains(dsdt, ecam_bus, sizeof(ecam_bus)));
}

/* ---- iasl ---- */

static bool run(const char *dir, char **argv, char **out)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *so = NULL, *se = NULL;
    int status;

    if (!g_spawn_sync(dir, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                      &so, &se, &status, &err)) {
        g_test_message("spawn %s: %s", argv[0], err->message);
        return false;
    }
    *out = g_strconcat(so, se, NULL);
    return g_spawn_check_wait_status(status, NULL);
}

static void write_table(const char *dir, const char *name,
                        const uint8_t *data, size_t len)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);

    g_assert_true(g_file_set_contents(path, (const char *)data, len, NULL));
}

static void test_iasl(void)
{
    g_autofree char *iasl = g_find_program_in_path("iasl");
    g_autofree char *dir = NULL;
    uint32_t ids[4];
    AcpiPlatform p = test_platform(4, 4, ids);
    AcpiTables t;
    static const char *const files[] = {
        "dsdt.dat", "facp.dat", "apic.dat", "mcfg.dat", "xsdt.dat",
        "rsdt.dat",
    };

    if (!iasl) {
        g_test_skip("iasl not found (Debian package acpica-tools)");
        return;
    }
    dir = g_dir_make_tmp("test-acpi-XXXXXX", NULL);
    g_assert_nonnull(dir);
    p.serial[1] = true;
    acpi_build_tables(&p, 0xe0000, &t);
    write_table(dir, "dsdt.dat", t.blob->data + t.dsdt,
                ldl_le_p(t.blob->data + t.dsdt + 4));
    write_table(dir, "facp.dat", t.blob->data + t.fadt,
                ldl_le_p(t.blob->data + t.fadt + 4));
    write_table(dir, "apic.dat", t.blob->data + t.madt,
                ldl_le_p(t.blob->data + t.madt + 4));
    write_table(dir, "mcfg.dat", t.blob->data + t.mcfg,
                ldl_le_p(t.blob->data + t.mcfg + 4));
    write_table(dir, "xsdt.dat", t.blob->data + t.xsdt,
                ldl_le_p(t.blob->data + t.xsdt + 4));
    write_table(dir, "rsdt.dat", t.blob->data + t.rsdt,
                ldl_le_p(t.blob->data + t.rsdt + 4));

    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *out = NULL;
        g_autofree char *dsl = g_strdup(files[i]);
        g_autofree char *dsl_path = NULL;
        char *argv[] = { iasl, (char *)"-d", (char *)files[i], NULL };
        bool ok = run(dir, argv, &out);

        if (!ok || strstr(out, "Error") || strstr(out, "Warning")) {
            g_test_message("iasl -d %s:\n%s", files[i], out);
        }
        g_assert_true(ok);
        g_assert_null(strstr(out, "Error"));
        g_assert_null(strstr(out, "Warning"));
        strcpy(dsl + strlen(dsl) - 3, "dsl");
        dsl_path = g_build_filename(dir, dsl, NULL);
        g_assert_true(g_file_test(dsl_path, G_FILE_TEST_EXISTS));
    }

    /* The disassembled DSDT compiles back without errors or warnings. */
    {
        g_autofree char *out = NULL;
        g_autofree char *dsl = NULL;
        g_autofree char *dsl_path = g_build_filename(dir, "dsdt.dsl", NULL);
        char *argv[] = { iasl, (char *)"-p", (char *)"recompiled",
                         (char *)"dsdt.dsl", NULL };
        bool ok = run(dir, argv, &out);

        if (!ok || !strstr(out, " 0 Errors, 0 Warnings")) {
            g_test_message("iasl dsdt.dsl:\n%s", out);
        }
        g_assert_true(ok);
        g_assert_nonnull(strstr(out, " 0 Errors, 0 Warnings"));
        /* Spot-check the disassembly: the names we emitted are there. */
        g_assert_true(g_file_get_contents(dsl_path, &dsl, NULL, NULL));
        g_assert_nonnull(strstr(dsl, "Device (PCI0)"));
        g_assert_nonnull(strstr(dsl, "EisaId (\"PNP0A08\")"));
        g_assert_nonnull(strstr(dsl, "Method (_OSC, 4, NotSerialized)"));
        g_assert_nonnull(strstr(dsl, "Device (COM2)"));
        g_assert_nonnull(strstr(dsl, "Name (\\_S5, Package"));
    }
    acpi_tables_free(&t);
    {
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        const char *n;

        while (d && (n = g_dir_read_name(d))) {
            g_autofree char *path = g_build_filename(dir, n, NULL);

            unlink(path);
        }
        rmdir(dir);
    }
}

/* ---- PM1 registers ---- */

static void test_pm1(void)
{
    AcpiPm1 pm;

    acpi_pm1_reset(&pm);
    g_assert_cmphex(acpi_pm1_read(&pm, 0, 4), ==, 0);
    g_assert_cmphex(acpi_pm1_read(&pm, 4, 2), ==, ACPI_PM1_CNT_SCI_EN);
    g_assert_false(acpi_pm1_sci_level(&pm));

    /* A press with the enable clear latches status, no SCI. */
    acpi_pm1_press_power_button(&pm);
    g_assert_cmphex(acpi_pm1_read(&pm, 0, 2), ==, ACPI_PM1_PWRBTN);
    g_assert_false(acpi_pm1_sci_level(&pm));
    /*
     * Enabling it raises the SCI; the global lock and RTC enables read
     * back (they never fire), other enable bits stay clear.
     */
    acpi_pm1_write(&pm, 2, 0xffff, 2);
    g_assert_cmphex(acpi_pm1_read(&pm, 2, 2), ==,
                    ACPI_PM1_PWRBTN | ACPI_PM1_TMR | ACPI_PM1_GBL |
                    ACPI_PM1_RTC);
    g_assert_true(acpi_pm1_sci_level(&pm));
    /* Writing 0 to status changes nothing; 1 clears (byte access too). */
    acpi_pm1_write(&pm, 0, 0, 2);
    g_assert_true(acpi_pm1_sci_level(&pm));
    acpi_pm1_write(&pm, 1, ACPI_PM1_PWRBTN >> 8, 1);
    g_assert_cmphex(acpi_pm1_read(&pm, 0, 2), ==, 0);
    g_assert_false(acpi_pm1_sci_level(&pm));
    /* A dword write covers status and enable at once. */
    acpi_pm1_press_power_button(&pm);
    acpi_pm1_write(&pm, 0, ACPI_PM1_PWRBTN, 4);
    g_assert_cmphex(acpi_pm1_read(&pm, 0, 4), ==, 0);

    /* SLP_TYP alone does nothing; SLP_EN with S5 powers off. */
    g_assert_cmpint(acpi_pm1_write(&pm, 4, ACPI_S5_SLP_TYP << 10, 2), ==,
                    ACPI_PM_NONE);
    g_assert_cmphex(acpi_pm1_read(&pm, 4, 2), ==,
                    ACPI_S5_SLP_TYP << 10 | ACPI_PM1_CNT_SCI_EN);
    g_assert_cmpint(acpi_pm1_write(&pm, 4, 1 << 10 | 1 << 13, 2), ==,
                    ACPI_PM_NONE);
    g_assert_cmpint(acpi_pm1_write(&pm, 4, ACPI_S5_SLP_TYP << 10 | 1 << 13,
                                   2), ==, ACPI_PM_POWER_OFF);
    /* SLP_EN is write-only; SCI_EN cannot be cleared. */
    g_assert_cmphex(acpi_pm1_read(&pm, 4, 2) & (1 << 13), ==, 0);
    acpi_pm1_write(&pm, 4, 0, 2);
    g_assert_cmphex(acpi_pm1_read(&pm, 4, 2), ==, ACPI_PM1_CNT_SCI_EN);
    /* Byte write of the high half with SLP_EN and S5. */
    g_assert_cmpint(acpi_pm1_write(&pm, 5, (ACPI_S5_SLP_TYP << 2) | 0x20, 1),
                    ==, ACPI_PM_POWER_OFF);
    /* Out of range offsets read as zero and ignore writes. */
    g_assert_cmphex(acpi_pm1_read(&pm, 6, 2), ==, 0);
    acpi_pm1_write(&pm, 6, 0xffff, 2);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/acpi/aml/pkg-length", test_pkg_length);
    g_test_add_func("/acpi/aml/integers", test_integers);
    g_test_add_func("/acpi/aml/strings-and-ids", test_strings_and_ids);
    g_test_add_func("/acpi/aml/namestrings", test_namestrings);
    g_test_add_func("/acpi/aml/named-objects", test_named_objects);
    g_test_add_func("/acpi/aml/long-package", test_long_package);
    g_test_add_func("/acpi/aml/statements", test_statements);
    g_test_add_func("/acpi/aml/resources", test_resources);
    g_test_add_func("/acpi/tables/layout", test_tables_layout);
    g_test_add_func("/acpi/tables/madt", test_madt);
    g_test_add_func("/acpi/tables/mcfg", test_mcfg);
    g_test_add_func("/acpi/tables/dsdt", test_dsdt);
    g_test_add_func("/acpi/tables/iasl", test_iasl);
    g_test_add_func("/acpi/pm1", test_pm1);
    return g_test_run();
}
