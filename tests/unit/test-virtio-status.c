/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The virtio device status state machine (hw/virtio/virtio-status.h):
 * every byte from every reachable state gives a defined next state, a
 * device starts at most once between resets, and the rules of virtio
 * 1.2 2.1 / 3.1 hold.
 */
#include "qemu/osdep.h"
#include <linux/virtio_config.h>
#include "hw/virtio/virtio-status.h"

#define ACK VIRTIO_CONFIG_S_ACKNOWLEDGE
#define DRV VIRTIO_CONFIG_S_DRIVER
#define FOK VIRTIO_CONFIG_S_FEATURES_OK
#define DOK VIRTIO_CONFIG_S_DRIVER_OK
#define FAILED VIRTIO_CONFIG_S_FAILED
#define NR VIRTIO_CONFIG_S_NEEDS_RESET

static void test_bring_up(void)
{
    VirtIOStatusPlan p;

    p = virtio_status_plan(0, ACK, true);
    g_assert_cmphex(p.status, ==, ACK);
    g_assert_false(p.start || p.reset || p.stop);
    p = virtio_status_plan(ACK, ACK | DRV, true);
    g_assert_cmphex(p.status, ==, ACK | DRV);
    p = virtio_status_plan(ACK | DRV, ACK | DRV | FOK, true);
    g_assert_cmphex(p.status, ==, ACK | DRV | FOK);
    p = virtio_status_plan(ACK | DRV | FOK, ACK | DRV | FOK | DOK, true);
    g_assert_cmphex(p.status, ==, ACK | DRV | FOK | DOK);
    g_assert_true(p.start);
}

static void test_driver_ok_twice(void)
{
    uint8_t up = ACK | DRV | FOK | DOK;
    VirtIOStatusPlan p;

    p = virtio_status_plan(up, up, true);
    g_assert_false(p.start);
    g_assert_cmphex(p.status, ==, up);
    /* DRIVER_OK alone, or left out and written again: no second start. */
    p = virtio_status_plan(up, DOK, true);
    g_assert_false(p.start);
    g_assert_cmphex(p.status, ==, up);
    p = virtio_status_plan(up, ACK | DRV | FOK, true);
    g_assert_false(p.start);
    g_assert_cmphex(p.status, ==, up);
}

static void test_features(void)
{
    VirtIOStatusPlan p;

    p = virtio_status_plan(ACK | DRV, ACK | DRV | FOK, false);
    g_assert_true(p.features_refused);
    g_assert_cmphex(p.status, ==, ACK | DRV);
    /* FEATURES_OK refused in the same write as DRIVER_OK. */
    p = virtio_status_plan(ACK | DRV, ACK | DRV | FOK | DOK, false);
    g_assert_false(p.start);
    g_assert_true(p.needs_reset);
    g_assert_cmphex(p.status, ==, ACK | DRV | DOK | NR);
    /* Once held, FEATURES_OK is not checked again. */
    p = virtio_status_plan(ACK | DRV | FOK, ACK | DRV | FOK | DOK, false);
    g_assert_true(p.start);
}

static void test_failed(void)
{
    uint8_t up = ACK | DRV | FOK | DOK;
    VirtIOStatusPlan p;

    p = virtio_status_plan(up, up | FAILED, true);
    g_assert_true(p.stop);
    g_assert_cmphex(p.status, ==, up | FAILED);
    p = virtio_status_plan(up | FAILED, up, true);
    g_assert_cmphex(p.status, ==, up | FAILED);
    g_assert_false(p.start || p.stop);
    p = virtio_status_plan(ACK | FAILED, up, true);
    g_assert_false(p.start);
    g_assert_cmphex(p.status, ==, ACK | FAILED);
    /* FAILED with DRIVER_OK in one write: never started. */
    p = virtio_status_plan(ACK | DRV | FOK, up | FAILED, true);
    g_assert_false(p.start);
    p = virtio_status_plan(up | FAILED, 0, true);
    g_assert_true(p.reset);
    g_assert_cmphex(p.status, ==, 0);
}

static void test_undefined_bits(void)
{
    VirtIOStatusPlan p;

    p = virtio_status_plan(0, 0x30 | ACK, true);
    g_assert_cmphex(p.status, ==, ACK);
    g_assert_cmphex(p.ignored, ==, 0x30);
    /* NEEDS_RESET is the device's to set. */
    p = virtio_status_plan(ACK, ACK | NR, true);
    g_assert_cmphex(p.status, ==, ACK);
    g_assert_cmphex(p.ignored, ==, NR);
    /* ... and the device's to keep. */
    p = virtio_status_plan(ACK | NR, ACK | DRV, true);
    g_assert_cmphex(p.status, ==, ACK | DRV | NR);
    p = virtio_status_plan(ACK | DRV | FOK | NR, ACK | DRV | FOK | DOK, true);
    g_assert_false(p.start);
}

/* Every byte from every reachable state: defined, and at most one start. */
static void test_exhaustive(void)
{
    bool seen[256] = { [0] = true };
    uint8_t queue[256] = { 0 };
    unsigned head = 0, tail = 1;

    while (head < tail) {
        uint8_t st = queue[head++];

        for (unsigned v = 0; v < 256; v++) {
            for (int f = 0; f < 2; f++) {
                VirtIOStatusPlan p = virtio_status_plan(st, v, f);

                g_assert_cmphex(p.status & ~(VIRTIO_STATUS_DRIVER_BITS | NR),
                                ==, 0);
                if (v == 0) {
                    g_assert_true(p.reset);
                    g_assert_cmphex(p.status, ==, 0);
                    continue;
                }
                g_assert_false(p.reset);
                /* Bits never go away without a reset. */
                g_assert_cmphex(p.status & st, ==, st);
                /* A start only where DRIVER_OK was not held yet. */
                if (p.start) {
                    g_assert_false(st & DOK);
                    g_assert_true(p.status & FOK);
                    g_assert_false(p.status & (FAILED | NR));
                }
                if (!seen[p.status]) {
                    seen[p.status] = true;
                    queue[tail++] = p.status;
                }
            }
        }
    }
    g_assert_cmpuint(tail, >, 8);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/virtio-status/bring-up", test_bring_up);
    g_test_add_func("/virtio-status/driver-ok-twice", test_driver_ok_twice);
    g_test_add_func("/virtio-status/features", test_features);
    g_test_add_func("/virtio-status/failed", test_failed);
    g_test_add_func("/virtio-status/undefined-bits", test_undefined_bits);
    g_test_add_func("/virtio-status/exhaustive", test_exhaustive);
    return g_test_run();
}
