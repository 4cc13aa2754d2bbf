/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pure parts of migration: VMStateDescription round trips and the
 * reader's refusals (truncation at every length, every flipped byte,
 * mismatched names/kinds/counts, limits, versions, subsections), the
 * stream framing over a memory channel, and URI / channels parsing.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "migration/vmstate.h"
#include "migration/channel.h"
#include "migration/savevm.h"
#include "migration/uri.h"
#include "migration/ram.h"

typedef struct Inner {
    uint16_t a;
    uint8_t blob[4];
} Inner;

typedef struct Outer {
    uint8_t b;
    uint32_t w;
    uint64_t q;
    bool flag;
    int64_t neg;
    uint16_t arr[3];
    uint32_t n;
    Inner inner[4];
    uint32_t idx;
    uint32_t sub;
    uint32_t late;
} Outer;

static int post_load_calls;

static bool outer_post_load(void *opaque, int version_id, Error **errp)
{
    Outer *o = opaque;

    post_load_calls++;
    if (o->idx >= 3) {
        error_setg(errp, "idx %u out of range", o->idx);
        return false;
    }
    return true;
}

static bool sub_needed(void *opaque)
{
    return ((Outer *)opaque)->sub != 0;
}

static const VMStateDescription vmstate_inner = {
    .name = "inner",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT16(a, Inner),
        VMSTATE_BUFFER(blob, Inner),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_outer_sub = {
    .name = "outer/sub",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = sub_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(sub, Outer),
        VMSTATE_END_OF_LIST()
    },
};

#define OUTER_FIELDS                                                    \
        VMSTATE_UINT8(b, Outer),                                        \
        VMSTATE_UINT32(w, Outer),                                       \
        VMSTATE_UINT64(q, Outer),                                       \
        VMSTATE_BOOL(flag, Outer),                                      \
        VMSTATE_INT64(neg, Outer),                                      \
        VMSTATE_UINT16_ARRAY(arr, Outer),                               \
        VMSTATE_STRUCT_VARRAY(inner, Outer, n, vmstate_inner, Inner),   \
        VMSTATE_UINT32_MAX(idx, Outer, 7)

static const VMStateDescription vmstate_outer = {
    .name = "outer",
    .version_id = 2,
    .minimum_version_id = 1,
    .post_load = outer_post_load,
    .fields = (const VMStateField[]) {
        OUTER_FIELDS,
        VMSTATE_UINT32_V(late, Outer, 2),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription *const[]) {
        &vmstate_outer_sub, NULL
    },
};

/* The same device one version older: no "late" field. */
static const VMStateDescription vmstate_outer_v1 = {
    .name = "outer",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        OUTER_FIELDS,
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription *const[]) {
        &vmstate_outer_sub, NULL
    },
};

static Outer sample(void)
{
    Outer o = {
        .b = 0xab, .w = 0x12345678, .q = 0x1122334455667788ULL,
        .flag = true, .neg = -42, .arr = { 1, 2, 3 }, .n = 2,
        .idx = 2, .sub = 99, .late = 7,
    };

    o.inner[0] = (Inner) { .a = 5, .blob = "abc" };
    o.inner[1] = (Inner) { .a = 6, .blob = "xyz" };
    return o;
}

static GByteArray *encode(const VMStateDescription *vmsd, Outer *o)
{
    GByteArray *out = g_byte_array_new();

    g_assert_true(vmstate_save(out, vmsd, o, &error_abort));
    return out;
}

static bool decode(const VMStateDescription *vmsd, const uint8_t *p,
                   size_t len, Outer *o, Error **errp)
{
    MigBuf b = { .data = p, .len = len };

    return vmstate_load(&b, vmsd, o, errp) &&
           (mig_buf_left(&b) == 0 || (error_setg(errp, "stray"), false));
}

static void test_round_trip(void)
{
    Outer in = sample(), out = { 0 };
    g_autoptr(GByteArray) buf = encode(&vmstate_outer, &in);

    post_load_calls = 0;
    g_assert_true(decode(&vmstate_outer, buf->data, buf->len, &out,
                         &error_abort));
    g_assert_cmpint(post_load_calls, ==, 1);
    g_assert_cmpint(memcmp(&in, &out, sizeof(in)), ==, 0);
}

