/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SMBIOS: -smbios parsing, the structure table (walked as a guest's DMI
 * decoder walks it) and both entry points.
 */
#include "qemu/osdep.h"
#include "hw/firmware/smbios.h"
#include "qapi/error.h"

typedef struct Found {
    const uint8_t *s;           /* the formatted area */
    const char *strings[16];
    unsigned nr_strings;
} Found;

/* Walks the table as dmi_table() does; fails on any malformed structure. */
static unsigned walk(const GByteArray *t, uint8_t type, Found *out,
                     unsigned max)
{
    size_t off = 0;
    unsigned n = 0;
    bool end = false;

    while (off < t->len) {
        const uint8_t *s = t->data + off;
        size_t p;
        Found f = { .s = s };

        g_assert_cmpuint(t->len - off, >=, 4);
        g_assert_cmpuint(s[1], >=, 4);
        g_assert_cmpuint(off + s[1] + 2, <=, t->len);
        g_assert_false(end);    /* nothing after type 127 */
        p = off + s[1];
        if (t->data[p] == 0) {
            g_assert_cmpuint(t->data[p + 1], ==, 0);
            p += 2;
        } else {
            while (t->data[p]) {
                g_assert_cmpuint(f.nr_strings, <, 16);
                f.strings[f.nr_strings++] = (const char *)t->data + p;
                p += strlen((const char *)t->data + p) + 1;
                g_assert_cmpuint(p, <, t->len);
            }
            p++;
        }
        if (s[0] == type && n < max) {
            out[n] = f;
        }
        if (s[0] == type) {
            n++;
        }
        end = s[0] == 127;
        off = p;
    }
    g_assert_true(end);
    return n;
}

static const char *str(const Found *f, unsigned off)
{
    uint8_t i = f->s[off];

    if (!i) {
        return NULL;
    }
    g_assert_cmpuint(i, <=, f->nr_strings);
    return f->strings[i - 1];
}

static uint16_t le16(const uint8_t *p)
{
    return p[0] | p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
    return le16(p) | (uint32_t)le16(p + 2) << 16;
}

static uint64_t le64(const uint8_t *p)
{
    return le32(p) | (uint64_t)le32(p + 4) << 32;
}

static uint8_t sum(const uint8_t *p, size_t len)
{
    uint8_t s = 0;

    while (len--) {
        s += *p++;
    }
    return s;
}

static SmbiosMachine machine(void)
{
    SmbiosMachine m = {
        .product = "Standard PC", .version = "pc",
        .sockets = 2, .cores_per_socket = 2, .threads_per_core = 1,
        .cpus = 3, .ram_size = 5ull << 30,
        .ranges = { { 0, 3ull << 30 }, { 4ull << 30, 2ull << 30 } },
        .nr_ranges = 2,
    };

    return m;
}

static void parse_ok(SmbiosConfig *cfg, const char *arg)
{
    Error *err = NULL;

    if (!smbios_parse_option(cfg, arg, &err)) {
        g_error("%s: %s", arg, error_get_pretty(err));
    }
}

static char *parse_fails(SmbiosConfig *cfg, const char *arg)
{
    Error *err = NULL;
    char *msg;

    g_assert_false(smbios_parse_option(cfg, arg, &err));
    g_assert_nonnull(err);
    msg = g_strdup(error_get_pretty(err));
    error_free(err);
    return msg;
}

