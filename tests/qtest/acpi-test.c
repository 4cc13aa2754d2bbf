/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ACPI on the pc machine, seen the way a guest sees it: the RSDP found by
 * the legacy scan of 0xE0000-0xFFFFF, every table reached from it with a
 * good checksum, the MADT listing the -smp CPUs, the tables rewritten at
 * reset; -machine acpi=off and -no-acpi leaving no tables; and the PM
 * registers: system_powerdown raising the power-button status and the
 * SCI, S5 through PM1a_CNT shutting the machine down.
 */
#include "qemu/osdep.h"
#include "libqtest.h"

#define SCAN_BASE 0xe0000
#define SCAN_END 0x100000
#define PM_BASE 0x600
#define PM1_STS (PM_BASE + 0)
#define PM1_EN (PM_BASE + 2)
#define PM1_CNT (PM_BASE + 4)
#define PM_TMR (PM_BASE + 8)
#define PWRBTN (1 << 8)
#define SLP_EN (1 << 13)
#define S5_SLP_TYP 5
#define S4_SLP_TYP 4

static uint8_t sum(const uint8_t *p, size_t len)
{
    uint8_t s = 0;

    while (len--) {
        s += *p++;
    }
    return s;
}

/* The legacy scan: "RSD PTR " on a 16-byte boundary with a good sum. */
static uint64_t find_rsdp(QTestState *qts)
{
    g_autofree uint8_t *area = g_malloc(SCAN_END - SCAN_BASE);

    qtest_memread(qts, SCAN_BASE, area, SCAN_END - SCAN_BASE);
    for (size_t off = 0; off + 36 <= SCAN_END - SCAN_BASE; off += 16) {
        if (!memcmp(area + off, "RSD PTR ", 8) && !sum(area + off, 20)) {
            return SCAN_BASE + off;
        }
    }
    return 0;
}

/* Reads a whole table at addr after checking its header. */
static uint8_t *read_table(QTestState *qts, uint64_t addr, const char *sig)
{
    uint8_t hdr[36];
    uint32_t len;
    uint8_t *t;

    qtest_memread(qts, addr, hdr, sizeof(hdr));
    g_assert_cmpmem(hdr, 4, sig, 4);
    len = ldl_le_p(hdr + 4);
    g_assert_cmpuint(len, >=, 36);
    g_assert_cmpuint(len, <, 0x20000);
    t = g_malloc(len);
    qtest_memread(qts, addr, t, len);
    g_assert_cmpuint(sum(t, len), ==, 0);
    return t;
}

typedef struct Tables {
    uint8_t *fadt, *madt, *mcfg, *dsdt;
} Tables;

static void tables_free(Tables *t)
{
    g_free(t->fadt);
    g_free(t->madt);
    g_free(t->mcfg);
    g_free(t->dsdt);
}

static void parse_tables(QTestState *qts, Tables *t)
{
    uint64_t rsdp_addr = find_rsdp(qts);
    uint8_t rsdp[36];
    g_autofree uint8_t *xsdt = NULL;
    unsigned n;

    memset(t, 0, sizeof(*t));
    g_assert_cmphex(rsdp_addr, ==, SCAN_BASE);
    qtest_memread(qts, rsdp_addr, rsdp, sizeof(rsdp));
    g_assert_cmpuint(rsdp[15], >=, 2);
    g_assert_cmpuint(sum(rsdp, 36), ==, 0);
    xsdt = read_table(qts, ldq_le_p(rsdp + 24), "XSDT");
    n = (ldl_le_p(xsdt + 4) - 36) / 8;
    for (unsigned i = 0; i < n; i++) {
        uint64_t a = ldq_le_p(xsdt + 36 + 8 * i);
        char sig[5] = { 0 };

        qtest_memread(qts, a, sig, 4);
        if (!strcmp(sig, "FACP")) {
            t->fadt = read_table(qts, a, sig);
        } else if (!strcmp(sig, "APIC")) {
            t->madt = read_table(qts, a, sig);
        } else if (!strcmp(sig, "MCFG")) {
            t->mcfg = read_table(qts, a, sig);
        } else {
            g_error("unexpected table '%s' in the XSDT", sig);
        }
    }
    g_assert_nonnull(t->fadt);
    g_assert_nonnull(t->madt);
    g_assert_nonnull(t->mcfg);
    t->dsdt = read_table(qts, ldq_le_p(t->fadt + 140), "DSDT");
}