static void test_subsection_optional(void)
{
    Outer in = sample(), out = { .sub = 5 };
    g_autoptr(GByteArray) buf = NULL;

    in.sub = 0;                 /* not needed: not sent */
    buf = encode(&vmstate_outer, &in);
    g_assert_null(memmem(buf->data, buf->len, "outer/sub", 9));
    g_assert_true(decode(&vmstate_outer, buf->data, buf->len, &out,
                         &error_abort));
    g_assert_cmpuint(out.sub, ==, 5);   /* untouched */
}

/* Every prefix of a valid encoding is refused, never over-read. */
static void test_truncated_everywhere(void)
{
    Outer in = sample();
    g_autoptr(GByteArray) buf = encode(&vmstate_outer, &in);

    for (guint len = 0; len < buf->len; len++) {
        g_autofree uint8_t *copy = g_memdup2(buf->data, len);
        Outer out = { 0 };
        Error *err = NULL;

        g_assert_false(decode(&vmstate_outer, copy, len, &out, &err));
        g_assert_nonnull(err);
        error_free(err);
    }
}

/* Every single flipped byte: refused, or loaded within the limits. */
static void test_flipped_bytes(void)
{
    Outer in = sample();
    g_autoptr(GByteArray) buf = encode(&vmstate_outer, &in);

    for (guint i = 0; i < buf->len; i++) {
        for (int bit = 0; bit < 8; bit += 3) {
            g_autofree uint8_t *copy = g_memdup2(buf->data, buf->len);
            Outer out = { 0 };
            Error *err = NULL;

            copy[i] ^= 1 << bit;
            if (decode(&vmstate_outer, copy, buf->len, &out, &err)) {
                g_assert_cmpuint(out.n, <=, 4);
                g_assert_cmpuint(out.idx, <, 3);
                g_assert_true(out.flag == 0 || out.flag == 1);
            } else {
                error_free(err);
            }
        }
    }
}

static void expect_refusal(GByteArray *buf, const char *needle)
{
    Outer out = { 0 };
    Error *err = NULL;

    g_assert_false(decode(&vmstate_outer, buf->data, buf->len, &out, &err));
    if (!strstr(error_get_pretty(err), needle)) {
        g_error("expected '%s' in '%s'", needle, error_get_pretty(err));
    }
    error_free(err);
}

static uint8_t *find(GByteArray *buf, const char *s)
{
    uint8_t *p = memmem(buf->data, buf->len, s, strlen(s));

    g_assert_nonnull(p);
    return p;
}

static void test_refusals(void)
{
    Outer in = sample();
    GByteArray *buf;
    uint8_t *p;

    /* A value above its limit. */
    in.idx = 8;
    buf = encode(&vmstate_outer, &in);
    expect_refusal(buf, "above the limit");
    g_byte_array_unref(buf);

    /* post_load's own check. */
    in.idx = 5;
    buf = encode(&vmstate_outer, &in);
    expect_refusal(buf, "out of range");
    g_byte_array_unref(buf);
    in.idx = 2;

    /* A renamed field. */
    buf = encode(&vmstate_outer, &in);
    p = find(buf, "neg");
    p[0] = 'm';
    expect_refusal(buf, "field 'neg' expected");
    g_byte_array_unref(buf);

    /* A boolean that is not 0 or 1. */
    buf = encode(&vmstate_outer, &in);
    p = find(buf, "flag");
    p[4 + 1 + 4 + 4] = 2;       /* name, kind, count, size, value */
    expect_refusal(buf, "boolean");
    g_byte_array_unref(buf);

    /* More elements than the array holds. */
    buf = encode(&vmstate_outer, &in);
    p = find(buf, "inner");
    p[5 + 1] = 9;               /* count */
    expect_refusal(buf, "at most 4");
    g_byte_array_unref(buf);

    /* A wrong element size. */
    buf = encode(&vmstate_outer, &in);
    p = find(buf, "arr");
    p[3 + 1 + 4] = 4;           /* elem_size of a uint16 array */
    expect_refusal(buf, "size");
    g_byte_array_unref(buf);

    /* An unknown subsection. */
    buf = encode(&vmstate_outer, &in);
    p = find(buf, "outer/sub");
    p[6] = 'X';
    expect_refusal(buf, "unknown subsection");
    g_byte_array_unref(buf);

    /* A newer version than this side loads. */
    buf = encode(&vmstate_outer, &in);
    p = find(buf, "outer");
    p[5] = 3;
    expect_refusal(buf, "version 3 not supported");
    g_byte_array_unref(buf);
}

