/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SMBIOS on the pc machine's direct -kernel path: the entry points and
 * table in the legacy BIOS area as Linux's DMI scan finds them (the
 * 16-byte-aligned "_SM3_" / "_SM_" anchors in 0xF0000-0xFFFFF), with what
 * -smbios and -uuid asked for; and -smbios errors at start-up.  The MP
 * table shares the area (its "_MP_" floating pointer is found by the
 * same kind of scan), so it is checked here too.
 */
#include "qemu/osdep.h"
#include <sys/wait.h>
#include "libqtest.h"

#define SCAN_START 0xf0000
#define SCAN_LEN 0x10000

static char *fake_kernel;

/* The smallest bzImage Conduit's loader takes (it never runs here). */
static char *make_fake_kernel(void)
{
    g_autofree uint8_t *img = g_malloc0(0x2000);
    char *path = NULL;
    int fd = g_file_open_tmp("smbios-kernel-XXXXXX", &path, NULL);

    g_assert_cmpint(fd, >=, 0);
    img[0x1f1] = 1;                     /* setup sectors */
    img[0x1fe] = 0x55;
    img[0x1ff] = 0xaa;
    img[0x200] = 0xeb;                  /* jump over the header */
    img[0x201] = 0x66;
    memcpy(img + 0x202, "HdrS", 4);
    img[0x206] = 0x0f;                  /* protocol 2.15 */
    img[0x207] = 0x02;
    img[0x211] = 0x01;                  /* loaded high */
    img[0x236] = 0x01;                  /* 64-bit entry */
    g_assert_cmpint(write(fd, img, 0x2000), ==, 0x2000);
    close(fd);
    return path;
}

static uint8_t sum(const uint8_t *p, size_t len)
{
    uint8_t s = 0;

    while (len--) {
        s += *p++;
    }
    return s;
}