static unsigned madt_enabled_cpus(const uint8_t *madt, uint32_t *ids)
{
    unsigned n = 0;

    for (uint32_t off = 44; off + 2 <= ldl_le_p(madt + 4);
         off += madt[off + 1]) {
        g_assert_cmpuint(madt[off + 1], >=, 2);
        if (madt[off] == 0 && (ldl_le_p(madt + off + 4) & 1)) {
            ids[n++] = madt[off + 3];
        }
    }
    return n;
}

static void test_tables_found(void)
{
    QTestState *qts = qtest_init("-m 256 -smp 4,sockets=2,cores=2");
    Tables t;
    uint32_t ids[16];

    parse_tables(qts, &t);
    g_assert_cmpuint(madt_enabled_cpus(t.madt, ids), ==, 4);
    for (unsigned i = 0; i < 4; i++) {
        g_assert_cmpuint(ids[i], ==, i);
    }
    /* MCFG: the ECAM window at 0xe0000000, buses 0..15. */
    g_assert_cmphex(ldq_le_p(t.mcfg + 44), ==, 0xe0000000);
    g_assert_cmpuint(t.mcfg[55], ==, 15);
    /* The FADT's PM blocks are where the PM registers answer. */
    g_assert_cmphex(ldl_le_p(t.fadt + 56), ==, PM_BASE);
    g_assert_cmphex(ldl_le_p(t.fadt + 64), ==, PM_BASE + 4);
    g_assert_cmphex(qtest_inw(qts, PM1_CNT) & 1, ==, 1);     /* SCI_EN */
    tables_free(&t);
    qtest_quit(qts);
}

/* The DSDT has the i8042's keyboard and mouse, with their resources. */
static void test_dsdt_i8042(void)
{
    static const uint8_t kbd_hid[] = { 0x08, '_', 'H', 'I', 'D',
                                       0x0c, 0x41, 0xd0, 0x03, 0x03 };
    static const uint8_t mou_hid[] = { 0x08, '_', 'H', 'I', 'D',
                                       0x0c, 0x41, 0xd0, 0x0f, 0x13 };
    /* IO (Decode16, 0x60, 0x60, 1, 1), IO (... 0x64 ...), IRQNoFlags {1}. */
    static const uint8_t kbd_crs[] = { 0x47, 0x01, 0x60, 0x00, 0x60, 0x00,
                                       0x01, 0x01,
                                       0x47, 0x01, 0x64, 0x00, 0x64, 0x00,
                                       0x01, 0x01,
                                       0x22, 0x02, 0x00 };
    /* IRQNoFlags {12}. */
    static const uint8_t mou_crs[] = { 0x22, 0x00, 0x10, 0x79 };
    const char *machines[] = { "pc", "q35" };

    for (int m = 0; m < 2; m++) {
        QTestState *qts = qtest_initf("-M %s", machines[m]);
        Tables t;
        uint32_t len;

        parse_tables(qts, &t);
        len = ldl_le_p(t.dsdt + 4);
        g_assert_nonnull(memmem(t.dsdt, len, "KBD_", 4));
        g_assert_nonnull(memmem(t.dsdt, len, "MOU_", 4));
        g_assert_nonnull(memmem(t.dsdt, len, kbd_hid, sizeof(kbd_hid)));
        g_assert_nonnull(memmem(t.dsdt, len, mou_hid, sizeof(mou_hid)));
        g_assert_nonnull(memmem(t.dsdt, len, kbd_crs, sizeof(kbd_crs)));
        g_assert_nonnull(memmem(t.dsdt, len, mou_crs, sizeof(mou_crs)));
        /* FADT IAPC_BOOT_ARCH (offset 109) says there is an 8042. */
        g_assert_true(lduw_le_p(t.fadt + 109) & 0x2);
        tables_free(&t);
        qtest_quit(qts);
    }
}

