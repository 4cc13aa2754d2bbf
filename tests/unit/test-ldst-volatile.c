/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sized volatile loads and stores (include/qemu/ldst-volatile.h): each
 * touches exactly its own bytes, the _le forms use PCI byte order and the
 * _he forms the host's.
 */
#include "qemu/osdep.h"
#include "qemu/ldst-volatile.h"

static const unsigned sizes[] = { 1, 2, 4, 8 };

/* Bytes 8..15 of a 24-byte buffer are the target; the rest are guards. */
#define GUARD 0xee

static void fill_guards(uint8_t *buf, size_t len)
{
    memset(buf, GUARD, len);
}

static void test_store_le_byte_order(void)
{
    const uint64_t v = 0x1122334455667788ULL;

    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
        unsigned size = sizes[i];
        uint64_t buf64[3];
        uint8_t *buf = (uint8_t *)buf64;

        fill_guards(buf, sizeof(buf64));
        volatile_stn_le(buf + 8, size, v);
        for (unsigned b = 0; b < 24; b++) {
            uint8_t want = GUARD;

            if (b >= 8 && b < 8 + size) {
                want = v >> (8 * (b - 8));   /* least significant first */
            }
            g_assert_cmphex(buf[b], ==, want);
        }
    }
}

static void test_load_le_byte_order(void)
{
    uint64_t buf64[2];
    uint8_t *buf = (uint8_t *)buf64;

    for (unsigned b = 0; b < 16; b++) {
        buf[b] = 0x10 + b;
    }
    g_assert_cmphex(volatile_ldn_le(buf + 8, 1), ==, 0x18);
    g_assert_cmphex(volatile_ldn_le(buf + 8, 2), ==, 0x1918);
    g_assert_cmphex(volatile_ldn_le(buf + 8, 4), ==, 0x1b1a1918);
    g_assert_cmphex(volatile_ldn_le(buf + 8, 8), ==, 0x1f1e1d1c1b1a1918ULL);
}

/* Host order: the value's bytes land exactly as memcpy would put them. */
static void test_host_order_matches_memcpy(void)
{
    const uint64_t v = 0x0102030405060708ULL;

    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
        unsigned size = sizes[i];
        uint64_t buf64[3], want64[3];
        uint8_t *buf = (uint8_t *)buf64, *want = (uint8_t *)want64;
        uint64_t narrowed = size == 8 ? v : v & ((1ULL << (8 * size)) - 1);
        uint8_t u8 = narrowed;
        uint16_t u16 = narrowed;
        uint32_t u32 = narrowed;

        fill_guards(buf, sizeof(buf64));
        fill_guards(want, sizeof(want64));
        switch (size) {
        case 1:
            memcpy(want + 8, &u8, 1);
            break;
        case 2:
            memcpy(want + 8, &u16, 2);
            break;
        case 4:
            memcpy(want + 8, &u32, 4);
            break;
        default:
            memcpy(want + 8, &v, 8);
            break;
        }
        volatile_stn_he(buf + 8, size, v);
        g_assert_cmpmem(buf, sizeof(buf64), want, sizeof(want64));
        g_assert_cmphex(volatile_ldn_he(buf + 8, size), ==, narrowed);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ldst-volatile/store-le/only-own-bytes-lsb-first",
                    test_store_le_byte_order);
    g_test_add_func("/ldst-volatile/load-le/lsb-first",
                    test_load_le_byte_order);
    g_test_add_func("/ldst-volatile/host-order/matches-memcpy",
                    test_host_order_matches_memcpy);
    return g_test_run();
}