/* What Nova writes: libvirt's <sysinfo type='smbios'> as -smbios. */
static void test_nova_sysinfo(void)
{
    g_autoptr(SmbiosConfig) cfg = smbios_config_new();
    SmbiosMachine m = machine();
    SmbiosTables t;
    Found f[4];

    parse_ok(cfg, "type=0,vendor=Conduit Test BIOS,version=1.2.3,"
             "date=12/01/2026,release=1.2");
    parse_ok(cfg, "type=1,manufacturer=OpenStack Foundation,"
             "product=OpenStack Nova,version=27.1.0,"
             "serial=4f1e9c7a-5d1b-4c3e-8a2f-0123456789ab,"
             "uuid=c7a5fdbd-cdaf-9455-926a-d65c16db1809,"
             "family=Virtual Machine");
    parse_ok(cfg, "type=2,manufacturer=Board Co,product=B1,asset=A-1");
    parse_ok(cfg, "type=3,manufacturer=Chassis Co,serial=CH-9");
    parse_ok(cfg, "type=11,value=cloud-init:nocloud,value=second");
    parse_ok(cfg, "type=17,loc_pfx=SLOT,manufacturer=Mem Co,speed=3200");
    g_assert_true(smbios_build_tables(cfg, &m, &t, &error_abort));

    g_assert_cmpuint(walk(t.table, 0, f, 1), ==, 1);
    g_assert_cmpuint(f[0].s[1], ==, 0x1a);
    g_assert_cmpstr(str(&f[0], 4), ==, "Conduit Test BIOS");
    g_assert_cmpstr(str(&f[0], 5), ==, "1.2.3");
    g_assert_cmpstr(str(&f[0], 8), ==, "12/01/2026");
    g_assert_cmpuint(f[0].s[0x14], ==, 1);
    g_assert_cmpuint(f[0].s[0x15], ==, 2);
    g_assert_true(f[0].s[0x13] & (1 << 4));     /* a virtual machine */

    g_assert_cmpuint(walk(t.table, 1, f, 1), ==, 1);
    g_assert_cmpuint(f[0].s[1], ==, 0x1b);
    g_assert_cmpstr(str(&f[0], 4), ==, "OpenStack Foundation");
    g_assert_cmpstr(str(&f[0], 5), ==, "OpenStack Nova");
    g_assert_cmpstr(str(&f[0], 6), ==, "27.1.0");
    g_assert_cmpstr(str(&f[0], 7), ==,
                    "4f1e9c7a-5d1b-4c3e-8a2f-0123456789ab");
    g_assert_cmpstr(str(&f[0], 0x1a), ==, "Virtual Machine");
    g_assert_null(str(&f[0], 0x19));
    /* UUID: the first three fields little-endian (SMBIOS 2.6+). */
    {
        static const uint8_t want[16] = {
            0xbd, 0xfd, 0xa5, 0xc7, 0xaf, 0xcd, 0x55, 0x94,
            0x92, 0x6a, 0xd6, 0x5c, 0x16, 0xdb, 0x18, 0x09,
        };
        g_assert_cmpmem(f[0].s + 8, 16, want, 16);
    }

    g_assert_cmpuint(walk(t.table, 2, f, 1), ==, 1);
    g_assert_cmpstr(str(&f[0], 4), ==, "Board Co");
    g_assert_cmpstr(str(&f[0], 8), ==, "A-1");
    g_assert_cmpuint(le16(f[0].s + 0x0b), ==, 0x0300);  /* its chassis */
    g_assert_cmpuint(walk(t.table, 3, f, 1), ==, 1);
    g_assert_cmpuint(f[0].s[2] | f[0].s[3] << 8, ==, 0x0300);
    g_assert_cmpstr(str(&f[0], 7), ==, "CH-9");

    /* One type 4 per socket: 3 vCPUs of 2x2, the second half enabled. */
    g_assert_cmpuint(walk(t.table, 4, f, 4), ==, 2);
    g_assert_cmpuint(f[0].s[1], ==, 0x30);
    g_assert_cmpstr(str(&f[0], 4), ==, "CPU 0");
    g_assert_cmpstr(str(&f[1], 4), ==, "CPU 1");
    g_assert_cmpuint(f[0].s[0x23], ==, 2);
    g_assert_cmpuint(f[0].s[0x24], ==, 2);
    g_assert_cmpuint(f[1].s[0x24], ==, 1);
    g_assert_cmpuint(f[0].s[0x18], ==, 0x41);

    g_assert_cmpuint(walk(t.table, 11, f, 1), ==, 1);
    g_assert_cmpuint(f[0].s[4], ==, 2);
    g_assert_cmpuint(f[0].nr_strings, ==, 2);
    g_assert_cmpstr(f[0].strings[0], ==, "cloud-init:nocloud");

    g_assert_cmpuint(walk(t.table, 16, f, 1), ==, 1);
    g_assert_cmpuint(le32(f[0].s + 7), ==, 5u << 20);   /* KiB */
    g_assert_cmpuint(le16(f[0].s + 0x0d), ==, 1);
    g_assert_cmpuint(walk(t.table, 17, f, 1), ==, 1);
    g_assert_cmpuint(f[0].s[1], ==, 0x28);
    g_assert_cmpuint(le16(f[0].s + 0x0c), ==, 5 << 10);  /* MiB */
    g_assert_cmpstr(str(&f[0], 0x10), ==, "SLOT 0");
    g_assert_cmpstr(str(&f[0], 0x17), ==, "Mem Co");
    g_assert_cmpuint(le16(f[0].s + 0x15), ==, 3200);

    g_assert_cmpuint(walk(t.table, 19, f, 2), ==, 2);
    g_assert_cmpuint(le32(f[0].s + 4), ==, 0);
    g_assert_cmpuint(le32(f[0].s + 8), ==, (3u << 20) - 1);
    g_assert_cmpuint(le32(f[1].s + 4), ==, 4u << 20);
    g_assert_cmpuint(le32(f[1].s + 8), ==, (6u << 20) - 1);
    g_assert_cmpuint(walk(t.table, 32, f, 1), ==, 1);
    g_assert_cmpuint(walk(t.table, 127, f, 1), ==, 1);
    smbios_tables_free(&t);
}