static void test_madt_follows_smp(void)
{
    for (unsigned cpus = 1; cpus <= 3; cpus++) {
        QTestState *qts = qtest_initf("-smp %u,maxcpus=4", cpus);
        Tables t;
        uint32_t ids[16];
        unsigned lapics = 0;

        parse_tables(qts, &t);
        g_assert_cmpuint(madt_enabled_cpus(t.madt, ids), ==, cpus);
        for (uint32_t off = 44; off < ldl_le_p(t.madt + 4);
             off += t.madt[off + 1]) {
            lapics += t.madt[off] == 0;
        }
        /* maxcpus: the rest are listed, disabled. */
        g_assert_cmpuint(lapics, ==, 4);
        tables_free(&t);
        qtest_quit(qts);
    }
}

static void test_tables_rebuilt_at_reset(void)
{
    QTestState *qts = qtest_init("");
    JsonObject *ev;

    g_assert_cmphex(find_rsdp(qts), ==, SCAN_BASE);
    qtest_memset(qts, SCAN_BASE, 0, 0x1000);
    g_assert_cmphex(find_rsdp(qts), ==, 0);
    json_node_unref(qtest_qmp_assert_success(
        qts, "{'execute': 'system_reset'}"));
    ev = qtest_qmp_eventwait(qts, "RESET");
    json_object_unref(ev);
    g_assert_cmphex(find_rsdp(qts), ==, SCAN_BASE);
    qtest_quit(qts);
}

static void assert_no_acpi(const char *args)
{
    QTestState *qts = qtest_init(args);
    JsonNode *ret;

    g_assert_cmphex(find_rsdp(qts), ==, 0);
    /* No PM device either: the ports float. */
    g_assert_cmphex(qtest_inw(qts, PM1_CNT), ==, 0xffff);
    ret = qtest_qmp_assert_success(qts, "{'execute': 'qom-get', 'arguments':"
                                   " {'path': '/machine', 'property': "
                                   "'acpi'}}");
    g_assert_cmpstr(json_node_get_string(ret), ==, "off");
    json_node_unref(ret);
    /* system_powerdown still succeeds; nothing listens. */
    json_node_unref(qtest_qmp_assert_success(
        qts, "{'execute': 'system_powerdown'}"));
    qtest_quit(qts);
}

static void test_acpi_off(void)
{
    assert_no_acpi("-machine pc,acpi=off");
    assert_no_acpi("-no-acpi");
}

static void test_acpi_bad_value(void)
{
    g_autofree char *err = NULL;
    int status = qtest_run_expect_fail("-accel qtest -display none "
                                       "-machine acpi=maybe", NULL, &err);

    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    g_assert_nonnull(strstr(err, "-machine acpi=maybe"));
    g_assert_nonnull(strstr(err, "'acpi'"));
}

