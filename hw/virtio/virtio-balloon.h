/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-balloon's decisions, as pure functions (virtio-balloon-plan.c),
 * for the device (virtio-balloon.c) and its unit test.
 */
#ifndef HW_VIRTIO_VIRTIO_BALLOON_H
#define HW_VIRTIO_VIRTIO_BALLOON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * num_pages for a QMP "balloon" target of @target bytes in a guest of
 * @ram_size bytes: the 4 KiB pages the guest should give up.  A target
 * above the RAM size means "give everything back" (0 pages).
 */
uint32_t virtio_balloon_target_pages(uint64_t ram_size, uint64_t target);

/*
 * Queue index of each role (inflate, deflate, stats, free page
 * reporting) for the negotiated @features, -1 for a role without a
 * queue: a driver numbers only the queues of the features it accepted.
 */
void virtio_balloon_map_queues(uint64_t features, bool have_reporting,
                               int role_queue[4]);

/*
 * The run of consecutive page frame numbers starting at pfns[i] (of n):
 * *first and *count; returns the index after the run.
 */
size_t virtio_balloon_next_run(const uint32_t *pfns, size_t n, size_t i,
                               uint64_t *first, uint64_t *count);

#endif