static void test_defaults_and_uuid(void)
{
    g_autoptr(SmbiosConfig) cfg = smbios_config_new();
    SmbiosMachine m = machine();
    SmbiosTables t;
    Found f[1];

    /* No -smbios: -uuid still reaches type 1; no type 11. */
    g_assert_true(smbios_parse_uuid("00112233-4455-6677-8899-aabbccddeeff",
                                    m.uuid));
    m.uuid_set = true;
    g_assert_true(smbios_build_tables(cfg, &m, &t, &error_abort));
    g_assert_cmpuint(walk(t.table, 1, f, 1), ==, 1);
    g_assert_cmpstr(str(&f[0], 4), ==, "Conduit");
    g_assert_cmpstr(str(&f[0], 5), ==, "Standard PC");
    g_assert_null(str(&f[0], 7));
    g_assert_cmpuint(f[0].s[8], ==, 0x33);
    g_assert_cmpuint(f[0].s[15], ==, 0x66);
    g_assert_cmpuint(f[0].s[16], ==, 0x88);
    g_assert_cmpuint(walk(t.table, 11, f, 1), ==, 0);
    smbios_tables_free(&t);

    g_assert_false(smbios_parse_uuid("00112233-4455-6677-8899-aabbccddeef",
                                     m.uuid));
    g_assert_false(smbios_parse_uuid("0011223344556677-8899-aabbccddeeff",
                                     m.uuid));
}

static void test_entry_points(void)
{
    g_autoptr(SmbiosConfig) cfg = smbios_config_new();
    SmbiosMachine m = machine();
    uint8_t ep30[SMBIOS_EP30_SIZE], ep21[SMBIOS_EP21_SIZE];
    SmbiosTables t;

    g_assert_true(smbios_build_tables(cfg, &m, &t, &error_abort));
    smbios_build_entry_point_30(&t, 0xf0040, ep30);
    g_assert_cmpmem(ep30, 5, "_SM3_", 5);
    g_assert_cmpuint(sum(ep30, sizeof(ep30)), ==, 0);
    g_assert_cmpuint(ep30[6], ==, 0x18);
    g_assert_cmpuint(ep30[7], ==, 3);
    g_assert_cmpuint(le32(ep30 + 0x0c), ==, t.table->len);
    g_assert_cmpuint(le64(ep30 + 0x10), ==, 0xf0040);

    g_assert_true(smbios_build_entry_point_21(&t, 0xf0040, ep21));
    g_assert_cmpmem(ep21, 4, "_SM_", 4);
    g_assert_cmpmem(ep21 + 0x10, 5, "_DMI_", 5);
    g_assert_cmpuint(sum(ep21, sizeof(ep21)), ==, 0);
    g_assert_cmpuint(sum(ep21 + 0x10, 0x0f), ==, 0);
    g_assert_cmpuint(le16(ep21 + 0x16), ==, t.table->len);
    g_assert_cmpuint(le32(ep21 + 0x18), ==, 0xf0040);
    g_assert_cmpuint(le16(ep21 + 0x1c), ==, t.nr_structs);
    /* 0,1,2,3, 4 x2, 16, 17, 19 x2, 32, 127 */
    g_assert_cmpuint(t.nr_structs, ==, 12);
    g_assert_cmpuint(le16(ep21 + 0x08), ==, t.max_struct);
    smbios_tables_free(&t);
}