static void test_powerdown_raises_sci(void)
{
    QTestState *qts = qtest_init("");
    JsonObject *ev;

    qtest_irq_intercept_out(qts, "/machine/acpi-pm");
    g_assert_false(qtest_get_irq(qts, 0));

    /* The button latches its status even while its enable is clear. */
    json_node_unref(qtest_qmp_assert_success(
        qts, "{'execute': 'system_powerdown'}"));
    ev = qtest_qmp_eventwait(qts, "POWERDOWN");
    json_object_unref(ev);
    g_assert_cmphex(qtest_inw(qts, PM1_STS) & PWRBTN, ==, PWRBTN);
    g_assert_false(qtest_get_irq(qts, 0));

    /* The guest enables the event: the SCI rises and stays up. */
    qtest_outw(qts, PM1_EN, PWRBTN);
    g_assert_true(qtest_get_irq(qts, 0));
    /* Acknowledging (write 1 to clear) drops it. */
    qtest_outw(qts, PM1_STS, PWRBTN);
    g_assert_cmphex(qtest_inw(qts, PM1_STS) & PWRBTN, ==, 0);
    g_assert_false(qtest_get_irq(qts, 0));

    /* A second press with the event enabled raises it at once. */
    json_node_unref(qtest_qmp_assert_success(
        qts, "{'execute': 'system_powerdown'}"));
    g_assert_true(qtest_get_irq(qts, 0));
    qtest_outw(qts, PM1_STS, PWRBTN);
    g_assert_false(qtest_get_irq(qts, 0));
    qtest_quit(qts);
}

static void test_s5_shuts_down(void)
{
    QTestState *qts = qtest_init("-no-shutdown");
    JsonObject *ev, *data;
    JsonNode *ret;

    /* SLP_TYP alone is not a sleep request. */
    qtest_outw(qts, PM1_CNT, S5_SLP_TYP << 10);
    g_assert_true(qtest_probe_child(qts));
    qtest_outw(qts, PM1_CNT, S5_SLP_TYP << 10 | SLP_EN);
    ev = qtest_qmp_eventwait(qts, "SHUTDOWN");
    data = json_object_get_object_member(ev, "data");
    g_assert_true(json_object_get_boolean_member(data, "guest"));
    g_assert_cmpstr(json_object_get_string_member(data, "reason"), ==,
                    "guest-shutdown");
    json_object_unref(ev);
    /* -no-shutdown: the VM stays, stopped. */
    ret = qtest_qmp_assert_success(qts, "{'execute': 'query-status'}");
    g_assert_cmpstr(json_object_get_string_member(
                        json_node_get_object(ret), "status"), ==, "shutdown");
    json_node_unref(ret);
    qtest_quit(qts);

    /* Without it the process exits with status 0. */
    qts = qtest_init("");
    qtest_outw(qts, PM1_CNT, S5_SLP_TYP << 10 | SLP_EN);
    {
        int status = qtest_wait_exit(qts);

        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    }
    qtest_quit(qts);
}

static void test_pm_timer(void)
{
    QTestState *qts = qtest_init("");
    uint32_t t0 = qtest_inl(qts, PM_TMR);
    uint32_t t1;

    qtest_clock_step(qts, 1000000000LL);
    t1 = qtest_inl(qts, PM_TMR);
    /* 3.579545 MHz on the virtual clock, which qtest moves by hand. */
    g_assert_cmpuint(t1 - t0, ==, 3579545);
    qtest_quit(qts);
}

static bool dsdt_has(QTestState *qts, const char *name)
{
    Tables t;
    bool found;

    parse_tables(qts, &t);
    found = memmem(t.dsdt, ldl_le_p(t.dsdt + 4), name, 4) != NULL;
    tables_free(&t);
    return found;
}

/*
 * libvirt's <pm> becomes -global PIIX4_PM.disable_s3/disable_s4: the
 * DSDT offers \_S4 unless disabled, and entering S4 powers off; S3 is
 * never offered (there is no firmware to resume through), and asking for
 * it is an error at start.
 */
