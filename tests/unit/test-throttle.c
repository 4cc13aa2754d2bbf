/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * I/O throttling's leaky buckets (block/throttle.h): steady-state rates
 * for ops and bytes, bursts, read/write buckets, iops_size and the
 * limit checks QEMU applies -- all with a simulated clock.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "block/throttle.h"

#define NS 1000000000ll

/* Starts requests as early as the buckets allow for @secs seconds. */
static uint64_t simulate(ThrottleConfig *cfg, bool write, uint64_t bytes,
                         double secs)
{
    int64_t now = 0, last = 0, end = (int64_t)(secs * NS);
    uint64_t done = 0;

    while (now < end) {
        int64_t wait;

        throttle_leak(cfg, &last, now);
        wait = throttle_schedule(cfg, write, bytes);
        if (wait) {
            now += wait;
            continue;
        }
        done++;
    }
    return done;
}

static void test_iops_rate(void)
{
    ThrottleConfig cfg = { 0 };
    uint64_t n;

    g_assert_true(throttle_config_set(&cfg, "iops", 200));
    g_assert_true(throttle_config_check(&cfg, &error_abort));
    n = simulate(&cfg, false, 4096, 10);
    /* 200/s for 10 s, plus the bucket's initial tenth of a second. */
    g_assert_cmpuint(n, >=, 2000);
    g_assert_cmpuint(n, <=, 2000 + 21 + 1);
}

static void test_bps_rate(void)
{
    ThrottleConfig cfg = { 0 };
    uint64_t n;

    throttle_config_set(&cfg, "bps_wr", 1 << 20);
    n = simulate(&cfg, true, 65536, 8);
    g_assert_cmpuint(n, >=, 8 * 16);
    g_assert_cmpuint(n, <=, 8 * 16 + 3);
    /* Reads are not limited by a write bucket. */
    memset(&cfg, 0, sizeof(cfg));
    throttle_config_set(&cfg, "bps_wr", 1 << 20);
    g_assert_cmpint(throttle_schedule(&cfg, false, 1 << 30), ==, 0);
    g_assert_cmpint(throttle_schedule(&cfg, false, 1 << 30), ==, 0);
}

static void test_burst(void)
{
    ThrottleConfig cfg = { 0 };
    int64_t last = 0;
    unsigned burst = 0;

    throttle_config_set(&cfg, "iops", 100);
    throttle_config_set(&cfg, "iops_max", 1000);
    throttle_config_set(&cfg, "iops_max_length", 2);
    g_assert_true(throttle_config_check(&cfg, &error_abort));
    /* At t=0 a burst of up to max * length ops starts, paced by max. */
    for (int64_t now = 0; now < NS / 2; now += NS / 10000) {
        throttle_leak(&cfg, &last, now);
        if (!throttle_schedule(&cfg, false, 512)) {
            burst++;
        }
    }
    /* max/10 at once, then at max (1000/s) for half a second */
    g_assert_cmpuint(burst, >=, 500);
    g_assert_cmpuint(burst, <=, 620);
    /* In the long run: the average. */
    memset(&cfg, 0, sizeof(cfg));
    throttle_config_set(&cfg, "iops", 100);
    throttle_config_set(&cfg, "iops_max", 1000);
    throttle_config_set(&cfg, "iops_max_length", 2);
    {
        uint64_t n = simulate(&cfg, false, 512, 60);

        /* 100/s for 60 s, plus at most one burst of max * length */
        g_assert_cmpuint(n, >=, 5990);
        g_assert_cmpuint(n, <=, 6000 + 2000 + 110);
    }
}

static void test_iops_size(void)
{
    ThrottleConfig cfg = { 0 };

    throttle_config_set(&cfg, "iops", 100);
    throttle_config_set(&cfg, "iops_size", 4096);
    /* A 64 KiB request counts as 16 ops. */
    g_assert_cmpuint(simulate(&cfg, false, 65536, 10), <=, 1000 / 16 + 2);
}

static void test_check(void)
{
    ThrottleConfig cfg = { 0 };
    Error *err = NULL;

    throttle_config_set(&cfg, "bps", 10);
    throttle_config_set(&cfg, "bps_rd", 10);
    g_assert_false(throttle_config_check(&cfg, &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "same time"));
    g_clear_pointer(&err, error_free);
    memset(&cfg, 0, sizeof(cfg));
    throttle_config_set(&cfg, "iops", 100);
    throttle_config_set(&cfg, "iops_max", 50);
    g_assert_false(throttle_config_check(&cfg, &err));
    g_clear_pointer(&err, error_free);
    memset(&cfg, 0, sizeof(cfg));
    throttle_config_set(&cfg, "iops_max", 50);
    g_assert_false(throttle_config_check(&cfg, &err));
    g_clear_pointer(&err, error_free);
    g_assert_false(throttle_config_set(&cfg, "nonsense", 1));
    /* Both spellings: QMP's and -drive throttling.* */
    g_assert_true(throttle_config_set(&cfg, "iops-total", 7));
    g_assert_cmpuint(throttle_config_get(&cfg, "iops"), ==, 7);
    g_assert_false(throttle_config_enabled(&(ThrottleConfig) { 0 }));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/throttle/iops-rate", test_iops_rate);
    g_test_add_func("/throttle/bps-rate", test_bps_rate);
    g_test_add_func("/throttle/burst", test_burst);
    g_test_add_func("/throttle/iops-size", test_iops_size);
    g_test_add_func("/throttle/check", test_check);
    return g_test_run();
}
