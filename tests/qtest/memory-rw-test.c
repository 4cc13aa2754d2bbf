/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Guest RAM through the qtest protocol: every access size and form
 * (readb..q, hex read/write, base64, memset), unaligned and across 4 KiB
 * pages, checked by reading back through a different form.
 */
#include "qemu/osdep.h"
#include "libqtest.h"

static QTestState *qts;

/* Fresh, distinct areas well inside the 64 MiB of RAM. */
#define AREA(n) (0x200000ULL + (n) * 0x10000ULL)

static void test_byte_sizes(void)
{
    uint64_t base = AREA(0);

    qtest_writeb(qts, base, 0xa5);
    qtest_writew(qts, base + 0x10, 0xbeef);
    qtest_writel(qts, base + 0x20, 0xdeadbeef);
    qtest_writeq(qts, base + 0x30, 0x0123456789abcdefULL);
    g_assert_cmphex(qtest_readb(qts, base), ==, 0xa5);
    g_assert_cmphex(qtest_readw(qts, base + 0x10), ==, 0xbeef);
    g_assert_cmphex(qtest_readl(qts, base + 0x20), ==, 0xdeadbeef);
    g_assert_cmphex(qtest_readq(qts, base + 0x30), ==,
                    0x0123456789abcdefULL);
}

static void test_little_endian_layout(void)
{
    uint64_t base = AREA(1);

    g_assert_false(qtest_big_endian(qts));
    qtest_writel(qts, base, 0x11223344);
    g_assert_cmphex(qtest_readb(qts, base), ==, 0x44);
    g_assert_cmphex(qtest_readb(qts, base + 3), ==, 0x11);
    g_assert_cmphex(qtest_readw(qts, base + 1), ==, 0x2233);
    qtest_writeq(qts, base + 8, 0x8877665544332211ULL);
    g_assert_cmphex(qtest_readl(qts, base + 12), ==, 0x88776655);
}

static void test_unaligned(void)
{
    uint64_t base = AREA(2);
    unsigned off;

    for (off = 1; off < 8; off++) {
        uint64_t addr = base + off * 0x40 + off;
        uint64_t v = 0x1122334455667788ULL ^ (off * 0x0101010101010101ULL);

        qtest_writeq(qts, addr, v);
        g_assert_cmphex(qtest_readq(qts, addr), ==, v);
        qtest_writel(qts, addr + 0x20, (uint32_t)v);
        g_assert_cmphex(qtest_readl(qts, addr + 0x20), ==, (uint32_t)v);
        qtest_writew(qts, addr + 0x30, (uint16_t)v);
        g_assert_cmphex(qtest_readw(qts, addr + 0x30), ==, (uint16_t)v);
    }
}

static void test_cross_page(void)
{
    /* 8-byte access straddling a 4 KiB boundary. */
    uint64_t addr = AREA(3) + 0x1000 - 3;
    uint8_t buf[16], back[16];
    size_t i;

    qtest_writeq(qts, addr, 0xcafef00dd00dfeedULL);
    g_assert_cmphex(qtest_readq(qts, addr), ==, 0xcafef00dd00dfeedULL);
    g_assert_cmphex(qtest_readb(qts, addr + 3), ==, 0xd0);

    for (i = 0; i < sizeof(buf); i++) {
        buf[i] = 0x30 + i;
    }
    qtest_memwrite(qts, AREA(3) + 0x2000 - 7, buf, sizeof(buf));
    qtest_bufread(qts, AREA(3) + 0x2000 - 7, back, sizeof(back));
    g_assert_cmpmem(buf, sizeof(buf), back, sizeof(back));
}

static void test_hex_and_b64_large(void)
{
    size_t size = 3 * 4096 + 123;       /* several pages, odd length */
    g_autofree uint8_t *data = g_malloc(size);
    g_autofree uint8_t *back = g_malloc0(size);
    uint64_t addr = AREA(4) + 0x7f5;
    size_t i;

    for (i = 0; i < size; i++) {
        data[i] = g_test_rand_int_range(0, 256);
    }
    qtest_bufwrite(qts, addr, data, size);
    qtest_memread(qts, addr, back, size);
    g_assert_cmpmem(data, size, back, size);

    for (i = 0; i < size; i++) {
        data[i] ^= 0x5a;
    }
    qtest_memwrite(qts, addr, data, size);
    memset(back, 0, size);
    qtest_bufread(qts, addr, back, size);
    g_assert_cmpmem(data, size, back, size);
    /* The bytes around the area are untouched. */
    g_assert_cmphex(qtest_readb(qts, addr + size), ==, 0);
}

static void test_memset(void)
{
    uint64_t addr = AREA(5) + 0xffd;
    uint8_t back[40];
    size_t i;

    qtest_memset(qts, addr, 0xff, 40);
    qtest_memset(qts, addr + 10, 0x3c, 20);
    qtest_memread(qts, addr, back, sizeof(back));
    for (i = 0; i < sizeof(back); i++) {
        g_assert_cmphex(back[i], ==, (i >= 10 && i < 30) ? 0x3c : 0xff);
    }
    g_assert_cmphex(qtest_readb(qts, addr - 1), ==, 0);
    g_assert_cmphex(qtest_readb(qts, addr + 40), ==, 0);
}

static void test_zero_length(void)
{
    uint8_t dummy = 0x77;

    qtest_memwrite(qts, AREA(6), &dummy, 0);
    qtest_memset(qts, AREA(6), 0x99, 0);
    g_assert_cmphex(qtest_readb(qts, AREA(6)), ==, 0);
}

/* Last: the binary must exit cleanly (no crash, no sanitizer report). */
static void test_clean_exit(void)
{
    qtest_quit(qts);
    qts = NULL;
}

int main(int argc, char **argv)
{
    int ret;

    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/memory-rw/sizes/b-w-l-q", test_byte_sizes);
    g_test_add_func("/memory-rw/endianness/little-layout",
                   test_little_endian_layout);
    g_test_add_func("/memory-rw/unaligned/read-back", test_unaligned);
    g_test_add_func("/memory-rw/cross-page/q-and-buffers", test_cross_page);
    g_test_add_func("/memory-rw/buffers/hex-and-b64-multi-page",
                   test_hex_and_b64_large);
    g_test_add_func("/memory-rw/memset/pattern-and-bounds", test_memset);
    g_test_add_func("/memory-rw/zero-length/no-op", test_zero_length);
    g_test_add_func("/memory-rw/exit/clean-after-sigterm", test_clean_exit);

    qts = qtest_init("-M pc -m 64M");
    ret = g_test_run();
    qtest_quit(qts);
    return ret;
}