static void test_sleep_states(void)
{
    QTestState *qts = qtest_init("-no-shutdown");
    JsonObject *ev;

    g_assert_true(dsdt_has(qts, "_S5_"));
    g_assert_true(dsdt_has(qts, "_S4_"));
    g_assert_false(dsdt_has(qts, "_S3_"));
    qtest_outw(qts, PM1_CNT, S4_SLP_TYP << 10 | SLP_EN);
    ev = qtest_qmp_eventwait(qts, "SHUTDOWN");
    json_object_unref(ev);
    qtest_quit(qts);

    /* What virt-install's <pm> gives. */
    qts = qtest_init("-no-shutdown -global PIIX4_PM.disable_s3=1 "
                     "-global PIIX4_PM.disable_s4=1");
    g_assert_true(dsdt_has(qts, "_S5_"));
    g_assert_false(dsdt_has(qts, "_S4_"));
    g_assert_false(dsdt_has(qts, "_S3_"));
    /* Not offered: the write is no sleep request. */
    qtest_outw(qts, PM1_CNT, S4_SLP_TYP << 10 | SLP_EN);
    {
        JsonNode *ret = qtest_qmp_assert_success(
            qts, "{'execute': 'query-status'}");

        g_assert_cmpstr(json_object_get_string_member(
                            json_node_get_object(ret), "status"), ==,
                        "running");
        json_node_unref(ret);
    }
    qtest_quit(qts);

    qtest_assert_start_fails("-accel qtest -display none "
                             "-global PIIX4_PM.disable_s3=0",
                             "S3 (suspend to RAM) is not supported");
    qtest_assert_start_fails("-accel qtest -display none "
                             "-global PIIX4_PM.disable_s4=2",
                             "disable_s3 and disable_s4 are 0 or 1");
}

/* libvirt asks for both properties before it writes them. */
static void test_piix4_pm_properties(void)
{
    QTestState *qts = qtest_init("");
    JsonNode *ret = qtest_qmp_assert_success(
        qts, "{'execute': 'device-list-properties', "
             "'arguments': {'typename': 'PIIX4_PM'}}");
    JsonArray *props = json_node_get_array(ret);
    bool s3 = false, s4 = false;

    for (guint i = 0; i < json_array_get_length(props); i++) {
        const char *n = json_object_get_string_member(
            json_array_get_object_element(props, i), "name");

        s3 |= !strcmp(n, "disable_s3");
        s4 |= !strcmp(n, "disable_s4");
    }
    g_assert_true(s3 && s4);
    json_node_unref(ret);
    qtest_quit(qts);
}

/* The pc machine has no HPET: -no-hpet and hpet=off say so, hpet=on fails. */
static void test_no_hpet(void)
{
    QTestState *qts = qtest_init("-no-hpet");
    JsonNode *ret = qtest_qmp_assert_success(
        qts, "{'execute': 'qom-get', 'arguments': "
             "{'path': '/machine', 'property': 'hpet'}}");

    g_assert_false(json_node_get_boolean(ret));
    json_node_unref(ret);
    qtest_quit(qts);
    qts = qtest_init("-machine pc,hpet=off");
    qtest_quit(qts);
    qtest_assert_start_fails("-accel qtest -display none -machine hpet=on",
                             "hpet=on is not supported");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/acpi/tables/found-by-scan", test_tables_found);
    g_test_add_func("/acpi/dsdt/i8042", test_dsdt_i8042);
    g_test_add_func("/acpi/tables/madt-follows-smp", test_madt_follows_smp);
    g_test_add_func("/acpi/tables/rebuilt-at-reset",
                   test_tables_rebuilt_at_reset);
    g_test_add_func("/acpi/off", test_acpi_off);
    g_test_add_func("/acpi/bad-value", test_acpi_bad_value);
    g_test_add_func("/acpi/pm/powerdown-raises-sci",
                   test_powerdown_raises_sci);
    g_test_add_func("/acpi/pm/s5-shuts-down", test_s5_shuts_down);
    g_test_add_func("/acpi/pm/timer", test_pm_timer);
    g_test_add_func("/acpi/pm/sleep-states", test_sleep_states);
    g_test_add_func("/acpi/pm/piix4-pm-properties", test_piix4_pm_properties);
    g_test_add_func("/acpi/no-hpet", test_no_hpet);
    return g_test_run();
}
