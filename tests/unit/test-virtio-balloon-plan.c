/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-balloon's pure decisions (hw/virtio/virtio-balloon-plan.c): the
 * page count for a QMP target, queue numbering by negotiated features,
 * and the runs of consecutive pages an inflate buffer is discarded in.
 */
#include "qemu/osdep.h"
#include <linux/virtio_balloon.h>
#include "hw/virtio/virtio-balloon.h"

#define MiB (1ull << 20)

static void test_target_pages(void)
{
    g_assert_cmpuint(virtio_balloon_target_pages(1024 * MiB, 1024 * MiB), ==,
                     0);
    g_assert_cmpuint(virtio_balloon_target_pages(1024 * MiB, 512 * MiB), ==,
                     512 * MiB / 4096);
    /* Above the RAM size: nothing to give up. */
    g_assert_cmpuint(virtio_balloon_target_pages(1024 * MiB, 4096 * MiB), ==,
                     0);
    /* A target that is not page-aligned rounds the balloon down. */
    g_assert_cmpuint(virtio_balloon_target_pages(1024 * MiB,
                                                 1024 * MiB - 4097), ==, 1);
    /* A tiny target in a huge guest saturates at 2^32 - 1 pages. */
    g_assert_cmpuint(virtio_balloon_target_pages(1ull << 46, 1), ==,
                     UINT32_MAX);
}

static void test_map_queues(void)
{
    int q[4];

    virtio_balloon_map_queues(0, false, q);
    g_assert_cmpint(q[0], ==, 0);
    g_assert_cmpint(q[1], ==, 1);
    g_assert_cmpint(q[2], ==, -1);
    g_assert_cmpint(q[3], ==, -1);
    virtio_balloon_map_queues(1ull << VIRTIO_BALLOON_F_STATS_VQ, false, q);
    g_assert_cmpint(q[2], ==, 2);
    /* Reporting follows stats when both are negotiated... */
    virtio_balloon_map_queues((1ull << VIRTIO_BALLOON_F_STATS_VQ) |
                              (1ull << VIRTIO_BALLOON_F_REPORTING), true, q);
    g_assert_cmpint(q[2], ==, 2);
    g_assert_cmpint(q[3], ==, 3);
    /* ...and takes index 2 when the driver declined stats. */
    virtio_balloon_map_queues(1ull << VIRTIO_BALLOON_F_REPORTING, true, q);
    g_assert_cmpint(q[2], ==, -1);
    g_assert_cmpint(q[3], ==, 2);
    /* Not offered by the device: no queue whatever the driver says. */
    virtio_balloon_map_queues(1ull << VIRTIO_BALLOON_F_REPORTING, false, q);
    g_assert_cmpint(q[3], ==, -1);
}

static void test_runs(void)
{
    const uint32_t pfns[] = { 10, 11, 12, 20, 5, 6, UINT32_MAX, 0 };
    uint64_t first, count;
    size_t i = 0;

    i = virtio_balloon_next_run(pfns, G_N_ELEMENTS(pfns), i, &first, &count);
    g_assert_cmpuint(i, ==, 3);
    g_assert_cmpuint(first, ==, 10);
    g_assert_cmpuint(count, ==, 3);
    i = virtio_balloon_next_run(pfns, G_N_ELEMENTS(pfns), i, &first, &count);
    g_assert_cmpuint(first, ==, 20);
    g_assert_cmpuint(count, ==, 1);
    i = virtio_balloon_next_run(pfns, G_N_ELEMENTS(pfns), i, &first, &count);
    g_assert_cmpuint(first, ==, 5);
    g_assert_cmpuint(count, ==, 2);
    /* The largest PFN does not wrap into 0. */
    i = virtio_balloon_next_run(pfns, G_N_ELEMENTS(pfns), i, &first, &count);
    g_assert_cmpuint(first, ==, UINT32_MAX);
    g_assert_cmpuint(count, ==, 1);
    i = virtio_balloon_next_run(pfns, G_N_ELEMENTS(pfns), i, &first, &count);
    g_assert_cmpuint(i, ==, G_N_ELEMENTS(pfns));
    g_assert_cmpuint(first, ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/virtio-balloon-plan/target-pages", test_target_pages);
    g_test_add_func("/virtio-balloon-plan/queue-numbering", test_map_queues);
    g_test_add_func("/virtio-balloon-plan/pfn-runs", test_runs);
    return g_test_run();
}