static uint32_t le32(const uint8_t *p)
{
    return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

typedef struct Dmi {
    uint8_t *table;
    uint32_t len;
    bool has_ep21;
} Dmi;

/* Scans the BIOS area as dmi_scan_machine() does. */
static Dmi dmi_find(QTestState *qts)
{
    g_autofree uint8_t *area = g_malloc(SCAN_LEN);
    Dmi d = { 0 };
    uint64_t addr = 0;

    qtest_memread(qts, SCAN_START, area, SCAN_LEN);
    for (size_t off = 0; off < SCAN_LEN; off += 16) {
        const uint8_t *ep = area + off;

        if (!addr && !memcmp(ep, "_SM3_", 5)) {
            g_assert_cmpuint(ep[6], ==, 0x18);
            g_assert_cmpuint(sum(ep, 0x18), ==, 0);
            g_assert_cmpuint(ep[7], ==, 3);
            d.len = le32(ep + 0x0c);
            addr = le32(ep + 0x10) | (uint64_t)le32(ep + 0x14) << 32;
        }
        if (!memcmp(ep, "_SM_", 4)) {
            g_assert_cmpuint(sum(ep, ep[5]), ==, 0);
            g_assert_cmpmem(ep + 0x10, 5, "_DMI_", 5);
            g_assert_cmpuint(sum(ep + 0x10, 0x0f), ==, 0);
            d.has_ep21 = true;
        }
    }
    g_assert_cmphex(addr, !=, 0);
    g_assert_cmpuint(d.len, >, 0);
    g_assert_cmpuint(d.len, <, SCAN_LEN);
    d.table = g_malloc(d.len);
    qtest_memread(qts, addr, d.table, d.len);
    return d;
}

/* The @n-th string of the first structure of @type, or NULL. */
static const uint8_t *dmi_struct(const Dmi *d, uint8_t type)
{
    uint32_t off = 0;

    while (off + 4 <= d->len) {
        const uint8_t *s = d->table + off;
        uint32_t p = off + s[1];

        if (s[0] == type) {
            return s;
        }
        g_assert_cmpuint(s[0], !=, 127);
        while (p + 1 < d->len && (d->table[p] || d->table[p + 1])) {
            p++;
        }
        off = p + 2;
    }
    return NULL;
}

static const char *dmi_string(const uint8_t *s, uint8_t field)
{
    const char *p = (const char *)s + s[1];
    uint8_t n = s[field];

    if (!n) {
        return NULL;
    }
    while (--n) {
        p += strlen(p) + 1;
        g_assert_cmpuint(*p, !=, 0);
    }
    return p;
}

static void test_nova_domain(void)
{
    /* What libvirt writes for Nova's <sysinfo type='smbios'>. */
    QTestState *qts = qtest_initf(
        "-machine pc -m 256 -kernel %s "
        "-uuid c7a5fdbd-cdaf-9455-926a-d65c16db1809 "
        "-smbios 'type=1,manufacturer=OpenStack Foundation,"
        "product=OpenStack Nova,version=27.1.0,"
        "serial=4f1e9c7a-5d1b-4c3e-8a2f-0123456789ab,"
        "uuid=c7a5fdbd-cdaf-9455-926a-d65c16db1809,family=Virtual Machine'",
        fake_kernel);
    Dmi d = dmi_find(qts);
    const uint8_t *t1 = dmi_struct(&d, 1);
    static const uint8_t uuid_le[16] = {
        0xbd, 0xfd, 0xa5, 0xc7, 0xaf, 0xcd, 0x55, 0x94,
        0x92, 0x6a, 0xd6, 0x5c, 0x16, 0xdb, 0x18, 0x09,
    };
    JsonNode *ret;

    g_assert_true(d.has_ep21);
    g_assert_nonnull(t1);
    g_assert_cmpstr(dmi_string(t1, 4), ==, "OpenStack Foundation");
    g_assert_cmpstr(dmi_string(t1, 5), ==, "OpenStack Nova");
    g_assert_cmpstr(dmi_string(t1, 7), ==,
                    "4f1e9c7a-5d1b-4c3e-8a2f-0123456789ab");
    g_assert_cmpstr(dmi_string(t1, 0x1a), ==, "Virtual Machine");
    g_assert_cmpmem(t1 + 8, 16, uuid_le, 16);
    g_assert_nonnull(dmi_struct(&d, 0));
    g_assert_nonnull(dmi_struct(&d, 4));
    g_assert_nonnull(dmi_struct(&d, 16));
    g_assert_nonnull(dmi_struct(&d, 17));
    g_assert_nonnull(dmi_struct(&d, 19));
    g_assert_nonnull(dmi_struct(&d, 32));
    g_assert_nonnull(dmi_struct(&d, 127));
    ret = qtest_qmp_assert_success(qts, "{'execute': 'query-uuid'}");
    g_assert_cmpstr(json_object_get_string_member(
                        json_node_get_object(ret), "UUID"), ==,
                    "c7a5fdbd-cdaf-9455-926a-d65c16db1809");
    json_node_unref(ret);
    g_free(d.table);

    /* A reset puts the tables back (a guest may have scribbled there). */
    qtest_writeb(qts, SCAN_START, 0);
    json_node_unref(qtest_qmp_assert_success(qts,
                                             "{'execute': 'system_reset'}"));
    json_object_unref(qtest_qmp_eventwait(qts, "RESET"));
    d = dmi_find(qts);
    g_free(d.table);
    qtest_quit(qts);
}

static void test_smbios_uuid_alone(void)
{
    /* type=1,uuid= without -uuid is the machine's UUID, as in QEMU. */
    QTestState *qts = qtest_initf(
        "-machine pc -m 128 -kernel %s "
        "-smbios type=1,uuid=00112233-4455-6677-8899-aabbccddeeff "
        "-smbios type=11,value=cloud-init:ds=nocloud "
        "-smbios 'type=0,vendor=Test BIOS,uefi=on'", fake_kernel);
    Dmi d = dmi_find(qts);
    const uint8_t *t11 = dmi_struct(&d, 11), *t0 = dmi_struct(&d, 0);
    JsonNode *ret;

    g_assert_nonnull(t11);
    g_assert_cmpuint(t11[4], ==, 1);
    g_assert_cmpstr((const char *)t11 + t11[1], ==, "cloud-init:ds=nocloud");
    g_assert_cmpstr(dmi_string(t0, 4), ==, "Test BIOS");
    g_assert_true(t0[0x13] & (1 << 3));     /* UEFI supported */
    ret = qtest_qmp_assert_success(qts, "{'execute': 'query-uuid'}");
    g_assert_cmpstr(json_object_get_string_member(
                        json_node_get_object(ret), "UUID"), ==,
                    "00112233-4455-6677-8899-aabbccddeeff");
    json_node_unref(ret);
    g_free(d.table);
    qtest_quit(qts);
}

static void test_smbios_file(void)
{
    /* A type 8 (port connector) with one string, from a file. */
    static const uint8_t t8[] = {
        8, 9, 0x00, 0x08, 1, 0, 0, 0, 0, 'J', '1', 0, 0,
    };
    g_autofree char *path = NULL;
    int fd = g_file_open_tmp("smbios-t8-XXXXXX", &path, NULL);
    QTestState *qts;
    const uint8_t *s;
    Dmi d;

    g_assert_cmpint(write(fd, t8, sizeof(t8)), ==, sizeof(t8));
    close(fd);
    qts = qtest_initf("-machine pc -m 128 -kernel %s -smbios file=%s",
                      fake_kernel, path);
    d = dmi_find(qts);
    s = dmi_struct(&d, 8);
    g_assert_nonnull(s);
    g_assert_cmpstr(dmi_string(s, 4), ==, "J1");
    g_free(d.table);
    qtest_quit(qts);

    /* A truncated one is refused at start, naming the file. */
    fd = open(path, O_WRONLY | O_TRUNC);
    g_assert_cmpint(write(fd, t8, 11), ==, 11);
    close(fd);
    {
        g_autofree char *args = g_strdup_printf(
            "-machine pc -accel qtest -display none -smbios file=%s", path);
        qtest_assert_start_fails(args, "no terminated string set");
    }
    unlink(path);
}

static void test_smbios_errors(void)
{
    qtest_assert_start_fails("-machine pc -accel qtest -display none "
                             "-smbios type=1,colour=red",
                             "-smbios type=1,colour=red: Invalid parameter "
                             "'colour'");
    qtest_assert_start_fails("-machine pc -accel qtest -display none "
                             "-smbios type=42,x=y",
                             "Don't know how to build fields for SMBIOS "
                             "type 42");
    qtest_assert_start_fails("-machine pc -accel qtest -display none "
                             "-smbios type=1,uuid=123", "Invalid UUID");
    qtest_assert_start_fails("-machine pc -accel qtest -display none "
                             "-smbios file=/nonexistent.bin",
                             "/nonexistent.bin");
}

/* Scans as a kernel's MP parser does; returns the processor count. */
static unsigned mp_find(QTestState *qts, unsigned *ioapics)
{
    g_autofree uint8_t *area = g_malloc(SCAN_LEN);
    const uint8_t *f = NULL, *t;
    unsigned cpus = 0, len, count, off;

    qtest_memread(qts, SCAN_START, area, SCAN_LEN);
    for (unsigned i = 0; i < SCAN_LEN; i += 16) {
        if (!memcmp(area + i, "_MP_", 4) && area[i + 8] == 1 &&
            sum(area + i, 16) == 0) {
            g_assert_null(f);           /* exactly one */
            f = area + i;
        }
    }
    g_assert_nonnull(f);
    g_assert_cmpuint(f[9], ==, 4);
    g_assert_cmpuint(le32(f + 4), >=, SCAN_START);
    g_assert_cmpuint(le32(f + 4) + 44, <=, SCAN_START + SCAN_LEN);
    t = area + (le32(f + 4) - SCAN_START);
    g_assert_cmpmem(t, 4, "PCMP", 4);
    len = t[4] | t[5] << 8;
    count = t[34] | t[35] << 8;
    g_assert_cmpuint(t + len - area, <=, SCAN_LEN);
    g_assert_cmpuint(sum(t, len), ==, 0);
    *ioapics = 0;
    off = 44;
    for (unsigned i = 0; i < count; i++) {
        if (t[off] == 0) {
            g_assert_cmpuint(t[off + 1], ==, cpus);     /* APIC IDs 0..n-1 */
            cpus++;
        } else if (t[off] == 2) {
            g_assert_cmphex(le32(t + off + 4), ==, 0xfec00000u);
            (*ioapics)++;
        }
        off += t[off] == 0 ? 20 : 8;
    }
    g_assert_cmpuint(off, ==, len);
    return cpus;
}

/* acpi=off guests find the processors and the I/O APIC, as under SeaBIOS. */
static void test_mptable_direct_boot(void)
{
    QTestState *qts = qtest_initf("-machine pc -m 128 -smp 3 -kernel %s",
                                  fake_kernel);
    unsigned ioapics;
    Dmi d;

    g_assert_cmpuint(mp_find(qts, &ioapics), ==, 3);
    g_assert_cmpuint(ioapics, ==, 1);
    /* A guest that scribbled over it gets it back at reset. */
    qtest_memset(qts, 0xfc000, 0, 0x4000);
    json_node_unref(qtest_qmp_assert_success(qts,
                                             "{'execute': 'system_reset'}"));
    json_object_unref(qtest_qmp_eventwait(qts, "RESET"));
    g_assert_cmpuint(mp_find(qts, &ioapics), ==, 3);
    /* ... and the SMBIOS tables below it are still whole. */
    d = dmi_find(qts);
    g_assert_nonnull(d.table);
    g_free(d.table);
    qtest_quit(qts);
}

static void test_mptable_q35(void)
{
    QTestState *qts = qtest_initf("-machine q35 -m 128 -smp 2 -kernel %s",
                                  fake_kernel);
    unsigned ioapics;

    g_assert_cmpuint(mp_find(qts, &ioapics), ==, 2);
    g_assert_cmpuint(ioapics, ==, 1);
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    int ret;

    g_test_init(&argc, &argv, NULL);
    fake_kernel = make_fake_kernel();
    g_test_add_func("/smbios/nova-domain", test_nova_domain);
    g_test_add_func("/smbios/type1-uuid-alone", test_smbios_uuid_alone);
    g_test_add_func("/smbios/file", test_smbios_file);
    g_test_add_func("/smbios/errors", test_smbios_errors);
    g_test_add_func("/mptable/direct-boot", test_mptable_direct_boot);
    g_test_add_func("/mptable/q35", test_mptable_q35);
    ret = g_test_run();
    unlink(fake_kernel);
    g_free(fake_kernel);
    return ret;
}