static void test_bad_options(void)
{
    g_autoptr(SmbiosConfig) cfg = smbios_config_new();
    char *msg;

    msg = parse_fails(cfg, "type=1,colour=blue");
    g_assert_cmpstr(msg, ==, "Invalid parameter 'colour'");
    g_free(msg);
    msg = parse_fails(cfg, "type=5,manufacturer=x");
    g_assert_nonnull(strstr(msg, "SMBIOS type 5"));
    g_free(msg);
    msg = parse_fails(cfg, "type=1,uuid=not-a-uuid");
    g_assert_cmpstr(msg, ==, "Invalid UUID");
    g_free(msg);
    msg = parse_fails(cfg, "type=0,release=1");
    g_assert_nonnull(strstr(msg, "release"));
    g_free(msg);
    msg = parse_fails(cfg, "type=0,release=300.1");
    g_free(msg);
    msg = parse_fails(cfg, "type=17,speed=70000");
    g_assert_nonnull(strstr(msg, "out of range"));
    g_free(msg);
    msg = parse_fails(cfg, "type=1,serial=");
    g_free(msg);
    msg = parse_fails(cfg, "vendor=x");
    g_free(msg);
    msg = parse_fails(cfg, "file=/nonexistent/smbios.bin");
    g_assert_nonnull(strstr(msg, "/nonexistent/smbios.bin"));
    g_free(msg);
    /* Commas in values are doubled, as libvirt writes them. */
    parse_ok(cfg, "type=1,product=a,,b");
    g_assert_cmpstr(cfg->t1.product, ==, "a,b");
}

static void test_user_tables(void)
{
    g_autoptr(SmbiosConfig) cfg = smbios_config_new();
    SmbiosMachine m = machine();
    SmbiosTables t;
    Found f[1];
    Error *err = NULL;
    /* A type 1 (length 0x1b) with two strings, and a type 8 with none. */
    uint8_t good[0x1b + 10 + 9 + 2] = { 1, 0x1b, 0x34, 0x12, 1, 2 };
    static const uint8_t truncated_strings[] = { 8, 9, 0, 0x30, 0, 0, 0,
                                                 0, 0, 'a', 0 };
    static const uint8_t bad_len[] = { 8, 3, 0, 0x30, 0, 0 };
    static const uint8_t eot[] = { 127, 4, 0, 0x50, 0, 0 };
    size_t off = 0x1b;

    memcpy(good + off, "Mfr\0Prod\0\0", 10);
    off += 10;
    memcpy(good + off, (uint8_t[]){ 8, 9, 0x01, 0x30 }, 4);
    off += 9;
    good[off++] = 0;
    good[off++] = 0;
    g_assert_cmpuint(off, ==, sizeof(good));

    g_assert_false(smbios_add_user_tables(cfg, truncated_strings,
                                          sizeof(truncated_strings), "t",
                                          &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "string set"));
    error_free(err);
    err = NULL;
    g_assert_false(smbios_add_user_tables(cfg, bad_len, sizeof(bad_len), "t",
                                          &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "bad length"));
    error_free(err);
    err = NULL;
    g_assert_false(smbios_add_user_tables(cfg, eot, sizeof(eot), "t", &err));
    error_free(err);
    err = NULL;
    g_assert_cmpuint(cfg->user_tables->len, ==, 0);

    g_assert_true(smbios_add_user_tables(cfg, good, sizeof(good), "t",
                                         &error_abort));
    /* A second type 1 would contradict the first. */
    g_assert_false(smbios_add_user_tables(cfg, good, sizeof(good), "t",
                                          &err));
    error_free(err);
    err = NULL;
    g_assert_true(smbios_build_tables(cfg, &m, &t, &error_abort));
    /* The file's type 1 replaces Conduit's. */
    g_assert_cmpuint(walk(t.table, 1, f, 1), ==, 1);
    g_assert_cmpstr(str(&f[0], 4), ==, "Mfr");
    g_assert_cmpuint(f[0].s[2] | f[0].s[3] << 8, ==, 0x1234);
    g_assert_cmpuint(walk(t.table, 8, f, 1), ==, 1);
    smbios_tables_free(&t);
}