/* A version-1 stream loads into the version-2 table, "late" untouched. */
static void test_older_version_loads(void)
{
    Outer in = sample(), out = { .late = 1234 };
    g_autoptr(GByteArray) buf = encode(&vmstate_outer_v1, &in);

    g_assert_true(decode(&vmstate_outer, buf->data, buf->len, &out,
                         &error_abort));
    g_assert_cmpuint(out.late, ==, 1234);
    g_assert_cmpuint(out.w, ==, in.w);
}

static void test_channel_memory(void)
{
    g_autoptr(GByteArray) out = g_byte_array_new();
    MigFile *w = mig_file_new_mem_writer(out), *r;
    uint8_t buf[8];
    Error *err = NULL;

    g_assert_true(mig_file_write(w, "abcdef", 6, &error_abort));
    g_assert_cmpuint(mig_file_bytes(w), ==, 6);
    mig_file_free(w);
    r = mig_file_new_mem_reader(out->data, out->len);
    g_assert_true(mig_file_read(r, buf, 4, &error_abort));
    g_assert_false(mig_file_read(r, buf, 4, &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "ended unexpectedly"));
    error_free(err);
    err = NULL;
    /* The first error sticks. */
    g_assert_false(mig_file_read(r, buf, 1, &err));
    error_free(err);
    mig_file_free(r);
}

static void test_stream_framing(void)
{
    static const uint8_t bad_magic[] = "XNDTMIG\n\1\0\0\0";
    static const uint8_t bad_version[] = "CNDTMIG\n\7\0\0\0";
    static const uint8_t bad_record[] = "CNDTMIG\n\1\0\0\0\x42";
    static const uint8_t huge[] = "CNDTMIG\n\1\0\0\0\x01\3ram\xff\xff\xff\x7f";
    const struct { const uint8_t *p; size_t len; const char *needle; } c[] = {
        { bad_magic, 12, "bad magic" },
        { bad_version, 12, "version 7" },
        { bad_record, 13, "unknown record" },
        { huge, 21, "exceeds the limit" },
        { bad_magic, 3, "ended unexpectedly" },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(c); i++) {
        MigFile *f = mig_file_new_mem_reader(c[i].p, c[i].len);
        Error *err = NULL;

        g_assert_false(loadvm_stream(f, false, &err));
        if (!strstr(error_get_pretty(err), c[i].needle)) {
            g_error("case %zu: expected '%s' in '%s'", i, c[i].needle,
                    error_get_pretty(err));
        }
        error_free(err);
        mig_file_free(f);
    }
}

