/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qcow2: the pure metadata logic (header validation, L2 entry decoding,
 * refcount entries of every width) and the driver against QEMU's
 * reference tool: images qemu-img made (every cluster size, compressed,
 * zero clusters, backing chains, version 2, every refcount width) read
 * exactly as qemu-img convert reads them; images Conduit wrote -- random
 * writes through the synchronous path and libaio, discard, write-zeroes,
 * growth, lazy refcounts -- pass qemu-img check and compare equal to a
 * raw copy written alongside.
 *
 * qemu-img comes from Debian's qemu-utils (scripts/install-deps); the
 * test fails, not skips, without it.
 */
#include "qemu/osdep.h"
#include <sys/wait.h>
#include "qapi/error.h"
#include "qemu/option.h"
#include "block/block_int.h"
#include "block/qcow2.h"
#include "block/qcow2-int.h"

static char *tmpdir;

static int run(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static int run(const char *fmt, ...)
{
    va_list ap;
    g_autofree char *cmd = NULL;
    int st;

    va_start(ap, fmt);
    cmd = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    st = system(cmd);
    if (st != 0) {
        g_test_message("command failed (%d): %s", st, cmd);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *path(const char *name)
{
    return g_build_filename(tmpdir, name, NULL);
}

static BlockNode *open_node(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static BlockNode *open_node(const char *fmt, ...)
{
    va_list ap;
    g_autofree char *str = NULL;
    g_autoptr(QemuOpts) opts = NULL;

    va_start(ap, fmt);
    str = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    opts = qemu_opts_parse(str, NULL, &error_abort);
    return blockdev_add(opts, &error_abort);
}

static BlockNode *open_qcow2(const char *file, bool ro)
{
    return open_node("driver=qcow2,file.driver=file,file.filename=%s,"
                     "read-only=%s", file, ro ? "on" : "off");
}

static void close_node(BlockNode *bs)
{
    block_node_close_tree(bs);
}

/* A raw file with a pattern, sparse holes and zero runs. */
static void make_raw(const char *file, uint64_t size, unsigned seed)
{
    g_autofree uint8_t *buf = g_malloc0(size);
    GRand *r = g_rand_new_with_seed(seed);
    int fd;

    for (uint64_t off = 0; off < size; off += 4096) {
        unsigned kind = g_rand_int_range(r, 0, 4);

        if (kind == 0) {
            continue;                       /* zero */
        }
        for (uint64_t i = off; i < MIN(size, off + 4096); i += 4) {
            uint32_t v = kind == 1 ? (uint32_t)(i * 2654435761u)
                                   : g_rand_int(r);
            memcpy(buf + i, &v, MIN(4, size - i));
        }
        if (kind == 3) {
            memset(buf + off, 0x5a, MIN(512, size - off)); /* compressible */
        }
    }
    fd = open(file, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(write(fd, buf, size), ==, (ssize_t)size);
    close(fd);
    g_rand_free(r);
}

static uint8_t *read_file(const char *file, size_t *len)
{
    gchar *data;
    gsize n;

    g_assert_true(g_file_get_contents(file, &data, &n, NULL));
    *len = n;
    return (uint8_t *)data;
}

/* Reads the whole node in odd-sized pieces and compares with raw. */
static void assert_node_equals(BlockNode *bs, const char *raw)
{
    size_t len;
    g_autofree uint8_t *want = read_file(raw, &len);
    g_autofree uint8_t *got = g_malloc(len);
    uint64_t off = 0;
    GRand *r = g_rand_new_with_seed(7);

    g_assert_cmpuint(block_size(bs), ==, len);
    while (off < len) {
        uint64_t want_n = (uint64_t)g_rand_int_range(r, 1, 300) * 512 +
                          g_rand_int_range(r, 0, 2) * 7;
        uint64_t n = MIN(len - off, want_n);
        struct iovec v = { got + off, n };

        g_assert_cmpint(block_node_preadv(bs, off, &v, 1), ==, 0);
        off += n;
    }
    g_rand_free(r);
    g_assert_true(memcmp(want, got, len) == 0);
}

/* ---- pure metadata ---- */

static void build_v3(uint8_t *buf, unsigned cluster_bits)
{
    Qcow2Header h = {
        .version = 3, .cluster_bits = cluster_bits, .size = 1 << 20,
        .l1_size = 1, .l1_table_offset = 3ull << cluster_bits,
        .refcount_table_offset = 1ull << cluster_bits,
        .refcount_table_clusters = 1, .refcount_order = 4,
        .header_length = 112,
    };

    memset(buf, 0, 1u << cluster_bits);
    qcow2_build_header(&h, buf);
}

static void test_header_valid(void)
{
    uint8_t buf[65536];
    Qcow2Meta m;

    build_v3(buf, 16);
    g_assert_true(qcow2_parse_header(buf, sizeof(buf), 0, &m, &error_abort));
    g_assert_cmpuint(m.cluster_size, ==, 65536);
    g_assert_cmpuint(m.l2_entries, ==, 8192);
    g_assert_cmpuint(m.rb_entries, ==, 32768);
    g_assert_cmpuint(m.reftable_entries, ==, 8192);
}

static void expect_refused(uint8_t *buf, size_t len, const char *what)
{
    Qcow2Meta m;
    Error *err = NULL;

    g_assert_false(qcow2_parse_header(buf, len, 1 << 30, &m, &err));
    g_assert_nonnull(err);
    if (what) {
        g_assert_nonnull(strstr(error_get_pretty(err), what));
    }
    error_free(err);
}

static void test_header_hostile(void)
{
    uint8_t buf[65536];

    build_v3(buf, 16);
    buf[0] = 'X';
    expect_refused(buf, sizeof(buf), "not in qcow2 format");
    build_v3(buf, 16);
    qcow2_put_be32(buf + 4, 4);
    expect_refused(buf, sizeof(buf), "version 4");
    build_v3(buf, 16);
    qcow2_put_be32(buf + 20, 22);
    expect_refused(buf, sizeof(buf), "cluster size");
    build_v3(buf, 16);
    qcow2_put_be32(buf + 20, 8);
    expect_refused(buf, sizeof(buf), "cluster size");
    build_v3(buf, 16);
    qcow2_put_be32(buf + 32, 1);
    expect_refused(buf, sizeof(buf), "encrypted");
    build_v3(buf, 16);
    qcow2_put_be32(buf + 96, 7);
    expect_refused(buf, sizeof(buf), "refcount order");
    build_v3(buf, 16);
    qcow2_put_be64(buf + 72, QCOW2_INCOMPAT_EXTL2);
    expect_refused(buf, sizeof(buf), "extended L2");
    build_v3(buf, 16);
    qcow2_put_be64(buf + 72, 1ull << 40);
    expect_refused(buf, sizeof(buf), "bit 40");
    build_v3(buf, 16);
    qcow2_put_be64(buf + 24, 1ull << 40);      /* L1 too small */
    expect_refused(buf, sizeof(buf), "too small");
    build_v3(buf, 16);
    qcow2_put_be64(buf + 40, 12345);           /* unaligned L1 */
    expect_refused(buf, sizeof(buf), "aligned");
    build_v3(buf, 16);
    qcow2_put_be32(buf + 56, 0);
    expect_refused(buf, sizeof(buf), "refcount table size");
    build_v3(buf, 16);
    qcow2_put_be32(buf + 100, 100);            /* not a multiple of 8 */
    expect_refused(buf, sizeof(buf), "header length");
    build_v3(buf, 16);
    qcow2_put_be64(buf + 8, 200);              /* backing name */
    qcow2_put_be32(buf + 16, 2000);
    expect_refused(buf, sizeof(buf), "backing file name");
    build_v3(buf, 16);
    qcow2_put_be64(buf + 40, 1ull << 40);      /* past the end of file */
    expect_refused(buf, sizeof(buf), "beyond the end");
    build_v3(buf, 16);
    expect_refused(buf, 80, "truncated");
    /* An extension overrunning the cluster. */
    build_v3(buf, 9);
    qcow2_put_be32(buf + 112, 0x12345678);
    qcow2_put_be32(buf + 116, 4000);
    expect_refused(buf, 512, "overruns");
}

static void test_header_extensions(void)
{
    uint8_t buf[65536];
    Qcow2Meta m;
    size_t off = 112;

    build_v3(buf, 16);
    /* unknown extension (ignored), backing format, feature table, end */
    qcow2_put_be32(buf + off, 0xdeadbeef);
    qcow2_put_be32(buf + off + 4, 3);
    off += 8 + 8;
    qcow2_put_be32(buf + off, QCOW2_EXT_BACKING_FORMAT);
    qcow2_put_be32(buf + off + 4, 5);
    memcpy(buf + off + 8, "qcow2", 5);
    off += 8 + 8;
    qcow2_put_be32(buf + off, QCOW2_EXT_FEATURE_TABLE);
    qcow2_put_be32(buf + off + 4, 48);
    buf[off + 8] = 0;
    buf[off + 9] = 33;
    strcpy((char *)buf + off + 10, "frobnication");
    off += 8 + 48;
    qcow2_put_be32(buf + off, 0);
    qcow2_put_be32(buf + off + 4, 0);
    off += 8;
    memcpy(buf + off, "base.img", 8);
    qcow2_put_be64(buf + 8, off);
    qcow2_put_be32(buf + 16, 8);
    g_assert_true(qcow2_parse_header(buf, sizeof(buf), 0, &m, &error_abort));
    g_assert_cmpstr(m.backing_format, ==, "qcow2");
    g_assert_cmpstr(m.backing_file, ==, "base.img");
    /* The feature table names an unknown incompatible feature. */
    qcow2_put_be64(buf + 72, 1ull << 33);
    expect_refused(buf, sizeof(buf), "frobnication");
}

static void test_l2_decode(void)
{
    uint8_t buf[65536];
    Qcow2Meta m;
    Qcow2Cluster c;
    uint64_t first, count, e;

    build_v3(buf, 16);
    g_assert_true(qcow2_parse_header(buf, sizeof(buf), 0, &m, &error_abort));
    g_assert_cmpint(qcow2_decode_l2(&m, 0).type, ==,
                    QCOW2_CLUSTER_UNALLOCATED);
    c = qcow2_decode_l2(&m, 0x50000 | QCOW2_OFLAG_COPIED);
    g_assert_cmpint(c.type, ==, QCOW2_CLUSTER_NORMAL);
    g_assert_cmpuint(c.host_offset, ==, 0x50000);
    g_assert_true(c.copied);
    g_assert_cmpint(qcow2_decode_l2(&m, 1).type, ==,
                    QCOW2_CLUSTER_ZERO_PLAIN);
    g_assert_cmpint(qcow2_decode_l2(&m, 0x50000 | 1).type, ==,
                    QCOW2_CLUSTER_ZERO_ALLOC);
    /* unaligned, reserved bits, COPIED without offset */
    g_assert_cmpint(qcow2_decode_l2(&m, 0x50200).type, ==,
                    QCOW2_CLUSTER_INVALID);
    g_assert_cmpint(qcow2_decode_l2(&m, 0x50000 | (1ull << 57)).type, ==,
                    QCOW2_CLUSTER_INVALID);
    g_assert_cmpint(qcow2_decode_l2(&m, QCOW2_OFLAG_COPIED).type, ==,
                    QCOW2_CLUSTER_INVALID);
    /* compressed: round trip, span over two host clusters */
    e = qcow2_encode_compressed(&m, 0x5ff00, 0x300);
    c = qcow2_decode_l2(&m, e);
    g_assert_cmpint(c.type, ==, QCOW2_CLUSTER_COMPRESSED);
    g_assert_cmpuint(c.host_offset, ==, 0x5ff00);
    g_assert_cmpuint(c.compressed_len, >=, 0x300);
    qcow2_compressed_span(&m, &c, &first, &count);
    g_assert_cmpuint(first, ==, 0x50000);
    g_assert_cmpuint(count, ==, 2);
    g_assert_cmpint(qcow2_decode_l2(&m, e | QCOW2_OFLAG_COPIED).type, ==,
                    QCOW2_CLUSTER_INVALID);
    /* version 2: bit 0 is reserved */
    m.h.version = 2;
    g_assert_cmpint(qcow2_decode_l2(&m, 1).type, ==, QCOW2_CLUSTER_INVALID);
}

static void test_refblock_widths(void)
{
    uint8_t block[512];

    for (uint32_t order = 0; order <= 6; order++) {
        uint64_t entries = 512 * 8 >> order;
        uint64_t max = qcow2_refcount_max(order);

        memset(block, 0, sizeof(block));
        for (uint64_t i = 0; i < entries; i++) {
            qcow2_refblock_set(block, order, i, (i * 7 + 3) & max);
        }
        for (uint64_t i = 0; i < entries; i++) {
            g_assert_cmpuint(qcow2_refblock_get(block, order, i), ==,
                             (i * 7 + 3) & max);
        }
        qcow2_refblock_set(block, order, 1, max);
        g_assert_cmpuint(qcow2_refblock_get(block, order, 1), ==, max);
        g_assert_cmpuint(qcow2_refblock_get(block, order, 0), ==, 3 & max);
        g_assert_cmpuint(qcow2_refblock_get(block, order, 2), ==, 17 & max);
    }
    /* Sub-byte entries: bit 0 is the least significant (the spec). */
    memset(block, 0, sizeof(block));
    qcow2_refblock_set(block, 0, 0, 1);
    g_assert_cmpuint(block[0], ==, 1);
    qcow2_refblock_set(block, 2, 1, 0xf);
    g_assert_cmpuint(block[0], ==, 0xf1);
    /* 16 bits big-endian */
    memset(block, 0, sizeof(block));
    qcow2_refblock_set(block, 4, 1, 0x1234);
    g_assert_cmpuint(block[2], ==, 0x12);
    g_assert_cmpuint(block[3], ==, 0x34);
}

/* ---- against qemu-img ---- */

static void test_qemu_img_present(void)
{
    g_assert_cmpint(run("qemu-img --version >/dev/null"), ==, 0);
}

static void test_read_cluster_sizes(void)
{
    g_autofree char *raw = path("src.raw");

    make_raw(raw, 2 * 1024 * 1024 + 4096 * 5, 1);
    for (unsigned bits = 9; bits <= 21; bits++) {
        for (int compressed = 0; compressed <= 1; compressed++) {
            g_autofree char *img = path("img.qcow2");
            BlockNode *bs;

            /* compressed: the smallest, a middle and the largest size */
            if (compressed && bits != 9 && bits != 13 && bits != 16 &&
                bits != 21) {
                continue;
            }
            g_assert_cmpint(run("qemu-img convert -f raw -O qcow2 %s -o "
                                "cluster_size=%u %s %s", compressed ? "-c" : "",
                                1u << bits, raw, img), ==, 0);
            bs = open_qcow2(img, true);
            assert_node_equals(bs, raw);
            close_node(bs);
        }
    }
}

static void test_read_zero_clusters_v2(void)
{
    g_autofree char *raw = path("zero.raw");
    g_autofree char *img = path("zero.qcow2");
    g_autofree char *v2 = path("v2.qcow2");
    BlockNode *bs;

    make_raw(raw, 2 * 1024 * 1024, 2);
    g_assert_cmpint(run("qemu-img convert -f raw -O qcow2 %s %s", raw, img),
                    ==, 0);
    /* Zero clusters (v3) over data qemu-io wrote, then a v2 copy. */
    g_assert_cmpint(run("qemu-io -f qcow2 -c 'write -z 65536 131072' "
                        "-c 'write -z -u 327680 65536' %s >/dev/null", img),
                    ==, 0);
    g_assert_cmpint(run("qemu-io -f raw -c 'write -z 65536 131072' "
                        "-c 'write -z 327680 65536' %s >/dev/null", raw),
                    ==, 0);
    bs = open_qcow2(img, true);
    assert_node_equals(bs, raw);
    close_node(bs);
    g_assert_cmpint(run("qemu-img convert -f raw -O qcow2 -o compat=0.10 "
                        "%s %s", raw, v2), ==, 0);
    bs = open_qcow2(v2, true);
    assert_node_equals(bs, raw);
    close_node(bs);
}

static void test_read_backing_chain(void)
{
    g_autofree char *raw = path("chain.raw");
    g_autofree char *base = path("base.raw");
    g_autofree char *mid = path("mid.qcow2");
    g_autofree char *top = path("top.qcow2");
    BlockNode *bs;

    /* raw base <- qcow2 mid <- qcow2 top; each writes some of its own. */
    make_raw(base, 1024 * 1024, 3);
    g_assert_cmpint(run("cp %s %s", base, raw), ==, 0);
    g_assert_cmpint(run("qemu-img create -q -f qcow2 -b base.raw -F raw %s "
                        "2M", mid), ==, 0);
    g_assert_cmpint(run("qemu-img create -q -f qcow2 -o cluster_size=4096 "
                        "-b mid.qcow2 -F qcow2 %s 3M", top), ==, 0);
    g_assert_cmpint(run("qemu-io -f qcow2 -c 'write -P 0x11 100000 70000' "
                        "%s >/dev/null", mid), ==, 0);
    g_assert_cmpint(run("qemu-io -f qcow2 -c 'write -P 0x22 150000 9000' "
                        "-c 'write -z 4096 4096' %s >/dev/null", top), ==, 0);
    g_assert_cmpint(run("qemu-img convert -O raw %s %s", top, raw), ==, 0);
    bs = open_qcow2(top, true);
    g_assert_nonnull(bs->backing);
    g_assert_nonnull(bs->backing->backing);
    g_assert_cmpstr(bs->backing->backing->driver, ==, "raw");
    assert_node_equals(bs, raw);
    close_node(bs);
    /* The chain given inline (backing.*) and by node-name (backing=). */
    bs = open_node("driver=qcow2,file.driver=file,file.filename=%s,"
                   "read-only=on,backing.driver=qcow2,"
                   "backing.file.driver=file,backing.file.filename=%s",
                   top, mid);
    g_assert_nonnull(bs->backing);
    g_assert_cmpstr(bs->backing->driver, ==, "qcow2");
    assert_node_equals(bs, raw);
    close_node(bs);
    {
        BlockNode *m = open_node("driver=qcow2,node-name=mid,read-only=on,"
                                 "file.driver=file,file.filename=%s", mid);

        bs = open_node("driver=qcow2,file.driver=file,file.filename=%s,"
                       "read-only=on,backing=mid", top);
        g_assert_true(bs->backing == m);
        assert_node_equals(bs, raw);
        /* the backing node is in use: blockdev-del refuses it */
        g_assert_false(blockdev_del("mid", NULL));
        close_node(bs);
        g_assert_true(blockdev_del("mid", &error_abort));
    }
    /* backing: null hides the chain: the overlay's data over zeroes. */
    g_assert_cmpint(run("qemu-img convert -O raw -B '' %s %s.nobacking "
                        ">/dev/null 2>&1 || true", top, raw), ==, 0);
    bs = open_node("driver=qcow2,file.driver=file,file.filename=%s,"
                   "read-only=on,backing=", top);
    g_assert_null(bs->backing);
    {
        uint8_t b[4096];
        struct iovec v = { b, sizeof(b) };

        /* an unallocated cluster of the overlay reads zeroes */
        g_assert_cmpint(block_node_preadv(bs, 512 * 1024, &v, 1), ==, 0);
        for (size_t i = 0; i < sizeof(b); i++) {
            g_assert_cmpuint(b[i], ==, 0);
        }
    }
    close_node(bs);
}

static void test_read_refcount_widths(void)
{
    g_autofree char *raw = path("rw.raw");

    make_raw(raw, 512 * 1024, 4);
    for (unsigned bits = 1; bits <= 64; bits *= 2) {
        g_autofree char *img = path("rw.qcow2");
        BlockNode *bs;

        g_assert_cmpint(run("qemu-img convert -f raw -O qcow2 -o "
                            "refcount_bits=%u,cluster_size=4096 %s %s", bits,
                            raw, img), ==, 0);
        bs = open_qcow2(img, true);
        assert_node_equals(bs, raw);
        close_node(bs);
    }
}

/* Random writes to node and raw copy alike, then check and compare. */
static void random_writes(BlockNode *bs, const char *raw, unsigned seed,
                          unsigned count, uint64_t max_len)
{
    GRand *r = g_rand_new_with_seed(seed);
    int fd = open(raw, O_WRONLY);
    uint64_t size = block_size(bs);
    g_autofree uint8_t *buf = g_malloc(max_len);

    g_assert_cmpint(fd, >=, 0);
    for (unsigned i = 0; i < count; i++) {
        uint64_t len = 512 * (uint64_t)g_rand_int_range(r, 1,
                                                        max_len / 512 + 1);
        uint64_t off = 512 * (uint64_t)g_rand_int_range(r, 0,
                                                     (size - len) / 512 + 1);
        unsigned kind = g_rand_int_range(r, 0, 10);
        struct iovec v = { buf, len };

        if (kind == 0) {
            g_assert_cmpint(block_write_zeroes(bs, off, len, i & 1), ==, 0);
            memset(buf, 0, len);
        } else {
            for (uint64_t j = 0; j < len; j++) {
                buf[j] = g_rand_int(r);
            }
            g_assert_cmpint(block_node_pwritev(bs, off, &v, 1), ==, 0);
        }
        g_assert_cmpint(pwrite(fd, buf, len, off), ==, (ssize_t)len);
    }
    close(fd);
    g_rand_free(r);
}

static void check_and_compare(const char *img, const char *raw)
{
    g_assert_cmpint(run("qemu-img check -q %s", img), ==, 0);
    g_assert_cmpint(run("qemu-img compare -q -f qcow2 -F raw %s %s", img,
                        raw), ==, 0);
}

static void test_write_cluster_sizes(void)
{
    for (unsigned bits = 9; bits <= 21; bits += (bits < 13 ? 1 : 4)) {
        g_autofree char *img = path("w.qcow2");
        g_autofree char *raw = path("w.raw");
        BlockNode *bs;

        make_raw(raw, 4 * 1024 * 1024, 10 + bits);
        g_assert_cmpint(run("qemu-img convert -f raw -O qcow2 -o "
                            "cluster_size=%u %s %s", 1u << bits, raw, img),
                        ==, 0);
        bs = open_qcow2(img, false);
        random_writes(bs, raw, bits, 200, 65536 * 2);
        assert_node_equals(bs, raw);
        close_node(bs);
        check_and_compare(img, raw);
    }
}

/* Fresh sparse images grow their refcount table (small clusters). */
static void test_write_growth(void)
{
    for (unsigned bits = 4; bits <= 64; bits *= 4) {
        g_autofree char *img = path("g.qcow2");
        g_autofree char *raw = path("g.raw");
        BlockNode *bs;
        int fd;

        g_assert_cmpint(run("qemu-img create -q -f qcow2 -o cluster_size=512,"
                            "refcount_bits=%u %s 24M", bits, img), ==, 0);
        fd = open(raw, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        g_assert_cmpint(ftruncate(fd, 24 << 20), ==, 0);
        close(fd);
        bs = open_qcow2(img, false);
        random_writes(bs, raw, bits, 300, 65536);
        {
            /* Sequential fill: many refcount blocks, a bigger table. */
            g_autofree uint8_t *buf = g_malloc(1 << 20);
            struct iovec v = { buf, 1 << 20 };

            fd = open(raw, O_WRONLY);
            for (unsigned i = 0; i < 8; i++) {
                memset(buf, i + 1, 1 << 20);
                g_assert_cmpint(block_node_pwritev(bs, (uint64_t)i << 21, &v,
                                                   1), ==, 0);
                g_assert_cmpint(pwrite(fd, buf, 1 << 20, (off_t)i << 21), ==,
                                1 << 20);
            }
            close(fd);
        }
        assert_node_equals(bs, raw);
        close_node(bs);
        check_and_compare(img, raw);
    }
}

static void test_write_compressed_and_backing(void)
{
    g_autofree char *raw = path("cb.raw");
    g_autofree char *base = path("cb-base.qcow2");
    g_autofree char *img = path("cb.qcow2");
    g_autofree char *src = path("cb-src.raw");
    BlockNode *bs;
    size_t blen;
    g_autofree uint8_t *before = NULL, *after = NULL;

    /* A compressed base; writes to it rewrite compressed clusters. */
    make_raw(src, 2 * 1024 * 1024, 20);
    g_assert_cmpint(run("qemu-img convert -c -f raw -O qcow2 %s %s", src,
                        base), ==, 0);
    g_assert_cmpint(run("cp %s %s", src, raw), ==, 0);
    bs = open_qcow2(base, false);
    random_writes(bs, raw, 21, 100, 16384);
    assert_node_equals(bs, raw);
    close_node(bs);
    check_and_compare(base, raw);
    /* An overlay: writes land in it, the base stays as it was. */
    before = read_file(base, &blen);
    g_assert_cmpint(run("qemu-img create -q -f qcow2 -b cb-base.qcow2 "
                        "-F qcow2 %s", img), ==, 0);
    bs = open_qcow2(img, false);
    random_writes(bs, raw, 22, 150, 100000);
    assert_node_equals(bs, raw);
    /* discard with a backing file: zero clusters, backing hidden */
    g_assert_cmpint(block_discard(bs, 0, 65536 * 4), ==, 0);
    close_node(bs);
    after = read_file(base, &blen);
    g_assert_true(memcmp(before, after, blen) == 0);
    g_assert_cmpint(run("qemu-img check -q %s", img), ==, 0);
}

static void test_write_v2_lazy(void)
{
    g_autofree char *raw = path("v2w.raw");
    g_autofree char *img = path("v2w.qcow2");
    BlockNode *bs;

    make_raw(raw, 2 * 1024 * 1024, 30);
    g_assert_cmpint(run("qemu-img convert -f raw -O qcow2 -o compat=0.10 "
                        "%s %s", raw, img), ==, 0);
    bs = open_qcow2(img, false);
    random_writes(bs, raw, 31, 100, 32768);
    close_node(bs);
    check_and_compare(img, raw);
    /* Lazy refcounts: dirty while open, clean and consistent after. */
    g_assert_cmpint(run("qemu-img convert -f raw -O qcow2 -o "
                        "lazy_refcounts=on %s %s", raw, img), ==, 0);
    bs = open_qcow2(img, false);
    random_writes(bs, raw, 32, 100, 32768);
    g_assert_cmpint(block_flush(bs), ==, 0);
    g_assert_cmpint(run("qemu-img info --force-share %s | "
                        "grep -q 'corrupt: false'", img), ==, 0);
    close_node(bs);
    check_and_compare(img, raw);
}

/* A dirty image (lazy refcounts left inconsistent) is repaired on open. */
static void test_dirty_repair(void)
{
    g_autofree char *raw = path("d.raw");
    g_autofree char *img = path("d.qcow2");
    BlockNode *bs;
    uint8_t be[8];
    int fd;

    make_raw(raw, 1024 * 1024, 40);
    g_assert_cmpint(run("qemu-img convert -f raw -O qcow2 -o "
                        "lazy_refcounts=on,cluster_size=4096 %s %s", raw,
                        img), ==, 0);
    /* Zero the refcount table entry 0's block contents: every refcount
     * in it reads 0, and set the dirty bit as a crash would leave it. */
    bs = open_qcow2(img, true);
    {
        BDRVQcow2 *s = bs->opaque;
        uint64_t rb = s->reftable[0];
        g_autofree uint8_t *zero = g_malloc0(4096);

        close_node(bs);
        fd = open(img, O_WRONLY);
        g_assert_cmpint(pwrite(fd, zero, 4096, rb), ==, 4096);
        /* the refcount block's own refcount must stay for qemu-img */
        close(fd);
    }
    fd = open(img, O_RDWR);
    g_assert_cmpint(pread(fd, be, 8, 72), ==, 8);
    be[7] |= 1;
    g_assert_cmpint(pwrite(fd, be, 8, 72), ==, 8);
    close(fd);
    bs = open_qcow2(img, false);
    random_writes(bs, raw, 41, 50, 16384);
    close_node(bs);
    check_and_compare(img, raw);
}

static void test_resize(void)
{
    g_autofree char *img = path("rs.qcow2");
    g_autofree char *raw = path("rs.raw");
    BlockNode *bs;
    int fd;

    g_assert_cmpint(run("qemu-img create -q -f qcow2 -o cluster_size=512 "
                        "%s 1M", img), ==, 0);
    bs = open_qcow2(img, false);
    g_assert_true(block_resize(bs, 512ull << 20, &error_abort));
    g_assert_cmpuint(block_size(bs), ==, 512ull << 20);
    fd = open(raw, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    g_assert_cmpint(ftruncate(fd, 512 << 20), ==, 0);
    close(fd);
    random_writes(bs, raw, 50, 100, 8192);
    {
        Error *err = NULL;

        g_assert_false(block_resize(bs, 1 << 20, &err));
        g_assert_nonnull(strstr(error_get_pretty(err), "shrink"));
        error_free(err);
    }
    close_node(bs);
    check_and_compare(img, raw);
}

/*
 * cache.direct=on (O_DIRECT, in the build directory: tmpfs has none):
 * metadata updates go out as aligned blocks of the cached clusters, also
 * with clusters smaller than the alignment.
 */
static void test_write_direct(void)
{
    const char *dir = g_getenv("G_TEST_BUILDDIR");

    for (unsigned bits = 9; bits <= 16; bits += 7) {
        g_autofree char *img = g_build_filename(dir ? dir : tmpdir,
                                                "direct.qcow2", NULL);
        g_autofree char *raw = path("direct.raw");
        BlockNode *bs;
        int fd;

        g_assert_cmpint(run("qemu-img create -q -f qcow2 -o cluster_size=%u "
                            "%s 8M", 1u << bits, img), ==, 0);
        fd = open(raw, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        g_assert_cmpint(ftruncate(fd, 8 << 20), ==, 0);
        close(fd);
        bs = open_node("driver=qcow2,file.driver=file,file.filename=%s,"
                       "cache.direct=on", img);
        g_assert_true(block_is_direct(bs));
        random_writes(bs, raw, 60 + bits, 150, 32768);
        assert_node_equals(bs, raw);
        close_node(bs);
        check_and_compare(img, raw);
        unlink(img);
    }
}

static void test_open_errors(void)
{
    g_autofree char *img = path("bad.qcow2");
    g_autofree char *snap = path("snap.qcow2");
    g_autoptr(QemuOpts) opts = NULL;
    g_autofree char *o1 = NULL, *o2 = NULL, *o3 = NULL;
    Error *err = NULL;
    int fd;

    /* Missing backing file: named in the error. */
    g_assert_cmpint(run("qemu-img create -q -f qcow2 -b nosuch.qcow2 -F "
                        "qcow2 -u %s 1M", img), ==, 0);
    o1 = g_strdup_printf("driver=qcow2,file.driver=file,file.filename=%s",
                         img);
    opts = qemu_opts_parse(o1, NULL, &error_abort);
    g_assert_null(blockdev_add(opts, &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "backing file"));
    g_clear_pointer(&err, error_free);
    /* Not qcow2. */
    fd = open(img, O_WRONLY | O_TRUNC);
    g_assert_cmpint(write(fd, "hello world, not an image", 25), ==, 25);
    close(fd);
    g_assert_null(blockdev_add(opts, &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "qcow2"));
    g_clear_pointer(&err, error_free);
    /* Internal snapshots: read-only works, read-write is refused. */
    g_assert_cmpint(run("qemu-img create -q -f qcow2 %s 1M && qemu-img "
                        "snapshot -c s1 %s", snap, snap), ==, 0);
    qemu_opts_free(opts);
    o2 = g_strdup_printf("driver=qcow2,file.driver=file,file.filename=%s",
                         snap);
    opts = qemu_opts_parse(o2, NULL, &error_abort);
    g_assert_null(blockdev_add(opts, &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "snapshots"));
    g_clear_pointer(&err, error_free);
    close_node(open_qcow2(snap, true));
    /* Unknown option. */
    qemu_opts_free(opts);
    o3 = g_strdup_printf("driver=qcow2,file.driver=file,file.filename=%s,"
                         "bogus=1", snap);
    opts = qemu_opts_parse(o3, NULL, &error_abort);
    g_assert_null(blockdev_add(opts, &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "bogus"));
    g_clear_pointer(&err, error_free);
}

int main(int argc, char **argv)
{
    g_autofree char *tmpl = g_build_filename(g_get_tmp_dir(),
                                             "test-qcow2-XXXXXX", NULL);
    int ret;

    g_test_init(&argc, &argv, NULL);
    tmpdir = g_mkdtemp(tmpl);
    g_assert_nonnull(tmpdir);
    g_test_add_func("/qcow2/header/valid", test_header_valid);
    g_test_add_func("/qcow2/header/hostile", test_header_hostile);
    g_test_add_func("/qcow2/header/extensions", test_header_extensions);
    g_test_add_func("/qcow2/l2/decode", test_l2_decode);
    g_test_add_func("/qcow2/refcount/widths", test_refblock_widths);
    g_test_add_func("/qcow2/qemu-img/present", test_qemu_img_present);
    g_test_add_func("/qcow2/read/cluster-sizes", test_read_cluster_sizes);
    g_test_add_func("/qcow2/read/zero-clusters-v2",
                    test_read_zero_clusters_v2);
    g_test_add_func("/qcow2/read/backing-chain", test_read_backing_chain);
    g_test_add_func("/qcow2/read/refcount-widths", test_read_refcount_widths);
    g_test_add_func("/qcow2/write/cluster-sizes", test_write_cluster_sizes);
    g_test_add_func("/qcow2/write/growth", test_write_growth);
    g_test_add_func("/qcow2/write/compressed-and-backing",
                    test_write_compressed_and_backing);
    g_test_add_func("/qcow2/write/v2-and-lazy", test_write_v2_lazy);
    g_test_add_func("/qcow2/write/dirty-repair", test_dirty_repair);
    g_test_add_func("/qcow2/write/resize", test_resize);
    g_test_add_func("/qcow2/write/direct", test_write_direct);
    g_test_add_func("/qcow2/open/errors", test_open_errors);
    ret = g_test_run();
    run("rm -rf %s", tmpdir);
    return ret;
}