static void test_user_handle_collision(void)
{
    g_autoptr(SmbiosConfig) cfg = smbios_config_new();
    SmbiosMachine m = machine();
    SmbiosTables t;
    Error *err = NULL;
    /* A type 8 using type 0's handle. */
    static const uint8_t clash[] = { 8, 9, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0 };

    g_assert_true(smbios_add_user_tables(cfg, clash, sizeof(clash), "c",
                                         &error_abort));
    g_assert_false(smbios_build_tables(cfg, &m, &t, &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "0x0000"));
    error_free(err);
}

static void test_big_memory(void)
{
    g_autoptr(SmbiosConfig) cfg = smbios_config_new();
    SmbiosMachine m = machine();
    SmbiosTables t;
    Found f[4];

    m.ram_size = 40ull << 30;
    m.ranges[1].size = 37ull << 30;
    g_assert_true(smbios_build_tables(cfg, &m, &t, &error_abort));
    /* 16 + 16 + 8 GiB, each within the 15-bit MiB size field. */
    g_assert_cmpuint(walk(t.table, 17, f, 4), ==, 3);
    g_assert_cmpuint(le16(f[0].s + 0x0c), ==, 16 << 10);
    g_assert_cmpuint(le32(f[0].s + 0x1c), ==, 0);
    g_assert_cmpuint(le16(f[2].s + 0x0c), ==, 8 << 10);
    g_assert_cmpuint(le16(f[0].s + 0x0e) & 0xff, ==, 0x09);
    g_assert_cmpuint(walk(t.table, 19, f, 2), ==, 2);
    g_assert_cmpuint(le32(f[1].s + 8), ==, (41u << 20) - 1);
    smbios_tables_free(&t);

    /* 8 TiB: type 16 and the high type 19 need their extended fields;
     * at most 256 type 17s (of 32 GiB here, in the extended size). */
    m.ram_size = 8ull << 40;
    m.ranges[1].size = (8ull << 40) - (3ull << 30);
    g_assert_true(smbios_build_tables(cfg, &m, &t, &error_abort));
    g_assert_cmpuint(walk(t.table, 16, f, 1), ==, 1);
    g_assert_cmpuint(le32(f[0].s + 7), ==, 0x80000000u);
    g_assert_cmpuint(le64(f[0].s + 0x0f), ==, 8ull << 40);
    g_assert_cmpuint(le16(f[0].s + 0x0d), ==, 256);
    g_assert_cmpuint(walk(t.table, 17, f, 1), ==, 256);
    g_assert_cmpuint(le16(f[0].s + 0x0c), ==, 0x7fff);
    g_assert_cmpuint(le32(f[0].s + 0x1c), ==, 32 << 10);
    g_assert_cmpuint(walk(t.table, 19, f, 2), ==, 2);
    g_assert_cmpuint(le32(f[1].s + 4), ==, 0xffffffffu);
    g_assert_cmpuint(le64(f[1].s + 0x0f), ==, 4ull << 30);
    g_assert_cmpuint(le64(f[1].s + 0x17), ==, (8ull << 40) + (1ull << 30) - 1);
    smbios_tables_free(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/smbios/nova-sysinfo", test_nova_sysinfo);
    g_test_add_func("/smbios/defaults-uuid", test_defaults_and_uuid);
    g_test_add_func("/smbios/entry-points", test_entry_points);
    g_test_add_func("/smbios/bad-options", test_bad_options);
    g_test_add_func("/smbios/user-tables", test_user_tables);
    g_test_add_func("/smbios/user-handle-collision",
                    test_user_handle_collision);
    g_test_add_func("/smbios/big-memory", test_big_memory);
    return g_test_run();
}