static void test_uri_parse(void)
{
    MigrationAddr a;
    Error *err = NULL;

    g_assert_true(migration_uri_parse("tcp:10.0.0.1:4444", false, &a,
                                      &error_abort));
    g_assert_cmpint(a.transport, ==, MIG_TRANSPORT_TCP);
    g_assert_cmpstr(a.host, ==, "10.0.0.1");
    g_assert_cmpstr(a.port, ==, "4444");
    migration_addr_clear(&a);
    g_assert_true(migration_uri_parse("tcp:[::1]:49152", false, &a,
                                      &error_abort));
    g_assert_cmpstr(a.host, ==, "::1");
    migration_addr_clear(&a);
    g_assert_true(migration_uri_parse("tcp::49152", false, &a,
                                      &error_abort));
    g_assert_cmpstr(a.host, ==, "");
    migration_addr_clear(&a);
    g_assert_true(migration_uri_parse("unix:/run/x.sock", false, &a,
                                      &error_abort));
    g_assert_cmpstr(a.path, ==, "/run/x.sock");
    migration_addr_clear(&a);
    g_assert_true(migration_uri_parse("fd:migrate", false, &a,
                                      &error_abort));
    g_assert_cmpstr(a.fd, ==, "migrate");
    migration_addr_clear(&a);
    g_assert_true(migration_uri_parse("exec:cat > /x", false, &a,
                                      &error_abort));
    g_assert_cmpstr(a.argv[2], ==, "cat > /x");
    migration_addr_clear(&a);
    g_assert_true(migration_uri_parse("file:/x,offset=4096", false, &a,
                                      &error_abort));
    g_assert_cmpstr(a.path, ==, "/x");
    g_assert_cmpuint(a.offset, ==, 4096);
    migration_addr_clear(&a);
    g_assert_true(migration_uri_parse("defer", true, &a, &error_abort));
    g_assert_cmpint(a.transport, ==, MIG_TRANSPORT_DEFER);

    g_assert_false(migration_uri_parse("defer", false, &a, &err));
    error_free(err);
    err = NULL;
    g_assert_false(migration_uri_parse("tcp:host", false, &a, &err));
    error_free(err);
    err = NULL;
    g_assert_false(migration_uri_parse("tcp:host:99999", false, &a, &err));
    error_free(err);
    err = NULL;
    g_assert_false(migration_uri_parse("tcp:[::1:5", false, &a, &err));
    error_free(err);
    err = NULL;
    g_assert_false(migration_uri_parse("rdma:x:1", false, &a, &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "rdma"));
    error_free(err);
}

static void test_channels_parse(void)
{
    const char *ok[] = {
        "[{\"channel-type\":\"main\",\"addr\":{\"transport\":\"socket\","
        "\"type\":\"inet\",\"host\":\"h\",\"port\":\"1\"}}]",
        "[{\"channel-type\":\"main\",\"addr\":{\"transport\":\"exec\","
        "\"args\":[\"/bin/cat\"]}}]",
        "[{\"channel-type\":\"main\",\"addr\":{\"transport\":\"file\","
        "\"filename\":\"/x\",\"offset\":0}}]",
    };
    const char *bad[] = {
        "[]",
        "[{\"channel-type\":\"main\"}]",
        "[{\"channel-type\":\"return\",\"addr\":{\"transport\":\"exec\","
        "\"args\":[\"x\"]}}]",
        "[{\"channel-type\":\"main\",\"addr\":{\"transport\":\"rdma\"}}]",
        "[{\"channel-type\":\"main\",\"addr\":{\"transport\":\"exec\","
        "\"args\":[1]}}]",
        "[1]",
    };

    for (size_t i = 0; i < G_N_ELEMENTS(ok) + G_N_ELEMENTS(bad); i++) {
        bool want = i < G_N_ELEMENTS(ok);
        const char *text = want ? ok[i] : bad[i - G_N_ELEMENTS(ok)];
        g_autoptr(JsonNode) node = json_from_string(text, NULL);
        MigrationAddr a;
        Error *err = NULL;

        g_assert_nonnull(node);
        g_assert_cmpint(migration_channels_parse(json_node_get_array(node),
                                                 &a, &err), ==, want);
        if (want) {
            migration_addr_clear(&a);
        } else {
            error_free(err);
        }
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    ram_register();
    g_test_add_func("/migration/vmstate/round-trip", test_round_trip);
    g_test_add_func("/migration/vmstate/subsection-optional",
                    test_subsection_optional);
    g_test_add_func("/migration/vmstate/truncated-everywhere",
                    test_truncated_everywhere);
    g_test_add_func("/migration/vmstate/flipped-bytes", test_flipped_bytes);
    g_test_add_func("/migration/vmstate/refusals", test_refusals);
    g_test_add_func("/migration/vmstate/older-version-loads",
                    test_older_version_loads);
    g_test_add_func("/migration/channel/memory", test_channel_memory);
    g_test_add_func("/migration/stream/framing", test_stream_framing);
    g_test_add_func("/migration/uri/parse", test_uri_parse);
    g_test_add_func("/migration/uri/channels", test_channels_parse);
    return g_test_run();
}
